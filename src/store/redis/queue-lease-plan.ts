/**
 * How one lease call of a sharded queue divides its batch between the shards (Redis Cluster
 * layout; a queue of one shard needs no plan: its lease script runs `leasePasses` itself).
 *
 * A lease of `max` must behave as on one queue: strict lane priority with the lower lanes'
 * reserve (`lanes.ts`), and within a lane the oldest due items first, ties by id. The shards are
 * separate slots, so the call is two steps (`queues.ts`): every shard reports its oldest due items
 * per lane (`peekDue-8.lua`, at most {@link peekLimit} per lane), this module merges the reports
 * into one order per lane, runs the lane passes over the merged lists, and gives each shard a
 * count per lane; each shard's `lease-9.lua` then takes that many of its own oldest due items.
 * Fairness between shards follows: a shard gets exactly the share of the batch its items' ages
 * earn, whichever shard was asked first.
 *
 * A report is truncated when a shard has more due items of a lane than it reported. The merged
 * order is certain only up to the last reported item of a truncated shard (beyond it, that shard
 * may hold older items than the other shards' next ones), so a pass that reaches that point ends
 * the plan: the batch is shorter, never out of order, and never hands out a lower lane while a
 * higher one may still have due items. With {@link peekLimit} at twice a shard's fair share of the
 * batch this stays a corner case of skewed backlogs.
 */
import type { Lane } from '../port.ts';
import { LANES, leasePasses } from '../lanes.ts';

/** One due item as a shard reports it. */
export interface DueEntry {
  id: string;
  availableAtMs: number;
}

/** A shard's report: per lane its oldest due items in order, and whether it holds more than these. */
export type ShardReport = Record<Lane, { entries: DueEntry[]; truncated: boolean }>;

/** Items of each lane to lease from one shard. */
export type ShardTake = Record<Lane, number>;

/**
 * Due items read per lane from each shard: twice the shard's even share of the batch (plus a
 * margin for small batches), never more than the batch.
 */
export function peekLimit(max: number, shards: number): number {
  return Math.min(max, Math.ceil((2 * max) / shards) + 8);
}

/** (availability, id) order; ids compare as Redis orders equal scores (bytewise; ids are ASCII in practice). */
function compareDue(a: DueEntry, b: DueEntry): number {
  if (a.availableAtMs !== b.availableAtMs) return a.availableAtMs - b.availableAtMs;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

interface MergedLane {
  /** Every reported entry of the lane, merged, with its shard. */
  entries: Array<DueEntry & { shard: number }>;
  /** How many of {@link entries} are certainly in the queue's order (see the module comment). */
  certain: number;
  /** True when a shard holds more due items of the lane than {@link entries} shows. */
  truncated: boolean;
  next: number;
}

function mergeLane(reports: readonly ShardReport[], lane: Lane): MergedLane {
  const entries = reports.flatMap((report, shard) => report[lane].entries.map((entry) => ({ ...entry, shard })));
  entries.sort(compareDue);
  let certain = entries.length;
  let truncated = false;
  for (const report of reports) {
    const { entries: reported, truncated: more } = report[lane];
    const last = reported.at(-1);
    if (!more || !last) continue;
    truncated = true;
    // Entries after this shard's last reported one may be preceded by items it did not report.
    const boundary = entries.findIndex((entry) => compareDue(entry, last) > 0);
    if (boundary !== -1) certain = Math.min(certain, boundary);
  }
  return { entries, certain, truncated, next: 0 };
}

/** The per-shard counts of one lease call of `max` over the shards' reports (index = shard). */
export function planShardedLease(reports: readonly ShardReport[], max: number): ShardTake[] {
  const takes: ShardTake[] = reports.map(() => ({ critical: 0, normal: 0, low: 0 }));
  const merged = Object.fromEntries(LANES.map((lane) => [lane, mergeLane(reports, lane)])) as Record<Lane, MergedLane>;
  let total = 0;
  for (const pass of leasePasses(max)) {
    const lane = merged[pass.lane];
    let want = Math.min(pass.limit ?? Infinity, max - total);
    while (want > 0 && lane.next < lane.certain) {
      const entry = lane.entries[lane.next];
      const take = entry === undefined ? undefined : takes[entry.shard];
      if (!take) break;
      take[pass.lane] += 1;
      lane.next += 1;
      total += 1;
      want -= 1;
    }
    // The lane may have more due items than the merge can order: stop here rather than lease
    // out of order or from a lower lane.
    if (want > 0 && lane.truncated && lane.next >= lane.certain) break;
    if (total >= max) break;
  }
  return takes;
}
