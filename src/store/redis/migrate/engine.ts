/**
 * Copying a store from one key layout to another (`nostr-push store migrate-layout`): a source
 * Redis in the divine layout into a target (a Redis Cluster) in the cluster layout.
 *
 * The data is walked family by family (`families.ts`: `user_tokens:*`, `token_to_pubkey`, …). A
 * family scans its source keys (SCAN MATCH, {@link MIGRATE_SCAN_COUNT} at a time) and copies each
 * into the target layout, either whole under its new name (DUMP and RESTORE REPLACE with the time
 * to live it has left) or member by member when the target layout splits one key into several
 * (one global hash into a hash per owner or per shard).
 *
 * Idempotent and resumable: every write replaces or sets (RESTORE REPLACE, HSET, ZADD, SADD), so a
 * second run writes the same target again; after each scan step the family's SCAN cursor is saved
 * in the target ({@link MIGRATE_PROGRESS_KEY}), and a run started again continues from there
 * (SCAN returns every key present for the whole walk at least once, so nothing is skipped). A
 * finished family is marked done and skipped by later runs unless `restart` is asked.
 *
 * Verified: each family counts what it copied and compares the source's count of units (keys, or
 * members for split keys) with the target's after the walk; any difference is reported and makes
 * the command fail. Run it with the fleet stopped: writes arriving during a copy are not followed.
 */
import type { Redis } from 'ioredis';

/** Keys asked of SCAN per step: large enough to keep round trips few, small enough not to stall a server. */
export const MIGRATE_SCAN_COUNT = 1_000;
/** Hash or set members read per HSCAN/SSCAN/ZSCAN step of a split key. */
export const MIGRATE_MEMBER_SCAN_COUNT = 1_000;
/** The target hash holding each family's cursor (`{family}` → cursor, or `done`). */
export const MIGRATE_PROGRESS_KEY = 'migrate_layout:progress';

/** What a family's copy may use: both servers (their key prefixes already applied by the clients). */
export interface MigrationIo {
  source: Redis;
  target: Redis;
}

export interface KeyFamily {
  /** Stable name: the progress record's field and the report's row. */
  name: string;
  /** SCAN MATCH pattern over the source keys (without the client's key prefix). */
  match: string;
  /**
   * Copy one source key (a name SCAN returned, without the prefix). Returns the units copied (1
   * for a whole key, the member count for a split one), or 0 when the key is not this family's
   * after all (a pattern can be wider than the family, e.g. `dedup:*`).
   */
  copy(key: string, io: MigrationIo): Promise<number>;
  /**
   * Units in the target once copied, for the verification (the same units `copy` returns); called
   * after each scan step with the keys that step copied.
   */
  countTarget(copiedKeys: readonly string[], io: MigrationIo): Promise<number>;
}

export interface FamilyReport {
  name: string;
  /** Source keys of this family the walk saw (this run). */
  keys: number;
  /** Units copied (this run). */
  copied: number;
  /** Units the target holds for those keys after the copy. */
  inTarget: number;
  /** True when the family was finished by an earlier run and skipped. */
  skipped: boolean;
}

export interface MigrationOptions {
  families: readonly KeyFamily[];
  io: MigrationIo;
  /** Start every family over, ignoring saved progress. */
  restart?: boolean;
  /** Told of each finished family. */
  onFamily?: (report: FamilyReport) => void;
}

/** Walk every family; resolves with one report per family. */
export async function migrateLayout(options: MigrationOptions): Promise<FamilyReport[]> {
  const { io } = options;
  if (options.restart) await io.target.del(MIGRATE_PROGRESS_KEY);
  const reports: FamilyReport[] = [];
  for (const family of options.families) {
    const saved = await io.target.hget(MIGRATE_PROGRESS_KEY, family.name);
    if (saved === 'done') {
      const report = { name: family.name, keys: 0, copied: 0, inTarget: 0, skipped: true };
      reports.push(report);
      options.onFamily?.(report);
      continue;
    }
    let cursor = saved ?? '0';
    let keys = 0;
    let copied = 0;
    let inTarget = 0;
    do {
      const [next, batch] = await io.source.scan(cursor, 'MATCH', sourcePattern(io.source, family.match), 'COUNT', MIGRATE_SCAN_COUNT);
      const names = batch.map((key) => withoutPrefix(io.source, key));
      const units = await Promise.all(names.map((key) => family.copy(key, io)));
      const copiedKeys = names.filter((_, i) => (units[i] ?? 0) > 0);
      keys += copiedKeys.length;
      copied += units.reduce((sum, n) => sum + n, 0);
      // Verified batch by batch, so a walk of millions of keys never holds their names.
      if (copiedKeys.length > 0) inTarget += await family.countTarget(copiedKeys, io);
      cursor = next;
      await io.target.hset(MIGRATE_PROGRESS_KEY, family.name, cursor === '0' ? 'done' : cursor);
    } while (cursor !== '0');
    const report = { name: family.name, keys, copied, inTarget, skipped: false };
    reports.push(report);
    options.onFamily?.(report);
  }
  return reports;
}

/** The families whose target does not hold what was copied. */
export function unverifiedFamilies(reports: readonly FamilyReport[]): FamilyReport[] {
  return reports.filter((report) => !report.skipped && report.inTarget !== report.copied);
}

// ---- copy primitives the families are written with ------------------------------------------

/** Copy `sourceKey` whole to `targetKey` with its remaining time to live; 0 when it vanished meanwhile. */
export async function copyWholeKey(io: MigrationIo, sourceKey: string, targetKey: string): Promise<number> {
  // DUMP answers nil for a key that is gone; ioredis' type says Buffer only.
  const [dump, ttlMs] = await Promise.all([io.source.dumpBuffer(sourceKey) as Promise<Buffer | null>, io.source.pttl(sourceKey)]);
  if (dump === null || ttlMs === -2) return 0;
  await io.target.restore(targetKey, ttlMs > 0 ? ttlMs : 0, dump, 'REPLACE');
  return 1;
}

/** A key split member by member: a hash (field → value), a sorted set (member → score) or a set (member). */
export type SplitKind = 'hash' | 'zset' | 'set';

/**
 * Walk the (field, value) pairs of a hash or the (member, score) pairs of a sorted set, one
 * HSCAN/ZSCAN step at a time; `onStep` handles one step's pairs and answers how many it counts.
 * Returns the sum.
 */
export async function forEachMemberStep(
  client: Redis,
  kind: SplitKind,
  key: string,
  onStep: (pairs: Array<[string, string]>) => Promise<number>,
): Promise<number> {
  let cursor = '0';
  let counted = 0;
  do {
    const [next, flat] =
      kind === 'hash'
        ? await client.hscan(key, cursor, 'COUNT', MIGRATE_MEMBER_SCAN_COUNT)
        : kind === 'zset'
          ? await client.zscan(key, cursor, 'COUNT', MIGRATE_MEMBER_SCAN_COUNT)
          : await client.sscan(key, cursor, 'COUNT', MIGRATE_MEMBER_SCAN_COUNT);
    const pairs: Array<[string, string]> = [];
    // SSCAN answers members alone: each is its own pair, with no value.
    if (kind === 'set') for (const member of flat) pairs.push([member, '']);
    else for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([flat[i] as string, flat[i + 1] as string]);
    counted += await onStep(pairs);
    cursor = next;
  } while (cursor !== '0');
  return counted;
}

/** Copy a hash field by field, each to the target key `route(field, value)` chooses; returns the fields copied. */
export function splitHash(io: MigrationIo, sourceKey: string, route: (field: string, value: string) => string): Promise<number> {
  return forEachMemberStep(io.source, 'hash', sourceKey, async (pairs) => {
    await Promise.all(pairs.map(([field, value]) => io.target.hset(route(field, value), field, value)));
    return pairs.length;
  });
}

/** Copy a sorted set member by member, each to the target key `route(member)` chooses; returns the members copied. */
export function splitSortedSet(io: MigrationIo, sourceKey: string, route: (member: string) => string): Promise<number> {
  return forEachMemberStep(io.source, 'zset', sourceKey, async (pairs) => {
    await Promise.all(pairs.map(([member, score]) => io.target.zadd(route(member), score, member)));
    return pairs.length;
  });
}

/** Copy a set member by member, each to the target key `route(member)` chooses; returns the members copied. */
export function splitSet(io: MigrationIo, sourceKey: string, route: (member: string) => string): Promise<number> {
  return forEachMemberStep(io.source, 'set', sourceKey, async (pairs) => {
    await Promise.all(pairs.map(([member]) => io.target.sadd(route(member), member)));
    return pairs.length;
  });
}

/** Whole-key families: the target keys that exist among `targetKeys`. */
export async function countExisting(io: MigrationIo, targetKeys: readonly string[]): Promise<number> {
  const exists = await Promise.all(targetKeys.map((key) => io.target.exists(key)));
  return exists.reduce((sum, n) => sum + n, 0);
}

function prefixOf(client: Redis): string {
  return client.options.keyPrefix ?? '';
}

/** SCAN does not apply ioredis' key prefix: the pattern gets it by hand. */
function sourcePattern(client: Redis, match: string): string {
  return `${prefixOf(client)}${match}`;
}

/** SCAN returns full names: what the families work with is the name under the prefix. */
function withoutPrefix(client: Redis, key: string): string {
  const prefix = prefixOf(client);
  return prefix !== '' && key.startsWith(prefix) ? key.slice(prefix.length) : key;
}
