import type { DeadLetter, DeadLetterPage, DeadLetterPageOptions } from '../port-dlq.ts';
import type { Redis } from 'ioredis';
import type { RedisClientHandle } from './client.ts';
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
  Transport,
} from '../port.ts';
import type { Logger } from '../../observability/logger.ts';
import type { RedisContext } from './context.ts';
import { RedisScripts, type ScriptCallObserver } from './scripts.ts';
import { RedisServerClock } from './server-clock.ts';
import * as claims from './claims.ts';
import * as misc from './misc.ts';
import * as queues from './queues.ts';
import * as deliveries from './deliveries.ts';
import * as tokens from './tokens.ts';
import { claimVapidKeys } from './vapid.ts';
import * as nip9aCallbacks from './nip9a-callbacks.ts';
import * as idleSweeps from './idle-sweeps.ts';
import { takeClientQuota } from './client-quotas.ts';
import type { ClientQuotaRequest, ClientQuotaResult } from '../port-client-quotas.ts';
import type { IdleSweepPage } from '../port-inbox.ts';
import * as fleet from './fleet.ts';
import type { ConsoleSession, MetricSample, NtfyTopicCount, ProcessHeartbeat, ProcessHeartbeatRecord } from '../port-fleet.ts';
import type { Nip9aAcceptance, Nip9aCallback } from '../port-nip9a-callbacks.ts';
import type { StoredVapidKeys } from '../port-vapid.ts';
import type { SocialFilters } from '../port-social-filters.ts';
import { getSocialFilters, setSocialFilters } from './social-filters.ts';
import * as userRelays from './user-relays.ts';
import type { PutUserRelayListResult, RelayCoverage, UserRelayChange, UserRelayList, UserRelayLists } from '../port-user-relays.ts';
import type {
  Nip9aDeliveryRef,
  Nip9aDeliveryState,
  Nip9aRegistrationLimits,
  PutNip9aRegistrationResult,
  StoredNip9aRegistration,
} from '../port-nip9a-gateway.ts';
import * as nip9a from './nip9a-gateway.ts';
import { DEFAULT_WAIT_TIMEOUT_MS, ReplicaWaiter, type ReplicationSettings } from './replication.ts';

/**
 * The Redis store, part one of three: its connection and script context (held for its
 * subclasses) and the operations of the core pipeline — device tokens, claims, preferences and
 * cursors, durable queues and dead letters, social filters, the NIP-9a tables, the console fleet and
 * the VAPID key. The class users open is {@link RedisStore} (`store.ts`); the split only keeps each
 * file readable.
 */
export abstract class RedisCoreStore {
  protected readonly ctx: RedisContext;

  protected readonly redis: Redis;

  /**
   * Inbox hint subscriptions still open, closed with the store: each holds a connection of its
   * own, and one left open (a caller that failed before unsubscribing) keeps reconnecting — and
   * its process alive — after the server is gone.
   */
  protected readonly hintSubscriptions = new Set<() => Promise<void>>();

  constructor(
    client: RedisClientHandle,
    readonly clock: Clock,
    logger: Logger,
    readonly layout: KeyLayout,
    protected readonly serverClock?: RedisServerClock,
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

  claimEvent(eventId: string, ttlSecs: number, owner?: string): Promise<boolean> {
    return claims.claimEvent(this.ctx, eventId, ttlSecs, owner);
  }
  claimRecipientDelivery(eventId: string, recipient: string, ttlSecs: number): Promise<RecipientClaim | null> {
    return claims.claimRecipientDelivery(this.ctx, eventId, recipient, ttlSecs);
  }
  isRecipientClaimed(eventId: string, recipient: string): Promise<boolean> {
    return claims.isRecipientClaimed(this.ctx, eventId, recipient);
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
  enqueueLeased<T>(queue: QueueName, items: ReadonlyArray<EnqueueItem<T>>, leaseMs: number): Promise<Array<LeasedItem<T> | null>> {
    return queues.enqueueLeased(this.ctx, queue, items, leaseMs);
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

  oldestDueAtMs(queue: QueueName): Promise<number | null> {
    return queues.oldestDueAtMs(this.ctx, queue);
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

  // ---- social filters (port-social-filters.ts) ---------------------------------------------
  setSocialFilters(pubkey: string, filters: SocialFilters | null): Promise<void> {
    return setSocialFilters(this.ctx, pubkey, filters);
  }
  getSocialFilters(pubkeys: readonly string[]): Promise<Array<SocialFilters | null>> {
    return getSocialFilters(this.ctx, pubkeys);
  }

  // ---- user relay lists (port-user-relays.ts) ----------------------------------------------

  putUserRelayList(pubkey: string, list: UserRelayList): Promise<PutUserRelayListResult> {
    return userRelays.putUserRelayList(this.ctx, pubkey, list);
  }
  getUserRelayLists(pubkeys: readonly string[]): Promise<UserRelayLists[]> {
    return userRelays.getUserRelayLists(this.ctx, pubkeys);
  }
  userRelayCoverage(): Promise<RelayCoverage[]> {
    return userRelays.userRelayCoverage(this.ctx, (pubkeys) => this.readRecipients(pubkeys));
  }
  noteUserRelayChange(pubkeys: readonly string[]): Promise<void> {
    return userRelays.noteUserRelayChange(this.ctx, pubkeys);
  }
  userRelayChangesSince(sinceMs: number, limit: number): Promise<UserRelayChange[]> {
    return userRelays.userRelayChangesSince(this.ctx, sinceMs, limit);
  }
  usersWithoutRelayLists(cursor: string | null, limit: number): Promise<{ pubkeys: string[]; cursor: string | null }> {
    return userRelays.usersWithoutRelayLists(this.ctx, cursor, limit);
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
  recordNip9aOutcomes(keys: readonly string[], maxEntries: number, maxAgeMs: number): Promise<boolean[]> {
    return nip9a.recordNip9aOutcomes(this.ctx, keys, maxEntries, maxAgeMs);
  }
  readNip9aDeliveryStates(entries: readonly Nip9aDeliveryRef[], maxAgeMs: number): Promise<Nip9aDeliveryState[]> {
    return nip9a.readNip9aDeliveryStates(this.ctx, entries, maxAgeMs);
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
  touchNip9aCallback(id: string, atMs: number): Promise<void> {
    return idleSweeps.touchNip9aCallback(this.ctx, id, atMs);
  }
  forgetIdleNip9aCallbacks(idleBeforeMs: number, max: number): Promise<IdleSweepPage> {
    return idleSweeps.forgetIdleNip9aCallbacks(this.ctx, idleBeforeMs, max);
  }
  forgetIdleInboxUsers(idleBeforeMs: number, max: number): Promise<IdleSweepPage> {
    return idleSweeps.forgetIdleInboxUsers(this.ctx, idleBeforeMs, max);
  }

  // ---- per-client quotas (port-client-quotas.ts) ---------------------------------------------
  takeClientQuota(request: ClientQuotaRequest): Promise<ClientQuotaResult> {
    return takeClientQuota(this.ctx, request);
  }

  // ---- VAPID key (port-vapid.ts) -------------------------------------------------------------
  claimVapidKeys(candidate: StoredVapidKeys): Promise<StoredVapidKeys> {
    return claimVapidKeys(this.ctx, candidate);
  }
}
