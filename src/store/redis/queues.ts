/**
 * Durable queues on Redis.
 *
 * Layout, per queue shard `{name}` (`inbound`, `outbound`; in the divine layout the queue's one
 * shard, named as before the shards; in the cluster layout `{q:inbound:3}`, one hash tag per
 * shard, see "Shards" below) and lane (`critical`, `normal`, `low`; the normal lane keeps the
 * names of before the lanes, so older items are normal ones):
 *
 * | key                            | type | member → score / value                                  |
 * |--------------------------------|------|---------------------------------------------------------|
 * | `queue:{name}:ready`           | ZSET | id → available-at, ms (scheduled items included), normal |
 * | `queue:{name}:leased`          | ZSET | id → lease expiry, ms, normal lane                      |
 * | `queue:{name}:{lane}:ready`    | ZSET | the same, critical and low lanes                        |
 * | `queue:{name}:{lane}:leased`   | ZSET | the same, critical and low lanes                        |
 * | `queue:{name}:dead`            | ZSET | id → dead-lettered at, ms (every lane)                  |
 * | `queue:{name}:items`           | HASH | id → payload JSON, exactly as `JSON.stringify` wrote it |
 * | `queue:{name}:meta`            | HASH | id → `{"attempts":n,"leaseToken"?,"lastError"?,"reason"?,"lane"?,"firstFailedAt"?,"lastFailedAt"?,"pendingOwner"?}` |
 * | `queue:{name}:pending`         | ZSET | id → expiry, ms, of a delivery staged by claimAndEnqueue (`deliveries.ts`) |
 *
 * An item's lane is in its metadata (absent: normal) and never changes. An item id is in exactly
 * one of its lane's ready / leased sets or the dead list, and in `items` and `meta` from
 * `enqueue` until `ack` or `deleteDead`; `items` therefore answers "is this id already queued,
 * leased or dead" for the enqueue idempotency check. Payload and metadata are split so the
 * scripts edit metadata with cjson without ever decoding a payload (cjson would turn `[]` into
 * `{}` and round numbers to 14 digits).
 *
 * Transitions (one Lua script each, every key in KEYS, `now` passed in from the store's clock):
 *
 * - `enqueue-5` (many items per call): new id → its lane's ready at `availableAtMs` (default
 *   now), attempts 0. Known id (in any lane) → no-op.
 * - `enqueueLeased-5` (many items per call): new id → its lane's leased set until now + `leaseMs`,
 *   attempts 1, the caller's fresh token (enqueue and lease in one step). Known id → no-op.
 * - `lease-9` (one shard): first, in every lane, leases with expiry ≤ now go back to ready scored by their
 *   expiry (so they are due at once and keep their place), or straight to dead when they already
 *   had `maxAttempts` leases. Then the passes of `lanes.ts` take due items (score ≤ now,
 *   ascending score, ties by id) lane by lane up to `max`: one that already had `maxAttempts` leases goes to dead with reason
 *   `max attempts exceeded`; any other moves to leased until now + `leaseMs` with attempts + 1
 *   and a fresh lease token (`<uuid of the call>:<k>`, the uuid made in TypeScript, passed as ARGV, like every time).
 * - `settle-9` (ack, retry, dead-letter; many items per call): only with the current lease
 *   token; otherwise NotOwner (another token) or NotFound (not leased), both reported as `false`. A lease that
 *   expired but was not yet recovered by a `lease` call is still the holder's. `retry` keeps the
 *   attempt count and records `lastError`; `deadLetter` records `reason`.
 * - `replayDead-5`: dead → its lane's ready now, attempts reset to 0 (one id, or the oldest n).
 *   `deleteDead-3`: dead → gone.
 * - `stageDeliveries-3` / `commitDeliveries-6` (claimAndEnqueue, `deliveries.ts`): a staged id is
 *   in `items`, in `meta` with its `pendingOwner` and in `pending`, in no lane, until the claim
 *   step decides: committed → its lane's ready set; discarded → gone.
 * - Failure times (port-dlq.ts): `settle-9` records now on a retry or dead-letter, `lease-9` an
 *   expired lease's expiry when it recovers it.
 *
 * Stats count an expired, not yet recovered lease as ready (it is waiting, not live).
 *
 * Shards (cluster layout; `redis.queue_shards`, default 8): an item lives in shard
 * `queueShardOf(id)` (a stable hash of the id), so enqueue, settle, replay, delete and getDead of
 * one id touch one slot, and ids stay unique across the lanes and shards of a queue. Calls on
 * many items group them by shard, one script call per shard, issued concurrently. A lease is two
 * steps (`queue-lease-plan.ts`): `peekDue-8` on every shard (recovery of expired leases, then the
 * oldest due ids per lane), a plan over the merged reports (lane passes, oldest first across the
 * shards), then `lease-9` on each shard with its counts per lane. Both steps are idempotent reads
 * or moves within one shard: a crash between them leaves every item ready or leased as one
 * lease call of one shard would, and a concurrent leaser only makes a shard hand out fewer
 * items than planned. With one shard (divine) the plan is skipped: `lease-9` runs the passes
 * itself, one script call as before. Readers of the whole queue (stats, dead-letter pages,
 * replay-all) walk every shard; dead-letter pages merge the shards in (dead-at, id) order, so a
 * cursor means the same whatever shard its entry is in.
 *
 * Operator view (redis-cli): `ZRANGE queue:outbound:dead 0 9 WITHSCORES`, then
 * `HGET queue:outbound:meta <id>` for the reason and `HGET queue:outbound:items <id>` for the
 * payload. docs/queues.md describes the same design for operators.
 */
import { randomUUID } from 'node:crypto';
import type { EnqueueItem, LeaseOptions, LeasedItem, QueueName, Settlement } from '../port.ts';
import { DEFAULT_LANE, LANES, leasePasses, type LanePass } from '../lanes.ts';
import type { ScriptArg } from './scripts.ts';
import type { QueueKeys } from './keys.ts';
import { parseJson, type RedisContext } from './context.ts';
import { itemShardKeys, ownedResult, payloadJson, perShard, queueShards, requireTime } from './queue-shards.ts';
import { peekLimit, planShardedLease, type DueEntry, type ShardReport } from './queue-lease-plan.ts';

export { listDead, listDeadPage, getDead, replayDead, replayAllDead, deleteDead, queueStats, oldestDueAtMs } from './queue-dead-letters.ts';

/** Reason recorded when a leased item's payload no longer parses (a damaged queue entry). */
export const CORRUPT_PAYLOAD_REASON = 'payload is not valid JSON';

/** A leased row: id, payload, attempts, token, last error, lane index (1 critical … 3 low), available-at ms. */
type LeaseRow = [string, string, number, string, string | null, number, string];
type LeaseReply = [number, number, LeaseRow[]];
type PeekReply = [number, string[], string[], string[]];

function requirePositiveInteger(operation: string, name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${operation}: ${name} must be a positive integer, got ${value}`);
}

export async function enqueue<T>(ctx: RedisContext, queue: QueueName, item: EnqueueItem<T>): Promise<boolean> {
  const [added] = await enqueueMany(ctx, queue, [item]);
  return added === true;
}

/** Enqueue many items, one script call per shard; one result per item, in order (false for a known id). */
export async function enqueueMany<T>(ctx: RedisContext, queue: QueueName, items: ReadonlyArray<EnqueueItem<T>>): Promise<boolean[]> {
  if (items.length === 0) return [];
  const nowMs = ctx.clock.nowMs();
  const args = items.map((item) => {
    const payload = payloadJson('enqueue', item.id, item.payload);
    const availableAtMs = item.availableAtMs ?? nowMs;
    requireTime('enqueue', 'availableAtMs', availableAtMs);
    return { id: item.id, values: [item.id, payload, availableAtMs, item.lane ?? DEFAULT_LANE] };
  });
  const added = await perShard(
    ctx,
    args,
    (entry) => entry.id,
    async (shard, entries) => {
      const keys = ctx.keys.queueKeys(queue, shard);
      const added = (await ctx.scripts.run(
        'enqueue',
        [...keys.readyKeys, keys.items, keys.meta],
        entries.flatMap((entry) => entry.values),
      )) as number[];
      return added.map((value) => value === 1);
    },
  );
  // The caller lets go of the item's source next (a relay cursor, an inbound event, a schedule):
  // the item reaches the replicas first (`replication.ts`).
  await ctx.replication.afterWrites(() => [...new Set(items.map((item) => itemShardKeys(ctx, queue, item.id).items))]);
  return added;
}

/** Enqueue many items leased to the caller at once (`enqueueLeased-5.lua`), one script call per shard; null for a known id. */
export async function enqueueLeased<T>(
  ctx: RedisContext,
  queue: QueueName,
  items: ReadonlyArray<EnqueueItem<T>>,
  leaseMs: number,
): Promise<Array<LeasedItem<T> | null>> {
  if (items.length === 0) return [];
  if (!Number.isFinite(leaseMs) || leaseMs <= 0) throw new RangeError(`enqueueLeased: leaseMs must be positive, got ${leaseMs}`);
  const leaseExpiresAtMs = ctx.clock.nowMs() + leaseMs;
  const callToken = randomUUID();
  const entries = items.map((item, k) => ({
    item,
    leaseToken: `${callToken}:${k}`,
    payload: payloadJson('enqueueLeased', item.id, item.payload),
  }));
  const added = await perShard(
    ctx,
    entries,
    (entry) => entry.item.id,
    async (shard, shardEntries) => {
      const keys = ctx.keys.queueKeys(queue, shard);
      const reply = (await ctx.scripts.run(
        'enqueueLeased',
        [...keys.leasedKeys, keys.items, keys.meta],
        [
          leaseExpiresAtMs,
          ...shardEntries.flatMap((entry) => [entry.item.id, entry.payload, entry.item.lane ?? DEFAULT_LANE, entry.leaseToken]),
        ],
      )) as number[];
      return reply.map((value) => value === 1);
    },
  );
  await ctx.replication.afterWrites(() => [...new Set(items.map((item) => itemShardKeys(ctx, queue, item.id).items))]);
  return entries.map(({ item, leaseToken }, i) =>
    added[i] ? { id: item.id, payload: item.payload, attempts: 1, leaseToken, leaseExpiresAtMs, lastError: null } : null,
  );
}

/** Plan-and-lease rounds of one lease call on a sharded queue (see {@link lease}). */
const LEASE_ROUNDS = 3;

function leaseKeys(keys: QueueKeys): string[] {
  return [...keys.readyKeys, ...keys.leasedKeys, keys.dead, keys.items, keys.meta];
}

function dueEntries(flat: readonly string[]): DueEntry[] {
  const entries: DueEntry[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) entries.push({ id: flat[i] ?? '', availableAtMs: Number(flat[i + 1]) });
  return entries;
}

/**
 * The passes of each shard for one lease call: on one shard, the lane passes themselves (the
 * script runs them); on several, the plan over every shard's due items (`queue-lease-plan.ts`).
 */
async function planLease(
  ctx: RedisContext,
  queue: QueueName,
  now: number,
  options: LeaseOptions,
): Promise<{ shard: number; passes: LanePass[] }[]> {
  const { max, maxAttempts } = options;
  if (ctx.keys.queueShards === 1) return [{ shard: 0, passes: leasePasses(max) }];
  const limit = peekLimit(max, ctx.keys.queueShards);
  const reports = await Promise.all(
    queueShards(ctx).map(async (shard): Promise<ShardReport> => {
      const keys = ctx.keys.queueKeys(queue, shard);
      const [deadCount, ...lanes] = (await ctx.scripts.run(
        'peekDue',
        [...keys.readyKeys, ...keys.leasedKeys, keys.dead, keys.meta],
        [now, maxAttempts, limit],
      )) as PeekReply;
      if (deadCount > 0) ctx.logger.warn({ queue, shard, count: deadCount }, 'queue items exceeded max attempts; dead-lettered');
      const report = {} as ShardReport;
      LANES.forEach((lane, i) => {
        const entries = dueEntries(lanes[i] ?? []);
        report[lane] = { entries, truncated: entries.length >= limit };
      });
      return report;
    }),
  );
  return planShardedLease(reports, max).flatMap((take, shard) => {
    const passes = LANES.filter((lane) => take[lane] > 0).map((lane) => ({ lane, limit: take[lane] }));
    return passes.length === 0 ? [] : [{ shard, passes }];
  });
}

export async function lease<T>(ctx: RedisContext, queue: QueueName, options: LeaseOptions): Promise<LeasedItem<T>[]> {
  const { max, leaseMs, maxAttempts } = options;
  requirePositiveInteger('lease', 'max', max);
  requirePositiveInteger('lease', 'maxAttempts', maxAttempts);
  if (!Number.isFinite(leaseMs) || leaseMs <= 0) throw new RangeError(`lease: leaseMs must be positive, got ${leaseMs}`);
  const now = ctx.clock.nowMs();
  const leaseExpiresAtMs = now + leaseMs;
  const callToken = randomUUID();
  const rows: LeaseRow[] = [];
  // On several shards a planned slot can go unused (its item had used up its attempts, or another
  // leaser took it): plan again for what is left, a few rounds at most. One shard refills itself.
  for (let round = 0; round < LEASE_ROUNDS && rows.length < max; round += 1) {
    const plan = await planLease(ctx, queue, now, { ...options, max: max - rows.length });
    if (plan.length === 0) break;
    let discarded = 0;
    await Promise.all(
      plan.map(async ({ shard, passes }) => {
        // A planned shard takes its counts; a lone shard runs the passes up to the whole batch.
        const limits = passes.map((pass) => pass.limit);
        const shardMax = limits.includes(undefined) ? max : limits.reduce((sum: number, limit) => sum + (limit ?? 0), 0);
        const [deadCount, droppedCount, shardRows] = (await ctx.scripts.run('lease', leaseKeys(ctx.keys.queueKeys(queue, shard)), [
          now,
          leaseExpiresAtMs,
          maxAttempts,
          shardMax,
          // Tokens `<uuid>:<k>` on one shard, `<uuid>.<shard>.<round>:<k>` on several: unique per item.
          ctx.keys.queueShards === 1 ? callToken : `${callToken}.${shard}.${round}`,
          ...passes.flatMap((pass) => [pass.lane, pass.limit ?? '']),
        ])) as LeaseReply;
        if (deadCount > 0) ctx.logger.warn({ queue, shard, count: deadCount }, 'queue items exceeded max attempts; dead-lettered');
        if (droppedCount > 0) ctx.logger.warn({ queue, shard, count: droppedCount }, 'queue ids without a payload dropped');
        discarded += deadCount + droppedCount;
        rows.push(...shardRows);
      }),
    );
    if (ctx.keys.queueShards === 1 || discarded === 0) break;
  }
  // One batch as one queue would hand it out: critical first, then normal, then low, each lane
  // oldest first, ties by id.
  rows.sort(
    ([idA, , , , , laneA, atA], [idB, , , , , laneB, atB]) =>
      laneA - laneB || Number(atA) - Number(atB) || (idA < idB ? -1 : idA > idB ? 1 : 0),
  );

  const leased: LeasedItem<T>[] = [];
  for (const [id, rawPayload, attempts, leaseToken, lastError] of rows) {
    const payload = parseJson(rawPayload);
    if (payload === undefined) {
      ctx.logger.warn({ queue, id }, 'leased queue item has an unreadable payload; dead-lettered');
      await deadLetter(ctx, queue, id, leaseToken, CORRUPT_PAYLOAD_REASON);
      continue;
    }
    leased.push({ id, payload: payload as T, attempts, leaseToken, leaseExpiresAtMs, lastError: lastError ?? null });
  }
  return leased;
}

/**
 * Settle many leased items, one script call per shard (see `settle-9.lua`); one boolean per
 * entry: false when the item was not the caller's to settle (another token, or no longer leased).
 */
export async function settleLeased(ctx: RedisContext, queue: QueueName, settlements: readonly Settlement[]): Promise<boolean[]> {
  if (settlements.length === 0) return [];
  const now = ctx.clock.nowMs();
  for (const entry of settlements) if (entry.outcome === 'retry') requireTime('retry', 'availableAtMs', entry.availableAtMs);
  return perShard(
    ctx,
    settlements,
    (entry) => entry.id,
    async (shard, entries) => {
      const args: ScriptArg[] = [now];
      for (const entry of entries) {
        if (entry.outcome === 'retry') args.push(entry.id, entry.leaseToken, 'retry', entry.availableAtMs, entry.error);
        else if (entry.outcome === 'dead') args.push(entry.id, entry.leaseToken, 'dead', '', entry.reason);
        else args.push(entry.id, entry.leaseToken, 'ack', '', '');
      }
      const codes = (await ctx.scripts.run('settle', leaseKeys(ctx.keys.queueKeys(queue, shard)), args)) as unknown[];
      return entries.map((entry, i) => ownedResult(entry.outcome, codes[i]));
    },
  );
}

export async function ack(ctx: RedisContext, queue: QueueName, id: string, leaseToken: string): Promise<boolean> {
  const [settled] = await settleLeased(ctx, queue, [{ id, leaseToken, outcome: 'ack' }]);
  return settled === true;
}

export async function retry(
  ctx: RedisContext,
  queue: QueueName,
  id: string,
  leaseToken: string,
  availableAtMs: number,
  error: string,
): Promise<boolean> {
  const [settled] = await settleLeased(ctx, queue, [{ id, leaseToken, outcome: 'retry', availableAtMs, error }]);
  return settled === true;
}

export async function deadLetter(ctx: RedisContext, queue: QueueName, id: string, leaseToken: string, reason: string): Promise<boolean> {
  const [settled] = await settleLeased(ctx, queue, [{ id, leaseToken, outcome: 'dead', reason }]);
  return settled === true;
}
