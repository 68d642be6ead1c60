/**
 * The whole-queue views of the Redis durable queues: dead letters (list, pages, get, replay,
 * delete) and stats. Layout and transitions are described in `queues.ts`.
 *
 * A queue has one shard in the divine layout and `redis.queue_shards` in the cluster one. An id's
 * operations (get, replay, delete) go to its shard; the readers of the whole queue ask every
 * shard concurrently and merge: dead letters in (dead-at, id) order, the order of one shard's
 * `dead` ZSET, so a page cursor (the last entry's dead-at and id) is a position in the merged
 * order and stays valid whichever shards later gain or lose entries.
 */
import type { DeadItem, QueueName, QueueStats } from '../port.ts';
import type { DeadLetter, DeadLetterPage, DeadLetterPageOptions } from '../port-dlq.ts';
import { decodeDeadLetterCursor, encodeDeadLetterCursor } from '../dead-letter-cursor.ts';
import { DEFAULT_LANE, LANES, isLane, zeroLaneStats } from '../lanes.ts';
import type { Lane } from '../port.ts';
import { isRecord, parseJson, type RedisContext } from './context.ts';
import { itemShardKeys, ownedResult, queueShards } from './queue-shards.ts';

interface StoredMeta {
  attempts: number;
  reason: string;
  lane: Lane;
  lastError: string | null;
  firstFailedAtMs: number | null;
  lastFailedAtMs: number | null;
}

function readMeta(raw: string | null): StoredMeta {
  const meta = raw === null ? undefined : parseJson(raw);
  if (!isRecord(meta)) return { attempts: 0, reason: '', lane: DEFAULT_LANE, lastError: null, firstFailedAtMs: null, lastFailedAtMs: null };
  return {
    attempts: typeof meta.attempts === 'number' ? meta.attempts : 0,
    reason: typeof meta.reason === 'string' ? meta.reason : '',
    lane: isLane(meta.lane) ? meta.lane : DEFAULT_LANE,
    lastError: typeof meta.lastError === 'string' ? meta.lastError : null,
    firstFailedAtMs: typeof meta.firstFailedAt === 'number' ? meta.firstFailedAt : null,
    lastFailedAtMs: typeof meta.lastFailedAt === 'number' ? meta.lastFailedAt : null,
  };
}

function deadLetterOf<T>(id: string, deadAtMs: number, rawPayload: string | null, rawMeta: string | null): DeadLetter<T> {
  const payload = rawPayload === null ? null : (parseJson(rawPayload) ?? rawPayload);
  const meta = readMeta(rawMeta);
  const lastFailedAtMs = meta.lastFailedAtMs ?? deadAtMs;
  return {
    id,
    lane: meta.lane,
    payload: payload as T,
    attempts: meta.attempts,
    reason: meta.reason,
    lastError: meta.lastError,
    firstFailedAtMs: meta.firstFailedAtMs ?? lastFailedAtMs,
    lastFailedAtMs,
    deadAtMs,
  };
}

/** One dead entry as the list scripts return it. */
interface RawDead {
  id: string;
  deadAtMs: number;
  rawPayload: string | null;
  rawMeta: string | null;
}

/** (dead-at, id) order: one shard's `dead` ZSET order, ids bytewise (as Redis orders equal scores). */
function compareDead(a: RawDead, b: RawDead): number {
  if (a.deadAtMs !== b.deadAtMs) return a.deadAtMs - b.deadAtMs;
  return Buffer.compare(Buffer.from(a.id), Buffer.from(b.id));
}

/** Run a list script (`listDead-3`, `listDeadPage-3`) on every shard and merge the answers in (dead-at, id) order. */
async function listEveryShard(
  ctx: RedisContext,
  queue: QueueName,
  script: 'listDead' | 'listDeadPage',
  args: ReadonlyArray<string | number>,
): Promise<RawDead[]> {
  const replies = await Promise.all(
    queueShards(ctx).map(async (shard) => {
      const keys = ctx.keys.queueKeys(queue, shard);
      return (await ctx.scripts.run(script, [keys.dead, keys.items, keys.meta], args)) as (string | null)[];
    }),
  );
  const entries: RawDead[] = [];
  for (const flat of replies) {
    for (let i = 0; i + 3 < flat.length; i += 4) {
      const id = flat[i];
      if (typeof id !== 'string') continue;
      entries.push({ id, deadAtMs: Number(flat[i + 1]), rawPayload: flat[i + 2] ?? null, rawMeta: flat[i + 3] ?? null });
    }
  }
  return entries.sort(compareDead);
}

export async function listDead<T>(ctx: RedisContext, queue: QueueName, limit: number): Promise<DeadItem<T>[]> {
  if (!Number.isSafeInteger(limit) || limit < 1) return [];
  // Every shard's oldest `limit`: the merged oldest `limit` are among them.
  const entries = (await listEveryShard(ctx, queue, 'listDead', [limit])).slice(0, limit);
  return entries.map(({ id, deadAtMs, rawPayload, rawMeta }) => {
    const payload = rawPayload === null ? null : (parseJson(rawPayload) ?? rawPayload);
    const meta = readMeta(rawMeta);
    return { id, payload: payload as T, attempts: meta.attempts, reason: meta.reason, deadAtMs };
  });
}

export async function listDeadPage<T>(ctx: RedisContext, queue: QueueName, options: DeadLetterPageOptions): Promise<DeadLetterPage<T>> {
  const limit = Math.floor(options.limit);
  if (!(limit >= 1)) return { items: [], nextCursor: null };
  const after = options.cursor === undefined ? null : decodeDeadLetterCursor(options.cursor);
  // Every shard's next `limit + 1` after the cursor; one entry more than asked says whether a
  // next page exists without a second call.
  const entries = await listEveryShard(ctx, queue, 'listDeadPage', [after === null ? '-inf' : after.deadAtMs, after?.id ?? '', limit + 1]);
  const page = entries.slice(0, limit).map((entry) => deadLetterOf<T>(entry.id, entry.deadAtMs, entry.rawPayload, entry.rawMeta));
  const last = page.at(-1);
  return { items: page, nextCursor: entries.length > limit && last ? encodeDeadLetterCursor(last) : null };
}

export async function getDead<T>(ctx: RedisContext, queue: QueueName, id: string): Promise<DeadLetter<T> | null> {
  const keys = itemShardKeys(ctx, queue, id);
  const results = (await ctx.redis.multi().zscore(keys.dead, id).hget(keys.items, id).hget(keys.meta, id).exec()) ?? [];
  const values = results.map(([error, value]) => {
    if (error) throw error;
    return value as string | null;
  });
  const [score = null, rawPayload = null, rawMeta = null] = values;
  return score === null ? null : deadLetterOf<T>(id, Number(score), rawPayload, rawMeta);
}

function replayKeys(ctx: RedisContext, queue: QueueName, shard: number): string[] {
  const keys = ctx.keys.queueKeys(queue, shard);
  return [keys.dead, ...keys.readyKeys, keys.meta];
}

export async function replayDead(ctx: RedisContext, queue: QueueName, id: string): Promise<boolean> {
  if (id === '') return false;
  const shard = ctx.keys.queueShardOf(id);
  return ownedResult('replayDead', await ctx.scripts.run('replayDead', replayKeys(ctx, queue, shard), [ctx.clock.nowMs(), id, 0]));
}

/** Dead letters replayed per script call by {@link replayAllDead}: a short step, so Redis keeps serving others between them. */
const REPLAY_ALL_STEP = 500;

/** Replay every dead letter of one shard, in steps. */
async function replayShard(ctx: RedisContext, queue: QueueName, shard: number): Promise<number> {
  // Bounded by the count at the start, so items that die again meanwhile cannot keep it going.
  const steps = Math.ceil((await ctx.redis.zcard(ctx.keys.queueKeys(queue, shard).dead)) / REPLAY_ALL_STEP) + 1;
  let replayed = 0;
  for (let step = 0; step < steps; step += 1) {
    const count = Number(await ctx.scripts.run('replayDead', replayKeys(ctx, queue, shard), [ctx.clock.nowMs(), '', REPLAY_ALL_STEP]));
    replayed += count;
    if (count < REPLAY_ALL_STEP) break;
  }
  return replayed;
}

export async function replayAllDead(ctx: RedisContext, queue: QueueName): Promise<number> {
  const counts = await Promise.all(queueShards(ctx).map((shard) => replayShard(ctx, queue, shard)));
  return counts.reduce((sum, count) => sum + count, 0);
}

export async function deleteDead(ctx: RedisContext, queue: QueueName, id: string): Promise<boolean> {
  const keys = itemShardKeys(ctx, queue, id);
  return ownedResult('deleteDead', await ctx.scripts.run('deleteDead', [keys.dead, keys.items, keys.meta], [id]));
}

/** Per lane: ready, expired leases, live leases; then dead. One MULTI per shard (its keys share a slot). */
async function shardCounts(ctx: RedisContext, queue: QueueName, shard: number, now: number): Promise<number[]> {
  const keys = ctx.keys.queueKeys(queue, shard);
  const multi = ctx.redis.multi();
  for (const lane of LANES) {
    multi.zcard(keys.lanes[lane].ready).zcount(keys.lanes[lane].leased, '-inf', now).zcount(keys.lanes[lane].leased, `(${now}`, '+inf');
  }
  multi.zcard(keys.dead);
  return ((await multi.exec()) ?? []).map(([error, value]) => {
    if (error) throw error;
    return Number(value);
  });
}

/**
 * The earliest time an item of `queue` became due and still waits: per shard and lane, the first
 * ready entry due by now (scored by available-at) and the first expired lease (scored by its
 * expiry). Read-only, so plain reads; each shard's keys share a slot.
 */
export async function oldestDueAtMs(ctx: RedisContext, queue: QueueName): Promise<number | null> {
  const now = ctx.clock.nowMs();
  const perShard = await Promise.all(
    queueShards(ctx).map(async (shard) => {
      const keys = ctx.keys.queueKeys(queue, shard);
      const multi = ctx.redis.multi();
      for (const lane of LANES) {
        multi.zrangebyscore(keys.lanes[lane].ready, '-inf', now, 'WITHSCORES', 'LIMIT', 0, 1);
        multi.zrangebyscore(keys.lanes[lane].leased, '-inf', now, 'WITHSCORES', 'LIMIT', 0, 1);
      }
      return ((await multi.exec()) ?? []).map(([error, value]) => {
        if (error) throw error;
        const [, score] = value as string[];
        return score === undefined ? null : Number(score);
      });
    }),
  );
  const due = perShard.flat().filter((score): score is number => score !== null);
  return due.length === 0 ? null : Math.min(...due);
}

export async function queueStats(ctx: RedisContext, queue: QueueName): Promise<QueueStats> {
  const now = ctx.clock.nowMs();
  const perShard = await Promise.all(queueShards(ctx).map((shard) => shardCounts(ctx, queue, shard, now)));
  const stats: QueueStats = { ready: 0, leased: 0, dead: 0, lanes: zeroLaneStats() };
  for (const counts of perShard) {
    stats.dead += counts[LANES.length * 3] ?? 0;
    LANES.forEach((lane, i) => {
      const [ready = 0, expiredLeases = 0, liveLeases = 0] = counts.slice(i * 3, i * 3 + 3);
      stats.lanes[lane].ready += ready + expiredLeases;
      stats.lanes[lane].leased += liveLeases;
      stats.ready += ready + expiredLeases;
      stats.leased += liveLeases;
    });
  }
  return stats;
}
