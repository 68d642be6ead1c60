/**
 * Storage operations of the user's inbox (issue 13, Twitarr's notification bookkeeping): unread
 * counters per user and notification type, the badge number, announcements with a per-user
 * high-water mark, the global alert-word index, and live count hints. Part of {@link StorePort};
 * implemented by both adapters; tested in `test/store/contract/inbox.ts`.
 *
 * The model (seed 002): for each (user, type) a monotone `total` and a `viewed` value; new is
 * `total − viewed` (never below 0); marking a type viewed sets `viewed = total`, so a later revision
 * of the total never corrupts what was seen. Announcements are not counted per user: a user's new
 * announcements are the active ones whose id is above the user's high-water mark, so one that
 * expires unseen stops counting on its own.
 *
 * Who counts: only users the service knows, that is users remembered with
 * {@link InboxStore.rememberInboxUser} (a device registration, now or before; a user-API caller)
 * or who have a registered device at the time of counting. Pubkeys merely seen in tags never get
 * a record.
 *
 * @remarks Not part of this contract: tokenising text into alert words (`engine/inbox/words.ts`),
 * deciding which events count as what (the engine), the WebSocket that forwards hints (the API).
 */
import type { RecipientGateState } from './port.ts';

/** Every counter type, in the order the user API lists them. */
export const INBOX_TYPES = [
  'like',
  'comment',
  'mention',
  'repost',
  'newPost',
  'directMessage',
  'keyword',
  'announcement',
  'relayEvent',
  // Issue 21's optional kinds (docs/events.md): kind-1 replies and zaps.
  'reply',
  'zap',
] as const;

export type InboxType = (typeof INBOX_TYPES)[number];

/** The types counted per (event, recipient); `announcement` comes from the high-water mark instead. */
export type CountedInboxType = Exclude<InboxType, 'announcement'>;

export function isInboxType(value: unknown): value is InboxType {
  return typeof value === 'string' && (INBOX_TYPES as readonly string[]).includes(value);
}

/** One notification to count for one recipient ({@link InboxStore.countInboxNotifications}). */
export interface InboxCountEntry {
  /**
   * What makes the count happen once: the event id, or `{eventId}#{word}` for an alert word (an
   * event counts once per word). Counting the same (countKey, recipient) again within the TTL is a no-op.
   */
  countKey: string;
  /** 64-hex pubkey of the user whose counter moves. */
  recipient: string;
  type: CountedInboxType;
}

/** The answer of {@link InboxStore.readRecipientsCountingInbox}. */
export interface RecipientsCountedInbox {
  /** One per pubkey asked, in order. */
  states: RecipientGateState[];
  /** One per entry, in order, as {@link InboxStore.countInboxNotifications} answers. */
  counted: (number | null)[];
}

/** One type's numbers. `new` is `max(total − viewed, 0)`. */
export interface InboxTypeCount {
  total: number;
  viewed: number;
  new: number;
}

/** A user's whole inbox: every type of {@link INBOX_TYPES}, and the sum of their `new` (the badge). */
export interface InboxCounts {
  types: Record<InboxType, InboxTypeCount>;
  totalNew: number;
}

/** An operator's announcement. Ids increase with each one published, across the fleet. */
export interface Announcement {
  id: number;
  text: string;
  createdAtMs: number;
  expiresAtMs: number;
}

/**
 * A live hint: `pubkey`'s counter of `type` changed and their total new count is now `totalNew`.
 * Advisory: a hint can be lost (a reconnecting client reads the counts).
 */
export interface InboxHint {
  pubkey: string;
  type: InboxType;
  totalNew: number;
}

/**
 * The most alert words a store accepts in one user's list: the ceiling of
 * `inbox.max_alert_words_per_user` (default 50, Twitarr's), which the callers enforce with a clear
 * refusal; the store only guards against a caller that forgot. 200 words of at most 64 characters
 * fit the user API's 16 KiB body.
 */
export const ALERT_WORDS_CEILING = 200;

/**
 * Resolution of an inbox user's activity time: one day. Activity decides only the idle sweep
 * (`inbox.idle_user_ttl_days`, 30 days), so a day loses nothing, and a user calling the API all day
 * costs one activity write a day instead of one a request.
 */
export const INBOX_ACTIVITY_RESOLUTION_MS = 86_400_000;

/** The activity time a request at `nowMs` records: the start of its UTC day. */
export function inboxActivityDayMs(nowMs: number): number {
  return Math.floor(nowMs / INBOX_ACTIVITY_RESOLUTION_MS) * INBOX_ACTIVITY_RESOLUTION_MS;
}

/** What one page of an idle sweep did ({@link InboxStore.forgetIdleInboxUsers}, `forgetIdleNip9aCallbacks`). */
export interface IdleSweepPage {
  /**
   * Candidates settled (at most the page size): removed, or kept and no longer idle. Fewer than the
   * page size means the sweep is done for now (one left for later, e.g. a user whose alert words
   * are being replaced at that instant, is not counted, so a pass always ends).
   */
  examined: number;
  /** Of those, the ones deleted. */
  removed: number;
}

export interface InboxStore {
  /**
   * Make `pubkey` a known user, whose notifications count from now on, and record that they were
   * active today ({@link inboxActivityDayMs} of the store clock; a user's activity only rises).
   * Called on every user-API request, hint-socket upgrade and device registration: an adapter
   * writes the activity at most once per user per day (a request on a day already recorded is a
   * read, or one no-op write). Idempotent.
   */
  rememberInboxUser(pubkey: string): Promise<void>;

  /**
   * One page of the idle-user sweep (the janitor's, `inbox.idle_user_ttl_days`): look at up to
   * `max` known users whose recorded activity is before `idleBeforeMs`, oldest first, and for each:
   * - with a registered device: keep them, and count them active now (a device is activity; the
   *   user is looked at again once idle for the whole TTL since);
   * - otherwise forget them: their counters, announcement mark, alert words (the global index
   *   keeps no trace of them) and their known-ness; their next request makes them a new user.
   * A user whose request recorded activity meanwhile is kept. Each user is forgotten atomically
   * with respect to their own requests and alert-word replaces (a replace running at that moment
   * either finishes first or starts after). Users remembered before their adapter recorded
   * activity are covered as the adapter's header says.
   */
  forgetIdleInboxUsers(idleBeforeMs: number, max: number): Promise<IdleSweepPage>;

  /**
   * For each entry, atomically: when the recipient is known (remembered, or with a registered
   * device now) and the (countKey, recipient) mark is not held, take the mark for `ttlSecs` and
   * add one to the recipient's `total` of `type`, then publish a hint. One result per entry, in
   * order: the recipient's total new count after the entry when it counted, null when it did not
   * (an unknown user, or counted before). Entries repeated in one call count once.
   */
  countInboxNotifications(entries: readonly InboxCountEntry[], ttlSecs: number): Promise<(number | null)[]>;

  /**
   * `readRecipients(pubkeys)` and `countInboxNotifications(entries, ttlSecs)` as one store step
   * where the adapter can make it one (Redis Cluster layout: one script per user, since both are
   * the user's slot), with the answers the two calls would give: `states` in the order of
   * `pubkeys`, `counted` in the order of `entries`. Neither depends on the other: a read sees the
   * user's devices and preferences, never their counters, and a user is known to the count by
   * their devices whether they are read first or not.
   */
  readRecipientsCountingInbox(
    pubkeys: readonly string[],
    entries: readonly InboxCountEntry[],
    ttlSecs: number,
  ): Promise<RecipientsCountedInbox>;

  /** A user's counters (zeros for a user with none) and active-announcement count. */
  readInboxCounts(pubkey: string): Promise<InboxCounts>;

  /** The total new count ({@link InboxCounts.totalNew}) of each user, in order: the badge of their next push. */
  readInboxBadges(pubkeys: readonly string[]): Promise<number[]>;

  /**
   * Mark `types` viewed for `pubkey`: `viewed = total` for counted types; for `announcement`, the
   * high-water mark is raised to the newest active announcement's id (never lowered). Remembers
   * the user. Publishes one hint (of the first type) when something changed. Returns the counts after.
   */
  markInboxViewed(pubkey: string, types: readonly InboxType[]): Promise<InboxCounts>;

  // ---- alert words (Twitarr's `alertwords` index with per-word watcher sets) ---------------

  /**
   * Replace `pubkey`'s alert words with `words` (already tokenised: lower-case, distinct, within
   * `inbox.max_alert_words_per_user`, which the caller checks; the store checks only the ceiling). Keeps the global index
   * in step: a word nobody watches any more leaves it. Remembers the user.
   *
   * @throws RangeError when there are more than {@link ALERT_WORDS_CEILING} words.
   */
  replaceAlertWords(pubkey: string, words: readonly string[]): Promise<void>;

  /** `pubkey`'s alert words, sorted. */
  readAlertWords(pubkey: string): Promise<string[]>;

  /**
   * The watchers of each of `words` that somebody watches (one index lookup per word; words no one
   * watches are absent from the map). Watchers are sorted.
   */
  alertWordWatchers(words: readonly string[]): Promise<Map<string, string[]>>;

  /** How many distinct words anybody watches (0: the listener need not subscribe to every event). */
  alertWordCount(): Promise<number>;

  // ---- announcements ----------------------------------------------------------------------

  /** Store a new announcement with the next id. */
  publishAnnouncement(text: string, expiresAtMs: number): Promise<Announcement>;

  /** Announcements not yet expired (`expiresAtMs > now`), newest id first. */
  activeAnnouncements(): Promise<Announcement[]>;

  // ---- live hints -------------------------------------------------------------------------

  /**
   * Receive every hint published from now on, by any process sharing this store (Redis: pub/sub;
   * SQLite: in-process, the SQLite store being single-process). Resolves once subscribed; the
   * returned function unsubscribes.
   */
  subscribeInboxHints(listener: (hint: InboxHint) => void): Promise<() => Promise<void>>;
}

/** Zero counts for every type. */
export function emptyInboxCounts(): InboxCounts {
  const types = {} as Record<InboxType, InboxTypeCount>;
  for (const type of INBOX_TYPES) types[type] = { total: 0, viewed: 0, new: 0 };
  return { types, totalNew: 0 };
}

/** Counts from per-type totals and viewed values and the number of new announcements. */
export function inboxCountsFrom(
  read: (type: CountedInboxType) => { total: number; viewed: number },
  newAnnouncements: number,
  activeAnnouncements: number,
): InboxCounts {
  const counts = emptyInboxCounts();
  let totalNew = 0;
  for (const type of INBOX_TYPES) {
    if (type === 'announcement') {
      counts.types.announcement = { total: activeAnnouncements, viewed: activeAnnouncements - newAnnouncements, new: newAnnouncements };
      totalNew += newAnnouncements;
      continue;
    }
    const { total, viewed } = read(type);
    const fresh = Math.max(total - viewed, 0);
    counts.types[type] = { total, viewed, new: fresh };
    totalNew += fresh;
  }
  counts.totalNew = totalNew;
  return counts;
}
