/**
 * Like/repost coalescing on Redis (reference §8): one Lua script per transition over seed 000's
 * `coalesce:*` keys (documented in `keys.ts`), "now" from the store clock — the Redis server
 * clock in production — so the bucket, the group id and every key are computed here and the
 * scripts declare them (the claim script is the one exception; see its header).
 */
import { randomUUID } from 'node:crypto';
import {
  coalesceBucket,
  coalesceDueAtSecs,
  coalesceGroupId,
  coalesceTtls,
  type ClaimDueGroupResult,
  type CoalesceEvent,
  type CoalesceGroup,
  type CoalescePolicy,
  type CoalesceReferences,
  type CompleteGroupResult,
  type GroupClaim,
  type IngestDisposition,
  type IngestResult,
  type RecipientTokenResult,
} from '../port-coalesce.ts';
import { StoreError, StoreStatus } from '../errors.ts';
import type { RedisContext } from './context.ts';

/** Expired leases one claim reconciles (divine's max_recovery). */
export const CLAIM_MAX_RECOVERED_LEASES = 64;
/** Due entries one claim examines, dangling ones included (divine's max_dangling). */
export const CLAIM_MAX_EXAMINED_DUE = 8;

const DISPOSITION_BY_CODE: Readonly<Record<number, IngestDisposition>> = { 1: 'immediate', 2: 'buffered', 3: 'throttled' };

function nowParts(ctx: RedisContext): { nowMs: number; nowSecs: number } {
  const nowMs = Math.floor(ctx.clock.nowMs());
  return { nowMs, nowSecs: Math.floor(nowMs / 1000) };
}

function budgetKeys(ctx: RedisContext, owner: string): [string, string] {
  return [ctx.keys.coalesceThrottleKey(owner), ctx.keys.coalesceEmittedKey(owner)];
}

function corrupt(operation: string, reply: unknown): StoreError {
  return new StoreError(StoreStatus.Corrupt, operation, `unexpected script reply ${JSON.stringify(reply)}`);
}

export async function ingestCoalesceEvent(ctx: RedisContext, event: CoalesceEvent, policy: CoalescePolicy): Promise<IngestResult> {
  const { nowMs, nowSecs } = nowParts(ctx);
  const ttls = coalesceTtls(policy);
  const bucket = coalesceBucket(nowSecs, policy.windowSecs);
  const groupId = coalesceGroupId(event.type, event.owner, event.target, bucket);
  const refs = event.references;
  const address = refs.referencedAddress ?? '';
  const reply = await ctx.scripts.run(
    'coalesceIngest',
    [
      ctx.keys.coalesceDispositionKey(event.eventId, event.owner),
      ctx.keys.coalesceDueKey,
      ctx.keys.coalesceGroupKey(groupId),
      ctx.keys.coalesceHllKey(groupId),
      ...budgetKeys(ctx, event.owner),
    ],
    [
      nowMs,
      nowSecs,
      groupId,
      coalesceDueAtSecs(bucket, policy.windowSecs),
      nowSecs + Math.ceil(policy.groupTtlSecs),
      policy.immediateLimit,
      ttls.groupSecs,
      ttls.dispositionSecs,
      policy.throttleCapacity,
      policy.throttleRefillSecs,
      ttls.throttleSecs,
      policy.dailyWindowSecs,
      policy.dailyCap,
      ttls.emittedSecs,
      event.type,
      event.owner,
      event.target,
      event.actor,
      event.eventId,
      event.eventKind,
      event.createdAt,
      refs.referencedEventId ?? '',
      address,
      address === '' ? '' : (refs.referencedKind ?? ''),
      address === '' ? '' : (refs.referencedAuthorPubkey ?? ''),
      address === '' ? '' : (refs.referencedDTag ?? ''),
    ],
  );
  const fields: unknown[] = Array.isArray(reply) ? reply : [];
  const [code, gid, replayed] = fields;
  const disposition = typeof code === 'number' ? DISPOSITION_BY_CODE[code] : undefined;
  if (disposition === undefined || typeof gid !== 'string') throw corrupt('ingestCoalesceEvent', reply);
  return { disposition, groupId: gid, replayed: replayed === 1 };
}

export async function consumeRecipientToken(
  ctx: RedisContext,
  owner: string,
  member: string,
  policy: CoalescePolicy,
): Promise<RecipientTokenResult> {
  const { nowMs, nowSecs } = nowParts(ctx);
  const ttls = coalesceTtls(policy);
  const reply = await ctx.scripts.run('coalesceToken', budgetKeys(ctx, owner), [
    nowMs,
    nowSecs,
    policy.throttleCapacity,
    policy.throttleRefillSecs,
    ttls.throttleSecs,
    policy.dailyWindowSecs,
    policy.dailyCap,
    ttls.emittedSecs,
    member,
  ]);
  const fields: unknown[] = Array.isArray(reply) ? reply : [];
  const [code, wait] = fields;
  if (code === 1) return { status: 'spent' };
  if (typeof wait !== 'number') throw corrupt('consumeRecipientToken', reply);
  if (code === 2) return { status: 'bucket_empty', retryAfterSecs: wait };
  if (code === 3) return { status: 'daily_capped', retryAfterSecs: wait };
  throw corrupt('consumeRecipientToken', reply);
}

export async function refundRecipientToken(ctx: RedisContext, owner: string, member: string, policy: CoalescePolicy): Promise<void> {
  const { nowMs } = nowParts(ctx);
  await ctx.scripts.run('coalesceRefund', budgetKeys(ctx, owner), [
    nowMs,
    policy.throttleCapacity,
    policy.throttleRefillSecs,
    coalesceTtls(policy).throttleSecs,
    member,
  ]);
}

/** A key prefix as a script must write it: ioredis adds its keyPrefix to declared KEYS only. */
function scriptKeyPrefix(ctx: RedisContext, prefix: string): string {
  return `${ctx.redis.options.keyPrefix ?? ''}${prefix}`;
}

export async function claimDueCoalesceGroup(ctx: RedisContext, leaseSecs: number): Promise<ClaimDueGroupResult> {
  const { nowSecs } = nowParts(ctx);
  const leaseToken = randomUUID();
  const reply = await ctx.scripts.run(
    'coalesceClaim',
    [ctx.keys.coalesceDueKey, ctx.keys.coalesceLeasesKey],
    [
      nowSecs,
      scriptKeyPrefix(ctx, ctx.keys.COALESCE_GROUP_KEY_PREFIX),
      scriptKeyPrefix(ctx, ctx.keys.COALESCE_HLL_KEY_PREFIX),
      Math.max(1, Math.ceil(leaseSecs)),
      CLAIM_MAX_RECOVERED_LEASES,
      leaseToken,
      CLAIM_MAX_EXAMINED_DUE,
    ],
  );
  const fields: unknown[] = Array.isArray(reply) ? reply : [];
  const [gid, expired, dangling] = fields;
  if (typeof gid !== 'string' || typeof expired !== 'number' || typeof dangling !== 'number') throw corrupt('claimDueCoalesceGroup', reply);
  return {
    claim: gid === '' ? null : { groupId: gid, leaseToken, claimedAtSecs: nowSecs },
    expiredDropped: expired,
    danglingDropped: dangling,
  };
}

const COMPLETE_RESULTS: ReadonlyMap<number, CompleteGroupResult> = new Map<number, CompleteGroupResult>([
  [1, 'completed'],
  [2, 'requeued'],
  [3, 'expired'],
  [StoreStatus.NotOwner, 'not_owner'],
  [StoreStatus.NotFound, 'missing'],
]);

export async function completeCoalesceGroup(ctx: RedisContext, claim: GroupClaim, requeueAfterSecs?: number): Promise<CompleteGroupResult> {
  const { nowSecs } = nowParts(ctx);
  const delay = requeueAfterSecs === undefined ? '' : Math.max(0, Math.ceil(requeueAfterSecs));
  const reply = await ctx.scripts.run(
    'coalesceComplete',
    [ctx.keys.coalesceGroupKey(claim.groupId), ctx.keys.coalesceHllKey(claim.groupId), ctx.keys.coalesceDueKey, ctx.keys.coalesceLeasesKey],
    [claim.groupId, claim.leaseToken, nowSecs, delay],
  );
  const result = typeof reply === 'number' ? COMPLETE_RESULTS.get(reply) : undefined;
  if (result === undefined) throw corrupt('completeCoalesceGroup', reply);
  return result;
}

function numberField(value: string | undefined): number | null {
  if (value === undefined || value === '') return null;
  const parsed = Number(value);
  return Number.isFinite(parsed) ? parsed : null;
}

function storedReferences(hash: Record<string, string>): CoalesceReferences {
  const refs: CoalesceReferences = {};
  if (hash.ref_event_id) refs.referencedEventId = hash.ref_event_id;
  if (hash.ref_address) {
    refs.referencedAddress = hash.ref_address;
    refs.referencedKind = hash.ref_kind ?? '';
    refs.referencedAuthorPubkey = hash.ref_author ?? '';
    refs.referencedDTag = hash.ref_dtag ?? '';
  }
  return refs;
}

export async function readCoalesceGroup(ctx: RedisContext, groupId: string): Promise<CoalesceGroup | null> {
  const replies = await ctx.redis.multi().hgetall(ctx.keys.coalesceGroupKey(groupId)).pfcount(ctx.keys.coalesceHllKey(groupId)).exec();
  const [hashReply, countReply] = replies ?? [];
  if (hashReply?.[0]) throw hashReply[0];
  const hash = (hashReply?.[1] ?? {}) as Record<string, string>;
  if (Object.keys(hash).length === 0) return null;
  // A WRONGTYPE actor key reads as an unknown count; the flush drops such a group loudly.
  const distinct = countReply && !countReply[0] && typeof countReply[1] === 'number' ? countReply[1] : 0;
  return {
    groupId,
    type: hash.type ?? '',
    owner: hash.owner ?? '',
    target: hash.target ?? '',
    eventKind: numberField(hash.event_kind),
    dueAtSecs: numberField(hash.due) ?? 0,
    expiresAtSecs: numberField(hash.expires_at) ?? 0,
    pending: numberField(hash.pending) ?? 0,
    immediate: numberField(hash.immediate) ?? 0,
    firstActor: hash.first_actor || null,
    firstEvent: hash.first_event || null,
    lastAt: numberField(hash.last_at),
    references: storedReferences(hash),
    leaseToken: hash.lease || null,
    distinctActors: distinct,
  };
}

export async function oldestCoalesceDueAgeSecs(ctx: RedisContext): Promise<number> {
  const head = await ctx.redis.zrange(ctx.keys.coalesceDueKey, 0, 0, 'WITHSCORES');
  const score = head[1] === undefined ? NaN : Number(head[1]);
  if (!Number.isFinite(score)) return 0;
  return Math.max(0, nowParts(ctx).nowSecs - score);
}
