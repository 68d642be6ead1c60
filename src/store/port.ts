/**
 * The storage port: every piece of durable state nostr-push keeps, as domain operations.
 *
 * Two adapters implement it: `sqlite/` (better-sqlite3; each operation atomic on its own, the
 * writes of one event-loop turn committed together, see `sqlite/group-commit.ts`) and
 * `redis/` (one Lua script or one MULTI per operation, key layout of divine-push-service). The
 * contract suite in `test/store/contract.ts` is the definition of correct behaviour and runs against
 * both.
 *
 * Time: every operation that depends on "now" reads it from the adapter's injected {@link Clock}
 * (the Redis server's `TIME` in Redis mode, the process clock in SQLite mode, a manual clock in
 * tests), never from the caller. TTL-bearing records (claims, profile cache) expire by Redis's own
 * key expiry in Redis mode (the seed's `SET NX EX`) and by the injected clock in SQLite mode, so
 * expiry itself is tested per adapter; everything else is tested once, in the contract suite.
 *
 * @remarks Deliberately not part of this contract: connection handling, Redis clients, SQL,
 * transactions, Lua loading, key names. Callers never see any of those.
 */

import type { NtfyScheduledStore, NtfyTopicStore } from './port-ntfy.ts';
import type { CoalesceStore } from './port-coalesce.ts';
import type { NotifyListStore } from './port-bells.ts';
import type { VapidKeyStore } from './port-vapid.ts';
import type { ApiKeyStore } from './port-apikeys.ts';
import type { SendStore } from './port-sends.ts';
import type { DeliveryLogStore } from './port-delivery-log.ts';
import type { DeadLetterStore } from './port-dlq.ts';
import type { SocialFilterStore } from './port-social-filters.ts';
import type { InboxStore } from './port-inbox.ts';
import type { ThrottleStore } from './port-throttle.ts';
import type { Nip9aGatewayStore } from './port-nip9a-gateway.ts';
import type { Nip9aCallbackStore } from './port-nip9a-callbacks.ts';
import type { FleetStore } from './port-fleet.ts';
import type { CampaignStore } from './port-campaigns.ts';
import type { SuppressionStore } from './port-suppressions.ts';
import type { QuietHoursStore } from './port-quiet-hours.ts';
import type { TopologyStore } from './port-topology.ts';
import type { ClientQuotaStore } from './port-client-quotas.ts';
import type { RateLimitStore } from './port-rate-limits.ts';
import type { UserRelayStore } from './port-user-relays.ts';

/** Millisecond time source shared by a store and the stages that use it. */

/**
 * Granularity of the delivery-time token activity refresh: 1 hour. Activity only decides the
 * stale-token sweep (`cleanup.token_max_age_days`, 90 days by default), so an hour of precision
 * loses nothing, and a token pushed many times an hour is written once an hour instead of on
 * every push (on SQLite each write moves an index entry).
 */
export const TOKEN_ACTIVITY_RESOLUTION_MS = 3_600_000;

/** The activity time a delivery at `nowMs` writes: the start of its {@link TOKEN_ACTIVITY_RESOLUTION_MS} slice. */
export function tokenActivitySliceStartMs(nowMs: number): number {
  return Math.floor(nowMs / TOKEN_ACTIVITY_RESOLUTION_MS) * TOKEN_ACTIVITY_RESOLUTION_MS;
}

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  nowMs(): number;
}

/** How a device is reached. `fcm` is the default of seed 000; the others arrive with later transports. */
export type Transport = 'fcm' | 'apns' | 'webpush' | 'unifiedpush';

/** One registered device, as decrypted from a kind 3079. */
export interface DeviceRegistration {
  /**
   * Provider token. For `webpush`/`unifiedpush` it is the endpoint URL, so a token stays the one
   * identity of a device across every transport (deregistration, pruning and the stale sweep key on it).
   */
  token: string;
  transport: Transport;
  /** Web Push / UnifiedPush only: the push resource URL (RFC 8030). */
  endpoint?: string;
  /** Web Push / UnifiedPush only: the subscription's P-256 public key, base64url (RFC 8291). */
  p256dh?: string;
  /** Web Push / UnifiedPush only: the 16-byte auth secret, base64url (RFC 8291). */
  auth?: string;
  /** UTC offset in minutes, east positive (+600 is UTC+10); used for campaign quiet hours. */
  timezoneOffsetMinutes?: number;
  /** APNs only: a development build of the app, pushed through Apple's sandbox endpoint. Absent when false. */
  sandbox?: boolean;
  /**
   * The device's own Nostr public key (x-only hex): the push's data map travels NIP-44 v2
   * encrypted from the service key to it, with only `type` and `eventId` in clear.
   */
  encryptTo?: string;
  /**
   * The device's language, a canonical BCP 47 tag (`pt-BR`): its pushes' titles and bodies are
   * rendered from that locale's templates (docs/copy.md). Absent: `templates.default_locale`.
   */
  locale?: string;
}

/** Result of {@link StorePort.registerToken}. */
export interface RegisterTokenResult {
  /** The pubkey that owned this token before, when it was another one (ownership moved). */
  previousOwner: string | null;
}

/** Notification preferences of one user (kind 3083). */
export interface Preferences {
  /** Preference categories (not trigger kinds): 1 comment/mention, 7 like, 16 repost, 1059 DM, 34236 new post. */
  kinds: number[];
  /** Campaign opt-in; absent means false. */
  campaignsEnabled: boolean;
}

/** A held per-recipient delivery claim; release is compare-and-delete on `owner`. */
export interface RecipientClaim {
  eventId: string;
  recipient: string;
  /** Random owner token (uuid v4) stored in the claim. */
  owner: string;
}

/** One per-recipient video delivery decision (kind 34236 coordinate × notification type). */
export interface VideoRecord {
  /** Notification type the decision is for (`mention`, `newPost`). */
  type: string;
  /** The video author (the coordinate's pubkey). */
  owner: string;
  /** The video's `d` tag. */
  dTag: string;
  recipient: string;
}

/** What the per-recipient gates of a content event read about one user ({@link StorePort.readRecipients}). */
export interface RecipientGateState {
  devices: DeviceRegistration[];
  /** The user's preference categories; null when never set or unreadable (the defaults apply). */
  preferenceKinds: number[] | null;
}

/** One delivery for {@link StorePort.claimAndEnqueueDeliveries}: the claim to take and the item it guards. */
export interface ClaimedDelivery<T = unknown> {
  /** The claim to take; `owner` is a fresh random token of the caller's (uuid v4). */
  claim: RecipientClaim;
  item: EnqueueItem<T>;
}

/** A cached kind-0 profile. Only found profiles are cached, never misses. */
export interface CachedProfile {
  pubkey: string;
  name?: string;
  display_name?: string;
}

/** The durable queues between pipeline stages (DESIGN §2); `nip9a` holds the NIP-9a gateway's callback deliveries. */
export type QueueName = 'inbound' | 'outbound' | 'nip9a';

export type Lane = 'critical' | 'normal' | 'low';

/** An item handed to {@link StorePort.enqueue}. */
export interface EnqueueItem<T = unknown> {
  /**
   * Idempotency id. Enqueueing an id that is already queued, leased or dead is a no-op that
   * returns false. For inbound events this is the Nostr event id, which dedupes across relays.
   */
  id: string;
  payload: T;
  /** Earliest time (ms) the item may be leased; defaults to now. */
  availableAtMs?: number;
  /**
   * The lane the item waits in; absent means `'normal'`. Each lane is a queue of its own: a
   * lease drains critical before normal before low, with a small share of every batch reserved
   * to the lower lanes (`store/lanes.ts`). Ids are unique across the lanes of a queue.
   */
  lane?: Lane;
}

/** An item held under a lease. */
export interface LeasedItem<T = unknown> {
  id: string;
  payload: T;
  /** Leases handed out for this item so far, this one included (1 on the first lease). */
  attempts: number;
  /** Owner token of this lease; ack/retry/deadLetter with a stale token do nothing. */
  leaseToken: string;
  /** When the lease expires and the item returns to the queue (ms). */
  leaseExpiresAtMs: number;
  /** The last error recorded by {@link StorePort.retry}, if any. */
  lastError: string | null;
}

/** Options for {@link StorePort.lease}. */
export interface LeaseOptions {
  /** Most items to lease in one call. */
  max: number;
  /** Lease length in ms; an unacknowledged item is leasable again after it. */
  leaseMs: number;
  /**
   * Attempt limit: an item whose lease would be its `maxAttempts + 1`-th is moved to the
   * dead-letter list (reason `max attempts exceeded`) instead of being handed out.
   */
  maxAttempts: number;
}

/**
 * How one leased item is settled in {@link StorePort.settleLeased}: exactly what
 * {@link StorePort.ack}, {@link StorePort.retry} or {@link StorePort.deadLetter} would do to it.
 */
export type Settlement =
  | { id: string; leaseToken: string; outcome: 'ack' }
  | { id: string; leaseToken: string; outcome: 'retry'; availableAtMs: number; error: string }
  | { id: string; leaseToken: string; outcome: 'dead'; reason: string };

/** A dead-lettered item. */
export interface DeadItem<T = unknown> {
  id: string;
  payload: T;
  attempts: number;
  reason: string;
  deadAtMs: number;
}

/** Counts of one lane of a queue (see {@link QueueStats}). */
export interface LaneStats {
  /** Items of this lane waiting, including ones scheduled for later and expired leases. */
  ready: number;
  /** Items of this lane under a live lease. */
  leased: number;
}

/** Counts of one queue: totals over its lanes, and each lane's own. */
export interface QueueStats {
  /** Items waiting, including ones scheduled for later. */
  ready: number;
  /** Items under a live lease. */
  leased: number;
  /** Dead letters of every lane (the dead-letter list is one per queue; each remembers its lane). */
  dead: number;
  lanes: Record<Lane, LaneStats>;
}

/**
 * The storage port. Every method is atomic on its own. Capabilities beyond the core declare their
 * operations in `port-*.ts` beside this file.
 */
export interface StorePort
  extends
    NtfyTopicStore,
    NtfyScheduledStore,
    CoalesceStore,
    NotifyListStore,
    VapidKeyStore,
    SocialFilterStore,
    InboxStore,
    ClientQuotaStore,
    DeadLetterStore,
    Nip9aGatewayStore,
    Nip9aCallbackStore,
    ApiKeyStore,
    SendStore,
    DeliveryLogStore,
    FleetStore,
    ThrottleStore,
    CampaignStore,
    SuppressionStore,
    QuietHoursStore,
    RateLimitStore,
    TopologyStore,
    UserRelayStore {
  /** The clock this store's time-dependent operations use. */
  readonly clock: Clock;

  // ---- device tokens -----------------------------------------------------------------------

  /**
   * Add or update a device for `pubkey`. If another pubkey owned the same token it loses it
   * (ownership transfer, reported in the result). Sets the token's activity time to now.
   */
  registerToken(pubkey: string, device: DeviceRegistration): Promise<RegisterTokenResult>;

  /**
   * Remove `token` if and only if `pubkey` owns it. Returns true when removed, false when the
   * token is unknown or owned by someone else (a deregistration by a non-owner is refused).
   */
  removeToken(pubkey: string, token: string): Promise<boolean>;

  /** Every device registered for `pubkey`, in no particular order. */
  listDevices(pubkey: string): Promise<DeviceRegistration[]>;

  /** The owner of `token`, or null. */
  tokenOwner(token: string): Promise<string | null>;

  /**
   * Raise the activity time of each still-registered token to the start of the current
   * {@link TOKEN_ACTIVITY_RESOLUTION_MS} slice (`floor(now / resolution) * resolution`). Never
   * re-creates a token removed meanwhile, never lowers a time. Returns how many tokens changed;
   * [] does nothing.
   */
  refreshTokenActivity(tokens: string[]): Promise<number>;

  /** Activity time (ms; whole seconds in Redis mode, as divine stores it) of a token, or null when it is not registered. */
  tokenActivityMs(token: string): Promise<number | null>;

  /**
   * Remove every token whose activity time is older than now − `maxAgeMs`, with its owner
   * mapping. Returns the number of tokens removed.
   */
  sweepStaleTokens(maxAgeMs: number): Promise<number>;

  // ---- claims ------------------------------------------------------------------------------

  /**
   * Take the per-event claim of a control event (or any other one-off claim keyed by `eventId`)
   * for `ttlSecs`. True when this call took it. With an `owner`, also true when the claim is
   * already held by that owner: the same work retried after a step that was applied but reported
   * failed (a lost answer, a replica acknowledgement that timed out) finds its own claim and goes
   * on, where it would otherwise take it for someone else's and drop the work (issue 42). Without
   * one, the claim carries no owner and a second call is always refused.
   */
  claimEvent(eventId: string, ttlSecs: number, owner?: string): Promise<boolean>;

  /**
   * Drop a per-event claim, for a control event whose handling failed on a store error, so the
   * inbound queue's retry can take it again. Unconditional: the claim carries no owner.
   */
  releaseEvent(eventId: string): Promise<void>;

  /** Take the per-(event, recipient) delivery claim for `ttlSecs`; null when someone holds it. */
  claimRecipientDelivery(eventId: string, recipient: string, ttlSecs: number): Promise<RecipientClaim | null>;

  /**
   * Whether someone holds the (event, recipient) delivery claim. A handler that queues its
   * delivery with {@link claimAndEnqueueDeliveries} asks first, before work that must be done once
   * per (event, recipient) and is not itself a claim (a coalescing decision, a rate window): after
   * a step that was applied but reported failed, its retry finds the claim and stops, where
   * queueing again would repeat a push already delivered (issue 42).
   */
  isRecipientClaimed(eventId: string, recipient: string): Promise<boolean>;

  /** Release a claim if it is still ours (compare-and-delete). True when it was deleted. */
  releaseRecipientDelivery(claim: RecipientClaim): Promise<boolean>;

  /**
   * For each entry, atomically: take its (event, recipient) claim for `ttlSecs` under
   * `claim.owner` and, only when it was taken, enqueue its item on `queue` (as {@link enqueue}
   * would; an id already queued stays as it is). A claim is thus never held without its delivery
   * queued. One result per entry, in order: true when the claim was taken.
   */
  claimAndEnqueueDeliveries<T>(queue: QueueName, ttlSecs: number, entries: ReadonlyArray<ClaimedDelivery<T>>): Promise<boolean[]>;

  /**
   * The devices and preference categories of many users in one step, in the order asked (the
   * reads of the tokens and preferences gates). A read, not a snapshot guarantee: the claim taken
   * afterwards is what makes a delivery happen once.
   */
  readRecipients(pubkeys: readonly string[]): Promise<RecipientGateState[]>;

  // ---- video coordinate records -------------------------------------------------------------

  /**
   * Whether a per-recipient delivery decision exists for a video coordinate and notification
   * type (`dedup:34236:{type}:{owner}:{dTag}:{recipient}`; divine's legacy type-less key counts
   * too). Keyed by coordinate, not event id, so an edit of the same video (same `d`) is not
   * announced again.
   */
  hasVideoRecord(record: VideoRecord): Promise<boolean>;

  /** Write the decision records of `types` for one video and recipient, each for `ttlSecs`. */
  writeVideoRecords(video: Omit<VideoRecord, 'type'>, types: string[], ttlSecs: number): Promise<void>;

  // ---- preferences -------------------------------------------------------------------------

  /** Stored preferences, or null when the user never set any (callers apply the defaults). */
  getPreferences(pubkey: string): Promise<Preferences | null>;

  /** Replace a user's preferences. */
  setPreferences(pubkey: string, preferences: Preferences): Promise<void>;

  // ---- relay cursors -----------------------------------------------------------------------

  /** The newest `created_at` (unix seconds) seen from `relayUrl`, or null. */
  getRelayCursor(relayUrl: string): Promise<number | null>;

  /** Raise the cursor of `relayUrl` to `createdAt`; a lower value never moves it back. */
  advanceRelayCursor(relayUrl: string, createdAt: number): Promise<void>;

  // ---- profile cache -----------------------------------------------------------------------

  getCachedProfile(pubkey: string): Promise<CachedProfile | null>;

  cacheProfile(profile: CachedProfile, ttlSecs: number): Promise<void>;

  // ---- durable queues ----------------------------------------------------------------------

  /** Add an item; false when the id is already queued, leased or dead. */
  enqueue<T>(queue: QueueName, item: EnqueueItem<T>): Promise<boolean>;

  /**
   * Add many items in one step, each as {@link enqueue} would (independently: a known id skips
   * only its own entry, and an id repeated in the list is added once). One result per item, in order.
   */
  enqueueMany<T>(queue: QueueName, items: ReadonlyArray<EnqueueItem<T>>): Promise<boolean[]>;

  /**
   * Add many items already leased to the caller, as {@link enqueueMany} then a {@link lease} of
   * exactly them would, in one write: each new id is stored leased (attempt 1 reserved, a fresh
   * token, expiring `leaseMs` from now) in its lane, so the caller can start on it at once, and a
   * crash before it settles gives it back after the lease like any other lease. `availableAtMs`
   * is not used. One answer per item, in order: the lease, or null for an id already queued,
   * leased or dead (or repeated earlier in the list), which nothing changed.
   */
  enqueueLeased<T>(queue: QueueName, items: ReadonlyArray<EnqueueItem<T>>, leaseMs: number): Promise<Array<LeasedItem<T> | null>>;

  /**
   * Lease up to `max` items that are available now, oldest availability first within a lane.
   * Lanes are drained critical, then normal, then low, except that a small share of the batch
   * ({@link reservedLaneSlots} in `lanes.ts`) is first offered to each lower lane so neither
   * starves; the batch lists critical items first, then normal, then low. Items whose lease
   * expired are available again (lease recovery) in their own lane. See
   * {@link LeaseOptions.maxAttempts}.
   */
  lease<T>(queue: QueueName, options: LeaseOptions): Promise<LeasedItem<T>[]>;

  /** Remove a leased item for good. False when the lease is no longer ours. */
  ack(queue: QueueName, id: string, leaseToken: string): Promise<boolean>;

  /** Return a leased item to the queue, available at `availableAtMs`, recording `error`. */
  retry(queue: QueueName, id: string, leaseToken: string, availableAtMs: number, error: string): Promise<boolean>;

  /** Move a leased item to the dead-letter list with `reason`. */
  deadLetter(queue: QueueName, id: string, leaseToken: string, reason: string): Promise<boolean>;

  /**
   * Settle many leased items of one queue in one step, each entry exactly as the single-item
   * call would; one result per entry, in order (false when the lease is no longer ours). Entries
   * are independent: one stale token does not stop the others.
   */
  settleLeased(queue: QueueName, settlements: readonly Settlement[]): Promise<boolean[]>;

  /** Dead-lettered items, oldest first. */
  listDead<T>(queue: QueueName, limit: number): Promise<DeadItem<T>[]>;

  /** Put a dead item back in its lane with its attempt count reset; false when unknown. */
  replayDead(queue: QueueName, id: string): Promise<boolean>;

  /** Forget a dead item; false when unknown. */
  deleteDead(queue: QueueName, id: string): Promise<boolean>;

  queueStats(queue: QueueName): Promise<QueueStats>;

  /**
   * Since when the longest-waiting item of `queue` has been due (ms, store clock): the earliest
   * available-at among items of any lane that are due now and under no live lease (an expired
   * lease waits from its expiry); null when none is. `/health` calls a queue stalled when this is
   * older than `health.queue_age_secs`. Dead letters and items scheduled for later do not count.
   */
  oldestDueAtMs(queue: QueueName): Promise<number | null>;

  // ---- lifecycle ---------------------------------------------------------------------------

  /** A cheap round trip that proves the store answers (used by `doctor` and health). */
  ping(): Promise<void>;

  close(): Promise<void>;
}
