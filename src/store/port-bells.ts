/**
 * Storage operations of new-post bells (seed 000, reference §3.4, §3.5, §9): the notify-list index
 * (forward and reverse, replaced atomically), the bell rate window, and the durable fan-out job
 * queue. Part of {@link StorePort}; implemented by both adapters; tested in
 * `test/store/contract/bells.ts`.
 *
 * The notify-list index is one relation kept as two views: per subscriber the creators they
 * belled (the forward index, divine's `notify_subs:{subscriber}`), per creator the subscribers
 * watching them (the reverse index, `notify_watchers:{creator}`, which fan-out pages walk). The
 * forward index is the only record of which reverse entries name a subscriber, so every write
 * keeps it a superset of the true relation.
 *
 * The fan-out queue holds one job per page still to deliver. A job's identity is its stored form
 * (divine keeps the job JSON itself as the sorted-set member), so a claimed job is handed out
 * together with that form and every later operation names the job by it. A lease has no owner:
 * two workers that both end up with one page (an expired lease) duplicate work, which the
 * per-recipient claims make harmless, but can never lose the page or its successor.
 *
 * @remarks Not part of this contract: how a page cursor is encoded (Redis SSCAN cursors, SQLite
 * keyset positions) beyond "`'0'` starts a walk and `'0'` ends it", and the creator cap, which
 * callers apply before {@link NotifyListStore.replaceNotifySubscriptions} so one list can never
 * stall the store.
 */

import type { DeviceRegistration, RecipientClaim } from './port.ts';

/** A notify list (kind 30000, `d=notify`) ready to be applied. */
export interface NotifyListReplacement {
  /** The list author (64-hex). */
  subscriber: string;
  /**
   * Every creator the list bells, in tag order, deduplicated, without the subscriber and already
   * capped. Empty means "unbell everyone".
   */
  creators: readonly string[];
  /** The list's `created_at`, unix seconds. */
  createdAt: number;
  /** The list's event id (64-hex); breaks `created_at` ties. */
  eventId: string;
}

/**
 * What became of a replacement: `applied` (it is now the subscriber's list; an exact replay of
 * the applied list is applied again, which re-asserts every reverse entry), or `stale` (an older
 * list than the applied one, or one with the same `created_at` and a higher id, or any list at the
 * `created_at` of a legacy timestamp that carries no id — nothing written).
 */
export type NotifyListOutcome = 'applied' | 'stale';

/** One page of a creator's watchers. */
export interface WatcherPage {
  /** Valid 64-hex subscribers, each once within the page. A walk may repeat one across pages. */
  watchers: string[];
  /** Where the next page starts; `'0'` when the walk is complete. */
  nextCursor: string;
}

/** The walk position a fresh fan-out starts from, and the one a finished walk returns. */
export const WATCHER_WALK_START = '0';

/**
 * One durable page job of a new-post fan-out (divine's job JSON
 * `{event_json, cursor, sender_name, attempt, expires_at}`).
 */
export interface FanoutJob {
  /** The signed kind 34236, serialised as it was received. */
  eventJson: string;
  /** Where this page's watcher read starts ({@link WATCHER_WALK_START} for the first page). */
  cursor: string;
  /** The sender's resolved display name, carried to later pages; null when not resolved yet. */
  senderName: string | null;
  /** Failed delivery attempts of this page so far (0 for a fresh page). */
  attempt: number;
  /** Unix seconds after which the job is discarded (the processed-event TTL from the video). */
  expiresAt: number;
}

/** A job handed out by {@link NotifyListStore.claimFanoutJob}. */
export interface ClaimedFanoutJob {
  /** The job's stored form: its identity in the queue, passed back to complete/retry/rescore. */
  member: string;
  /** The decoded job; null when the stored form does not decode (a damaged entry to discard). */
  job: FanoutJob | null;
}

/** Counts of the fan-out queue. */
export interface FanoutJobStats {
  /** Jobs available now, expired leases included. */
  due: number;
  /** Jobs leased or scheduled for later (a lease is only a later availability time). */
  waiting: number;
}

/** A video by its coordinate: the author and the `d` tag. */
export interface VideoCoordinate {
  owner: string;
  dTag: string;
}

/** Everything the bell gates read about one watcher, read for a whole page at once. */
export interface BellWatcherState {
  watcher: string;
  devices: DeviceRegistration[];
  /** The watcher's preference categories; null when never set or unreadable (the defaults apply). */
  preferenceKinds: number[] | null;
  /** The video's `newPost` coordinate record (or divine's legacy type-less one) exists. */
  alreadyNotified: boolean;
  /** The (watcher, author) bell rate window is open. */
  rateLimited: boolean;
}

/** The bookkeeping of a batch of bells of one video, written in one step. */
export interface BellBatch {
  video: VideoCoordinate;
  /**
   * Bells some device took: the tokens' activity is refreshed, the rate window opened for
   * `rateLimitSecs`, the `newPost` record written for `videoRecordTtlSecs` (divine's bookkeeping,
   * reference §4.5 step 11). The claim is left as it was taken: for the processed-event TTL when
   * the bell was claimed and queued, as every other push's.
   */
  delivered: Array<{ claim: RecipientClaim; tokens: string[] }>;
  /** Bells that failed for good: only the claim is extended, so they are not retried. */
  failed: RecipientClaim[];
  /** Bells to try again (every device failed retryably, or the devices were gone): the claims are released. */
  released: RecipientClaim[];
  /** Watchers inside the rate window: only their `newPost` record is written. */
  rateLimited: string[];
  claimTtlSecs: number;
  rateLimitSecs: number;
  videoRecordTtlSecs: number;
}

export interface NotifyListStore {
  // ---- notify-list index ---------------------------------------------------------------------

  /**
   * Apply a subscriber's notify list as one atomic operation that re-checks the stored version
   * itself (a relay may deliver an older list after a newer one, and another replica may apply a
   * list concurrently). Rules, in order:
   * - a list older than the applied one is `stale`;
   * - at an equal `created_at` the lowest event id is kept (NIP-01): a lower id applies, a higher
   *   one is `stale`, and an equal id (an exact replay) applies again as a repair;
   * - a stored version without an id (divine's legacy bare-integer timestamp) rejects every list
   *   at its `created_at` and accepts any later one.
   * Applying diffs the stored creators against the list: removed creators lose the subscriber from
   * their reverse index first and leave the forward index after; added creators enter the forward
   * index first and the reverse index after, both unconditionally, so an exact replay rebuilds a
   * lost reverse entry and a write that dies midway leaves the forward index a superset.
   * An adapter that applies a list in several steps (Redis: one per slot, see `redis/bells.ts`)
   * refuses a second list of the same subscriber while one is being applied with an error; the
   * caller retries it (the inbound queue does), as after any store error.
   */
  replaceNotifySubscriptions(replacement: NotifyListReplacement): Promise<NotifyListOutcome>;

  /** The creators a subscriber currently bells (the forward index), in no particular order. */
  notifySubscriptions(subscriber: string): Promise<string[]>;

  /**
   * One page of a creator's watchers starting at `cursor` ({@link WATCHER_WALK_START} to begin),
   * about `count` long (a hint, as Redis SSCAN's COUNT is). Members that are not 64-hex pubkeys
   * are skipped with a warning. A watcher present for the whole walk is returned at least once.
   */
  notifyWatchersPage(creator: string, cursor: string, count: number): Promise<WatcherPage>;

  /** Whether `subscriber` watches `creator` (the reverse index). */
  isNotifyWatcher(creator: string, subscriber: string): Promise<boolean>;

  /**
   * Remove one reverse-index entry directly, leaving the forward index alone. The operator's lever
   * for watcher entries a lost forward index can no longer remove (seed 000); true when removed.
   */
  removeNotifyWatcher(creator: string, subscriber: string): Promise<boolean>;

  // ---- bell delivery claims ------------------------------------------------------------------

  /**
   * Extend a held per-recipient delivery claim to `ttlSecs` from now, if it is still ours
   * (compare-and-expire on the owner token, like divine's `promote_campaign_delivery`). False when
   * the claim expired or was taken over; nothing changes then. (Bells no longer need it: since
   * every push goes through the outbound queue, a bell's claim is taken for the whole processed-event
   * TTL together with its queue item, and a worker killed mid-send leaves the item to be leased again.)
   */
  extendRecipientDelivery(claim: RecipientClaim, ttlSecs: number): Promise<boolean>;

  // ---- bell pages (batched: one pipeline or one transaction per step) -------------------------

  /**
   * The gate state of many watchers of one video, in their order: their devices, preference
   * categories, the video's `newPost` record and the bell rate window. A read, not a snapshot
   * guarantee: the claim taken afterwards is what makes a bell happen once.
   */
  readBellWatchers(video: VideoCoordinate, watchers: readonly string[]): Promise<BellWatcherState[]>;

  /** {@link StorePort.claimRecipientDelivery} for many recipients of one event at once, in their order. */
  claimRecipientDeliveries(eventId: string, recipients: readonly string[], ttlSecs: number): Promise<Array<RecipientClaim | null>>;

  /**
   * Write the outcomes of a batch of bells (see {@link BellBatch}). The parts are independent
   * writes, not one all-or-nothing change: after a failure (thrown) some may be written and others
   * not. Callers log and carry on, since the pushes are already out; an unextended claim simply
   * expires.
   */
  recordBellBatch(batch: BellBatch): Promise<void>;

  // ---- bell rate window ----------------------------------------------------------------------
  // ---- bell rate window ----------------------------------------------------------------------

  /** Whether a bell from `creator` to `subscriber` is inside the rate window (`notify_rate:{s}:{c}`). */
  isNewPostRateLimited(subscriber: string, creator: string): Promise<boolean>;

  /**
   * Open (or restart) the rate window for `ttlSecs`. Called only after a delivered push, so a
   * failed send never uses up the subscriber's window (check, then set on success).
   */
  openNewPostRateWindow(subscriber: string, creator: string, ttlSecs: number): Promise<void>;

  // ---- fan-out job queue (every time in ms from the store clock) ----------------------------

  /**
   * Queue the first page job of a video's fan-out, due now, unless this event was queued before
   * (the `fanout:enqueued:{eventId}` marker, kept `markerTtlSecs`). The job is written before the
   * marker, so a failed queue write never consumes the marker. True when queued.
   */
  enqueueFanoutJob(eventId: string, job: FanoutJob, markerTtlSecs: number): Promise<boolean>;

  /**
   * Lease the job that has been due the longest: it stays in the queue, due again `leaseMs` from
   * now (when a crashed worker's page returns). Null when nothing is due.
   */
  claimFanoutJob(leaseMs: number): Promise<ClaimedFanoutJob | null>;

  /**
   * Finish a page: queue `successor` (due now; kept if already queued) before removing the
   * current job, so a race can duplicate a page but never lose the next one.
   */
  completeFanoutJob(current: ClaimedFanoutJob, successor: FanoutJob | null): Promise<void>;

  /** Swap the current job for `retry` (its next attempt, or an exhausted page's successor), due `delayMs` from now. */
  retryFanoutJob(current: ClaimedFanoutJob, retry: FanoutJob, delayMs: number): Promise<void>;

  /**
   * Make a job due `delayMs` from now, keeping it as it is (0 releases a page at graceful
   * shutdown). Only an existing job is touched; false when it is gone (completed meanwhile).
   */
  rescoreFanoutJob(current: ClaimedFanoutJob, delayMs: number): Promise<boolean>;

  fanoutJobStats(): Promise<FanoutJobStats>;
}
