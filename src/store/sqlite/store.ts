import { mkdirSync } from 'node:fs';
import type { StoreTopology } from '../port-topology.ts';
import { dirname } from 'node:path';
import BetterSqlite3, { type Database, type Statement } from 'better-sqlite3';
import { createLogger, type Logger } from '../../observability/logger.ts';
import { systemClock } from '../../util/clock.ts';
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
import { BellPageOps } from './bell-pages.ts';
import { BellTables } from './bells.ts';
import { NtfyTable } from './ntfy.ts';
import { claimSqliteVapidKeys } from './vapid.ts';
import { InboxTables, type InboxWrite } from './inbox.ts';
import type { Announcement, InboxCountEntry, InboxCounts, InboxHint, InboxType } from '../port-inbox.ts';
import type { StoredVapidKeys } from '../port-vapid.ts';
import { ApiKeyTable } from './apikeys.ts';
import { FleetTables } from './fleet.ts';
import type { ConsoleSession, MetricSample, NtfyTopicCount, ProcessHeartbeat, ProcessHeartbeatRecord } from '../port-fleet.ts';
import { SendTables } from './sends.ts';
import { CampaignTables } from './campaigns.ts';
import { QuietHoursTables } from './quiet-hours.ts';
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
import { DeliveryLogTables } from './delivery-log.ts';
import { ThrottleTable } from './throttle.ts';
import type { ThrottleDecision, ThrottleWindow } from '../port-throttle.ts';
import type { ApiKeyRecord, NewApiKey } from '../port-apikeys.ts';
import type { CancelSendResult, ClaimedSend, CreateSendResult, IdempotencyClaim, NewSend, SendRecord } from '../port-sends.ts';
import type { DeliveryLogEntry, DeliveryLogQuery, NewDeliveryLogEntry, TypeOpenRate } from '../port-delivery-log.ts';
import type { DeadLetter, DeadLetterPage, DeadLetterPageOptions } from '../port-dlq.ts';
import type { SocialFilters } from '../port-social-filters.ts';
import { SocialFilterTable } from './social-filters.ts';
import type { Nip9aRegistrationLimits, PutNip9aRegistrationResult, StoredNip9aRegistration } from '../port-nip9a-gateway.ts';
import { Nip9aGatewayTables } from './nip9a-gateway.ts';
import type { NtfyAppendEvent, NtfyMessage, NtfyMessageContent, NtfyReadRequest, NtfyReadResult } from '../port-ntfy.ts';
import { ClaimTable } from './claims.ts';
import { CoalesceTables } from './coalesce.ts';
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
import { DeliveryOps } from './deliveries.ts';
import { BackgroundCheckpointer } from './checkpointer.ts';
import { GroupCommit } from './group-commit.ts';
import { migrate } from './migrations.ts';
import { QueueTable } from './queues.ts';
import { RecordTables } from './records.ts';
import { TokenTable } from './tokens.ts';
import { Nip9aCallbackTables } from './nip9a-callbacks.ts';
import type { Nip9aAcceptance, Nip9aCallback } from '../port-nip9a-callbacks.ts';

/**
 * Page cache of the connection, KiB (SQLite's default is 2,000 KiB). The cache is process memory
 * and fills to its size as soon as a workload walks more pages than that (a campaign's 200,000
 * queue rows do in seconds), while the database's pages stay in the OS file cache anyway, where a
 * miss costs a read from memory, not the disk. 16 MiB holds the hot indexes (the queue's due
 * order, the claims); 64 MiB cost 54 MiB more peak resident memory in the campaign benchmark at
 * the same rate (docs/benchmarks.md, "Campaigns").
 */
export const SQLITE_PAGE_CACHE_KIB = 16 * 1024;

/** How long a writer waits for another connection's lock before SQLITE_BUSY (ms). */
export const SQLITE_BUSY_TIMEOUT_MS = 5000;

const PING_SQL = 'SELECT 1';

/** Dead letters replayed per transaction by `replayAllDead`: big enough to be quick, small enough not to hold the writer long. */
const REPLAY_ALL_STEP = 1000;

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
 * commit ({@link GroupCommit}), and a write's promise resolves once that commit is done.
 * Concurrent callers in this process are serialised by the event loop, other processes by
 * SQLite's file lock.
 */
export class SqliteStore implements StorePort {
  private readonly tokens: TokenTable;
  private readonly claims: ClaimTable;
  private readonly coalesce: CoalesceTables;
  private readonly records: RecordTables;
  private readonly queues: QueueTable;
  private readonly bells: BellTables;
  private readonly bellPages: BellPageOps;
  private readonly ntfy: NtfyTable;
  private readonly deliveries: DeliveryOps;
  private readonly apiKeys: ApiKeyTable;
  private readonly fleet: FleetTables;
  private readonly sends: SendTables;
  private readonly deliveryLog: DeliveryLogTables;
  private readonly throttle: ThrottleTable;
  private readonly socialFilters: SocialFilterTable;
  private readonly inbox: InboxTables;
  private readonly nip9a: Nip9aGatewayTables;
  private readonly nip9aCallbacks: Nip9aCallbackTables;
  private readonly campaigns: CampaignTables;
  private readonly quietHours: QuietHoursTables;
  private readonly selectOne: Statement<[]>;
  /** Writes of one event-loop turn share one transaction (see group-commit.ts). */
  private readonly group: GroupCommit;

  constructor(
    private readonly db: Database,
    readonly clock: Clock,
    logger: Logger,
    private readonly checkpointer: BackgroundCheckpointer | null = null,
  ) {
    this.group = new GroupCommit(db, logger, checkpointer === null ? undefined : () => checkpointer.noteCommit());
    this.tokens = new TokenTable(db, clock);
    this.claims = new ClaimTable(db, clock);
    this.coalesce = new CoalesceTables(db, clock);
    this.records = new RecordTables(db, clock);
    this.queues = new QueueTable(db, clock, logger);
    this.bells = new BellTables(db, clock, logger);
    this.inbox = new InboxTables(db, clock);
    this.bellPages = new BellPageOps(db, logger, { tokens: this.tokens, records: this.records, claims: this.claims, bells: this.bells });
    this.ntfy = new NtfyTable(db, clock, logger, this.group);
    this.deliveries = new DeliveryOps(db, logger, { tokens: this.tokens, records: this.records, claims: this.claims, queues: this.queues });
    this.apiKeys = new ApiKeyTable(db, clock);
    this.fleet = new FleetTables(db, clock);
    this.sends = new SendTables(db, clock);
    this.deliveryLog = new DeliveryLogTables(db, clock);
    this.throttle = new ThrottleTable(db, clock);
    this.socialFilters = new SocialFilterTable(db, logger);
    this.nip9a = new Nip9aGatewayTables(db, clock);
    this.nip9aCallbacks = new Nip9aCallbackTables(db, clock, this.queues);
    this.campaigns = new CampaignTables(db, clock);
    this.quietHours = new QuietHoursTables(db, clock);
    this.selectOne = db.prepare(PING_SQL);
  }

  // ---- device tokens -----------------------------------------------------------------------

  async registerToken(pubkey: string, device: DeviceRegistration): Promise<RegisterTokenResult> {
    return this.group.run(() => this.tokens.register(pubkey, device));
  }

  async removeToken(pubkey: string, token: string): Promise<boolean> {
    return this.group.run(() => this.tokens.remove(pubkey, token));
  }

  async listDevices(pubkey: string): Promise<DeviceRegistration[]> {
    return this.tokens.listDevices(pubkey);
  }

  async tokenOwner(token: string): Promise<string | null> {
    return this.tokens.owner(token);
  }

  async refreshTokenActivity(tokens: string[]): Promise<number> {
    return tokens.length === 0 ? 0 : this.group.run(() => this.tokens.refresh(tokens));
  }

  async tokenActivityMs(token: string): Promise<number | null> {
    return this.tokens.activityMs(token);
  }

  async sweepStaleTokens(maxAgeMs: number): Promise<number> {
    return this.group.run(() => this.tokens.sweep(maxAgeMs));
  }

  // ---- claims ------------------------------------------------------------------------------

  async claimEvent(eventId: string, ttlSecs: number): Promise<boolean> {
    return this.group.run(() => this.claims.claimEvent(eventId, ttlSecs));
  }

  async claimRecipientDelivery(eventId: string, recipient: string, ttlSecs: number): Promise<RecipientClaim | null> {
    return this.group.run(() => this.claims.claimRecipient(eventId, recipient, ttlSecs));
  }

  async releaseRecipientDelivery(claim: RecipientClaim): Promise<boolean> {
    return this.group.run(() => this.claims.release(claim));
  }
  async releaseEvent(eventId: string): Promise<void> {
    return this.group.run(() => this.claims.releaseEvent(eventId));
  }

  async claimAndEnqueueDeliveries<T>(queue: QueueName, ttlSecs: number, entries: ReadonlyArray<ClaimedDelivery<T>>): Promise<boolean[]> {
    return entries.length === 0 ? [] : this.group.run(() => this.deliveries.claimAndEnqueue(queue, ttlSecs, entries));
  }

  async readRecipients(pubkeys: readonly string[]): Promise<RecipientGateState[]> {
    return pubkeys.length === 0 ? [] : this.deliveries.readRecipients(pubkeys);
  }

  async hasVideoRecord(record: VideoRecord): Promise<boolean> {
    return this.claims.hasVideoRecord(record);
  }

  async writeVideoRecords(video: Omit<VideoRecord, 'type'>, types: string[], ttlSecs: number): Promise<void> {
    return this.group.run(() => this.claims.writeVideoRecords(video, types, ttlSecs));
  }

  // ---- preferences, relay cursors, profile cache -------------------------------------------

  async getPreferences(pubkey: string): Promise<Preferences | null> {
    return this.records.getPreferences(pubkey);
  }

  async setPreferences(pubkey: string, preferences: Preferences): Promise<void> {
    return this.group.run(() => this.records.setPreferences(pubkey, preferences));
  }

  async getRelayCursor(relayUrl: string): Promise<number | null> {
    return this.records.getCursor(relayUrl);
  }

  async advanceRelayCursor(relayUrl: string, createdAt: number): Promise<void> {
    return this.group.run(() => this.records.advanceCursor(relayUrl, createdAt));
  }

  async getCachedProfile(pubkey: string): Promise<CachedProfile | null> {
    return this.records.getProfile(pubkey);
  }

  async cacheProfile(profile: CachedProfile, ttlSecs: number): Promise<void> {
    return this.group.run(() => this.records.cacheProfile(profile, ttlSecs));
  }

  // ---- durable queues ----------------------------------------------------------------------

  async enqueue<T>(queue: QueueName, item: EnqueueItem<T>): Promise<boolean> {
    return this.group.run(() => this.queues.enqueue(queue, item));
  }

  async enqueueMany<T>(queue: QueueName, items: ReadonlyArray<EnqueueItem<T>>): Promise<boolean[]> {
    return items.length === 0 ? [] : this.group.run(() => this.queues.enqueueMany(queue, items));
  }

  async lease<T>(queue: QueueName, options: LeaseOptions): Promise<LeasedItem<T>[]> {
    // Payloads are stored as JSON; their type is the enqueuer's promise to the consumer.
    return this.group.run(() => this.queues.lease(queue, options) as LeasedItem<T>[]);
  }

  async ack(queue: QueueName, id: string, leaseToken: string): Promise<boolean> {
    return this.group.run(() => this.queues.ack(queue, id, leaseToken));
  }

  async retry(queue: QueueName, id: string, leaseToken: string, availableAtMs: number, error: string): Promise<boolean> {
    return this.group.run(() => this.queues.retry(queue, id, leaseToken, availableAtMs, error));
  }

  async deadLetter(queue: QueueName, id: string, leaseToken: string, reason: string): Promise<boolean> {
    return this.group.run(() => this.queues.deadLetter(queue, id, leaseToken, reason));
  }

  async settleLeased(queue: QueueName, settlements: readonly Settlement[]): Promise<boolean[]> {
    return settlements.length === 0 ? [] : this.group.run(() => this.queues.settleMany(queue, settlements));
  }

  async listDead<T>(queue: QueueName, limit: number): Promise<DeadItem<T>[]> {
    return this.queues.listDead(queue, limit) as DeadItem<T>[];
  }

  async replayDead(queue: QueueName, id: string): Promise<boolean> {
    return this.group.run(() => this.queues.replayDead(queue, id));
  }

  async deleteDead(queue: QueueName, id: string): Promise<boolean> {
    return this.group.run(() => this.queues.deleteDead(queue, id));
  }

  async queueStats(queue: QueueName): Promise<QueueStats> {
    return this.queues.stats(queue);
  }

  // ---- dead letters (port-dlq.ts) ----------------------------------------------------------

  async listDeadPage<T>(queue: QueueName, options: DeadLetterPageOptions): Promise<DeadLetterPage<T>> {
    return this.queues.deadLetterPage(queue, options) as DeadLetterPage<T>;
  }

  async getDead<T>(queue: QueueName, id: string): Promise<DeadLetter<T> | null> {
    return this.queues.findDead(queue, id) as DeadLetter<T> | null;
  }

  async replayAllDead(queue: QueueName): Promise<number> {
    // Steps of their own transactions, so other writers get turns; bounded by the count at the
    // start, so items that die again meanwhile cannot keep the loop going.
    const steps = Math.ceil(this.queues.stats(queue).dead / REPLAY_ALL_STEP) + 1;
    let replayed = 0;
    for (let step = 0; step < steps; step += 1) {
      const count = await this.group.run(() => this.queues.replayDeadStep(queue, REPLAY_ALL_STEP));
      replayed += count;
      if (count < REPLAY_ALL_STEP) break;
    }
    return replayed;
  }

  // ---- social filters (port-social-filters.ts) ---------------------------------------------

  async setSocialFilters(pubkey: string, filters: SocialFilters | null): Promise<void> {
    return this.group.run(() => this.socialFilters.set(pubkey, filters));
  }

  async getSocialFilters(pubkeys: readonly string[]): Promise<Array<SocialFilters | null>> {
    return this.socialFilters.getMany(pubkeys);
  }

  // ---- NIP-9a gateway (port-nip9a-gateway.ts) ------------------------------------------------

  async putNip9aRegistration(registration: StoredNip9aRegistration, limits: Nip9aRegistrationLimits): Promise<PutNip9aRegistrationResult> {
    return this.group.run(() => this.nip9a.putRegistration(registration, limits));
  }

  async deleteNip9aRegistration(pubkey: string, d: string, eventId?: string): Promise<boolean> {
    return this.group.run(() => this.nip9a.deleteRegistration(pubkey, d, eventId));
  }

  async getNip9aRegistration(pubkey: string, d: string): Promise<StoredNip9aRegistration | null> {
    return this.nip9a.getRegistration(pubkey, d);
  }

  async listNip9aRegistrations(pubkey: string): Promise<StoredNip9aRegistration[]> {
    return this.nip9a.listRegistrations(pubkey);
  }

  async listAllNip9aRegistrations(): Promise<StoredNip9aRegistration[]> {
    return this.nip9a.listAllRegistrations();
  }

  async nip9aRegistrationsVersion(): Promise<number> {
    return this.nip9a.version();
  }

  async recordNip9aOutcome(key: string, maxEntries: number, maxAgeMs: number): Promise<boolean> {
    return this.group.run(() => this.nip9a.recordOutcome(key, maxEntries, maxAgeMs));
  }

  async hasNip9aOutcome(key: string, maxAgeMs: number): Promise<boolean> {
    return this.nip9a.hasOutcome(key, maxAgeMs);
  }

  // ---- NIP-9a callbacks (port-nip9a-callbacks.ts) --------------------------------------------

  async createNip9aCallback(callback: Nip9aCallback): Promise<void> {
    return this.group.run(() => this.nip9aCallbacks.create(callback));
  }

  async findNip9aCallback(secretHash: string): Promise<Nip9aCallback | null> {
    return this.nip9aCallbacks.find(secretHash);
  }

  async listNip9aCallbacks(owner: string): Promise<Nip9aCallback[]> {
    return this.nip9aCallbacks.list(owner);
  }

  async revokeNip9aCallback(owner: string, id: string): Promise<boolean> {
    return this.group.run(() => this.nip9aCallbacks.revoke(owner, id));
  }

  async acceptNip9aReceipts<T>(ttlSecs: number, entries: ReadonlyArray<Nip9aAcceptance<T>>): Promise<boolean[]> {
    return entries.length === 0 ? [] : this.group.run(() => this.nip9aCallbacks.accept(ttlSecs, entries));
  }

  // ---- VAPID key (port-vapid.ts) -------------------------------------------------------------

  async claimVapidKeys(candidate: StoredVapidKeys): Promise<StoredVapidKeys> {
    return this.group.run(() => claimSqliteVapidKeys(this.db, candidate));
  }

  // ---- console fleet view and sessions (port-fleet.ts) -------------------------------------

  async writeHeartbeat(heartbeat: ProcessHeartbeat, ttlMs: number): Promise<void> {
    return this.group.run(() => this.fleet.writeHeartbeat(heartbeat, ttlMs));
  }

  async listHeartbeats(): Promise<ProcessHeartbeatRecord[]> {
    return this.fleet.listHeartbeats();
  }

  async removeHeartbeat(processId: string): Promise<boolean> {
    return this.group.run(() => this.fleet.removeHeartbeat(processId));
  }

  async writeMetricSample(processId: string, values: Record<string, number>, retentionMs: number): Promise<void> {
    return this.group.run(() => this.fleet.writeMetricSample(processId, values, retentionMs));
  }

  async readMetricSamples(sinceMs: number): Promise<MetricSample[]> {
    return this.fleet.readMetricSamples(sinceMs);
  }

  async countTokensByTransport(): Promise<Record<Transport, number>> {
    return this.fleet.countTokensByTransport();
  }

  async countNtfyMessagesByTopic(limit: number): Promise<NtfyTopicCount[]> {
    return this.fleet.countNtfyMessagesByTopic(limit);
  }

  async createConsoleSession(session: ConsoleSession): Promise<boolean> {
    return this.group.run(() => this.fleet.createConsoleSession(session));
  }

  async findConsoleSession(idHash: string): Promise<ConsoleSession | null> {
    return this.fleet.findConsoleSession(idHash);
  }

  async deleteConsoleSession(idHash: string): Promise<boolean> {
    return this.group.run(() => this.fleet.deleteConsoleSession(idHash));
  }

  // ---- API keys (port-apikeys.ts) ------------------------------------------------------------

  async createApiKey(key: NewApiKey): Promise<boolean> {
    return this.group.run(() => this.apiKeys.create(key));
  }

  async findApiKeyByHash(hash: string): Promise<ApiKeyRecord | null> {
    return this.apiKeys.findByHash(hash);
  }

  async listApiKeys(appId: string | null): Promise<ApiKeyRecord[]> {
    return this.apiKeys.list(appId);
  }

  async revokeApiKey(id: string): Promise<boolean> {
    return this.group.run(() => this.apiKeys.revoke(id));
  }

  // ---- sends (port-sends.ts) -----------------------------------------------------------------

  async createSend(send: NewSend, recordTtlSecs: number, idempotency: IdempotencyClaim | null): Promise<CreateSendResult> {
    return this.group.run(() => this.sends.create(send, recordTtlSecs, idempotency));
  }

  async getSend(appId: string, id: string): Promise<SendRecord | null> {
    return this.sends.get(appId, id);
  }

  async claimDueSend(leaseMs: number): Promise<ClaimedSend | null> {
    return this.group.run(() => this.sends.claimDue(leaseMs));
  }

  async advanceSend(appId: string, id: string, nextOffset: number, done: boolean): Promise<boolean> {
    return this.group.run(() => this.sends.advanceTo(appId, id, nextOffset, done));
  }

  async cancelSend(appId: string, id: string): Promise<CancelSendResult> {
    return this.group.run(() => this.sends.cancelSend(appId, id));
  }

  // ---- delivery log (port-delivery-log.ts) ---------------------------------------------------

  async appendDeliveryLog(entries: readonly NewDeliveryLogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    return this.group.run(() => this.deliveryLog.append(entries));
  }

  async readDeliveryLog(appId: string, query: DeliveryLogQuery): Promise<DeliveryLogEntry[]> {
    return this.deliveryLog.read(appId, query);
  }

  async sweepDeliveryLog(appId: string, cutoffMs: number, limit: number): Promise<number> {
    return this.group.run(() => this.deliveryLog.sweep(appId, cutoffMs, limit));
  }

  async deliveryOpenRates(appId: string, sinceMs: number): Promise<TypeOpenRate[]> {
    return this.deliveryLog.rates(appId, sinceMs);
  }

  // ---- the per-user push throttle (port-throttle.ts) -----------------------------------------

  async takeThrottleSlot(pubkey: string, limit: number, windowSecs: number): Promise<ThrottleDecision> {
    return this.group.run(() => this.throttle.take(pubkey, limit, windowSecs));
  }

  async readThrottleWindow(pubkey: string, windowSecs: number): Promise<ThrottleWindow> {
    return this.throttle.read(pubkey, windowSecs);
  }

  // ---- campaigns and suppressions (port-campaigns.ts, port-suppressions.ts) ------------------

  async createCampaign(campaign: NewCampaign): Promise<CreateCampaignResult> {
    return this.group.run(() => this.campaigns.create(campaign));
  }

  async getCampaign(appId: string, id: string): Promise<CampaignRecord | null> {
    return this.campaigns.get(appId, id);
  }

  async claimDueCampaign(leaseMs: number): Promise<ClaimedCampaign | null> {
    return this.group.run(() => this.campaigns.claimDue(leaseMs));
  }

  async advanceCampaign(appId: string, id: string, nextCursor: string | null, add: Partial<CampaignCounts>): Promise<boolean> {
    return this.group.run(() => this.campaigns.advanceTo(appId, id, nextCursor, add));
  }

  async countCampaign(appId: string, id: string, counter: CampaignCounter, n: number): Promise<void> {
    if (n !== 0) await this.group.run(() => this.campaigns.count(appId, id, counter, n));
  }

  async scanDeviceOwners(cursor: string, count: number): Promise<DeviceOwnerPage> {
    return this.campaigns.scanOwners(cursor, count);
  }

  async readCampaignConsent(pubkeys: readonly string[]): Promise<boolean[]> {
    return pubkeys.length === 0 ? [] : this.campaigns.consent(pubkeys);
  }

  async claimCampaignDelivery(key: string, ttlSecs: number): Promise<string | null> {
    return this.group.run(() => this.campaigns.claim(key, ttlSecs));
  }

  async claimCampaignDeliveries(keys: readonly string[], ttlSecs: number): Promise<Array<string | null>> {
    return keys.length === 0 ? [] : this.group.run(() => keys.map((key) => this.campaigns.claim(key, ttlSecs)));
  }

  async extendCampaignDelivery(key: string, owner: string, ttlSecs: number): Promise<boolean> {
    return this.group.run(() => this.campaigns.extend(key, owner, ttlSecs));
  }

  async releaseCampaignDelivery(key: string, owner: string): Promise<boolean> {
    return this.group.run(() => this.campaigns.release(key, owner));
  }

  async campaignDeliveryTtlSecs(key: string): Promise<number | null> {
    return this.campaigns.claimTtlSecs(key);
  }

  async addSuppression(appId: string, target: SuppressionTarget): Promise<{ suppression: Suppression; created: boolean }> {
    return this.group.run(() => this.campaigns.addSuppression(appId, target));
  }

  async removeSuppression(appId: string, id: string): Promise<boolean> {
    return this.group.run(() => this.campaigns.removeSuppression(appId, id));
  }

  async listSuppressions(appId: string, limit: number): Promise<Suppression[]> {
    return this.campaigns.listSuppressions(appId, limit);
  }

  async suppressedAmong(appId: string, targets: readonly SuppressionTarget[]): Promise<boolean[]> {
    return targets.length === 0 ? [] : this.campaigns.suppressedAmong(appId, targets);
  }

  // ---- quiet hours (port-quiet-hours.ts) -----------------------------------------------------

  async setQuietHours(pubkey: string, hours: QuietHours | null): Promise<void> {
    return this.group.run(() => this.quietHours.set(pubkey, hours));
  }

  async readQuietHours(pubkeys: readonly string[]): Promise<Array<QuietHours | null>> {
    return pubkeys.length === 0 ? [] : this.quietHours.read(pubkeys);
  }

  async holdForDigest(pubkey: string, type: string, releaseAtMs: number): Promise<void> {
    return this.group.run(() => this.quietHours.hold(pubkey, type, releaseAtMs));
  }

  async claimDueDigest(leaseMs: number): Promise<DueDigest | null> {
    return this.group.run(() => this.quietHours.claimDue(leaseMs));
  }

  async completeDigest(pubkey: string, counts: Readonly<Record<string, number>>): Promise<void> {
    return this.group.run(() => this.quietHours.complete(pubkey, counts));
  }

  // ---- lifecycle ---------------------------------------------------------------------------

  // ---- ntfy topics (port-ntfy.ts) ----------------------------------------------------------

  appendNtfyMessage(topic: string, content: NtfyMessageContent, ttlMs: number): Promise<NtfyMessage> {
    try {
      return this.ntfy.append(topic, content, ttlMs);
    } catch (err) {
      return Promise.reject(err);
    }
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

  async countInboxNotifications(entries: readonly InboxCountEntry[], ttlSecs: number): Promise<(number | null)[]> {
    return entries.length === 0 ? [] : this.inboxWrite(() => this.inbox.count(entries, ttlSecs));
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
