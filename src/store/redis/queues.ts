/**
 * Durable queues on Redis.
 *
 * Layout, per queue `{name}` (`inbound`, `outbound`):
 *
 * | key                    | type | member → score / value                                  |
 * |------------------------|------|---------------------------------------------------------|
 * | `queue:{name}:ready`   | ZSET | id → available-at, ms (scheduled items included)        |
 * | `queue:{name}:leased`  | ZSET | id → lease expiry, ms                                   |
 * | `queue:{name}:dead`    | ZSET | id → dead-lettered at, ms                               |
 * | `queue:{name}:items`   | HASH | id → payload JSON, exactly as `JSON.stringify` wrote it |
 * | `queue:{name}:meta`    | HASH | id → `{"attempts":n,"leaseToken"?,"lastError"?,"reason"?}` |
 *
 * An item id is in exactly one of ready / leased / dead, and in `items` and `meta` from
 * `enqueue` until `ack` or `deleteDead`; `items` therefore answers "is this id already queued,
 * leased or dead" for the enqueue idempotency check. Payload and metadata are split so the
 * scripts edit metadata with cjson without ever decoding a payload (cjson would turn `[]` into
 * `{}` and round numbers to 14 digits).
 *
 * Transitions (one Lua script each, every key in KEYS, `now` passed in from the store's clock):
 *
 * - `enqueue-3` (many items per call): new id → ready at `availableAtMs` (default now),
 *   attempts 0. Known id → no-op.
 * - `lease-5`: first, leases with expiry ≤ now go back to ready scored by their expiry (so they
 *   are due at once and keep their place), or straight to dead when they already had
 *   `maxAttempts` leases. Then due items (score ≤ now, ascending score, ties by id) are taken
 *   up to `max`: one that already had `maxAttempts` leases goes to dead with reason
 *   `max attempts exceeded`; any other moves to leased until now + `leaseMs` with attempts + 1
 *   and a fresh lease token (`<uuid of the call>:<k>`, the uuid made in TypeScript, passed as ARGV, like every time).
 * - `settle-5` (ack, retry, dead-letter; many items per call): only with the current lease
 *   token; otherwise NotOwner (another token) or NotFound (not leased), both reported as `false`. A lease that
 *   expired but was not yet recovered by a `lease` call is still the holder's. `retry` keeps the
 *   attempt count and records `lastError`; `deadLetter` records `reason`.
 * - `replayDead-3`: dead → ready now, attempts reset to 0. `deleteDead-3`: dead → gone.
 *
 * Stats count an expired, not yet recovered lease as ready (it is waiting, not live).
 *
 * Operator view (redis-cli): `ZRANGE queue:outbound:dead 0 9 WITHSCORES`, then
 * `HGET queue:outbound:meta <id>` for the reason and `HGET queue:outbound:items <id>` for the
 * payload. docs/queues.md describes the same design for operators.
 */
import { randomUUID } from 'node:crypto';
import { StoreStatus, checkStatus } from '../errors.ts';
import type { DeadItem, EnqueueItem, LeaseOptions, LeasedItem, QueueName, QueueStats, Settlement } from '../port.ts';
import type { ScriptArg } from './scripts.ts';
import { isRecord, parseJson, type RedisContext } from './context.ts';
import { queueKeys } from './keys.ts';

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
    args.push(item.id, payload, availableAtMs);
  }
  const keys = queueKeys(queue);
  const added = (await ctx.scripts.run('enqueue', [keys.ready, keys.items, keys.meta], args)) as number[];
  return items.map((_, i) => added[i] === 1);
}

export async function lease<T>(ctx: RedisContext, queue: QueueName, options: LeaseOptions): Promise<LeasedItem<T>[]> {
  const { max, leaseMs, maxAttempts } = options;
  requirePositiveInteger('lease', 'max', max);
  requirePositiveInteger('lease', 'maxAttempts', maxAttempts);
  if (!Number.isFinite(leaseMs) || leaseMs <= 0) throw new RangeError(`lease: leaseMs must be positive, got ${leaseMs}`);
  const now = ctx.clock.nowMs();
  const leaseExpiresAtMs = now + leaseMs;
  const keys = queueKeys(queue);
  const [deadCount, droppedCount, rows] = (await ctx.scripts.run(
    'lease',
    [keys.ready, keys.leased, keys.dead, keys.items, keys.meta],
    [now, leaseExpiresAtMs, maxAttempts, max, randomUUID()],
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
  const keys = queueKeys(queue);
  const codes = (await ctx.scripts.run('settle', [keys.ready, keys.leased, keys.dead, keys.items, keys.meta], args)) as unknown[];
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
}

function readMeta(raw: string | null): StoredMeta {
  const meta = raw === null ? undefined : parseJson(raw);
  if (!isRecord(meta)) return { attempts: 0, reason: '' };
  return {
    attempts: typeof meta.attempts === 'number' ? meta.attempts : 0,
    reason: typeof meta.reason === 'string' ? meta.reason : '',
  };
}

export async function listDead<T>(ctx: RedisContext, queue: QueueName, limit: number): Promise<DeadItem<T>[]> {
  if (!Number.isSafeInteger(limit) || limit < 1) return [];
  const keys = queueKeys(queue);
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

export async function replayDead(ctx: RedisContext, queue: QueueName, id: string): Promise<boolean> {
  const keys = queueKeys(queue);
  return ownedResult('replayDead', await ctx.scripts.run('replayDead', [keys.dead, keys.ready, keys.meta], [id, ctx.clock.nowMs()]));
}

export async function deleteDead(ctx: RedisContext, queue: QueueName, id: string): Promise<boolean> {
  const keys = queueKeys(queue);
  return ownedResult('deleteDead', await ctx.scripts.run('deleteDead', [keys.dead, keys.items, keys.meta], [id]));
}

export async function queueStats(ctx: RedisContext, queue: QueueName): Promise<QueueStats> {
  const keys = queueKeys(queue);
  const now = ctx.clock.nowMs();
  const results =
    (await ctx.redis
      .multi()
      .zcard(keys.ready)
      .zcount(keys.leased, '-inf', now)
      .zcount(keys.leased, `(${now}`, '+inf')
      .zcard(keys.dead)
      .exec()) ?? [];
  const counts = results.map(([error, value]) => {
    if (error) throw error;
    return Number(value);
  });
  const [ready = 0, expiredLeases = 0, liveLeases = 0, dead = 0] = counts;
  return { ready: ready + expiredLeases, leased: liveLeases, dead };
}
