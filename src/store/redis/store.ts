/**
 * The Redis adapter of the storage port: every operation is one Lua script, one command or one
 * MULTI over divine-push-service's key layout (see `keys.ts`), so an existing divine Redis is
 * taken over as it is.
 */
import type { StoreTopology } from '../port-topology.ts';
import { readRedisTopology } from './topology.ts';
import type { DeadLetter, DeadLetterPage, DeadLetterPageOptions } from '../port-dlq.ts';
import type { Redis } from 'ioredis';
import { createRedisClient, type RedisClientHandle } from './client.ts';
import { defaultKeyLayout, describeRedisTarget, parseRedisTarget } from './target.ts';
import { createRedisKeys, type KeyLayout } from './keys.ts';
import type {
  CachedProfile,
  Clock,
  DeadItem,
  DeviceRegistration,
  EnqueueItem,
  LeaseOptions,
  LeasedItem,
  Preferences,
  QueueName,
  QueueStats,
  Settlement,
  ClaimedDelivery,
  RecipientGateState,
  RecipientClaim,
  VideoRecord,
  RegisterTokenResult,
  StorePort,
  Transport,
} from '../port.ts';
import { createLogger, type Logger } from '../../observability/logger.ts';
import type { RedisContext } from './context.ts';
import { RedisScripts, type ScriptCallObserver } from './scripts.ts';
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
import * as misc from './misc.ts';
import * as queues from './queues.ts';
import * as deliveries from './deliveries.ts';
import * as tokens from './tokens.ts';
import { RedisNtfyTopics } from './ntfy.ts';
import { claimVapidKeys } from './vapid.ts';
import * as inbox from './inbox.ts';
import type { Announcement, InboxCountEntry, InboxCounts, InboxHint, InboxType } from '../port-inbox.ts';
import * as nip9aCallbacks from './nip9a-callbacks.ts';
import * as fleet from './fleet.ts';
import type { ConsoleSession, MetricSample, NtfyTopicCount, ProcessHeartbeat, ProcessHeartbeatRecord } from '../port-fleet.ts';
import type { Nip9aAcceptance, Nip9aCallback } from '../port-nip9a-callbacks.ts';
import type { StoredVapidKeys } from '../port-vapid.ts';
import * as apiKeys from './apikeys.ts';
import * as sends from './sends.ts';
import * as campaigns from './campaigns.ts';
import * as quietHours from './quiet-hours.ts';
import type { DueDigest, QuietHours } from '../port-quiet-hours.ts';
import type {
  CampaignCounter,
  CampaignCounts,
  CampaignRecord,
  ClaimedCampaign,
  CreateCampaignResult,
  DeviceOwnerPage,
  NewCampaign,
} from '../port-campaigns.ts';
import type { Suppression, SuppressionTarget } from '../port-suppressions.ts';
import * as deliveryLog from './delivery-log.ts';
import type { ApiKeyRecord, NewApiKey } from '../port-apikeys.ts';
import type { CancelSendResult, ClaimedSend, CreateSendResult, IdempotencyClaim, NewSend, SendRecord } from '../port-sends.ts';
import type { DeliveryLogEntry, DeliveryLogQuery, NewDeliveryLogEntry, TypeOpenRate } from '../port-delivery-log.ts';
import type { SocialFilters } from '../port-social-filters.ts';
import { getSocialFilters, setSocialFilters } from './social-filters.ts';
import type { Nip9aRegistrationLimits, PutNip9aRegistrationResult, StoredNip9aRegistration } from '../port-nip9a-gateway.ts';
import * as nip9a from './nip9a-gateway.ts';
import * as throttle from './throttle.ts';
import type { ThrottleDecision, ThrottleWindow } from '../port-throttle.ts';
import type { NtfyAppendEvent, NtfyMessage, NtfyMessageContent, NtfyReadRequest, NtfyReadResult } from '../port-ntfy.ts';
import {
  DEFAULT_WAIT_TIMEOUT_MS,
  ReplicaWaiter,
  resolveWaitReplicas,
  WAIT_REPLICAS_AUTO,
  type ReplicationSettings,
} from './replication.ts';

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
  /** Time source; defaults to the Redis server clock ({@link RedisServerClock}). */
  clock?: Clock;
  /** Prefix for every key. For test isolation only: a divine Redis has no prefix. */
  keyPrefix?: string;
  /** Told of every script call (name and declared keys) before it is sent: the slot test's recorder. */
  scriptObserver?: ScriptCallObserver;
  logger?: Logger;
}

export class RedisStore implements StorePort {
  private readonly ctx: RedisContext;

  private readonly redis: Redis;

  /**
   * Inbox hint subscriptions still open, closed with the store: each holds a connection of its
   * own, and one left open (a caller that failed before unsubscribing) keeps reconnecting — and
   * its process alive — after the server is gone.
   */
  private readonly hintSubscriptions = new Set<() => Promise<void>>();

  constructor(
    client: RedisClientHandle,
    readonly clock: Clock,
    logger: Logger,
    readonly layout: KeyLayout,
    private readonly serverClock?: RedisServerClock,
    scriptObserver?: ScriptCallObserver,
    queueShards?: number,
    replication: ReplicationSettings = { replicas: 0, timeoutMs: DEFAULT_WAIT_TIMEOUT_MS },
  ) {
    this.redis = client.redis;
    this.ctx = {
      redis: client.redis,
      cluster: client.cluster,
      keys: createRedisKeys(layout, queueShards === undefined ? {} : { queueShards }),
      scripts: new RedisScripts(client.redis, undefined, client.cluster, scriptObserver),
      replication: new ReplicaWaiter(client.redis, client.cluster, replication),
      clock,
      logger,
    };
  }

  /** Load every Lua script into the server's cache (every master's, on a cluster; done by {@link openRedisStore}). */
  loadScripts(): Promise<void> {
    return this.ctx.scripts.loadAll();
  }

  registerToken(pubkey: string, device: DeviceRegistration): Promise<RegisterTokenResult> {
    return tokens.registerToken(this.ctx, pubkey, device);
  }
  removeToken(pubkey: string, token: string): Promise<boolean> {
    return tokens.removeToken(this.ctx, pubkey, token);
  }
  listDevices(pubkey: string): Promise<DeviceRegistration[]> {
    return tokens.listDevices(this.ctx, pubkey);
  }
  tokenOwner(token: string): Promise<string | null> {
    return tokens.tokenOwner(this.ctx, token);
  }
  refreshTokenActivity(tokenList: string[]): Promise<number> {
    return tokens.refreshTokenActivity(this.ctx, tokenList);
  }
  tokenActivityMs(token: string): Promise<number | null> {
    return tokens.tokenActivityMs(this.ctx, token);
  }
  sweepStaleTokens(maxAgeMs: number): Promise<number> {
    return tokens.sweepStaleTokens(this.ctx, maxAgeMs);
  }

  claimEvent(eventId: string, ttlSecs: number): Promise<boolean> {
    return claims.claimEvent(this.ctx, eventId, ttlSecs);
  }
  claimRecipientDelivery(eventId: string, recipient: string, ttlSecs: number): Promise<RecipientClaim | null> {
    return claims.claimRecipientDelivery(this.ctx, eventId, recipient, ttlSecs);
  }
  releaseRecipientDelivery(claim: RecipientClaim): Promise<boolean> {
    return claims.releaseRecipientDelivery(this.ctx, claim);
  }
  releaseEvent(eventId: string): Promise<void> {
    return claims.releaseEvent(this.ctx, eventId);
  }
  hasVideoRecord(record: VideoRecord): Promise<boolean> {
    return claims.hasVideoRecord(this.ctx, record);
  }
  writeVideoRecords(video: Omit<VideoRecord, 'type'>, types: string[], ttlSecs: number): Promise<void> {
    return claims.writeVideoRecords(this.ctx, video, types, ttlSecs);
  }

  getPreferences(pubkey: string): Promise<Preferences | null> {
    return misc.getPreferences(this.ctx, pubkey);
  }
  setPreferences(pubkey: string, preferences: Preferences): Promise<void> {
    return misc.setPreferences(this.ctx, pubkey, preferences);
  }
  getRelayCursor(relayUrl: string): Promise<number | null> {
    return misc.getRelayCursor(this.ctx, relayUrl);
  }
  advanceRelayCursor(relayUrl: string, createdAt: number): Promise<void> {
    return misc.advanceRelayCursor(this.ctx, relayUrl, createdAt);
  }
  getCachedProfile(pubkey: string): Promise<CachedProfile | null> {
    return misc.getCachedProfile(this.ctx, pubkey);
  }
  cacheProfile(profile: CachedProfile, ttlSecs: number): Promise<void> {
    return misc.cacheProfile(this.ctx, profile, ttlSecs);
  }

  enqueue<T>(queue: QueueName, item: EnqueueItem<T>): Promise<boolean> {
    return queues.enqueue(this.ctx, queue, item);
  }
  lease<T>(queue: QueueName, options: LeaseOptions): Promise<LeasedItem<T>[]> {
    return queues.lease<T>(this.ctx, queue, options);
  }
  ack(queue: QueueName, id: string, leaseToken: string): Promise<boolean> {
    return queues.ack(this.ctx, queue, id, leaseToken);
  }
  retry(queue: QueueName, id: string, leaseToken: string, availableAtMs: number, error: string): Promise<boolean> {
    return queues.retry(this.ctx, queue, id, leaseToken, availableAtMs, error);
  }
  deadLetter(queue: QueueName, id: string, leaseToken: string, reason: string): Promise<boolean> {
    return queues.deadLetter(this.ctx, queue, id, leaseToken, reason);
  }
  enqueueMany<T>(queue: QueueName, items: ReadonlyArray<EnqueueItem<T>>): Promise<boolean[]> {
    return queues.enqueueMany(this.ctx, queue, items);
  }
  settleLeased(queue: QueueName, settlements: readonly Settlement[]): Promise<boolean[]> {
    return queues.settleLeased(this.ctx, queue, settlements);
  }
  claimAndEnqueueDeliveries<T>(queue: QueueName, ttlSecs: number, entries: ReadonlyArray<ClaimedDelivery<T>>): Promise<boolean[]> {
    return deliveries.claimAndEnqueueDeliveries(this.ctx, queue, ttlSecs, entries);
  }
  readRecipients(pubkeys: readonly string[]): Promise<RecipientGateState[]> {
    return deliveries.readRecipients(this.ctx, pubkeys);
  }
  listDead<T>(queue: QueueName, limit: number): Promise<DeadItem<T>[]> {
    return queues.listDead<T>(this.ctx, queue, limit);
  }
  replayDead(queue: QueueName, id: string): Promise<boolean> {
    return queues.replayDead(this.ctx, queue, id);
  }
  deleteDead(queue: QueueName, id: string): Promise<boolean> {
    return queues.deleteDead(this.ctx, queue, id);
  }
  queueStats(queue: QueueName): Promise<QueueStats> {
    return queues.queueStats(this.ctx, queue);
  }

  // ---- dead letters (port-dlq.ts) ----------------------------------------------------------

  listDeadPage<T>(queue: QueueName, options: DeadLetterPageOptions): Promise<DeadLetterPage<T>> {
    return queues.listDeadPage<T>(this.ctx, queue, options);
  }

  getDead<T>(queue: QueueName, id: string): Promise<DeadLetter<T> | null> {
    return queues.getDead<T>(this.ctx, queue, id);
  }

  replayAllDead(queue: QueueName): Promise<number> {
    return queues.replayAllDead(this.ctx, queue);
  }

  // ---- ntfy topics (port-ntfy.ts) ----------------------------------------------------------
  private ntfyTopics: RedisNtfyTopics | undefined;
  private get ntfy(): RedisNtfyTopics {
    return (this.ntfyTopics ??= new RedisNtfyTopics(this.ctx));
  }
  appendNtfyMessage(topic: string, content: NtfyMessageContent, ttlMs: number): Promise<NtfyMessage> {
    return this.ntfy.append(topic, content, ttlMs);
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

  // ---- API keys, sends, delivery log (port-apikeys.ts, port-sends.ts, port-delivery-log.ts) ---
  createApiKey(key: NewApiKey): Promise<boolean> {
    return apiKeys.createApiKey(this.ctx, key);
  }
  findApiKeyByHash(hash: string): Promise<ApiKeyRecord | null> {
    return apiKeys.findApiKeyByHash(this.ctx, hash);
  }
  listApiKeys(appId: string | null): Promise<ApiKeyRecord[]> {
    return apiKeys.listApiKeys(this.ctx, appId);
  }
  revokeApiKey(id: string): Promise<boolean> {
    return apiKeys.revokeApiKey(this.ctx, id);
  }
  createSend(send: NewSend, recordTtlSecs: number, idempotency: IdempotencyClaim | null): Promise<CreateSendResult> {
    return sends.createSend(this.ctx, send, recordTtlSecs, idempotency);
  }
  getSend(appId: string, id: string): Promise<SendRecord | null> {
    return sends.getSend(this.ctx, appId, id);
  }
  claimDueSend(leaseMs: number): Promise<ClaimedSend | null> {
    return sends.claimDueSend(this.ctx, leaseMs);
  }
  advanceSend(appId: string, id: string, nextOffset: number, done: boolean): Promise<boolean> {
    return sends.advanceSend(this.ctx, appId, id, nextOffset, done);
  }
  cancelSend(appId: string, id: string): Promise<CancelSendResult> {
    return sends.cancelSend(this.ctx, appId, id);
  }
  appendDeliveryLog(entries: readonly NewDeliveryLogEntry[]): Promise<void> {
    return deliveryLog.appendDeliveryLog(this.ctx, entries);
  }
  readDeliveryLog(appId: string, query: DeliveryLogQuery): Promise<DeliveryLogEntry[]> {
    return deliveryLog.readDeliveryLog(this.ctx, appId, query);
  }
  sweepDeliveryLog(appId: string, cutoffMs: number, limit: number): Promise<number> {
    return deliveryLog.sweepDeliveryLog(this.ctx, appId, cutoffMs, limit);
  }
  deliveryOpenRates(appId: string, sinceMs: number): Promise<TypeOpenRate[]> {
    return deliveryLog.deliveryOpenRates(this.ctx, appId, sinceMs);
  }
  takeThrottleSlot(pubkey: string, limit: number, windowSecs: number): Promise<ThrottleDecision> {
    return throttle.takeThrottleSlot(this.ctx, pubkey, limit, windowSecs);
  }
  readThrottleWindow(pubkey: string, windowSecs: number): Promise<ThrottleWindow> {
    return throttle.readThrottleWindow(this.ctx, pubkey, windowSecs);
  }

  // ---- campaigns and suppressions (port-campaigns.ts, port-suppressions.ts) ------------------
  createCampaign(campaign: NewCampaign): Promise<CreateCampaignResult> {
    return campaigns.createCampaign(this.ctx, campaign);
  }
  getCampaign(appId: string, id: string): Promise<CampaignRecord | null> {
    return campaigns.getCampaign(this.ctx, appId, id);
  }
  claimDueCampaign(leaseMs: number): Promise<ClaimedCampaign | null> {
    return campaigns.claimDueCampaign(this.ctx, leaseMs);
  }
  advanceCampaign(appId: string, id: string, nextCursor: string | null, add: Partial<CampaignCounts>): Promise<boolean> {
    return campaigns.advanceCampaign(this.ctx, appId, id, nextCursor, add);
  }
  countCampaign(appId: string, id: string, counter: CampaignCounter, n: number): Promise<void> {
    return campaigns.countCampaign(this.ctx, appId, id, counter, n);
  }
  scanDeviceOwners(cursor: string, count: number): Promise<DeviceOwnerPage> {
    return campaigns.scanDeviceOwners(this.ctx, cursor, count);
  }
  readCampaignConsent(pubkeys: readonly string[]): Promise<boolean[]> {
    return campaigns.readCampaignConsent(this.ctx, pubkeys);
  }
  claimCampaignDelivery(key: string, ttlSecs: number): Promise<string | null> {
    return campaigns.claimCampaignDelivery(this.ctx, key, ttlSecs);
  }
  claimCampaignDeliveries(keys: readonly string[], ttlSecs: number): Promise<Array<string | null>> {
    return campaigns.claimCampaignDeliveries(this.ctx, keys, ttlSecs);
  }
  extendCampaignDelivery(key: string, owner: string, ttlSecs: number): Promise<boolean> {
    return campaigns.extendCampaignDelivery(this.ctx, key, owner, ttlSecs);
  }
  releaseCampaignDelivery(key: string, owner: string): Promise<boolean> {
    return campaigns.releaseCampaignDelivery(this.ctx, key, owner);
  }
  campaignDeliveryTtlSecs(key: string): Promise<number | null> {
    return campaigns.campaignDeliveryTtlSecs(this.ctx, key);
  }
  addSuppression(appId: string, target: SuppressionTarget): Promise<{ suppression: Suppression; created: boolean }> {
    return campaigns.addSuppression(this.ctx, appId, target);
  }
  removeSuppression(appId: string, id: string): Promise<boolean> {
    return campaigns.removeSuppression(this.ctx, appId, id);
  }
  listSuppressions(appId: string, limit: number): Promise<Suppression[]> {
    return campaigns.listSuppressions(this.ctx, appId, limit);
  }
  suppressedAmong(appId: string, targets: readonly SuppressionTarget[]): Promise<boolean[]> {
    return campaigns.suppressedAmong(this.ctx, appId, targets);
  }
  setQuietHours(pubkey: string, hours: QuietHours | null): Promise<void> {
    return quietHours.setQuietHours(this.ctx, pubkey, hours);
  }
  readQuietHours(pubkeys: readonly string[]): Promise<Array<QuietHours | null>> {
    return quietHours.readQuietHours(this.ctx, pubkeys);
  }
  holdForDigest(pubkey: string, type: string, releaseAtMs: number): Promise<void> {
    return quietHours.holdForDigest(this.ctx, pubkey, type, releaseAtMs);
  }
  claimDueDigest(leaseMs: number): Promise<DueDigest | null> {
    return quietHours.claimDueDigest(this.ctx, leaseMs);
  }
  completeDigest(pubkey: string, counts: Readonly<Record<string, number>>): Promise<void> {
    return quietHours.completeDigest(this.ctx, pubkey, counts);
  }

  // ---- social filters (port-social-filters.ts) ---------------------------------------------
  setSocialFilters(pubkey: string, filters: SocialFilters | null): Promise<void> {
    return setSocialFilters(this.ctx, pubkey, filters);
  }
  getSocialFilters(pubkeys: readonly string[]): Promise<Array<SocialFilters | null>> {
    return getSocialFilters(this.ctx, pubkeys);
  }

  // ---- NIP-9a gateway (port-nip9a-gateway.ts) ------------------------------------------------
  putNip9aRegistration(registration: StoredNip9aRegistration, limits: Nip9aRegistrationLimits): Promise<PutNip9aRegistrationResult> {
    return nip9a.putNip9aRegistration(this.ctx, registration, limits);
  }
  deleteNip9aRegistration(pubkey: string, d: string, eventId?: string): Promise<boolean> {
    return nip9a.deleteNip9aRegistration(this.ctx, pubkey, d, eventId);
  }
  getNip9aRegistration(pubkey: string, d: string): Promise<StoredNip9aRegistration | null> {
    return nip9a.getNip9aRegistration(this.ctx, pubkey, d);
  }
  listNip9aRegistrations(pubkey: string): Promise<StoredNip9aRegistration[]> {
    return nip9a.listNip9aRegistrations(this.ctx, pubkey);
  }
  listAllNip9aRegistrations(): Promise<StoredNip9aRegistration[]> {
    return nip9a.listAllNip9aRegistrations(this.ctx);
  }
  nip9aRegistrationsVersion(): Promise<number> {
    return nip9a.nip9aRegistrationsVersion(this.ctx);
  }
  recordNip9aOutcome(key: string, maxEntries: number, maxAgeMs: number): Promise<boolean> {
    return nip9a.recordNip9aOutcome(this.ctx, key, maxEntries, maxAgeMs);
  }
  hasNip9aOutcome(key: string, maxAgeMs: number): Promise<boolean> {
    return nip9a.hasNip9aOutcome(this.ctx, key, maxAgeMs);
  }
  // ---- NIP-9a callbacks (port-nip9a-callbacks.ts) --------------------------------------------
  // ---- console fleet view and sessions (port-fleet.ts) -------------------------------------
  writeHeartbeat(heartbeat: ProcessHeartbeat, ttlMs: number): Promise<void> {
    return fleet.writeHeartbeat(this.ctx, heartbeat, ttlMs);
  }
  listHeartbeats(): Promise<ProcessHeartbeatRecord[]> {
    return fleet.listHeartbeats(this.ctx);
  }
  removeHeartbeat(processId: string): Promise<boolean> {
    return fleet.removeHeartbeat(this.ctx, processId);
  }
  writeMetricSample(processId: string, values: Record<string, number>, retentionMs: number): Promise<void> {
    return fleet.writeMetricSample(this.ctx, processId, values, retentionMs);
  }
  readMetricSamples(sinceMs: number): Promise<MetricSample[]> {
    return fleet.readMetricSamples(this.ctx, sinceMs);
  }
  countTokensByTransport(): Promise<Record<Transport, number>> {
    return fleet.countTokensByTransport(this.ctx);
  }
  countNtfyMessagesByTopic(limit: number): Promise<NtfyTopicCount[]> {
    return fleet.countNtfyMessagesByTopic(this.ctx, limit);
  }
  createConsoleSession(session: ConsoleSession): Promise<boolean> {
    return fleet.createConsoleSession(this.ctx, session);
  }
  findConsoleSession(idHash: string): Promise<ConsoleSession | null> {
    return fleet.findConsoleSession(this.ctx, idHash);
  }
  deleteConsoleSession(idHash: string): Promise<boolean> {
    return fleet.deleteConsoleSession(this.ctx, idHash);
  }

  createNip9aCallback(callback: Nip9aCallback): Promise<void> {
    return nip9aCallbacks.createNip9aCallback(this.ctx, callback);
  }
  findNip9aCallback(secretHash: string): Promise<Nip9aCallback | null> {
    return nip9aCallbacks.findNip9aCallback(this.ctx, secretHash);
  }
  listNip9aCallbacks(owner: string): Promise<Nip9aCallback[]> {
    return nip9aCallbacks.listNip9aCallbacks(this.ctx, owner);
  }
  revokeNip9aCallback(owner: string, id: string): Promise<boolean> {
    return nip9aCallbacks.revokeNip9aCallback(this.ctx, owner, id);
  }
  acceptNip9aReceipts<T>(ttlSecs: number, entries: ReadonlyArray<Nip9aAcceptance<T>>): Promise<boolean[]> {
    return nip9aCallbacks.acceptNip9aReceipts(this.ctx, ttlSecs, entries);
  }

  // ---- VAPID key (port-vapid.ts) -------------------------------------------------------------
  claimVapidKeys(candidate: StoredVapidKeys): Promise<StoredVapidKeys> {
    return claimVapidKeys(this.ctx, candidate);
  }

  // ---- the user's inbox (port-inbox.ts) ---------------------------------------------------
  rememberInboxUser(pubkey: string): Promise<void> {
    return inbox.rememberInboxUser(this.ctx, pubkey);
  }
  countInboxNotifications(entries: readonly InboxCountEntry[], ttlSecs: number): Promise<(number | null)[]> {
    return inbox.countInboxNotifications(this.ctx, entries, ttlSecs);
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
