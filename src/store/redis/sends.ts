/**
 * Sends and idempotency records on Redis (port-sends.ts); the layout is in `keys.ts`.
 *
 * A send's record (`send:{app}:{id}`), its idempotency record (`send_idem:{app}:{key}`) and its
 * member in the due schedule (`sends:due:{lane}`, sharded in the cluster layout) live in three
 * slots, so every operation is a sequence of one-slot steps, the same on a single Redis. The
 * record is the source of truth for the state; the schedule only says when to look at it.
 *
 * Invariant: a scheduled or started send has a due member (possibly late: at a lease deadline).
 * A member whose record is gone, cancelled or done is dropped by the next claim that meets it.
 *
 * - create: (1) take the idempotency key (`claimIdempotencyKey-1`; its JSON also holds when it
 *   was taken), (2) write the record (`createSend-1`), (3) `ZADD NX` the due member. A crash
 *   after (1) leaves a key naming a send that is not there, or not due: the client's retry with
 *   the same key and the same request finds its own id held and completes steps (2) and (3) for
 *   it (each a no-op when done already; skipped once the record could have expired, so a send
 *   is never made twice), so it never answers with an id that will never be sent. Without a key, a crash
 *   leaves at most a record nobody knows the id of, never due, expiring with its lifetime.
 * - claim: (1) lease the member in its due shard (`leaseDue-1`), (2) start the record
 *   (`claimSend-1`). A crash between leaves the member due at the lease deadline: retried then.
 * - advance: (1) the record's offset and state (`advanceSend-1`), (2) the member due now, or
 *   removed when done. A crash between leaves it due at the lease deadline (the page recorded,
 *   the next one late) or a member of a done send (dropped by the next claim).
 * - cancel: (1) the record cancelled (`cancelSend-1`), (2) the member removed; a crash between
 *   leaves a member the next claim drops.
 */
import { StoreError, StoreStatus } from '../errors.ts';
import type { Lane } from '../port.ts';
import type {
  CancelSendResult,
  ClaimedSend,
  CreateSendResult,
  IdempotencyClaim,
  NewSend,
  SendRecord,
  SendRequest,
  SendState,
} from '../port-sends.ts';
import { SEND_LANES } from '../port-sends.ts';
import { isRecord, parseJson, type RedisContext } from './context.ts';

/** Claims that lose a race with another worker before one is handed out or the schedule is empty. */
const CLAIM_RACE_RETRIES = 5;
const SEND_STATES: readonly SendState[] = ['scheduled', 'started', 'done', 'cancelled'];

/** `cancelSend-1.lua`'s code for an unknown send. */
const NOT_FOUND: number = StoreStatus.NotFound;

const dueMember = (appId: string, id: string): string => `${appId}:${id}`;
const laneOf = (stored: unknown): Lane => (stored === 'critical' || stored === 'low' ? stored : 'normal');

function parseRequest(operation: string, raw: string): SendRequest {
  const request = parseJson(raw);
  if (!isRecord(request)) throw new StoreError(StoreStatus.Corrupt, operation, 'send request is not a JSON object');
  return request as unknown as SendRequest;
}

/** Steps (2) and (3) of a create: the record, then its due member. False when the record existed. */
async function writeSend(ctx: RedisContext, send: NewSend, recordTtlMs: number): Promise<boolean> {
  const { appId, id, request, sendAtMs } = send;
  const created = await ctx.scripts.run(
    'createSend',
    [ctx.keys.sendKey(appId, id)],
    [JSON.stringify(request), sendAtMs, ctx.clock.nowMs(), recordTtlMs, request.priority],
  );
  // NX: a member already there (a completed first attempt) keeps its due time or lease.
  await ctx.redis.zadd(ctx.keys.sendDueKey(request.priority, appId, id), 'NX', sendAtMs, dueMember(appId, id));
  return Number(created) === 1;
}

export async function createSend(
  ctx: RedisContext,
  send: NewSend,
  recordTtlSecs: number,
  idempotency: IdempotencyClaim | null,
): Promise<CreateSendResult> {
  if (!(recordTtlSecs > 0)) throw new RangeError(`createSend: recordTtlSecs must be positive, got ${recordTtlSecs}`);
  const recordTtlMs = Math.ceil(recordTtlSecs * 1000);
  if (idempotency) {
    const idemKey = ctx.keys.sendIdempotencyKey(send.appId, idempotency.key);
    const reply = (await ctx.scripts.run(
      'claimIdempotencyKey',
      [idemKey],
      [JSON.stringify({ id: send.id, hash: idempotency.requestHash, atMs: ctx.clock.nowMs() }), Math.ceil(idempotency.ttlSecs)],
    )) as [number, string?];
    if (reply[0] !== 1) {
      const held = parseJson(reply[1] ?? '');
      if (!isRecord(held) || typeof held.id !== 'string' || typeof held.hash !== 'string') {
        throw new StoreError(StoreStatus.Corrupt, 'createSend', `${idemKey} is not {"id","hash"} JSON`);
      }
      const sameRequest = held.hash === idempotency.requestHash;
      // The same request again: complete the first attempt in case it died after taking the key,
      // unless its record may have lived out its lifetime already (then it was sent).
      const takenAtMs = typeof held.atMs === 'number' ? held.atMs : Number.NEGATIVE_INFINITY;
      if (sameRequest && ctx.clock.nowMs() - takenAtMs < recordTtlMs) await completeHeldSend(ctx, { ...send, id: held.id }, recordTtlMs);
      return { created: false, existingId: held.id, sameRequest };
    }
    // Taken: this id is the key's, so a record already there is a retry's completion of it.
    await writeSend(ctx, send, recordTtlMs);
    return { created: true };
  }
  if (!(await writeSend(ctx, send, recordTtlMs))) {
    throw new Error(`createSend: the send id ${send.appId}/${send.id} exists already`);
  }
  return { created: true };
}

/**
 * Complete a send whose idempotency key is held: write its record if it is missing, and make a
 * scheduled one due if its member is missing. Both are no-ops for a send created in full.
 */
async function completeHeldSend(ctx: RedisContext, send: NewSend, recordTtlMs: number): Promise<void> {
  const stored = await getSend(ctx, send.appId, send.id);
  if (stored === null) {
    await writeSend(ctx, send, recordTtlMs);
    return;
  }
  if (stored.state !== 'scheduled') return;
  const lane = stored.request.priority;
  await ctx.redis.zadd(ctx.keys.sendDueKey(lane, send.appId, send.id), 'NX', stored.sendAtMs, dueMember(send.appId, send.id));
}

export async function getSend(ctx: RedisContext, appId: string, id: string): Promise<SendRecord | null> {
  const [request, state, sendAtMs, createdAtMs, offset] = await ctx.redis.hmget(
    ctx.keys.sendKey(appId, id),
    'request',
    'state',
    'sendAtMs',
    'createdAtMs',
    'offset',
  );
  if (request === null || request === undefined) return null;
  if (!SEND_STATES.includes(state as SendState)) throw new StoreError(StoreStatus.Corrupt, 'getSend', `state of ${appId}/${id}`);
  return {
    appId,
    id,
    request: parseRequest('getSend', request),
    state: state as SendState,
    sendAtMs: Number(sendAtMs),
    createdAtMs: Number(createdAtMs),
    offset: Number(offset),
  };
}

interface DueHead {
  key: string;
  member: string;
  dueAtMs: number;
}

/** The send due longest in the most urgent lane with a due send; every shard's head read at once. */
async function mostUrgentDue(ctx: RedisContext, nowMs: number): Promise<DueHead | null> {
  const lanes = await Promise.all(
    SEND_LANES.map((lane) =>
      Promise.all(
        ctx.keys.sendDueShardKeys(lane).map(async (key) => {
          const [member, score] = await ctx.redis.zrangebyscore(key, '-inf', nowMs, 'WITHSCORES', 'LIMIT', 0, 1);
          return member === undefined ? null : { key, member, dueAtMs: Number(score) };
        }),
      ),
    ),
  );
  for (const heads of lanes) {
    let first: DueHead | null = null;
    for (const head of heads) {
      // One ZSET orders equal scores by member: so do the shards together.
      if (head && (!first || head.dueAtMs < first.dueAtMs || (head.dueAtMs === first.dueAtMs && head.member < first.member))) first = head;
    }
    if (first) return first;
  }
  return null;
}

export async function claimDueSend(ctx: RedisContext, leaseMs: number): Promise<ClaimedSend | null> {
  for (let attempt = 0; attempt < CLAIM_RACE_RETRIES; attempt++) {
    const nowMs = ctx.clock.nowMs();
    const head = await mostUrgentDue(ctx, nowMs);
    if (!head) return null;
    const colon = head.member.indexOf(':');
    const appId = head.member.slice(0, colon);
    const id = head.member.slice(colon + 1);
    const leaseExpiresAtMs = nowMs + leaseMs;
    if (Number(await ctx.scripts.run('leaseDue', [head.key], [head.member, nowMs, leaseExpiresAtMs])) !== 1) continue;
    const reply = (await ctx.scripts.run('claimSend', [ctx.keys.sendKey(appId, id)], [])) as [string, string, string, string] | null;
    if (!reply) {
      // Gone, cancelled or done: never due again.
      await ctx.redis.zrem(head.key, head.member);
      continue;
    }
    const [request, sendAtMs, createdAtMs, offset] = reply;
    return {
      send: {
        appId,
        id,
        request: parseRequest('claimDueSend', request),
        state: 'started',
        sendAtMs: Number(sendAtMs),
        createdAtMs: Number(createdAtMs),
        offset: Number(offset),
      },
      leaseExpiresAtMs,
    };
  }
  return null;
}

export async function advanceSend(ctx: RedisContext, appId: string, id: string, nextOffset: number, done: boolean): Promise<boolean> {
  const lane = await ctx.scripts.run('advanceSend', [ctx.keys.sendKey(appId, id)], [nextOffset, done ? '1' : '0']);
  if (lane === null) return false;
  const dueKey = ctx.keys.sendDueKey(laneOf(lane), appId, id);
  if (done) await ctx.redis.zrem(dueKey, dueMember(appId, id));
  else await ctx.redis.zadd(dueKey, ctx.clock.nowMs(), dueMember(appId, id));
  return true;
}

export async function cancelSend(ctx: RedisContext, appId: string, id: string): Promise<CancelSendResult> {
  const [code, lane] = (await ctx.scripts.run('cancelSend', [ctx.keys.sendKey(appId, id)], [])) as [number, string?];
  if (code === NOT_FOUND) return 'not_found';
  if (code !== 1) return 'not_cancellable';
  await ctx.redis.zrem(ctx.keys.sendDueKey(laneOf(lane), appId, id), dueMember(appId, id));
  return 'cancelled';
}
