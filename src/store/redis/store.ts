/**
 * The Redis adapter of the storage port: every operation is one Lua script, one command or one
 * MULTI over divine-push-service's key layout (see `keys.ts`), so an existing divine Redis is
 * taken over as it is.
 */
import type { StoreTopology } from '../port-topology.ts';
import { readRedisTopology } from './topology.ts';
import { createRedisClient } from './client.ts';
import { defaultKeyLayout, describeRedisTarget, parseRedisTarget } from './target.ts';
import { ntfyWakeChannel, type KeyLayout } from './keys.ts';
import type { Clock, RecipientClaim, StorePort } from '../port.ts';
import { createLogger, type Logger } from '../../observability/logger.ts';
import type { ScriptCallObserver } from './scripts.ts';
import { RedisServerClock } from './server-clock.ts';
import * as bells from './bells.ts';
import * as bellPages from './bell-pages.ts';
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
import * as coalesce from './coalesce.ts';
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
import * as claims from './claims.ts';
import { RedisNtfyTopics } from './ntfy.ts';
import { RedisNtfySchedule } from './ntfy-scheduled.ts';
import * as inbox from './inbox.ts';
import * as deliveries from './deliveries.ts';
import type { Announcement, InboxCountEntry, InboxCounts, InboxHint, InboxType, RecipientsCountedInbox } from '../port-inbox.ts';
import type {
  NtfyAppendEvent,
  NtfyMessage,
  NtfyMessageContent,
  NtfyReadRequest,
  NtfyReadResult,
  NtfyScheduledMessage,
} from '../port-ntfy.ts';
import { DEFAULT_WAIT_TIMEOUT_MS, resolveWaitReplicas, WAIT_REPLICAS_AUTO } from './replication.ts';
import { RedisPlatformStore } from './store-platform.ts';

export interface RedisStoreOptions {
  /**
   * `redis://[user:password@]host:port[/db]`, or a cluster's seed nodes
   * `redis+cluster://[user:password@]host:port,host:port,…` (`target.ts`).
   */
  url: string;
  /** More cluster seed nodes, `host:port` (`redis.cluster_nodes`); only with a cluster URL. */
  clusterNodes?: readonly string[];
  /** The key layout (`redis.key_layout`); default `cluster` on a cluster, `divine` otherwise. */
  layout?: KeyLayout;
  /**
   * Shards per durable queue (`redis.queue_shards`): only 1 in the divine layout; default 8
   * (`DEFAULT_CLUSTER_QUEUE_SHARDS`, keys.ts) in the cluster layout. Every process sharing a Redis must
   * use the same count (an item's shard follows from its id and the count), so change it only
   * with the queues drained.
   */
  queueShards?: number;
  /**
   * Replicas the writes of a step must reach before a step in another slot depends on them
   * (`redis.wait_replicas`, `replication.ts`); default {@link WAIT_REPLICAS_AUTO}: 1 on a cluster
   * (each master asked for no more replicas than it has alive), 0 on one Redis.
   */
  waitReplicas?: number;
  /** Longest one such wait blocks, ms (`redis.wait_timeout_ms`); default {@link DEFAULT_WAIT_TIMEOUT_MS}. */
  waitTimeoutMs?: number;
  /** Test fault injection: see {@link ReplicationSettings.refuseAcknowledgement}. */
  refuseAcknowledgement?: () => boolean;
  /** Time source; defaults to the Redis server clock ({@link RedisServerClock}). */
  clock?: Clock;
  /** Prefix for every key. For test isolation only: a divine Redis has no prefix. */
  keyPrefix?: string;
  /** Told of every script call (name and declared keys) before it is sent: the slot test's recorder. */
  scriptObserver?: ScriptCallObserver;
  logger?: Logger;
}

export class RedisStore extends RedisPlatformStore implements StorePort {
  // ---- ntfy topics (port-ntfy.ts) ----------------------------------------------------------
  private ntfyTopics: RedisNtfyTopics | undefined;
  private get ntfy(): RedisNtfyTopics {
    return (this.ntfyTopics ??= new RedisNtfyTopics(this.ctx));
  }
  appendNtfyMessage(topic: string, content: NtfyMessageContent, ttlMs: number): Promise<NtfyMessage> {
    return this.ntfy.append(topic, content, ttlMs);
  }
  announceNtfyMessage(topic: string, content: NtfyMessageContent): Promise<NtfyMessage> {
    return this.ntfy.announce(topic, content);
  }
  private ntfyScheduleOps: RedisNtfySchedule | undefined;
  private get ntfySchedule(): RedisNtfySchedule {
    return (this.ntfyScheduleOps ??= new RedisNtfySchedule(this.ctx, ntfyWakeChannel(this.ctx.redis.options.keyPrefix ?? '')));
  }
  scheduleNtfyMessage(topic: string, content: NtfyMessageContent, deliverAtMs: number, ttlMs: number): Promise<NtfyScheduledMessage> {
    return this.ntfySchedule.schedule(topic, content, deliverAtMs, ttlMs);
  }
  readNtfyScheduled(topics: readonly string[], limit: number): Promise<NtfyScheduledMessage[]> {
    return this.ntfySchedule.read(topics, limit);
  }
  releaseDueNtfyMessages(limit: number): Promise<NtfyMessage[]> {
    return this.ntfySchedule.release(limit);
  }
  readNtfyMessages(topics: readonly string[], afterId: string | null, limit: number): Promise<NtfyReadResult> {
    return this.ntfy.read(topics, afterId, limit);
  }
  readNtfyMessagesMany(requests: readonly NtfyReadRequest[]): Promise<NtfyReadResult[]> {
    return this.ntfy.readMany(requests);
  }
  latestNtfyMessages(topics: readonly string[], upToId: string): Promise<NtfyMessage[]> {
    return this.ntfy.latest(topics, upToId);
  }
  ntfyHeadId(): Promise<string | null> {
    return this.ntfy.head();
  }
  hasNtfyMessage(id: string): Promise<boolean> {
    return this.ntfy.has(id);
  }
  expireNtfyMessages(limit: number): Promise<number> {
    return this.ntfy.expire(limit);
  }
  onNtfyAppend(listener: (event: NtfyAppendEvent) => void): () => void {
    return this.ntfy.addListener(listener);
  }
  ntfyAppendsHeard(): Promise<void> {
    return this.ntfy.listening();
  }

  // ---- the user's inbox (port-inbox.ts) ---------------------------------------------------
  rememberInboxUser(pubkey: string): Promise<void> {
    return inbox.rememberInboxUser(this.ctx, pubkey);
  }
  countInboxNotifications(entries: readonly InboxCountEntry[], ttlSecs: number): Promise<(number | null)[]> {
    return inbox.countInboxNotifications(this.ctx, entries, ttlSecs);
  }

  readRecipientsCountingInbox(
    pubkeys: readonly string[],
    entries: readonly InboxCountEntry[],
    ttlSecs: number,
  ): Promise<RecipientsCountedInbox> {
    return deliveries.readRecipientsCountingInbox(this.ctx, pubkeys, entries, ttlSecs);
  }
  readInboxCounts(pubkey: string): Promise<InboxCounts> {
    return inbox.readInboxCounts(this.ctx, pubkey);
  }
  readInboxBadges(pubkeys: readonly string[]): Promise<number[]> {
    return inbox.readInboxBadges(this.ctx, pubkeys);
  }
  markInboxViewed(pubkey: string, types: readonly InboxType[]): Promise<InboxCounts> {
    return inbox.markInboxViewed(this.ctx, pubkey, types);
  }
  replaceAlertWords(pubkey: string, words: readonly string[]): Promise<void> {
    return inbox.replaceAlertWords(this.ctx, pubkey, words);
  }
  readAlertWords(pubkey: string): Promise<string[]> {
    return inbox.readAlertWords(this.ctx, pubkey);
  }
  alertWordWatchers(words: readonly string[]): Promise<Map<string, string[]>> {
    return inbox.alertWordWatchers(this.ctx, words);
  }
  alertWordCount(): Promise<number> {
    return inbox.alertWordCount(this.ctx);
  }
  publishAnnouncement(text: string, expiresAtMs: number): Promise<Announcement> {
    return inbox.publishAnnouncement(this.ctx, text, expiresAtMs);
  }
  activeAnnouncements(): Promise<Announcement[]> {
    return inbox.activeAnnouncements(this.ctx);
  }
  async subscribeInboxHints(listener: (hint: InboxHint) => void): Promise<() => Promise<void>> {
    const unsubscribe = await inbox.subscribeInboxHints(this.ctx, listener);
    const once = async (): Promise<void> => {
      if (this.hintSubscriptions.delete(once)) await unsubscribe();
    };
    this.hintSubscriptions.add(once);
    return once;
  }

  // ---- coalescing (port-coalesce.ts) -------------------------------------------------------
  ingestCoalesceEvent(event: CoalesceEvent, policy: CoalescePolicy): Promise<IngestResult> {
    return coalesce.ingestCoalesceEvent(this.ctx, event, policy);
  }
  consumeRecipientToken(owner: string, member: string, policy: CoalescePolicy): Promise<RecipientTokenResult> {
    return coalesce.consumeRecipientToken(this.ctx, owner, member, policy);
  }
  refundRecipientToken(owner: string, member: string, policy: CoalescePolicy): Promise<void> {
    return coalesce.refundRecipientToken(this.ctx, owner, member, policy);
  }
  claimDueCoalesceGroup(leaseSecs: number): Promise<ClaimDueGroupResult> {
    return coalesce.claimDueCoalesceGroup(this.ctx, leaseSecs);
  }
  completeCoalesceGroup(claim: GroupClaim, requeueAfterSecs?: number): Promise<CompleteGroupResult> {
    return coalesce.completeCoalesceGroup(this.ctx, claim, requeueAfterSecs);
  }
  readCoalesceGroup(groupId: string): Promise<CoalesceGroup | null> {
    return coalesce.readCoalesceGroup(this.ctx, groupId);
  }
  oldestCoalesceDueAgeSecs(): Promise<number> {
    return coalesce.oldestCoalesceDueAgeSecs(this.ctx);
  }

  // ---- notify lists and fan-out jobs (port-bells.ts) ---------------------------------------
  replaceNotifySubscriptions(replacement: NotifyListReplacement): Promise<NotifyListOutcome> {
    return bells.replaceNotifySubscriptions(this.ctx, replacement);
  }
  notifySubscriptions(subscriber: string): Promise<string[]> {
    return bells.notifySubscriptions(this.ctx, subscriber);
  }
  notifyWatchersPage(creator: string, cursor: string, count: number): Promise<WatcherPage> {
    return bells.notifyWatchersPage(this.ctx, creator, cursor, count);
  }
  isNotifyWatcher(creator: string, subscriber: string): Promise<boolean> {
    return bells.isNotifyWatcher(this.ctx, creator, subscriber);
  }
  removeNotifyWatcher(creator: string, subscriber: string): Promise<boolean> {
    return bells.removeNotifyWatcher(this.ctx, creator, subscriber);
  }
  readBellWatchers(video: VideoCoordinate, watchers: readonly string[]): Promise<BellWatcherState[]> {
    return bellPages.readBellWatchers(this.ctx, video, watchers);
  }
  claimRecipientDeliveries(eventId: string, recipients: readonly string[], ttlSecs: number): Promise<Array<RecipientClaim | null>> {
    return claims.claimRecipientDeliveries(this.ctx, eventId, recipients, ttlSecs);
  }
  recordBellBatch(batch: BellBatch): Promise<void> {
    return bellPages.recordBellBatch(this.ctx, batch);
  }
  extendRecipientDelivery(claim: RecipientClaim, ttlSecs: number): Promise<boolean> {
    return bells.extendRecipientDelivery(this.ctx, claim, ttlSecs);
  }
  isNewPostRateLimited(subscriber: string, creator: string): Promise<boolean> {
    return bells.isNewPostRateLimited(this.ctx, subscriber, creator);
  }
  openNewPostRateWindow(subscriber: string, creator: string, ttlSecs: number): Promise<void> {
    return bells.openNewPostRateWindow(this.ctx, subscriber, creator, ttlSecs);
  }
  enqueueFanoutJob(eventId: string, job: FanoutJob, markerTtlSecs: number): Promise<boolean> {
    return bells.enqueueFanoutJob(this.ctx, eventId, job, markerTtlSecs);
  }
  claimFanoutJob(leaseMs: number): Promise<ClaimedFanoutJob | null> {
    return bells.claimFanoutJob(this.ctx, leaseMs);
  }
  completeFanoutJob(current: ClaimedFanoutJob, successor: FanoutJob | null): Promise<void> {
    return bells.completeFanoutJob(this.ctx, current, successor);
  }
  retryFanoutJob(current: ClaimedFanoutJob, retry: FanoutJob, delayMs: number): Promise<void> {
    return bells.retryFanoutJob(this.ctx, current, retry, delayMs);
  }
  rescoreFanoutJob(current: ClaimedFanoutJob, delayMs: number): Promise<boolean> {
    return bells.rescoreFanoutJob(this.ctx, current, delayMs);
  }
  fanoutJobStats(): Promise<FanoutJobStats> {
    return bells.fanoutJobStats(this.ctx);
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  topology(): Promise<StoreTopology> {
    return readRedisTopology(this.ctx.cluster, this.ctx.keys.layout);
  }

  async close(): Promise<void> {
    this.serverClock?.stop();
    // A subscriber connection left open would keep reconnecting (on a cluster, to every node) after the store is gone.
    await Promise.all([...this.hintSubscriptions].map((unsubscribe) => unsubscribe()));
    await this.ntfyTopics?.close();
    if (this.redis.status === 'end') return;
    try {
      await this.redis.quit();
    } catch {
      // quit fails when the connection is already gone; there is nothing left to close then.
      this.redis.disconnect();
    }
  }
}

/** Connect to Redis, register the scripts and start the server clock (unless a clock is given). */
export async function openRedisStore(options: RedisStoreOptions): Promise<RedisStore> {
  const logger = options.logger ?? createLogger();
  const target = parseRedisTarget(options.url, options.clusterNodes);
  const where = describeRedisTarget(target);
  const layout = options.layout ?? defaultKeyLayout(target);
  // The divine layout's scripts touch keys of many slots at once, which a cluster refuses.
  if (target.kind === 'cluster' && layout === 'divine') {
    throw new RangeError(`cannot open the Redis store at ${where}: the divine key layout cannot run on a Redis Cluster; use cluster`);
  }
  const client = createRedisClient(target, options.keyPrefix);
  const { redis } = client;
  // ioredis emits 'error' on every failed reconnect; without a listener Node would crash.
  let lastConnectionError: Error | undefined;
  redis.on('error', (error: Error) => {
    lastConnectionError = error;
    logger.warn({ err: error, redis: where }, 'redis connection error');
  });
  // A cluster's node connections report their errors apart ('node error'): without this, a node
  // lost mid-command shows only as the "Connection is closed." of the commands it held.
  client.cluster?.on('node error', (error: Error, node: string) => {
    logger.warn({ err: error, redis: where, node }, 'redis cluster node connection error');
  });
  try {
    await redis.connect();
    let clock: Clock;
    let serverClock: RedisServerClock | undefined;
    if (options.clock) {
      clock = options.clock;
    } else {
      serverClock = new RedisServerClock(redis, logger);
      await serverClock.sync();
      clock = serverClock;
    }
    const replication = {
      replicas: resolveWaitReplicas(options.waitReplicas ?? WAIT_REPLICAS_AUTO, client.cluster),
      timeoutMs: options.waitTimeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS,
      ...(options.refuseAcknowledgement ? { refuseAcknowledgement: options.refuseAcknowledgement } : {}),
    };
    if (client.cluster)
      logger.info({ waitReplicas: replication.replicas, waitTimeoutMs: replication.timeoutMs }, 'redis cluster replica acknowledgement');
    const store = new RedisStore(client, clock, logger, layout, serverClock, options.scriptObserver, options.queueShards, replication);
    await store.loadScripts();
    serverClock?.start();
    return store;
  } catch (error) {
    redis.disconnect();
    // connect() only says "Connection is closed."; the 'error' event carries the cause.
    const cause = lastConnectionError ?? error;
    const detail = cause instanceof Error ? cause.message : String(cause);
    throw new Error(`cannot open the Redis store at ${where}: ${detail}`, { cause });
  }
}
