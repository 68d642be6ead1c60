import { randomUUID } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';
import type { Clock } from '../port.ts';
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
  type IngestResult,
  type RecipientTokenResult,
} from '../port-coalesce.ts';
import { ExpiredRowSweeper } from './expiry.ts';
import * as sql from './coalesce-sql.ts';

/**
 * Like/repost coalescing on SQLite: the semantics of the Redis scripts (reference §8), each
 * operation one transaction over the tables of `coalesce-sql.ts`. The distinct-actor count is
 * exact. "Now" is the store clock; group times are unix seconds, the token bucket milliseconds.
 */

/** Expired leases one claim reconciles (as the Redis adapter). */
const CLAIM_MAX_RECOVERED_LEASES = 64;
/** Due entries one claim examines (as the Redis adapter). */
const CLAIM_MAX_EXAMINED_DUE = 8;
const MS_PER_SECOND = 1000;

interface GroupRow {
  group_id: string;
  type: string;
  owner: string;
  target: string;
  event_kind: number | null;
  due_at: number;
  expires_at: number;
  immediate: number;
  pending: number;
  first_actor: string | null;
  first_event: string | null;
  last_at: number | null;
  ref_event_id: string | null;
  ref_address: string | null;
  ref_kind: string | null;
  ref_author: string | null;
  ref_dtag: string | null;
  lease_token: string | null;
  physical_expires_at_ms: number;
}

/** Every statement of `coalesce-sql.ts`, by its constant's name. */
type StatementName = Exclude<keyof typeof sql, 'CREATE_COALESCE_TABLES' | 'SWEEP_STATEMENTS'>;

interface Now {
  ms: number;
  secs: number;
}

function references(row: GroupRow): CoalesceReferences {
  const refs: CoalesceReferences = {};
  if (row.ref_event_id) refs.referencedEventId = row.ref_event_id;
  if (row.ref_address) {
    refs.referencedAddress = row.ref_address;
    refs.referencedKind = row.ref_kind ?? '';
    refs.referencedAuthorPubkey = row.ref_author ?? '';
    refs.referencedDTag = row.ref_dtag ?? '';
  }
  return refs;
}

export class CoalesceTables {
  private readonly statements: Record<StatementName, Statement>;
  private readonly sweeper: ExpiredRowSweeper;

  readonly ingest: (event: CoalesceEvent, policy: CoalescePolicy) => IngestResult;
  readonly consumeToken: (owner: string, member: string, policy: CoalescePolicy) => RecipientTokenResult;
  readonly refundToken: (owner: string, member: string, policy: CoalescePolicy) => void;
  readonly claimDue: (leaseSecs: number) => ClaimDueGroupResult;
  readonly complete: (claim: GroupClaim, requeueAfterSecs?: number) => CompleteGroupResult;
  readonly readGroup: (groupId: string) => CoalesceGroup | null;
  readonly oldestDueAgeSecs: () => number;

  constructor(
    db: Database,
    private readonly clock: Clock,
  ) {
    const { CREATE_COALESCE_TABLES: _schema, SWEEP_STATEMENTS: _sweeps, ...texts } = sql;
    this.statements = Object.fromEntries(Object.entries(texts).map(([name, text]) => [name, db.prepare(text)])) as Record<
      StatementName,
      Statement
    >;
    this.sweeper = new ExpiredRowSweeper(db, sql.SWEEP_STATEMENTS);
    this.ingest = db.transaction((event: CoalesceEvent, policy: CoalescePolicy) => this.ingestNow(this.now(), event, policy));
    this.consumeToken = db.transaction((owner: string, member: string, policy: CoalescePolicy) =>
      this.consumeNow(this.now(), owner, member, policy),
    );
    this.refundToken = db.transaction((owner: string, member: string, policy: CoalescePolicy) =>
      this.refundNow(this.now(), owner, member, policy),
    );
    this.claimDue = db.transaction((leaseSecs: number) => this.claimNow(this.now(), leaseSecs));
    this.complete = db.transaction((claim: GroupClaim, requeueAfterSecs?: number) => this.completeNow(this.now(), claim, requeueAfterSecs));
    this.readGroup = db.transaction((groupId: string) => this.readNow(this.now(), groupId));
    this.oldestDueAgeSecs = () => {
      const row = this.statements.SELECT_OLDEST_DUE.get() as { score: number | null } | undefined;
      return row?.score == null ? 0 : Math.max(0, this.now().secs - row.score);
    };
  }

  private now(): Now {
    const ms = Math.floor(this.clock.nowMs());
    return { ms, secs: Math.floor(ms / MS_PER_SECOND) };
  }

  /** The group if its physical TTL has not run out; an expired row is removed on the way. */
  private liveGroup(now: Now, groupId: string): GroupRow | null {
    const row = this.statements.SELECT_GROUP.get(groupId) as GroupRow | undefined;
    if (!row) return null;
    if (row.physical_expires_at_ms > now.ms) return row;
    this.deleteGroup(groupId);
    return null;
  }

  private deleteGroup(groupId: string): void {
    this.statements.DELETE_ACTORS.run(groupId);
    this.statements.DELETE_GROUP.run(groupId);
  }

  private ingestNow(now: Now, event: CoalesceEvent, policy: CoalescePolicy): IngestResult {
    const s = this.statements;
    this.sweeper.maybeSweep(now.ms);
    const stored = s.SELECT_DISPOSITION.get(event.eventId, event.owner, now.ms) as { disposition: string; group_id: string } | undefined;
    if (stored) return { disposition: stored.disposition === 'i' ? 'immediate' : 'buffered', groupId: stored.group_id, replayed: true };

    const ttls = coalesceTtls(policy);
    const bucket = coalesceBucket(now.secs, policy.windowSecs);
    const groupId = coalesceGroupId(event.type, event.owner, event.target, bucket);
    const dueAt = coalesceDueAtSecs(bucket, policy.windowSecs);
    const existing = this.liveGroup(now, groupId);

    let sendNow = false;
    let throttled = false;
    // The budget is consulted only while an immediate slot is free: a buffered event costs nothing.
    if ((existing?.immediate ?? 0) < policy.immediateLimit) {
      const emitted = this.trimmedEmissions(now, event.owner, policy);
      let tokens = this.refilledTokens(now, event.owner, policy);
      if (emitted.count >= policy.dailyCap) throttled = true;
      else if (tokens >= 1) {
        tokens -= 1;
        sendNow = true;
        this.recordEmission(now, event.owner, event.eventId, ttls.emittedSecs);
      } else throttled = true;
      this.saveTokens(now, event.owner, tokens, ttls.throttleSecs);
    }

    const refs = event.references;
    const address = refs.referencedAddress ?? null;
    s.UPSERT_GROUP_FIELDS.run({
      groupId,
      type: event.type,
      owner: event.owner,
      target: event.target,
      eventKind: event.eventKind,
      dueAt,
      expiresAt: now.secs + Math.ceil(policy.groupTtlSecs),
      refEventId: refs.referencedEventId ?? null,
      refAddress: address,
      refKind: address === null ? null : (refs.referencedKind ?? ''),
      refAuthor: address === null ? null : (refs.referencedAuthorPubkey ?? ''),
      refDTag: address === null ? null : (refs.referencedDTag ?? ''),
      physicalExpiresAtMs: now.ms + ttls.dispositionSecs * MS_PER_SECOND,
    });

    const dispositionExpiry = now.ms + ttls.dispositionSecs * MS_PER_SECOND;
    if (sendNow) {
      // An immediate must never shorten the life of a group that already holds buffered work.
      const ttl = (existing?.pending ?? 0) > 0 ? ttls.groupSecs : ttls.dispositionSecs;
      s.COUNT_IMMEDIATE.run({ groupId, physicalExpiresAtMs: now.ms + ttl * MS_PER_SECOND });
      s.UPSERT_DISPOSITION.run({
        eventId: event.eventId,
        recipient: event.owner,
        disposition: 'i',
        groupId,
        expiresAtMs: dispositionExpiry,
      });
      return { disposition: 'immediate', groupId, replayed: false };
    }
    s.COUNT_BUFFERED.run({
      groupId,
      actor: event.actor,
      eventId: event.eventId,
      createdAt: event.createdAt,
      physicalExpiresAtMs: now.ms + ttls.groupSecs * MS_PER_SECOND,
    });
    s.INSERT_ACTOR.run(groupId, event.actor);
    s.INSERT_OUTBOX_NX.run(groupId, 'due', dueAt);
    s.UPSERT_DISPOSITION.run({ eventId: event.eventId, recipient: event.owner, disposition: 'b', groupId, expiresAtMs: dispositionExpiry });
    return { disposition: throttled ? 'throttled' : 'buffered', groupId, replayed: false };
  }

  private trimmedEmissions(now: Now, owner: string, policy: CoalescePolicy): { count: number; oldest: number | null } {
    this.statements.TRIM_EMITTED.run(owner, now.secs - policy.dailyWindowSecs);
    const row = this.statements.COUNT_EMITTED.get(owner, now.ms) as { n: number; oldest: number | null };
    return { count: row.n, oldest: row.oldest };
  }

  private recordEmission(now: Now, owner: string, member: string, emittedSecs: number): void {
    const expiresAtMs = now.ms + emittedSecs * MS_PER_SECOND;
    this.statements.UPSERT_EMITTED.run(owner, member, now.secs, expiresAtMs);
    this.statements.EXTEND_EMITTED.run(expiresAtMs, owner);
  }

  /** Lazy refill: a missing bucket is full; a timestamp in the future adds nothing. */
  private refilledTokens(now: Now, owner: string, policy: CoalescePolicy): number {
    const row = this.statements.SELECT_THROTTLE.get(owner, now.ms) as { tokens: number; ts_ms: number } | undefined;
    if (!row) return policy.throttleCapacity;
    const elapsedMs = Math.max(0, now.ms - row.ts_ms);
    return Math.min(policy.throttleCapacity, row.tokens + elapsedMs / (policy.throttleRefillSecs * MS_PER_SECOND));
  }

  private saveTokens(now: Now, owner: string, tokens: number, throttleSecs: number): void {
    this.statements.UPSERT_THROTTLE.run({ owner, tokens, tsMs: now.ms, expiresAtMs: now.ms + throttleSecs * MS_PER_SECOND });
  }

  private consumeNow(now: Now, owner: string, member: string, policy: CoalescePolicy): RecipientTokenResult {
    const ttls = coalesceTtls(policy);
    const emitted = this.trimmedEmissions(now, owner, policy);
    if (this.statements.HAS_EMITTED.get(owner, member, now.ms)) return { status: 'spent' };
    if (emitted.count >= policy.dailyCap) {
      const wait = emitted.oldest === null ? policy.dailyWindowSecs : Math.ceil(emitted.oldest + policy.dailyWindowSecs - now.secs);
      return { status: 'daily_capped', retryAfterSecs: Math.max(1, wait) };
    }
    const tokens = this.refilledTokens(now, owner, policy);
    if (tokens >= 1) {
      this.saveTokens(now, owner, tokens - 1, ttls.throttleSecs);
      this.recordEmission(now, owner, member, ttls.emittedSecs);
      return { status: 'spent' };
    }
    this.saveTokens(now, owner, tokens, ttls.throttleSecs);
    return { status: 'bucket_empty', retryAfterSecs: Math.max(1, Math.ceil((1 - tokens) * policy.throttleRefillSecs)) };
  }

  private refundNow(now: Now, owner: string, member: string, policy: CoalescePolicy): void {
    if (this.statements.DELETE_EMITTED.run(owner, member, now.ms).changes === 0) return;
    const tokens = this.refilledTokens(now, owner, policy);
    this.saveTokens(now, owner, Math.min(policy.throttleCapacity, tokens + 1), coalesceTtls(policy).throttleSecs);
  }

  private claimNow(now: Now, leaseSecs: number): ClaimDueGroupResult {
    const s = this.statements;
    let expiredDropped = 0;
    let danglingDropped = 0;
    const stale = s.SELECT_OUTBOX_UP_TO.all('leased', now.secs, CLAIM_MAX_RECOVERED_LEASES) as Array<{ group_id: string }>;
    for (const { group_id: groupId } of stale) {
      s.DELETE_OUTBOX.run(groupId);
      const group = this.liveGroup(now, groupId);
      if (!group || group.pending <= 0) {
        // Nothing pending is not work: it is never put back.
        if (group) this.deleteGroup(groupId);
      } else if (group.expires_at > 0 && now.secs >= group.expires_at) {
        this.deleteGroup(groupId);
        expiredDropped++;
      } else {
        s.INSERT_OUTBOX_NX.run(groupId, 'due', group.due_at);
      }
    }
    const candidates = s.SELECT_OUTBOX_UP_TO.all('due', now.secs, CLAIM_MAX_EXAMINED_DUE) as Array<{ group_id: string }>;
    for (const { group_id: groupId } of candidates) {
      if (!this.liveGroup(now, groupId)) {
        s.DELETE_OUTBOX.run(groupId);
        danglingDropped++;
        continue;
      }
      const leaseToken = randomUUID();
      s.UPSERT_OUTBOX.run(groupId, 'leased', now.secs + Math.max(1, Math.ceil(leaseSecs)));
      s.SET_LEASE.run(leaseToken, groupId);
      return { claim: { groupId, leaseToken, claimedAtSecs: now.secs }, expiredDropped, danglingDropped };
    }
    return { claim: null, expiredDropped, danglingDropped };
  }

  private completeNow(now: Now, claim: GroupClaim, requeueAfterSecs?: number): CompleteGroupResult {
    const s = this.statements;
    const { groupId } = claim;
    const group = this.liveGroup(now, groupId);
    if (!group) {
      s.DELETE_OUTBOX_IN_STATE.run(groupId, 'leased');
      return 'missing';
    }
    if (group.lease_token !== claim.leaseToken) return 'not_owner';
    s.DELETE_OUTBOX_IN_STATE.run(groupId, 'leased');
    if (requeueAfterSecs !== undefined) {
      const nextAt = now.secs + Math.max(0, Math.ceil(requeueAfterSecs));
      s.SET_LEASE.run(null, groupId);
      if (group.expires_at > 0 && nextAt >= group.expires_at) {
        this.deleteGroup(groupId);
        s.DELETE_OUTBOX.run(groupId);
        return 'expired';
      }
      s.UPSERT_OUTBOX.run(groupId, 'due', nextAt);
      return 'requeued';
    }
    this.deleteGroup(groupId);
    s.DELETE_OUTBOX.run(groupId);
    return 'completed';
  }

  private readNow(now: Now, groupId: string): CoalesceGroup | null {
    const row = this.liveGroup(now, groupId);
    if (!row) return null;
    const actors = this.statements.COUNT_ACTORS.get(groupId) as { n: number };
    return {
      groupId,
      type: row.type,
      owner: row.owner,
      target: row.target,
      eventKind: row.event_kind,
      dueAtSecs: row.due_at,
      expiresAtSecs: row.expires_at,
      pending: row.pending,
      immediate: row.immediate,
      firstActor: row.first_actor,
      firstEvent: row.first_event,
      lastAt: row.last_at,
      references: references(row),
      leaseToken: row.lease_token,
      distinctActors: actors.n,
    };
  }
}
