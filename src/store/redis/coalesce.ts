/**
 * Like/repost coalescing on Redis (reference §8): seed 000's `coalesce:*` keys (documented in
 * `keys.ts`), "now" from the store clock — the Redis server clock in production — so the bucket,
 * the group id and every key are computed here and every script declares every key it touches.
 *
 * Two slot groups (one server in the divine layout, where the steps below run all the same):
 * - the recipient's: a group, its actor set, the dispositions and the budget (`{u:OWNER}`);
 * - the outbox shard's: `due` and `leases` of the gid's shard (`{c:N}`; the divine layout is the
 *   one shard `coalesce:due` / `coalesce:leases`).
 * Every script touches one of them, so ingest, claim and complete are per-slot steps in an order
 * that keeps one invariant:
 *
 *   (I) a group with buffered work that no flush has finished is in its shard's `due` or
 *       `leases` — apart from the one window named under ingest.
 *
 * Ingest. 1: the recipient's script decides and records (group, actors, disposition, budget);
 * 2: a buffered group is queued in its shard (`ZADD NX`; a replay skips a group a lease holds). A crash
 * between the steps can leave a group unqueued only when no later event of the same group comes
 * (each buffered event queues its group again), so it costs at most the event being ingested —
 * the same as a crash between the recipient claim and the ingest. An error between them fails the
 * call; the engine releases the claim, and the retry replays the stored `b:` disposition and runs
 * step 2 again from the group's record.
 *
 * Claim (reference §8.4), from the shards' heads read first:
 * - reconciliation, per shard with an expired lease: R1 re-leases the expired entries to this
 *   claim (no other claim reconciles them meanwhile); R2, per group, deletes it (nothing pending,
 *   or past its logical lifetime: counted expired) or reports its deadline; R3 settles the lease
 *   entry (drop, or back to `due`) only if it still carries R1's expiry. A crash after R1 leaves
 *   the entries leased until that expiry, then reconciled again; R2 and R3 repeat harmlessly.
 * - the claim proper, shards with the earliest due head first: C1 moves the head from `due` to
 *   `leases`; C2 stores the lease token in the group; a gid without a record is dangling and C3
 *   drops its lease entry (under R3's expiry check). A crash after C1 leaves a lease entry that
 *   expires into reconciliation: the group comes back (I).
 *
 * Complete. 1: the recipient's script checks the lease token and deletes the group, or clears the
 * token for a requeue; 2: the shard's lease entry goes, and a requeued gid is due again (a deleted
 * one leaves `due` too). Nothing is done to the shard when step 1 refuses. A crash between the
 * steps leaves a lease entry that expires into reconciliation: a deleted group is dropped there,
 * a requeued one is queued at its deadline, so it is retried sooner than asked, never lost. Late
 * flushes and reconciliations racing each other at most leave a dangling `due` entry or run one
 * group's flush twice (its summary claim then queues it once) — what a lease expiry does anyway.
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

/** Expired leases one claim reconciles per outbox shard (divine's max_recovery). */
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

/**
 * Ingest step 2 after a fresh buffered decision: `ZADD NX` into the group's outbox shard. A plain
 * command (the hot path): the group of the current bucket cannot be held by a flush yet, since a
 * claim takes a group only from its deadline, the end of its bucket.
 */
async function queueNewGroup(ctx: RedisContext, groupId: string, dueAtSecs: number): Promise<void> {
  await ctx.redis.zadd(ctx.keys.coalesceDueKey(ctx.keys.coalesceOutboxShardOf(groupId)), 'NX', dueAtSecs, groupId);
}

/**
 * Ingest step 2 after a replayed buffered decision: queue the group again when it still holds
 * buffered work and no flush holds it (coalesceQueue-2.lua), which completes an ingest that failed
 * between its two steps and changes nothing otherwise.
 */
async function queueReplayedGroup(ctx: RedisContext, groupId: string): Promise<void> {
  const [pending, due] = await ctx.redis.hmget(ctx.keys.coalesceGroupKey(groupId), 'pending', 'due');
  const dueAtSecs = numberField(due ?? undefined);
  if ((numberField(pending ?? undefined) ?? 0) <= 0 || dueAtSecs === null) return;
  const shard = ctx.keys.coalesceOutboxShardOf(groupId);
  await ctx.scripts.run('coalesceQueue', [ctx.keys.coalesceDueKey(shard), ctx.keys.coalesceLeasesKey(shard)], [groupId, dueAtSecs]);
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
  const [code, gid, replayed, due] = fields;
  const disposition = typeof code === 'number' ? DISPOSITION_BY_CODE[code] : undefined;
  if (disposition === undefined || typeof gid !== 'string' || typeof due !== 'number') throw corrupt('ingestCoalesceEvent', reply);
  if (disposition !== 'immediate') {
    if (replayed === 1) await queueReplayedGroup(ctx, gid);
    else await queueNewGroup(ctx, gid, due);
    // The engine acknowledges the event next: the buffered like must be on the replicas of both
    // the group's and the outbox shard's masters first, or a failover could take it with it. (An
    // immediate one is queued by the claimed-delivery steps, which wait for themselves; the
    // disposition shares the claim's slot, so their wait covers it.)
    await ctx.replication.afterWrites(() => [ctx.keys.coalesceGroupKey(gid), ctx.keys.coalesceDueKey(ctx.keys.coalesceOutboxShardOf(gid))]);
  }
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

/** The head of one outbox shard: its earliest due time and earliest lease expiry (s), null when empty. */
interface OutboxHead {
  shard: number;
  dueAtSecs: number | null;
  leaseExpirySecs: number | null;
}

function headScore(reply: string[]): number | null {
  const score = reply[1] === undefined ? NaN : Number(reply[1]);
  return Number.isFinite(score) ? score : null;
}

function outboxShards(ctx: RedisContext): number[] {
  return Array.from({ length: ctx.keys.coalesceOutboxShards }, (_, shard) => shard);
}

/** Every shard's head, read concurrently (one pipeline per node). */
async function readOutboxHeads(ctx: RedisContext): Promise<OutboxHead[]> {
  return Promise.all(
    outboxShards(ctx).map(async (shard) => {
      const [due, leases] = await Promise.all([
        ctx.redis.zrange(ctx.keys.coalesceDueKey(shard), 0, 0, 'WITHSCORES'),
        ctx.redis.zrange(ctx.keys.coalesceLeasesKey(shard), 0, 0, 'WITHSCORES'),
      ]);
      return { shard, dueAtSecs: headScore(due), leaseExpirySecs: headScore(leases) };
    }),
  );
}

/** Answers of coalesceRecoverGroup-2.lua. */
const RECOVER_DROPPED = 1;
const RECOVER_REQUEUE = 2;
const RECOVER_EXPIRED = 3;

/** Reconcile one group whose lease expired (R2, then R3 under the expiry R1 gave it); true when it expired. */
async function recoverGroup(ctx: RedisContext, shard: number, groupId: string, nowSecs: number, leaseExpiry: number): Promise<boolean> {
  const reply = await ctx.scripts.run(
    'coalesceRecoverGroup',
    [ctx.keys.coalesceGroupKey(groupId), ctx.keys.coalesceHllKey(groupId)],
    [nowSecs],
  );
  const [code, due] = Array.isArray(reply) ? (reply as unknown[]) : [];
  if ((code !== RECOVER_DROPPED && code !== RECOVER_REQUEUE && code !== RECOVER_EXPIRED) || typeof due !== 'number')
    throw corrupt('claimDueCoalesceGroup', reply);
  await settleLease(ctx, shard, groupId, leaseExpiry, code === RECOVER_REQUEUE ? due : '');
  return code === RECOVER_EXPIRED;
}

/** R3 and C3: drop (or requeue) a lease entry this claim set, unless it changed hands since. */
async function settleLease(ctx: RedisContext, shard: number, groupId: string, leaseExpiry: number, requeueAt: number | ''): Promise<void> {
  await ctx.scripts.run(
    'coalesceSettleLease',
    [ctx.keys.coalesceDueKey(shard), ctx.keys.coalesceLeasesKey(shard)],
    [groupId, leaseExpiry, requeueAt],
  );
}

/** Reconcile one shard's expired leases (R1, then its groups concurrently); returns how many groups expired. */
async function recoverShard(ctx: RedisContext, shard: number, nowSecs: number, leaseExpiry: number): Promise<number> {
  const taken = await ctx.scripts.run(
    'coalesceRecoverLeases',
    [ctx.keys.coalesceLeasesKey(shard)],
    [nowSecs, leaseExpiry, CLAIM_MAX_RECOVERED_LEASES],
  );
  if (!Array.isArray(taken) || !taken.every((gid): gid is string => typeof gid === 'string')) throw corrupt('claimDueCoalesceGroup', taken);
  const expired = await Promise.all(taken.map((gid) => recoverGroup(ctx, shard, gid, nowSecs, leaseExpiry)));
  return expired.filter(Boolean).length;
}

export async function claimDueCoalesceGroup(ctx: RedisContext, leaseSecs: number): Promise<ClaimDueGroupResult> {
  const { nowSecs } = nowParts(ctx);
  const leaseExpiry = nowSecs + Math.max(1, Math.ceil(leaseSecs));
  let heads = await readOutboxHeads(ctx);
  const expiredLeases = heads.filter((head) => head.leaseExpirySecs !== null && head.leaseExpirySecs <= nowSecs);
  let expiredDropped = 0;
  if (expiredLeases.length > 0) {
    const expired = await Promise.all(expiredLeases.map((head) => recoverShard(ctx, head.shard, nowSecs, leaseExpiry)));
    expiredDropped = expired.reduce((sum, n) => sum + n, 0);
    // Reconciliation may have put groups back in `due`: they are claimable in this same call.
    heads = await readOutboxHeads(ctx);
  }
  const due = heads
    .filter((head): head is OutboxHead & { dueAtSecs: number } => head.dueAtSecs !== null && head.dueAtSecs <= nowSecs)
    .sort((a, b) => a.dueAtSecs - b.dueAtSecs);
  const leaseToken = randomUUID();
  let examined = 0;
  let danglingDropped = 0;
  for (const { shard } of due) {
    while (examined < CLAIM_MAX_EXAMINED_DUE) {
      const gid = await ctx.scripts.run(
        'coalesceTakeDue',
        [ctx.keys.coalesceDueKey(shard), ctx.keys.coalesceLeasesKey(shard)],
        [nowSecs, leaseExpiry],
      );
      if (typeof gid !== 'string') throw corrupt('claimDueCoalesceGroup', gid);
      if (gid === '') break;
      examined += 1;
      if ((await ctx.scripts.run('coalesceLeaseGroup', [ctx.keys.coalesceGroupKey(gid)], [leaseToken])) === 1) {
        return { claim: { groupId: gid, leaseToken, claimedAtSecs: nowSecs }, expiredDropped, danglingDropped };
      }
      danglingDropped += 1;
      await settleLease(ctx, shard, gid, leaseExpiry, '');
    }
  }
  return { claim: null, expiredDropped, danglingDropped };
}

const COMPLETE_RESULTS: ReadonlyMap<number, CompleteGroupResult> = new Map<number, CompleteGroupResult>([
  [1, 'completed'],
  [2, 'requeued'],
  [3, 'expired'],
  [StoreStatus.NotOwner, 'not_owner'],
  [StoreStatus.NotFound, 'missing'],
]);

/** What completion's outbox step does after each answer of the record step (coalesceRelease-2.lua ARGV[2]). */
const RELEASE_ACTIONS: Readonly<Record<CompleteGroupResult, 'requeue' | 'remove' | 'unlease' | null>> = {
  completed: 'remove',
  requeued: 'requeue',
  expired: 'remove',
  missing: 'unlease',
  not_owner: null,
};

export async function completeCoalesceGroup(ctx: RedisContext, claim: GroupClaim, requeueAfterSecs?: number): Promise<CompleteGroupResult> {
  const { nowSecs } = nowParts(ctx);
  const delay = requeueAfterSecs === undefined ? '' : Math.max(0, Math.ceil(requeueAfterSecs));
  const reply = await ctx.scripts.run(
    'coalesceComplete',
    [ctx.keys.coalesceGroupKey(claim.groupId), ctx.keys.coalesceHllKey(claim.groupId)],
    [claim.leaseToken, nowSecs, delay],
  );
  const [code, nextAt] = Array.isArray(reply) ? (reply as unknown[]) : [];
  const result = typeof code === 'number' ? COMPLETE_RESULTS.get(code) : undefined;
  if (result === undefined || typeof nextAt !== 'number') throw corrupt('completeCoalesceGroup', reply);
  const action = RELEASE_ACTIONS[result];
  if (action !== null) {
    const shard = ctx.keys.coalesceOutboxShardOf(claim.groupId);
    await ctx.scripts.run(
      'coalesceRelease',
      [ctx.keys.coalesceDueKey(shard), ctx.keys.coalesceLeasesKey(shard)],
      [claim.groupId, action, action === 'requeue' ? nextAt : ''],
    );
  }
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
  const heads = await Promise.all(
    outboxShards(ctx).map(async (shard) => headScore(await ctx.redis.zrange(ctx.keys.coalesceDueKey(shard), 0, 0, 'WITHSCORES'))),
  );
  const scores = heads.filter((score): score is number => score !== null);
  if (scores.length === 0) return 0;
  return Math.max(0, nowParts(ctx).nowSecs - Math.min(...scores));
}
