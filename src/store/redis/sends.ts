/** Sends and idempotency records on Redis (port-sends.ts); the layout is in `keys.ts`. */
import { StoreError, StoreStatus } from '../errors.ts';
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

/** `cancelSend-2.lua`'s code for an unknown send. */
const NOT_FOUND: number = StoreStatus.NotFound;

const dueMember = (appId: string, id: string): string => `${appId}:${id}`;

function parseRequest(operation: string, raw: string): SendRequest {
  const request = parseJson(raw);
  if (!isRecord(request)) throw new StoreError(StoreStatus.Corrupt, operation, 'send request is not a JSON object');
  return request as unknown as SendRequest;
}

export async function createSend(
  ctx: RedisContext,
  send: NewSend,
  recordTtlSecs: number,
  idempotency: IdempotencyClaim | null,
): Promise<CreateSendResult> {
  if (!(recordTtlSecs > 0)) throw new RangeError(`createSend: recordTtlSecs must be positive, got ${recordTtlSecs}`);
  const idemKey = ctx.keys.sendIdempotencyKey(send.appId, idempotency?.key ?? '');
  const reply = (await ctx.scripts.run(
    'createSend',
    [ctx.keys.sendKey(send.appId, send.id), idemKey, ctx.keys.sendsDueKey(send.request.priority)],
    [
      JSON.stringify(send.request),
      send.sendAtMs,
      ctx.clock.nowMs(),
      Math.ceil(recordTtlSecs * 1000),
      dueMember(send.appId, send.id),
      idempotency ? '1' : '0',
      idempotency ? JSON.stringify({ id: send.id, hash: idempotency.requestHash }) : '',
      idempotency ? Math.ceil(idempotency.ttlSecs) : 0,
      send.request.priority,
    ],
  )) as [number, string?];
  if (reply[0] === 1) return { created: true };
  const held = parseJson(reply[1] ?? '');
  if (!isRecord(held) || typeof held.id !== 'string' || typeof held.hash !== 'string') {
    throw new StoreError(StoreStatus.Corrupt, 'createSend', `${idemKey} is not {"id","hash"} JSON`);
  }
  return { created: false, existingId: held.id, sameRequest: held.hash === idempotency?.requestHash };
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

export async function claimDueSend(ctx: RedisContext, leaseMs: number): Promise<ClaimedSend | null> {
  for (let attempt = 0; attempt < CLAIM_RACE_RETRIES; attempt++) {
    const nowMs = ctx.clock.nowMs();
    // The most urgent lane with a due send (one round trip for the three).
    const pipeline = ctx.redis.pipeline();
    for (const lane of SEND_LANES) pipeline.zrangebyscore(ctx.keys.sendsDueKey(lane), '-inf', nowMs, 'LIMIT', 0, 1);
    const replies = (await pipeline.exec()) ?? [];
    let member: string | undefined;
    let dueKey = '';
    SEND_LANES.forEach((lane, i) => {
      const [error, found] = replies[i] ?? [null, []];
      if (error) throw error;
      const first = (found as string[])[0];
      if (member === undefined && first !== undefined) {
        member = first;
        dueKey = ctx.keys.sendsDueKey(lane);
      }
    });
    if (member === undefined) return null;
    const colon = member.indexOf(':');
    const appId = member.slice(0, colon);
    const id = member.slice(colon + 1);
    const leaseExpiresAtMs = nowMs + leaseMs;
    const reply = (await ctx.scripts.run('claimSend', [dueKey, ctx.keys.sendKey(appId, id)], [member, nowMs, leaseExpiresAtMs])) as
      [string, string, string, string] | null;
    if (!reply) continue;
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
  const reply = await ctx.scripts.run(
    'advanceSend',
    [...SEND_LANES.map(ctx.keys.sendsDueKey), ctx.keys.sendKey(appId, id)],
    [dueMember(appId, id), nextOffset, done ? '1' : '0', ctx.clock.nowMs()],
  );
  return Number(reply) === 1;
}

export async function cancelSend(ctx: RedisContext, appId: string, id: string): Promise<CancelSendResult> {
  const code = Number(
    await ctx.scripts.run('cancelSend', [...SEND_LANES.map(ctx.keys.sendsDueKey), ctx.keys.sendKey(appId, id)], [dueMember(appId, id)]),
  );
  if (code === NOT_FOUND) return 'not_found';
  return code === 1 ? 'cancelled' : 'not_cancellable';
}
