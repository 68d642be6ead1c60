/**
 * User relays (issue 36, the outbox model): the listener's connections to the relays the users
 * with devices read from, beside the configured relays.
 *
 * The manager holds the ranking of relays by users covered in memory
 * ({@link UserRelayCoverageIndex}, from kind 10002 read relays, kind 10050 DM relays and
 * registration relays). It reads the whole of it from the store (`userRelayCoverage`, O(users))
 * at start and then at most every {@link USER_RELAY_FULL_READ_INTERVAL_MS} as a safety net; every
 * `refresh` in between it reads only the users whose lists or devices changed
 * (`userRelayChangesSince`, then their lists and devices) and moves them. Then it makes its
 * connections match the ranking:
 * - one connection per relay, shared by every user on it, each a {@link RelayConnection} like the
 *   configured relays' (NIP-42, backoff, cursor per relay URL, watchdog), without the startup replay;
 * - its live filters are `#p` filters: the kinds the engine handles for the relay's readers, and
 *   kind 1059 for its DM readers when gift-wrap pushes are on, the pubkeys in chunks of
 *   `max_pubkeys_per_filter` ({@link userRelayRequests}); when the users of a relay change only the
 *   chunks that changed are sent again, never one REQ per user;
 * - at most `max_connections` relays, the ones covering the most users (the least useful dropped
 *   first); relays the address policy refuses and relays already configured are not opened (a
 *   configured relay is watched for everyone anyway).
 *
 * Events from user relays go to the same pool as the configured relays' (listener.ts): one seen-id
 * set, one sink, the inbound queue's id dedupe and the engine's claims, so an event heard on two
 * relays pushes once.
 */
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Clock, StorePort } from '../store/port.ts';
import { normalizeRelayUrl, noUserRelayLists, type RelayCoverage } from '../store/port-user-relays.ts';
import { coverageEntryOf, UserRelayCoverageIndex } from './user-relay-coverage.ts';
import { GIFT_WRAP } from '../nostr/kinds.ts';
import type { RelayConnection } from './relay-connection.ts';
import { GIFT_WRAP_BACKDATE_SECS, type SubscriptionRequest } from './subscriptions.ts';
import type { RelayStatus, TimerHandle, Timers } from './types.ts';
import { userRelayRefusal, type UserRelayAddressPolicy } from './user-relay-socket.ts';

/** Prefix of a user relay's `#p` subscriptions for the content kinds (`push-user-<chunk>`). */
export const USER_RELAY_SUBSCRIPTION_PREFIX = 'push-user-';
/** Prefix of a DM relay's `#p` gift-wrap subscriptions (`push-user-dm-<chunk>`). */
export const USER_DM_SUBSCRIPTION_PREFIX = 'push-user-dm-';

/**
 * The refresh waits at least this many times as long as the last refresh's reads of changes took:
 * a burst of changes (thousands of users at once) costs reads in proportion, so the store spends
 * at most a fifth of its time on them instead of reading back to back. A quiet refresh costs a
 * few reads; a full read (O(users): 10,000 users cost 0.1–0.3 s on SQLite, ~2 s on Redis on a
 * loaded 2-core box) comes only every {@link USER_RELAY_FULL_READ_INTERVAL_MS} and does not count.
 */
export const USER_RELAY_REFRESH_LOAD_FACTOR = 4;

/**
 * The full re-read of the coverage, besides the one at start: the safety net for changes the log
 * does not carry (a device removed by the janitor's stale-token sweep or by an idle user's
 * forgetting, a change log entry written after its reader moved on).
 */
export const USER_RELAY_FULL_READ_INTERVAL_MS = 10 * 60_000;

/**
 * Each read of the change log starts this far before the previous read began: a writer takes its
 * store-clock time before its write lands, and replicas' clocks differ by a little, so a change
 * may appear with a time just before the previous read. Users read twice are no change.
 */
export const USER_RELAY_CHANGE_OVERLAP_MS = 5_000;

/** Most changes read per refresh; more than that, and the refresh re-reads the whole coverage. */
export const USER_RELAY_CHANGE_PAGE = 5_000;

/** Users whose lists and devices are read in one step when applying changes. */
const CHANGED_USERS_PER_READ = 500;

/** The users of one watched relay. */
export interface UserRelayPlan {
  /** Pubkeys whose read relays (10002, registration) name the relay, sorted. */
  readers: readonly string[];
  /** Pubkeys whose DM relays (10050) name the relay, sorted. */
  dmReaders: readonly string[];
}

export interface UserRelayFilterOptions {
  /** Kinds of the `#p` filters (the engine's content kinds; gift wraps are asked of DM relays only). */
  kinds: readonly number[];
  giftWraps: boolean;
  maxPubkeysPerFilter: number;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * The live REQs of one user relay: its readers' pubkeys in chunks under the content kinds, its DM
 * readers' under kind 1059 (asked from two days earlier, as NIP-59 backdates wraps) when gift
 * wraps are on. Chunks follow the sorted pubkeys, so a user joining changes only the chunks from
 * theirs on.
 */
export function userRelayRequests(plan: UserRelayPlan, options: UserRelayFilterOptions, since: number): SubscriptionRequest[] {
  const kinds = options.kinds.filter((kind) => kind !== GIFT_WRAP);
  const requests: SubscriptionRequest[] = [];
  if (kinds.length > 0)
    chunks(plan.readers, options.maxPubkeysPerFilter).forEach((pubkeys, i) =>
      requests.push({ id: `${USER_RELAY_SUBSCRIPTION_PREFIX}${i}`, filter: { kinds: [...kinds], '#p': pubkeys, since } }),
    );
  if (options.giftWraps)
    chunks(plan.dmReaders, options.maxPubkeysPerFilter).forEach((pubkeys, i) =>
      requests.push({
        id: `${USER_DM_SUBSCRIPTION_PREFIX}${i}`,
        filter: { kinds: [GIFT_WRAP], '#p': pubkeys, since: Math.max(0, since - GIFT_WRAP_BACKDATE_SECS) },
      }),
    );
  return requests;
}

/** The users a relay is useful for under `options`: readers when there are content kinds, DM readers when gift wraps are on. */
function usefulPlan(coverage: RelayCoverage, options: UserRelayFilterOptions): UserRelayPlan {
  const kinds = options.kinds.some((kind) => kind !== GIFT_WRAP);
  return { readers: kinds ? coverage.readers : [], dmReaders: options.giftWraps ? coverage.dmReaders : [] };
}

function usersOf(plan: UserRelayPlan): Set<string> {
  return new Set([...plan.readers, ...plan.dmReaders]);
}

/** What the manager decided on its last refresh, for /health, the console and tests. */
export interface UserRelaySummary {
  /** Relays watched (a connection kept, open or reconnecting). */
  watched: number;
  /** Relays with an open socket. */
  connected: number;
  /** Relays named by users but not watched: over `max_connections`, or refused by the address policy. */
  dropped: number;
  /** Users with devices and a relay list none of whose relays (user or configured) is watched. */
  uncoveredUsers: number;
  /** Live REQs sent to user relays since start. */
  requestsSent: number;
  /** Full reads of the coverage since start (the first included); the refreshes between read changes only. */
  fullReads: number;
  relays: RelayStatus[];
}

export interface UserRelayManagerOptions extends UserRelayFilterOptions {
  /** The configured relays: never opened again as user relays. */
  configuredRelays: readonly string[];
  maxConnections: number;
  refreshMs: number;
  policy: UserRelayAddressPolicy;
  store: Pick<StorePort, 'userRelayCoverage' | 'userRelayChangesSince' | 'getUserRelayLists' | 'readRecipients' | 'clock'>;
  /** Override of {@link USER_RELAY_FULL_READ_INTERVAL_MS} (tests). */
  fullReadIntervalMs?: number;
  /** A connection to `url` whose live REQs are `liveRequests`, sharing the listener's pool. */
  createConnection(
    url: string,
    liveRequests: (since: number) => SubscriptionRequest[],
    onLiveRequestsSent: (count: number) => void,
  ): RelayConnection;
  timers: Timers;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
}

interface WatchedRelay {
  plan: UserRelayPlan;
  connection: RelayConnection;
}

export class UserRelayManager {
  private readonly watched = new Map<string, WatchedRelay>();
  private readonly configured: ReadonlySet<string>;
  private timer: TimerHandle | null = null;
  private refreshing: Promise<void> | null = null;
  private stopped = false;
  private dropped = 0;
  private uncoveredUsers = 0;
  private requestsSent = 0;
  private lastReadMs = 0;
  private readonly coverage = new UserRelayCoverageIndex();
  /** The coverage version the connections match; -1 before the first. */
  private appliedVersion = -1;
  /** Store-clock time the last read of the coverage or its changes began; null until the first full read. */
  private changesReadToMs: number | null = null;
  private lastFullReadAtMs = 0;
  private fullReads = 0;

  constructor(private readonly options: UserRelayManagerOptions) {
    this.configured = new Set(options.configuredRelays.map((url) => normalizeRelayUrl(url) ?? url));
  }

  /** The first refresh, then one every `refreshMs`. Resolves after the first; never rejects. */
  async start(): Promise<void> {
    await this.refresh();
    this.schedule();
  }

  /** Stops the refreshes and every user relay connection (cursors written). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) this.options.timers.clearTimeout(this.timer);
    this.timer = null;
    await this.refreshing;
    const connections = [...this.watched.values()].map((relay) => relay.connection);
    this.watched.clear();
    await Promise.all(connections.map((connection) => connection.stop()));
    this.publishGauges();
  }

  /**
   * Reads the coverage and moves the connections to match it. One at a time: a call while one
   * runs waits for it and runs again. A store error is logged; the connections stay as they were.
   */
  async refresh(): Promise<void> {
    while (this.refreshing !== null) await this.refreshing;
    if (this.stopped) return;
    this.refreshing = this.refreshOnce().finally(() => (this.refreshing = null));
    await this.refreshing;
  }

  summary(): UserRelaySummary {
    const relays = [...this.watched.values()].map((relay) => relay.connection.status());
    return {
      watched: relays.length,
      connected: relays.filter((relay) => relay.connected).length,
      dropped: this.dropped,
      uncoveredUsers: this.uncoveredUsers,
      requestsSent: this.requestsSent,
      fullReads: this.fullReads,
      relays,
    };
  }

  private schedule(): void {
    if (this.stopped) return;
    const delayMs = Math.max(this.options.refreshMs, this.lastReadMs * USER_RELAY_REFRESH_LOAD_FACTOR);
    this.timer = this.options.timers.setTimeout(() => {
      this.timer = null;
      void this.refresh().then(() => this.schedule());
    }, delayMs);
  }

  /** A full read when none was made yet or the interval is up; otherwise the changed users alone. Which it was. */
  private async readCoverage(): Promise<'full' | 'changes'> {
    const { store, clock } = this.options;
    const fullInterval = this.options.fullReadIntervalMs ?? USER_RELAY_FULL_READ_INTERVAL_MS;
    if (this.changesReadToMs !== null && clock.nowMs() - this.lastFullReadAtMs < fullInterval) {
      const readFromMs = store.clock.nowMs();
      const changes = await store.userRelayChangesSince(this.changesReadToMs - USER_RELAY_CHANGE_OVERLAP_MS, USER_RELAY_CHANGE_PAGE);
      if (changes.length < USER_RELAY_CHANGE_PAGE) {
        await this.applyChanges([...new Set(changes.map((change) => change.pubkey))]);
        // Every change recorded before this read began is applied (give or take the overlap).
        this.changesReadToMs = readFromMs;
        return 'changes';
      }
      this.options.logger.info({ changes: changes.length }, 'many user relay changes at once; reading the whole coverage');
    }
    // Changes from here on are read next time (the log is read from before this read started).
    const readFromMs = store.clock.nowMs();
    this.lastFullReadAtMs = clock.nowMs();
    this.coverage.replaceAll(await store.userRelayCoverage());
    this.changesReadToMs = readFromMs;
    this.fullReads++;
    return 'full';
  }

  /** Each of `pubkeys` moved to their stored lists and devices. */
  private async applyChanges(pubkeys: readonly string[]): Promise<void> {
    for (let i = 0; i < pubkeys.length && !this.stopped; i += CHANGED_USERS_PER_READ) {
      const page = pubkeys.slice(i, i + CHANGED_USERS_PER_READ);
      const [lists, recipients] = await Promise.all([this.options.store.getUserRelayLists(page), this.options.store.readRecipients(page)]);
      page.forEach((pubkey, j) => this.coverage.set(pubkey, coverageEntryOf(lists[j] ?? noUserRelayLists(), recipients[j])));
    }
  }

  private async refreshOnce(): Promise<void> {
    const { logger } = this.options;
    const readStartedMs = this.options.clock.nowMs();
    try {
      const read = await this.readCoverage();
      // The pace follows the reads of changes; a full read is rare (USER_RELAY_FULL_READ_INTERVAL_MS
      // apart) and must not hold back the changes that follow it.
      this.lastReadMs = read === 'changes' ? this.options.clock.nowMs() - readStartedMs : 0;
    } catch (error) {
      logger.warn({ err: error }, 'could not read the user relay coverage; keeping the current user relays');
      return;
    }
    if (this.stopped) return;
    if (this.coverage.version === this.appliedVersion) {
      // Nobody moved: the connections already match; only their open/closed counts may differ.
      this.publishGauges();
      return;
    }
    this.appliedVersion = this.coverage.version;
    const { wanted, dropped, uncoveredUsers } = this.choose(this.coverage.ranked());
    this.dropped = dropped;
    this.uncoveredUsers = uncoveredUsers;

    const leaving = [...this.watched.keys()].filter((url) => !wanted.has(url));
    for (const url of leaving) {
      const relay = this.watched.get(url);
      this.watched.delete(url);
      if (relay) void relay.connection.stop();
    }
    let opened = 0;
    let moved = 0;
    for (const [url, plan] of wanted) {
      const relay = this.watched.get(url);
      if (relay === undefined) {
        this.open(url, plan);
        opened++;
      } else if (!samePlan(relay.plan, plan)) {
        relay.plan = plan;
        relay.connection.resubscribeChanged();
        moved++;
      }
    }
    if (opened + moved + leaving.length > 0)
      logger.info(
        { watched: wanted.size, opened, resubscribed: moved, closed: leaving.length, dropped, uncoveredUsers },
        'user relays updated',
      );
    this.publishGauges();
  }

  /** The relays to watch (most users first, at most `maxConnections`) with their users, and what is left out. */
  private choose(coverage: RelayCoverage[]): { wanted: Map<string, UserRelayPlan>; dropped: number; uncoveredUsers: number } {
    const { maxConnections, policy, logger } = this.options;
    const candidates: Array<{ url: string; plan: UserRelayPlan; users: number }> = [];
    const everyone = new Set<string>();
    const covered = new Set<string>();
    let refused = 0;
    for (const relay of coverage) {
      const plan = usefulPlan(relay, this.options);
      const users = usersOf(plan);
      if (users.size === 0) continue;
      for (const user of users) everyone.add(user);
      if (this.configured.has(relay.url)) {
        for (const user of users) covered.add(user);
        continue;
      }
      const refusal = userRelayRefusal(relay.url, policy);
      if (refusal !== null) {
        refused++;
        logger.debug({ relay: relay.url, reason: refusal }, 'user relay refused by the address policy');
        continue;
      }
      candidates.push({ url: relay.url, plan, users: users.size });
    }
    // The store ranks by every user a relay names; re-rank by those it is useful for here.
    candidates.sort((a, b) => b.users - a.users || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
    const kept = candidates.slice(0, maxConnections);
    const wanted = new Map<string, UserRelayPlan>();
    for (const relay of kept) {
      wanted.set(relay.url, relay.plan);
      for (const user of usersOf(relay.plan)) covered.add(user);
    }
    return { wanted, dropped: candidates.length - kept.length + refused, uncoveredUsers: everyone.size - covered.size };
  }

  private open(url: string, plan: UserRelayPlan): void {
    const relay: WatchedRelay = {
      plan,
      connection: this.options.createConnection(
        url,
        (since) => userRelayRequests(relay.plan, this.options, since),
        (count) => {
          this.requestsSent += count;
          this.options.metrics.userRelayRequests.inc(count);
        },
      ),
    };
    this.watched.set(url, relay);
    // Not awaited: a relay that is slow to answer must not hold up the others.
    void relay.connection.start();
    relay.connection.done.catch((error: unknown) => this.options.logger.error({ relay: url, err: error }, 'user relay connection failed'));
  }

  private publishGauges(): void {
    const summary = this.summary();
    const { metrics } = this.options;
    metrics.userRelaysWatched.set(summary.watched);
    metrics.userRelaysConnected.set(summary.connected);
    metrics.userRelaysDropped.set(summary.dropped);
    metrics.userRelayUsersUncovered.set(summary.uncoveredUsers);
  }
}

function samePlan(a: UserRelayPlan, b: UserRelayPlan): boolean {
  // A relay whose users did not change keeps its arrays (user-relay-coverage.ts): no join needed.
  if (a.readers === b.readers && a.dmReaders === b.dmReaders) return true;
  return a.readers.join() === b.readers.join() && a.dmReaders.join() === b.dmReaders.join();
}
