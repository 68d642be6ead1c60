/**
 * Storage operations of like/repost coalescing (seed 000, reference §8): atomic ingest with a
 * per-event disposition, the per-recipient token bucket and rolling emission window, and the leased
 * flush outbox. Part of {@link StorePort}; implemented by both adapters; tested in
 * `test/store/contract/coalesce.ts`.
 *
 * Model. A group is one `(type, owner, target, bucket)`: the likes (or reposts) of one target by
 * anyone, for one recipient (the owner), inside one fixed bucket of `windowSecs`. Its id is
 * `{type}:{owner}:{target}:{bucket}` ({@link coalesceGroupId}), with `bucket = floor(now / window)`
 * and the deadline `due = (bucket + 1) · window`, so a group is immutable once its deadline has
 * passed: a later event computes the next bucket. A group holds
 * - `immediate`: events of the bucket sent at once (at most `immediateLimit`);
 * - `pending`: events buffered for the summary, the first buffered actor and event, the newest
 *   `created_at`, and the distinct buffered actors (a HyperLogLog in Redis, exact in SQLite);
 * - `expires_at = first ingest + groupTtlSecs`: its logical lifetime, after which it is dropped
 *   loudly instead of flushed;
 * - while a flush holds it, the flush's lease token.
 *
 * The outbox has two parts, as in divine's Redis: `due` (group ids scored by the time they may be
 * flushed) and `leases` (group ids scored by lease expiry). A group id can be in `due` after its
 * group record has gone (a *dangling* entry, after the record's physical TTL): claims drop those.
 *
 * Time. Every operation reads "now" from the store's clock (the Redis server clock in Redis mode,
 * the injected clock in tests); group times (`due`, `expires_at`, lease expiry, emission times) are
 * unix SECONDS, as divine stores them; the token bucket keeps milliseconds.
 *
 * Physical lifetimes (TTLs; {@link coalesceTtls}): a group with buffered work and its actor set
 * live `groupTtlSecs + graceSecs`; a group with immediates only and every disposition
 * `windowSecs + graceSecs`; a token bucket `max(capacity · refill · 2, window + grace)`; an
 * emission window `dailyWindowSecs + graceSecs` after its last emission.
 */

/** The notification types that coalesce, as the `type` data field spells them. */
export type CoalesceType = 'like' | 'repost' | 'zap';

/** The settings every coalescing operation is run with (the `service.coalesce_*` and `service.recipient_*` keys). */
export interface CoalescePolicy {
  /** Bucket length (`coalesce_window_secs`). */
  windowSecs: number;
  /** Events per group sent at once before the rest are buffered (`coalesce_immediate_limit`). */
  immediateLimit: number;
  /** Logical lifetime of a group from its first event (`coalesce_group_ttl_secs`). */
  groupTtlSecs: number;
  /** Added to logical lifetimes to get physical TTLs (`coalesce_logical_expiry_grace_secs`). */
  graceSecs: number;
  /** Token-bucket burst per recipient (`recipient_throttle_capacity`). */
  throttleCapacity: number;
  /** Seconds per refilled token (`recipient_throttle_refill_secs`). */
  throttleRefillSecs: number;
  /** Length of the rolling emission window (`recipient_daily_window_secs`). */
  dailyWindowSecs: number;
  /** Emitted like/repost notifications (immediates and summaries) per window (`recipient_daily_cap`). */
  dailyCap: number;
}

/** The physical TTLs (seconds) that follow from a policy (reference §8.2 ARGV 3, 6, 23, 27). */
export interface CoalesceTtls {
  /** A group with buffered work, and its actor set: `groupTtlSecs + graceSecs`. */
  groupSecs: number;
  /** A disposition, and a group with immediates only: `windowSecs + graceSecs`. */
  dispositionSecs: number;
  /** A recipient's token bucket: `max(capacity · refill · 2, window + grace)`. */
  throttleSecs: number;
  /** A recipient's emission window after its last emission: `dailyWindowSecs + graceSecs`. */
  emittedSecs: number;
}

export function coalesceTtls(policy: CoalescePolicy): CoalesceTtls {
  const dispositionSecs = Math.ceil(policy.windowSecs + policy.graceSecs);
  return {
    groupSecs: Math.ceil(policy.groupTtlSecs + policy.graceSecs),
    dispositionSecs,
    throttleSecs: Math.max(Math.ceil(policy.throttleCapacity * policy.throttleRefillSecs * 2), dispositionSecs),
    emittedSecs: Math.ceil(policy.dailyWindowSecs + policy.graceSecs),
  };
}

/** The bucket `nowSecs` falls in. */
export function coalesceBucket(nowSecs: number, windowSecs: number): number {
  return Math.floor(nowSecs / windowSecs);
}

/** The flush deadline of a bucket: its end. */
export function coalesceDueAtSecs(bucket: number, windowSecs: number): number {
  return (bucket + 1) * windowSecs;
}

/** The group id of seed 000: `{type}:{owner}:{target}:{bucket}` (target is `e:{id}` or `a:{kind:pubkey:d}`). */
export function coalesceGroupId(type: string, owner: string, target: string, bucket: number): string {
  return `${type}:${owner}:${target}:${bucket}`;
}

/**
 * The routing fields stored with a group (reference §7.3 "plus the stored reference fields"),
 * named as the data map names them. The four coordinate fields are stored together or not at all.
 */
export interface CoalesceReferences {
  referencedEventId?: string;
  referencedAddress?: string;
  referencedKind?: string;
  referencedAuthorPubkey?: string;
  referencedDTag?: string;
}

/** One like or repost handed to {@link CoalesceStore.ingestCoalesceEvent}. */
export interface CoalesceEvent {
  type: CoalesceType;
  /** The recipient (64-hex), whose group this is. */
  owner: string;
  /** `e:{id}` or `a:{kind:pubkey:d}`, from `coalesceTarget`. */
  target: string;
  /** The event author (64-hex). */
  actor: string;
  eventId: string;
  eventKind: number;
  /** The event's `created_at` (unix seconds). */
  createdAt: number;
  references: CoalesceReferences;
}

/**
 * What ingest decided:
 * - `immediate`: send now, with the group's collapse key (an immediate slot and a token were taken
 *   and the emission was counted);
 * - `buffered`: the summary will carry it;
 * - `throttled`: buffered because the recipient's token bucket was empty or the emission window
 *   full, although an immediate slot was free (counted by `push_throttled_recipients_total`).
 */
export type IngestDisposition = 'immediate' | 'buffered' | 'throttled';

export interface IngestResult {
  disposition: IngestDisposition;
  groupId: string;
  /**
   * True when this (event, recipient) had been ingested before: the stored decision is returned
   * and nothing is counted again. A replayed throttled event reads `buffered`.
   */
  replayed: boolean;
}

/** What {@link CoalesceStore.consumeRecipientToken} found. */
export type RecipientTokenResult =
  { status: 'spent' } | { status: 'bucket_empty'; retryAfterSecs: number } | { status: 'daily_capped'; retryAfterSecs: number };

/** A group held by one flush. */
export interface GroupClaim {
  groupId: string;
  /** The flush's lease token (uuid); completing with another token is refused. */
  leaseToken: string;
  /** Store time of the claim (unix seconds); the group's lifetime is judged against it. */
  claimedAtSecs: number;
}

export interface ClaimDueGroupResult {
  /** The claimed group, or null when nothing is due. */
  claim: GroupClaim | null;
  /** Groups dropped because their lease expired after their logical lifetime (`skipped{expired}`). */
  expiredDropped: number;
  /** Due entries dropped because their group record was gone (`skipped{dangling_due}`). */
  danglingDropped: number;
}

/**
 * How {@link CoalesceStore.completeCoalesceGroup} ended:
 * - `completed`: the group and its actor set are deleted;
 * - `requeued`: the group is due again after the delay, its lease released;
 * - `expired`: the requeue would reach the logical lifetime, so the group was deleted instead;
 * - `not_owner`: the group is held under another lease token (or was re-claimed): nothing changed;
 * - `missing`: there is no group record any more; only the lease entry was cleared.
 */
export type CompleteGroupResult = 'completed' | 'requeued' | 'expired' | 'not_owner' | 'missing';

/** A group as the flush reads it. */
export interface CoalesceGroup {
  groupId: string;
  /** As stored; `like` or `repost` for every group this service writes. */
  type: string;
  owner: string;
  target: string;
  /** Kind of the events (7 or 16), null when not stored. */
  eventKind: number | null;
  /** When the group may be flushed (unix seconds): its bucket deadline. */
  dueAtSecs: number;
  /** End of the logical lifetime (unix seconds); 0 when unset (a record not written by this service). */
  expiresAtSecs: number;
  pending: number;
  immediate: number;
  firstActor: string | null;
  firstEvent: string | null;
  /** Newest `created_at` of the buffered events. */
  lastAt: number | null;
  references: CoalesceReferences;
  /** The lease token of the flush holding it, if any. */
  leaseToken: string | null;
  /** Distinct buffered actors (HyperLogLog estimate in Redis, exact in SQLite); 0 when unknown. */
  distinctActors: number;
}

/** The coalescing operations of the storage port; each is atomic. */
export interface CoalesceStore {
  /**
   * Decide one like/repost for one recipient, atomically (reference §8.2), after the caller holds
   * the recipient claim:
   * 1. a disposition stored for `(eventId, owner)` is returned as it is (`replayed`), nothing counted;
   * 2. otherwise, while the bucket's group has fewer than `immediateLimit` immediates, the
   *    recipient's emission window (trimmed to `dailyWindowSecs`) and token bucket (refilled
   *    lazily) are consulted: below the cap with a token, the event is `immediate` (a token spent,
   *    the emission recorded under the event id); otherwise `throttled`;
   * 3. an immediate counts in `immediate` and never shortens the TTL of a group with buffered
   *    work; anything else is buffered: `pending` + 1, the first actor/event kept, `lastAt`
   *    raised, the actor added to the distinct set, and the group put in `due` at its deadline
   *    (never moving an existing entry);
   * 4. the disposition is stored for `windowSecs + graceSecs`.
   */
  ingestCoalesceEvent(event: CoalesceEvent, policy: CoalescePolicy): Promise<IngestResult>;

  /**
   * Take the recipient's token and emission slot for one summary, identified by `member` (the
   * group id). A member already in the window is `spent` again without taking anything, so a
   * flush recovered after a crash reuses its reservation. At the cap: `daily_capped` with the
   * seconds until the oldest emission leaves the window (at least 1). Without a token:
   * `bucket_empty` with the seconds until the next token (at least 1).
   */
  consumeRecipientToken(owner: string, member: string, policy: CoalescePolicy): Promise<RecipientTokenResult>;

  /**
   * Give back what {@link consumeRecipientToken} took for `member`, after a flush delivered
   * nothing: one token (up to the capacity) and the emission slot. Does nothing when `member`
   * holds no slot, so a second refund gives nothing back.
   */
  refundRecipientToken(owner: string, member: string, policy: CoalescePolicy): Promise<void>;

  /**
   * Reconcile, then claim one due group (reference §8.4), atomically:
   * 1. expired leases (at most 64 a call) leave `leases`; a group with pending work past its
   *    logical lifetime is deleted and counted in `expiredDropped`; one with pending work before
   *    it goes back to `due` at its deadline (unless already queued); a group with nothing
   *    pending is deleted and never re-queued;
   * 2. the earliest due entries (at most 8 a call) are examined: one without a group record is
   *    removed and counted in `danglingDropped`; the first with a record is moved to `leases`
   *    until now + `leaseSecs` under a fresh lease token, which is stored in the group.
   * A flush whose lease expired may still complete the group until another claim takes it.
   */
  claimDueCoalesceGroup(leaseSecs: number): Promise<ClaimDueGroupResult>;

  /**
   * Finish a flush (reference §8.5); only with the claim's lease token. Without `requeueAfterSecs`
   * the group is deleted (`completed`). With it, the lease is released and the group is due
   * again after that delay (`requeued`), unless that reaches its logical lifetime (`expired`:
   * deleted). `requeueAfterSecs` 0 gives the group back at once (a shutdown).
   */
  completeCoalesceGroup(claim: GroupClaim, requeueAfterSecs?: number): Promise<CompleteGroupResult>;

  /** A group and its distinct-actor count, or null when there is no record. */
  readCoalesceGroup(groupId: string): Promise<CoalesceGroup | null>;

  /**
   * How long the earliest due entry has been due (seconds, now − its score); 0 when nothing is
   * due yet or the outbox is empty. The `push_coalesce_oldest_due_age_seconds` gauge.
   */
  oldestCoalesceDueAgeSecs(): Promise<number>;
}
