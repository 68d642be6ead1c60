/**
 * Durable queues on Redis.
 *
 * Layout, per queue `{name}` (`inbound`, `outbound`) and lane (`critical`, `normal`, `low`; the
 * normal lane keeps the names of before the lanes, so older items are normal ones):
 *
 * | key                            | type | member → score / value                                  |
 * |--------------------------------|------|---------------------------------------------------------|
 * | `queue:{name}:ready`           | ZSET | id → available-at, ms (scheduled items included), normal |
 * | `queue:{name}:leased`          | ZSET | id → lease expiry, ms, normal lane                      |
 * | `queue:{name}:{lane}:ready`    | ZSET | the same, critical and low lanes                        |
 * | `queue:{name}:{lane}:leased`   | ZSET | the same, critical and low lanes                        |
 * | `queue:{name}:dead`            | ZSET | id → dead-lettered at, ms (every lane)                  |
 * | `queue:{name}:items`           | HASH | id → payload JSON, exactly as `JSON.stringify` wrote it |
 * | `queue:{name}:meta`            | HASH | id → `{"attempts":n,"leaseToken"?,"lastError"?,"reason"?,"lane"?,"firstFailedAt"?,"lastFailedAt"?}` |
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
 * - `lease-9`: first, in every lane, leases with expiry ≤ now go back to ready scored by their
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
 * - Failure times (port-dlq.ts): `settle-9` records now on a retry or dead-letter, `lease-9` an
 *   expired lease's expiry when it recovers it.
 *
 * Stats count an expired, not yet recovered lease as ready (it is waiting, not live).
 *
 * Operator view (redis-cli): `ZRANGE queue:outbound:dead 0 9 WITHSCORES`, then
 * `HGET queue:outbound:meta <id>` for the reason and `HGET queue:outbound:items <id>` for the
 * payload. docs/queues.md describes the same design for operators.
 */
import { randomUUID } from 'node:crypto';
import { StoreStatus, checkStatus } from '../errors.ts';
import type { DeadItem, EnqueueItem, Lane, LeaseOptions, LeasedItem, QueueName, QueueStats, Settlement } from '../port.ts';
import type { DeadLetter, DeadLetterPage, DeadLetterPageOptions } from '../port-dlq.ts';
import { decodeDeadLetterCursor, encodeDeadLetterCursor } from '../dead-letter-cursor.ts';
import { DEFAULT_LANE, LANES, isLane, leasePasses, zeroLaneStats } from '../lanes.ts';
import type { ScriptArg } from './scripts.ts';
import { isRecord, parseJson, type RedisContext } from './context.ts';

/** Reason recorded when a leased item's payload no longer parses (a damaged queue entry). */
export const CORRUPT_PAYLOAD_REASON = 'payload is not valid JSON';

type LeaseReply = [number, number, [string, string, number, string, string | null][]];

function requirePositiveInteger(operation: string, name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${operation}: ${name} must be a positive integer, got ${value}`);
}

function requireTime(operation: string, name: string, value: number): void {
  if (!Number.isFinite(value)) throw new RangeError(`${operation}: ${name} must be a finite number of ms, got ${value}`);
}

/** NotOwner and NotFound mean "not yours to change" (false); anything else negative throws. */
function ownedResult(operation: string, code: unknown): boolean {
  const status = Number(code);
  if (status === (StoreStatus.NotOwner as number) || status === (StoreStatus.NotFound as number)) return false;
  return checkStatus(operation, status) === 1;
}

export async function enqueue<T>(ctx: RedisContext, queue: QueueName, item: EnqueueItem<T>): Promise<boolean> {
  const [added] = await enqueueMany(ctx, queue, [item]);
  return added === true;
}

/** Enqueue many items in one script call; one result per item, in order (false for a known id). */
export async function enqueueMany<T>(ctx: RedisContext, queue: QueueName, items: ReadonlyArray<EnqueueItem<T>>): Promise<boolean[]> {
  if (items.length === 0) return [];
  const nowMs = ctx.clock.nowMs();
  const args: ScriptArg[] = [];
  for (const item of items) {
    // undefined for an undefined, function or symbol payload, whatever the lib type says.
    const payload = JSON.stringify(item.payload) as string | undefined;
    if (payload === undefined) throw new TypeError(`enqueue: payload of ${item.id} is not JSON-serialisable`);
    const availableAtMs = item.availableAtMs ?? nowMs;
    requireTime('enqueue', 'availableAtMs', availableAtMs);
    args.push(item.id, payload, availableAtMs, item.lane ?? DEFAULT_LANE);
  }
  const keys = ctx.keys.queueKeys(queue);
  const added = (await ctx.scripts.run('enqueue', [...keys.readyKeys, keys.items, keys.meta], args)) as number[];
  return items.map((_, i) => added[i] === 1);
}

export async function lease<T>(ctx: RedisContext, queue: QueueName, options: LeaseOptions): Promise<LeasedItem<T>[]> {
  const { max, leaseMs, maxAttempts } = options;
  requirePositiveInteger('lease', 'max', max);
  requirePositiveInteger('lease', 'maxAttempts', maxAttempts);
  if (!Number.isFinite(leaseMs) || leaseMs <= 0) throw new RangeError(`lease: leaseMs must be positive, got ${leaseMs}`);
  const now = ctx.clock.nowMs();
  const leaseExpiresAtMs = now + leaseMs;
  const keys = ctx.keys.queueKeys(queue);
  const passes = leasePasses(max).flatMap((pass) => [pass.lane, pass.limit ?? '']);
  const [deadCount, droppedCount, rows] = (await ctx.scripts.run(
    'lease',
    [...keys.readyKeys, ...keys.leasedKeys, keys.dead, keys.items, keys.meta],
    [now, leaseExpiresAtMs, maxAttempts, max, randomUUID(), ...passes],
  )) as LeaseReply;
  if (deadCount > 0) ctx.logger.warn({ queue, count: deadCount }, 'queue items exceeded max attempts; dead-lettered');
  if (droppedCount > 0) ctx.logger.warn({ queue, count: droppedCount }, 'queue ids without a payload dropped');

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
 * Settle many leased items in one script call (see `settle-5.lua`); one boolean per entry:
 * false when the item was not the caller's to settle (another token, or no longer leased).
 */
export async function settleLeased(ctx: RedisContext, queue: QueueName, settlements: readonly Settlement[]): Promise<boolean[]> {
  if (settlements.length === 0) return [];
  const args: ScriptArg[] = [ctx.clock.nowMs()];
  for (const entry of settlements) {
    if (entry.outcome === 'retry') {
      requireTime('retry', 'availableAtMs', entry.availableAtMs);
      args.push(entry.id, entry.leaseToken, 'retry', entry.availableAtMs, entry.error);
    } else if (entry.outcome === 'dead') args.push(entry.id, entry.leaseToken, 'dead', '', entry.reason);
    else args.push(entry.id, entry.leaseToken, 'ack', '', '');
  }
  const keys = ctx.keys.queueKeys(queue);
  const codes = (await ctx.scripts.run(
    'settle',
    [...keys.readyKeys, ...keys.leasedKeys, keys.dead, keys.items, keys.meta],
    args,
  )) as unknown[];
  return settlements.map((entry, i) => ownedResult(entry.outcome, codes[i]));
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

export async function listDead<T>(ctx: RedisContext, queue: QueueName, limit: number): Promise<DeadItem<T>[]> {
  if (!Number.isSafeInteger(limit) || limit < 1) return [];
  const keys = ctx.keys.queueKeys(queue);
  const flat = (await ctx.scripts.run('listDead', [keys.dead, keys.items, keys.meta], [limit])) as (string | null)[];
  const items: DeadItem<T>[] = [];
  for (let i = 0; i + 3 < flat.length; i += 4) {
    const id = flat[i];
    if (typeof id !== 'string') continue;
    const rawPayload = flat[i + 2] ?? null;
    const payload = rawPayload === null ? null : (parseJson(rawPayload) ?? rawPayload);
    const meta = readMeta(flat[i + 3] ?? null);
    items.push({ id, payload: payload as T, attempts: meta.attempts, reason: meta.reason, deadAtMs: Number(flat[i + 1]) });
  }
  return items;
}

export async function listDeadPage<T>(ctx: RedisContext, queue: QueueName, options: DeadLetterPageOptions): Promise<DeadLetterPage<T>> {
  const limit = Math.floor(options.limit);
  if (!(limit >= 1)) return { items: [], nextCursor: null };
  const after = options.cursor === undefined ? null : decodeDeadLetterCursor(options.cursor);
  const keys = ctx.keys.queueKeys(queue);
  // One entry more than asked says whether a next page exists without a second call.
  const flat = (await ctx.scripts.run(
    'listDeadPage',
    [keys.dead, keys.items, keys.meta],
    [after === null ? '-inf' : after.deadAtMs, after?.id ?? '', limit + 1],
  )) as (string | null)[];
  const items: DeadLetter<T>[] = [];
  for (let i = 0; i + 3 < flat.length; i += 4) {
    const id = flat[i];
    if (typeof id !== 'string') continue;
    items.push(deadLetterOf<T>(id, Number(flat[i + 1]), flat[i + 2] ?? null, flat[i + 3] ?? null));
  }
  const page = items.slice(0, limit);
  const last = page.at(-1);
  return { items: page, nextCursor: items.length > limit && last ? encodeDeadLetterCursor(last) : null };
}

export async function getDead<T>(ctx: RedisContext, queue: QueueName, id: string): Promise<DeadLetter<T> | null> {
  const keys = ctx.keys.queueKeys(queue);
  const results = (await ctx.redis.multi().zscore(keys.dead, id).hget(keys.items, id).hget(keys.meta, id).exec()) ?? [];
  const values = results.map(([error, value]) => {
    if (error) throw error;
    return value as string | null;
  });
  const [score = null, rawPayload = null, rawMeta = null] = values;
  return score === null ? null : deadLetterOf<T>(id, Number(score), rawPayload, rawMeta);
}

function replayKeys(ctx: RedisContext, queue: QueueName): string[] {
  const keys = ctx.keys.queueKeys(queue);
  return [keys.dead, ...keys.readyKeys, keys.meta];
}

export async function replayDead(ctx: RedisContext, queue: QueueName, id: string): Promise<boolean> {
  if (id === '') return false;
  return ownedResult('replayDead', await ctx.scripts.run('replayDead', replayKeys(ctx, queue), [ctx.clock.nowMs(), id, 0]));
}

/** Dead letters replayed per script call by {@link replayAllDead}: a short step, so Redis keeps serving others between them. */
const REPLAY_ALL_STEP = 500;

export async function replayAllDead(ctx: RedisContext, queue: QueueName): Promise<number> {
  // Bounded by the count at the start, so items that die again meanwhile cannot keep it going.
  const steps = Math.ceil((await ctx.redis.zcard(ctx.keys.queueKeys(queue).dead)) / REPLAY_ALL_STEP) + 1;
  let replayed = 0;
  for (let step = 0; step < steps; step += 1) {
    const count = Number(await ctx.scripts.run('replayDead', replayKeys(ctx, queue), [ctx.clock.nowMs(), '', REPLAY_ALL_STEP]));
    replayed += count;
    if (count < REPLAY_ALL_STEP) break;
  }
  return replayed;
}

export async function deleteDead(ctx: RedisContext, queue: QueueName, id: string): Promise<boolean> {
  const keys = ctx.keys.queueKeys(queue);
  return ownedResult('deleteDead', await ctx.scripts.run('deleteDead', [keys.dead, keys.items, keys.meta], [id]));
}

export async function queueStats(ctx: RedisContext, queue: QueueName): Promise<QueueStats> {
  const keys = ctx.keys.queueKeys(queue);
  const now = ctx.clock.nowMs();
  const multi = ctx.redis.multi();
  for (const lane of LANES) {
    multi.zcard(keys.lanes[lane].ready).zcount(keys.lanes[lane].leased, '-inf', now).zcount(keys.lanes[lane].leased, `(${now}`, '+inf');
  }
  multi.zcard(keys.dead);
  const counts = ((await multi.exec()) ?? []).map(([error, value]) => {
    if (error) throw error;
    return Number(value);
  });
  const stats: QueueStats = { ready: 0, leased: 0, dead: counts[LANES.length * 3] ?? 0, lanes: zeroLaneStats() };
  LANES.forEach((lane, i) => {
    const [ready = 0, expiredLeases = 0, liveLeases = 0] = counts.slice(i * 3, i * 3 + 3);
    stats.lanes[lane] = { ready: ready + expiredLeases, leased: liveLeases };
    stats.ready += ready + expiredLeases;
    stats.leased += liveLeases;
  });
  return stats;
}
