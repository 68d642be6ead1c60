import type { Database, Statement } from 'better-sqlite3';
import type { Logger } from '../../observability/logger.ts';
import { isHexPubkey } from '../../nostr/tags.ts';
import { decodeFanoutJob, encodeFanoutJob } from '../fanout-job-codec.ts';
import type { ClaimedFanoutJob, FanoutJob, FanoutJobStats, NotifyListOutcome, NotifyListReplacement, WatcherPage } from '../port-bells.ts';
import { WATCHER_WALK_START } from '../port-bells.ts';
import type { Clock, RecipientClaim } from '../port.ts';
import { ExpiredRowSweeper, expiresAtMs } from './expiry.ts';

/**
 * Bells on SQLite, with the semantics of the Redis layout (seed 000): the forward and reverse
 * notify-list indexes as two tables moved together in one transaction, the applied list's
 * version, the bell rate windows, the fan-out enqueue markers and the fan-out job queue, whose
 * rows are keyed by the job's stored form exactly as Redis keys its sorted-set members.
 */

/** Schema of the bell tables (one migration, see `migrations.ts`). */
export const CREATE_BELL_TABLES = `
  -- Forward index: the creators each subscriber bells (divine's notify_subs:{subscriber}).
  CREATE TABLE notify_subscriptions (
    subscriber TEXT NOT NULL,
    creator    TEXT NOT NULL,
    PRIMARY KEY (subscriber, creator)
  ) WITHOUT ROWID;

  -- Reverse index: who watches each creator (notify_watchers:{creator}); fan-out pages walk it in
  -- subscriber order, so the cursor is the last subscriber of the previous page.
  CREATE TABLE notify_watchers (
    creator    TEXT NOT NULL,
    subscriber TEXT NOT NULL,
    PRIMARY KEY (creator, subscriber)
  ) WITHOUT ROWID;

  -- The applied list per subscriber (notify_subs_ts); event_id NULL is a version with no known id.
  CREATE TABLE notify_list_versions (
    subscriber TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL,
    event_id   TEXT
  );

  -- Bell rate windows (notify_rate:{subscriber}:{creator}); absent once the clock reaches expires_at_ms.
  CREATE TABLE notify_rate_windows (
    subscriber    TEXT NOT NULL,
    creator       TEXT NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    PRIMARY KEY (subscriber, creator)
  );
  CREATE INDEX notify_rate_windows_by_expiry ON notify_rate_windows (expires_at_ms);

  -- fanout:enqueued:{event_id}
  CREATE TABLE fanout_markers (
    event_id      TEXT PRIMARY KEY,
    expires_at_ms INTEGER NOT NULL
  );
  CREATE INDEX fanout_markers_by_expiry ON fanout_markers (expires_at_ms);

  -- new_post_fanout_jobs: member is the job JSON, due_at_ms its availability or lease deadline.
  CREATE TABLE fanout_jobs (
    member    TEXT PRIMARY KEY,
    due_at_ms INTEGER NOT NULL
  );
  CREATE INDEX fanout_jobs_by_due ON fanout_jobs (due_at_ms, member);
`;

const SELECT_VERSION = `SELECT created_at, event_id FROM notify_list_versions WHERE subscriber = ?`;
const UPSERT_VERSION = `
  INSERT INTO notify_list_versions (subscriber, created_at, event_id) VALUES (?, ?, ?)
  ON CONFLICT (subscriber) DO UPDATE SET created_at = excluded.created_at, event_id = excluded.event_id`;
const SELECT_SUBSCRIPTIONS = `SELECT creator FROM notify_subscriptions WHERE subscriber = ?`;
const INSERT_SUBSCRIPTION = `INSERT OR IGNORE INTO notify_subscriptions (subscriber, creator) VALUES (?, ?)`;
const DELETE_SUBSCRIPTION = `DELETE FROM notify_subscriptions WHERE subscriber = ? AND creator = ?`;
const INSERT_WATCHER = `INSERT OR IGNORE INTO notify_watchers (creator, subscriber) VALUES (?, ?)`;
const DELETE_WATCHER = `DELETE FROM notify_watchers WHERE creator = ? AND subscriber = ?`;
const SELECT_WATCHER = `SELECT 1 FROM notify_watchers WHERE creator = ? AND subscriber = ?`;
const SELECT_WATCHERS_PAGE = `
  SELECT subscriber FROM notify_watchers WHERE creator = ? AND subscriber > ? ORDER BY subscriber LIMIT ?`;

/** Compare-and-expire on the claims table (owned by `claims.ts`); an expired claim is nobody's. */
const EXTEND_RECIPIENT_CLAIM = `
  UPDATE recipient_claims SET expires_at_ms = @expiresAtMs
  WHERE event_id = @eventId AND recipient = @recipient AND owner = @owner AND expires_at_ms > @nowMs`;

const SELECT_RATE_WINDOW = `SELECT 1 FROM notify_rate_windows WHERE subscriber = ? AND creator = ? AND expires_at_ms > ?`;
/** Which of many subscribers are inside a creator's rate window (`@subscribers` is a JSON array). */
const SELECT_RATE_LIMITED = `
  SELECT subscriber FROM notify_rate_windows
  WHERE creator = @creator AND expires_at_ms > @nowMs AND subscriber IN (SELECT value FROM json_each(@subscribers))`;
const UPSERT_RATE_WINDOW = `
  INSERT INTO notify_rate_windows (subscriber, creator, expires_at_ms) VALUES (?, ?, ?)
  ON CONFLICT (subscriber, creator) DO UPDATE SET expires_at_ms = excluded.expires_at_ms`;
const DELETE_EXPIRED_RATE_WINDOWS = `
  DELETE FROM notify_rate_windows WHERE rowid IN (
    SELECT rowid FROM notify_rate_windows WHERE expires_at_ms <= ? LIMIT ?)`;

const SELECT_MARKER = `SELECT 1 FROM fanout_markers WHERE event_id = ? AND expires_at_ms > ?`;
const UPSERT_MARKER = `
  INSERT INTO fanout_markers (event_id, expires_at_ms) VALUES (?, ?)
  ON CONFLICT (event_id) DO UPDATE SET expires_at_ms = excluded.expires_at_ms`;
const DELETE_EXPIRED_MARKERS = `
  DELETE FROM fanout_markers WHERE rowid IN (
    SELECT rowid FROM fanout_markers WHERE expires_at_ms <= ? LIMIT ?)`;

const UPSERT_JOB = `
  INSERT INTO fanout_jobs (member, due_at_ms) VALUES (?, ?)
  ON CONFLICT (member) DO UPDATE SET due_at_ms = excluded.due_at_ms`;
const INSERT_JOB_IF_ABSENT = `INSERT OR IGNORE INTO fanout_jobs (member, due_at_ms) VALUES (?, ?)`;
const UPDATE_JOB_DUE = `UPDATE fanout_jobs SET due_at_ms = ? WHERE member = ?`;
const DELETE_JOB = `DELETE FROM fanout_jobs WHERE member = ?`;
/** Ties in due time go in member order, as a Redis sorted set orders equal scores. */
const SELECT_DUE_JOB = `SELECT member FROM fanout_jobs WHERE due_at_ms <= ? ORDER BY due_at_ms, member LIMIT 1`;
const COUNT_DUE_JOBS = `SELECT count(*) AS n FROM fanout_jobs WHERE due_at_ms <= ?`;
const COUNT_WAITING_JOBS = `SELECT count(*) AS n FROM fanout_jobs WHERE due_at_ms > ?`;

interface VersionRow {
  created_at: number;
  event_id: string | null;
}

/** Whether an incoming list loses to the stored version (the rules of `replaceNotifySubscriptions`). */
function isStale(stored: VersionRow | undefined, createdAt: number, eventId: string): boolean {
  if (!stored) return false;
  if (stored.created_at > createdAt) return true;
  return stored.created_at === createdAt && (stored.event_id === null || eventId > stored.event_id);
}

function requireDelay(operation: string, delayMs: number): void {
  if (!Number.isFinite(delayMs) || delayMs < 0) throw new RangeError(`${operation}: delayMs must be a finite number ≥ 0, got ${delayMs}`);
}

export class BellTables {
  private readonly selectVersion: Statement<[string], VersionRow>;
  private readonly upsertVersion: Statement<[string, number, string | null]>;
  private readonly selectSubscriptions: Statement<[string], { creator: string }>;
  private readonly insertSubscription: Statement<[string, string]>;
  private readonly deleteSubscription: Statement<[string, string]>;
  private readonly insertWatcher: Statement<[string, string]>;
  private readonly deleteWatcher: Statement<[string, string]>;
  private readonly selectWatcher: Statement<[string, string]>;
  private readonly selectWatchersPage: Statement<[string, string, number], { subscriber: string }>;
  private readonly extendRecipientClaim: Statement<
    [{ eventId: string; recipient: string; owner: string; expiresAtMs: number; nowMs: number }]
  >;
  private readonly selectRateWindow: Statement<[string, string, number]>;
  private readonly selectRateLimited: Statement<[{ creator: string; nowMs: number; subscribers: string }], { subscriber: string }>;
  private readonly upsertRateWindow: Statement<[string, string, number]>;
  private readonly selectMarker: Statement<[string, number]>;
  private readonly upsertMarker: Statement<[string, number]>;
  private readonly upsertJob: Statement<[string, number]>;
  private readonly insertJobIfAbsent: Statement<[string, number]>;
  private readonly updateJobDue: Statement<[number, string]>;
  private readonly deleteJob: Statement<[string]>;
  private readonly selectDueJob: Statement<[number], { member: string }>;
  private readonly countDueJobs: Statement<[number], { n: number }>;
  private readonly countWaitingJobs: Statement<[number], { n: number }>;
  private readonly sweeper: ExpiredRowSweeper;

  readonly replace: (replacement: NotifyListReplacement) => NotifyListOutcome;
  readonly openRateWindow: (subscriber: string, creator: string, ttlSecs: number) => void;
  readonly enqueueJob: (eventId: string, job: FanoutJob, markerTtlSecs: number) => boolean;
  readonly claimJob: (leaseMs: number) => ClaimedFanoutJob | null;
  readonly completeJob: (current: ClaimedFanoutJob, successor: FanoutJob | null) => void;
  readonly retryJob: (current: ClaimedFanoutJob, retry: FanoutJob, delayMs: number) => void;
  readonly jobStats: () => FanoutJobStats;

  constructor(
    db: Database,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    this.selectVersion = db.prepare(SELECT_VERSION);
    this.upsertVersion = db.prepare(UPSERT_VERSION);
    this.selectSubscriptions = db.prepare(SELECT_SUBSCRIPTIONS);
    this.insertSubscription = db.prepare(INSERT_SUBSCRIPTION);
    this.deleteSubscription = db.prepare(DELETE_SUBSCRIPTION);
    this.insertWatcher = db.prepare(INSERT_WATCHER);
    this.deleteWatcher = db.prepare(DELETE_WATCHER);
    this.selectWatcher = db.prepare(SELECT_WATCHER);
    this.selectWatchersPage = db.prepare(SELECT_WATCHERS_PAGE);
    this.extendRecipientClaim = db.prepare(EXTEND_RECIPIENT_CLAIM);
    this.selectRateWindow = db.prepare(SELECT_RATE_WINDOW);
    this.selectRateLimited = db.prepare(SELECT_RATE_LIMITED);
    this.upsertRateWindow = db.prepare(UPSERT_RATE_WINDOW);
    this.selectMarker = db.prepare(SELECT_MARKER);
    this.upsertMarker = db.prepare(UPSERT_MARKER);
    this.upsertJob = db.prepare(UPSERT_JOB);
    this.insertJobIfAbsent = db.prepare(INSERT_JOB_IF_ABSENT);
    this.updateJobDue = db.prepare(UPDATE_JOB_DUE);
    this.deleteJob = db.prepare(DELETE_JOB);
    this.selectDueJob = db.prepare(SELECT_DUE_JOB);
    this.countDueJobs = db.prepare(COUNT_DUE_JOBS);
    this.countWaitingJobs = db.prepare(COUNT_WAITING_JOBS);
    this.sweeper = new ExpiredRowSweeper(db, [DELETE_EXPIRED_RATE_WINDOWS, DELETE_EXPIRED_MARKERS]);

    // One transaction, so the order of writes is not load-bearing here as it is in Redis; it is
    // kept the same anyway (reverse before forward on removal, forward first on addition).
    this.replace = db.transaction((replacement: NotifyListReplacement): NotifyListOutcome => {
      const { subscriber, creators, createdAt } = replacement;
      if (!Number.isSafeInteger(createdAt) || createdAt < 0)
        throw new RangeError(`replaceNotifySubscriptions: createdAt must be non-negative whole seconds, got ${createdAt}`);
      const eventId = replacement.eventId.toLowerCase();
      if (isStale(this.selectVersion.get(subscriber), createdAt, eventId)) return 'stale';
      const incoming = new Set(creators);
      for (const { creator } of this.selectSubscriptions.all(subscriber)) {
        if (incoming.has(creator)) continue;
        this.deleteWatcher.run(creator, subscriber);
        this.deleteSubscription.run(subscriber, creator);
      }
      for (const creator of creators) {
        this.insertSubscription.run(subscriber, creator);
        this.insertWatcher.run(creator, subscriber);
      }
      this.upsertVersion.run(subscriber, createdAt, eventId);
      return 'applied';
    });

    this.openRateWindow = db.transaction((subscriber: string, creator: string, ttlSecs: number): void =>
      this.openRateWindowNow(subscriber, creator, ttlSecs),
    );

    this.enqueueJob = db.transaction((eventId: string, job: FanoutJob, markerTtlSecs: number): boolean => {
      const nowMs = this.clock.nowMs();
      const markerExpiry = expiresAtMs(nowMs, markerTtlSecs);
      this.sweeper.maybeSweep(nowMs);
      if (this.selectMarker.get(eventId, nowMs)) return false;
      this.upsertJob.run(encodeFanoutJob(job), nowMs);
      this.upsertMarker.run(eventId, markerExpiry);
      return true;
    });

    this.claimJob = db.transaction((leaseMs: number): ClaimedFanoutJob | null => {
      requireDelay('claimFanoutJob', leaseMs);
      const nowMs = this.clock.nowMs();
      const row = this.selectDueJob.get(nowMs);
      if (!row) return null;
      this.updateJobDue.run(nowMs + Math.ceil(leaseMs), row.member);
      return { member: row.member, job: decodeFanoutJob(row.member) };
    });

    this.completeJob = db.transaction((current: ClaimedFanoutJob, successor: FanoutJob | null): void => {
      const next = successor ? encodeFanoutJob(successor) : null;
      if (next !== null) this.insertJobIfAbsent.run(next, this.clock.nowMs());
      if (next !== current.member) this.deleteJob.run(current.member);
    });

    this.retryJob = db.transaction((current: ClaimedFanoutJob, retry: FanoutJob, delayMs: number): void => {
      requireDelay('retryFanoutJob', delayMs);
      const next = encodeFanoutJob(retry);
      this.upsertJob.run(next, this.clock.nowMs() + Math.ceil(delayMs));
      if (next !== current.member) this.deleteJob.run(current.member);
    });

    this.jobStats = db.transaction((): FanoutJobStats => {
      const nowMs = this.clock.nowMs();
      return { due: this.countDueJobs.get(nowMs)?.n ?? 0, waiting: this.countWaitingJobs.get(nowMs)?.n ?? 0 };
    });
  }

  subscriptions(subscriber: string): string[] {
    return this.selectSubscriptions.all(subscriber).map((row) => row.creator);
  }

  watchersPage(creator: string, cursor: string, count: number): WatcherPage {
    if (!Number.isSafeInteger(count) || count < 1)
      throw new RangeError(`notifyWatchersPage: count must be a positive integer, got ${count}`);
    const after = cursor === WATCHER_WALK_START ? '' : cursor;
    // One row more than the page tells whether another page follows, so a walk never ends on an empty page.
    const rows = this.selectWatchersPage.all(creator, after, count + 1);
    const more = rows.length > count;
    if (more) rows.length = count;
    const watchers: string[] = [];
    for (const { subscriber } of rows) {
      if (isHexPubkey(subscriber)) watchers.push(subscriber);
      else this.logger.warn({ creator, member: String(subscriber).slice(0, 16) }, 'skipping a notify watcher that is not a hex pubkey');
    }
    const last = rows.at(-1)?.subscriber;
    return { watchers, nextCursor: more && last !== undefined ? last : WATCHER_WALK_START };
  }

  isWatcher(creator: string, subscriber: string): boolean {
    return this.selectWatcher.get(creator, subscriber) !== undefined;
  }

  removeWatcher(creator: string, subscriber: string): boolean {
    return this.deleteWatcher.run(creator, subscriber).changes > 0;
  }

  extendClaim(claim: RecipientClaim, ttlSecs: number): boolean {
    const nowMs = this.clock.nowMs();
    const { eventId, recipient, owner } = claim;
    return this.extendRecipientClaim.run({ eventId, recipient, owner, expiresAtMs: expiresAtMs(nowMs, ttlSecs), nowMs }).changes > 0;
  }

  /** {@link openRateWindow} as one statement without a transaction of its own (for a caller's transaction). */
  openRateWindowNow(subscriber: string, creator: string, ttlSecs: number): void {
    const nowMs = this.clock.nowMs();
    this.sweeper.maybeSweep(nowMs);
    this.upsertRateWindow.run(subscriber, creator, expiresAtMs(nowMs, ttlSecs));
  }

  /** {@link isRateLimited} of many subscribers of one creator: the ones inside the window. */
  rateLimitedAmong(subscribers: readonly string[], creator: string): Set<string> {
    return new Set(
      this.selectRateLimited
        .all({ creator, nowMs: this.clock.nowMs(), subscribers: JSON.stringify(subscribers) })
        .map((row) => row.subscriber),
    );
  }

  isRateLimited(subscriber: string, creator: string): boolean {
    return this.selectRateWindow.get(subscriber, creator, this.clock.nowMs()) !== undefined;
  }

  rescoreJob(current: ClaimedFanoutJob, delayMs: number): boolean {
    requireDelay('rescoreFanoutJob', delayMs);
    return this.updateJobDue.run(this.clock.nowMs() + Math.ceil(delayMs), current.member).changes > 0;
  }
}
