import { mkdirSync } from 'node:fs';
import type { StoreTopology } from '../port-topology.ts';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { createLogger, type Logger } from '../../observability/logger.ts';
import { systemClock } from '../../util/clock.ts';
import type { Clock, RecipientClaim, StorePort } from '../port.ts';
import type {
  BellBatch,
  BellWatcherState,
  ClaimedFanoutJob,
  FanoutJob,
  FanoutJobStats,
  NotifyListOutcome,
  NotifyListReplacement,
  VideoCoordinate,
  WatcherPage,
} from '../port-bells.ts';
import type { InboxWrite } from './inbox.ts';
import type {
  Announcement,
  IdleSweepPage,
  InboxCountEntry,
  InboxCounts,
  InboxHint,
  InboxType,
  RecipientsCountedInbox,
} from '../port-inbox.ts';
import type {
  NtfyAppendEvent,
  NtfyMessage,
  NtfyMessageContent,
  NtfyReadRequest,
  NtfyReadResult,
  NtfyScheduledMessage,
} from '../port-ntfy.ts';
import type {
  ClaimDueGroupResult,
  CoalesceEvent,
  CoalesceGroup,
  CoalescePolicy,
  CompleteGroupResult,
  GroupClaim,
  IngestResult,
  RecipientTokenResult,
} from '../port-coalesce.ts';
import type { PutUserRelayListResult, RelayCoverage, UserRelayChange, UserRelayList, UserRelayLists } from '../port-user-relays.ts';
import { BackgroundCheckpointer } from './checkpointer.ts';
import { migrate } from './migrations.ts';
import { SqlitePlatformStore } from './store-platform.ts';

/**
 * Page cache of the connection, KiB (SQLite's default is 2,000 KiB). The cache is process memory
 * and fills to its size as soon as a workload walks more pages than that (a campaign's 200,000
 * queue rows do in seconds), while the database's pages stay in the OS file cache anyway, where a
 * miss costs a read from memory, not the disk. 16 MiB holds the hot indexes (the queue's due order,
 * the claims); 64 MiB cost 54 MiB more peak resident memory in the campaign benchmark at the same
 * rate (docs/benchmarks.md at 1cc7613, "Where the SQLite service's memory went").
 */
export const SQLITE_PAGE_CACHE_KIB = 16 * 1024;

/** How long a writer waits for another connection's lock before SQLITE_BUSY (ms). */
export const SQLITE_BUSY_TIMEOUT_MS = 5000;

/** The path that opens a private in-memory database. */
export const IN_MEMORY_PATH = ':memory:';

export interface SqliteStoreOptions {
  /** A database file, created if missing, or `:memory:`. */
  path: string;
  /** Defaults to the process clock. */
  clock?: Clock;
  logger?: Logger;
}

/**
 * {@link StorePort} on one better-sqlite3 connection. Every operation is synchronous underneath
 * and atomic on its own (a transaction function); the writes of one event-loop turn share one
 * commit (`GroupCommit`, group-commit.ts), and a write's promise resolves once that commit is done.
 * Concurrent callers in this process are serialised by the event loop, other processes by
 * SQLite's file lock.
 */
export class SqliteStore extends SqlitePlatformStore implements StorePort {
  // ---- user relay lists (port-user-relays.ts) ----------------------------------------------

  putUserRelayList(pubkey: string, list: UserRelayList): Promise<PutUserRelayListResult> {
    return this.group.run(() => this.userRelays.put(pubkey, list));
  }

  async getUserRelayLists(pubkeys: readonly string[]): Promise<UserRelayLists[]> {
    return this.userRelays.getMany(pubkeys);
  }

  async userRelayCoverage(): Promise<RelayCoverage[]> {
    return this.userRelays.coverage();
  }

  noteUserRelayChange(pubkeys: readonly string[]): Promise<void> {
    return this.group.run(() => this.userRelays.note(pubkeys));
  }

  async userRelayChangesSince(sinceMs: number, limit: number): Promise<UserRelayChange[]> {
    return this.userRelays.changesSince(sinceMs, limit);
  }

  async usersWithoutRelayLists(cursor: string | null, limit: number): Promise<{ pubkeys: string[]; cursor: string | null }> {
    return this.userRelays.withoutLists(cursor, limit);
  }

  // ---- ntfy topics (port-ntfy.ts) ----------------------------------------------------------

  appendNtfyMessage(topic: string, content: NtfyMessageContent, ttlMs: number): Promise<NtfyMessage> {
    try {
      return this.ntfy.append(topic, content, ttlMs);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  announceNtfyMessage(topic: string, content: NtfyMessageContent): Promise<NtfyMessage> {
    try {
      return this.ntfy.announce(topic, content);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  scheduleNtfyMessage(topic: string, content: NtfyMessageContent, deliverAtMs: number, ttlMs: number): Promise<NtfyScheduledMessage> {
    return this.ntfyScheduled.schedule(topic, content, deliverAtMs, ttlMs);
  }

  async readNtfyScheduled(topics: readonly string[], limit: number): Promise<NtfyScheduledMessage[]> {
    return this.ntfyScheduled.read(topics, limit);
  }

  releaseDueNtfyMessages(limit: number): Promise<NtfyMessage[]> {
    return this.ntfyScheduled.release(limit);
  }

  async readNtfyMessages(topics: readonly string[], afterId: string | null, limit: number): Promise<NtfyReadResult> {
    return this.ntfy.read(topics, afterId, limit);
  }

  async readNtfyMessagesMany(requests: readonly NtfyReadRequest[]): Promise<NtfyReadResult[]> {
    return this.ntfy.readMany(requests);
  }

  async latestNtfyMessages(topics: readonly string[], upToId: string): Promise<NtfyMessage[]> {
    return this.ntfy.latest(topics, upToId);
  }

  async ntfyHeadId(): Promise<string | null> {
    return this.ntfy.head();
  }

  async hasNtfyMessage(id: string): Promise<boolean> {
    return this.ntfy.has(id);
  }

  async expireNtfyMessages(limit: number): Promise<number> {
    return this.group.run(() => this.ntfy.expire(limit));
  }

  onNtfyAppend(listener: (event: NtfyAppendEvent) => void): () => void {
    return this.ntfy.listeners.add(listener);
  }
  ntfyAppendsHeard(): Promise<void> {
    // Events are emitted in this process, after each commit: heard from the first listener on.
    return Promise.resolve();
  }

  // ---- the user's inbox (port-inbox.ts) ---------------------------------------------------

  /** Run an inbox write, then emit its hints once its commit is done. */
  private async inboxWrite<T>(write: () => InboxWrite<T>): Promise<T> {
    const { result, hints } = await this.group.run(write);
    for (const hint of hints) this.inbox.hints.emit('hint', hint);
    return result;
  }

  async rememberInboxUser(pubkey: string): Promise<void> {
    await this.group.run(() => this.inbox.rememberUser(pubkey));
  }

  async forgetIdleInboxUsers(idleBeforeMs: number, max: number): Promise<IdleSweepPage> {
    return this.group.run(() => this.inbox.forgetIdle(idleBeforeMs, max));
  }

  async countInboxNotifications(entries: readonly InboxCountEntry[], ttlSecs: number): Promise<(number | null)[]> {
    return entries.length === 0 ? [] : this.inboxWrite(() => this.inbox.count(entries, ttlSecs));
  }

  /** The read and the count as they are: a read transaction and the next group commit's write. */
  async readRecipientsCountingInbox(
    pubkeys: readonly string[],
    entries: readonly InboxCountEntry[],
    ttlSecs: number,
  ): Promise<RecipientsCountedInbox> {
    const [states, counted] = await Promise.all([this.readRecipients(pubkeys), this.countInboxNotifications(entries, ttlSecs)]);
    return { states, counted };
  }

  async readInboxCounts(pubkey: string): Promise<InboxCounts> {
    return this.inbox.readCounts(pubkey);
  }

  async readInboxBadges(pubkeys: readonly string[]): Promise<number[]> {
    return this.inbox.readBadges(pubkeys);
  }

  async markInboxViewed(pubkey: string, types: readonly InboxType[]): Promise<InboxCounts> {
    return this.inboxWrite(() => this.inbox.markViewed(pubkey, types));
  }

  async replaceAlertWords(pubkey: string, words: readonly string[]): Promise<void> {
    await this.group.run(() => this.inbox.replaceWords(pubkey, words));
  }

  async readAlertWords(pubkey: string): Promise<string[]> {
    return this.inbox.readWords(pubkey);
  }

  async alertWordWatchers(words: readonly string[]): Promise<Map<string, string[]>> {
    return this.inbox.wordWatchers(words);
  }

  async alertWordCount(): Promise<number> {
    return this.inbox.wordCount();
  }

  async publishAnnouncement(text: string, expiresAtMs: number): Promise<Announcement> {
    return this.group.run(() => this.inbox.publishAnnouncement(text, expiresAtMs));
  }

  async activeAnnouncements(): Promise<Announcement[]> {
    return this.inbox.activeAnnouncements();
  }

  async subscribeInboxHints(listener: (hint: InboxHint) => void): Promise<() => Promise<void>> {
    this.inbox.hints.on('hint', listener);
    return async () => {
      this.inbox.hints.off('hint', listener);
    };
  }

  // ---- coalescing (port-coalesce.ts) -------------------------------------------------------

  async ingestCoalesceEvent(event: CoalesceEvent, policy: CoalescePolicy): Promise<IngestResult> {
    return this.group.run(() => this.coalesce.ingest(event, policy));
  }

  async consumeRecipientToken(owner: string, member: string, policy: CoalescePolicy): Promise<RecipientTokenResult> {
    return this.group.run(() => this.coalesce.consumeToken(owner, member, policy));
  }

  async refundRecipientToken(owner: string, member: string, policy: CoalescePolicy): Promise<void> {
    return this.group.run(() => this.coalesce.refundToken(owner, member, policy));
  }

  async claimDueCoalesceGroup(leaseSecs: number): Promise<ClaimDueGroupResult> {
    return this.group.run(() => this.coalesce.claimDue(leaseSecs));
  }

  async completeCoalesceGroup(claim: GroupClaim, requeueAfterSecs?: number): Promise<CompleteGroupResult> {
    return this.group.run(() => this.coalesce.complete(claim, requeueAfterSecs));
  }

  async readCoalesceGroup(groupId: string): Promise<CoalesceGroup | null> {
    return this.coalesce.readGroup(groupId);
  }

  async oldestCoalesceDueAgeSecs(): Promise<number> {
    return this.coalesce.oldestDueAgeSecs();
  }

  // ---- notify lists and fan-out jobs (port-bells.ts) ---------------------------------------

  async replaceNotifySubscriptions(replacement: NotifyListReplacement): Promise<NotifyListOutcome> {
    return this.group.run(() => this.bells.replace(replacement));
  }

  async notifySubscriptions(subscriber: string): Promise<string[]> {
    return this.bells.subscriptions(subscriber);
  }

  async notifyWatchersPage(creator: string, cursor: string, count: number): Promise<WatcherPage> {
    return this.bells.watchersPage(creator, cursor, count);
  }

  async isNotifyWatcher(creator: string, subscriber: string): Promise<boolean> {
    return this.bells.isWatcher(creator, subscriber);
  }

  async removeNotifyWatcher(creator: string, subscriber: string): Promise<boolean> {
    return this.group.run(() => this.bells.removeWatcher(creator, subscriber));
  }

  async readBellWatchers(video: VideoCoordinate, watchers: readonly string[]): Promise<BellWatcherState[]> {
    return this.bellPages.readWatchers(video, watchers);
  }

  async claimRecipientDeliveries(eventId: string, recipients: readonly string[], ttlSecs: number): Promise<Array<RecipientClaim | null>> {
    return this.group.run(() => this.bellPages.claimMany(eventId, recipients, ttlSecs));
  }

  async recordBellBatch(batch: BellBatch): Promise<void> {
    return this.group.run(() => this.bellPages.recordBatch(batch));
  }

  async extendRecipientDelivery(claim: RecipientClaim, ttlSecs: number): Promise<boolean> {
    return this.group.run(() => this.bells.extendClaim(claim, ttlSecs));
  }

  async isNewPostRateLimited(subscriber: string, creator: string): Promise<boolean> {
    return this.bells.isRateLimited(subscriber, creator);
  }

  async openNewPostRateWindow(subscriber: string, creator: string, ttlSecs: number): Promise<void> {
    return this.group.run(() => this.bells.openRateWindow(subscriber, creator, ttlSecs));
  }

  async enqueueFanoutJob(eventId: string, job: FanoutJob, markerTtlSecs: number): Promise<boolean> {
    return this.group.run(() => this.bells.enqueueJob(eventId, job, markerTtlSecs));
  }

  async claimFanoutJob(leaseMs: number): Promise<ClaimedFanoutJob | null> {
    return this.group.run(() => this.bells.claimJob(leaseMs));
  }

  async completeFanoutJob(current: ClaimedFanoutJob, successor: FanoutJob | null): Promise<void> {
    return this.group.run(() => this.bells.completeJob(current, successor));
  }

  async retryFanoutJob(current: ClaimedFanoutJob, retry: FanoutJob, delayMs: number): Promise<void> {
    return this.group.run(() => this.bells.retryJob(current, retry, delayMs));
  }

  async rescoreFanoutJob(current: ClaimedFanoutJob, delayMs: number): Promise<boolean> {
    return this.group.run(() => this.bells.rescoreJob(current, delayMs));
  }

  async fanoutJobStats(): Promise<FanoutJobStats> {
    return this.bells.jobStats();
  }

  async ping(): Promise<void> {
    this.selectOne.get();
  }

  topology(): Promise<StoreTopology> {
    return Promise.resolve({ kind: 'sqlite' });
  }

  async close(): Promise<void> {
    if (!this.db.open) return;
    this.group.flush();
    // The checkpoint thread's connection closes first, so this one is the last and its close
    // checkpoints the whole WAL and removes it, as a lone connection's does.
    await this.checkpointer?.close();
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the connection can be closed during the await; tsc keeps the narrowing from before it.
    if (this.db.open) this.db.close();
  }
}

/** Open (creating and migrating as needed) a SQLite store. */
export async function openSqliteStore(options: SqliteStoreOptions): Promise<SqliteStore> {
  const logger = options.logger ?? createLogger();
  const inMemory = options.path === IN_MEMORY_PATH;
  // The default location (./data/) does not exist on a fresh checkout.
  if (!inMemory) mkdirSync(dirname(options.path), { recursive: true });
  const db = new BetterSqlite3(options.path);
  try {
    if (!inMemory) {
      // WAL lets readers (doctor, a second role process) run beside the writer; NORMAL is
      // durable across process crashes in WAL mode and only risks the last commits on power loss.
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
    }
    // A negative cache_size is KiB: the default 2 MiB page cache is small for a server's working set.
    db.pragma(`cache_size = -${SQLITE_PAGE_CACHE_KIB}`);
    db.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
    // Every write runs in a SAVEPOINT inside its turn's group transaction (group-commit.ts), and
    // a savepoint keeps each page it first changes in a sub-journal so it can roll back alone; on
    // the default temp store that is a temporary file, two write calls per page. In memory
    // instead: the pages are already in memory, and a sub-journal lives no longer than its turn.
    db.pragma('temp_store = MEMORY');
    const storeLogger = logger.child({ component: 'sqlite-store' });
    migrate(db, storeLogger);
    // A file store checkpoints on a thread of its own once it is busy (checkpointer.ts).
    const checkpointer = inMemory ? null : new BackgroundCheckpointer(options.path, db, storeLogger);
    return new SqliteStore(db, options.clock ?? systemClock, storeLogger, checkpointer);
  } catch (error) {
    db.close();
    throw error;
  }
}
