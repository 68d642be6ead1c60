import type { Database, Statement } from 'better-sqlite3';
import type { Logger } from '../../observability/logger.ts';
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
import { BellPageOps } from './bell-pages.ts';
import { BellTables } from './bells.ts';
import { NtfyTable } from './ntfy.ts';
import { NtfyScheduledTable } from './ntfy-scheduled.ts';
import { claimSqliteVapidKeys } from './vapid.ts';
import { InboxTables } from './inbox.ts';
import type { StoredVapidKeys } from '../port-vapid.ts';
import { ApiKeyTable } from './apikeys.ts';
import { FleetTables } from './fleet.ts';
import type { ConsoleSession, MetricSample, NtfyTopicCount, ProcessHeartbeat, ProcessHeartbeatRecord } from '../port-fleet.ts';
import { SendTables } from './sends.ts';
import { CampaignTables } from './campaigns.ts';
import { QuietHoursTables } from './quiet-hours.ts';
import { DeliveryLogTables } from './delivery-log.ts';
import { ThrottleTable } from './throttle.ts';
import type { DeadLetter, DeadLetterPage, DeadLetterPageOptions } from '../port-dlq.ts';
import type { SocialFilters } from '../port-social-filters.ts';
import { SocialFilterTable } from './social-filters.ts';
import { UserRelayTable } from './user-relays.ts';
import type {
  Nip9aDeliveryRef,
  Nip9aDeliveryState,
  Nip9aRegistrationLimits,
  PutNip9aRegistrationResult,
  StoredNip9aRegistration,
} from '../port-nip9a-gateway.ts';
import { Nip9aGatewayTables } from './nip9a-gateway.ts';
import { ClaimTable } from './claims.ts';
import { CoalesceTables } from './coalesce.ts';
import { DeliveryOps } from './deliveries.ts';
import { BackgroundCheckpointer } from './checkpointer.ts';
import { GroupCommit } from './group-commit.ts';
import { QueueTable } from './queues.ts';
import { RecordTables } from './records.ts';
import { TokenTable } from './tokens.ts';
import { Nip9aCallbackTables } from './nip9a-callbacks.ts';
import { ClientQuotaTable } from './client-quotas.ts';
import type { ClientQuotaRequest, ClientQuotaResult } from '../port-client-quotas.ts';
import type { IdleSweepPage } from '../port-inbox.ts';
import type { Nip9aAcceptance, Nip9aCallback } from '../port-nip9a-callbacks.ts';

/** Dead letters replayed per transaction by `replayAllDead`: big enough to be quick, small enough not to hold the writer long. */
const REPLAY_ALL_STEP = 1000;

const PING_SQL = 'SELECT 1';

/**
 * The SQLite store, part one of three: the tables it opens (held for its subclasses) and the
 * operations of the core pipeline — device tokens, claims, preferences and cursors, durable queues
 * and dead letters, social filters, the NIP-9a tables, the VAPID key and the console fleet. The
 * class users open is {@link SqliteStore} (`store.ts`); the split only keeps each file readable.
 */
export abstract class SqliteCoreStore {
  protected readonly tokens: TokenTable;
  protected readonly claims: ClaimTable;
  protected readonly coalesce: CoalesceTables;
  protected readonly records: RecordTables;
  protected readonly queues: QueueTable;
  protected readonly bells: BellTables;
  protected readonly bellPages: BellPageOps;
  protected readonly ntfy: NtfyTable;
  protected readonly ntfyScheduled: NtfyScheduledTable;
  protected readonly deliveries: DeliveryOps;
  protected readonly apiKeys: ApiKeyTable;
  protected readonly fleet: FleetTables;
  protected readonly sends: SendTables;
  protected readonly deliveryLog: DeliveryLogTables;
  protected readonly throttle: ThrottleTable;
  protected readonly socialFilters: SocialFilterTable;
  protected readonly userRelays: UserRelayTable;
  protected readonly inbox: InboxTables;
  protected readonly nip9a: Nip9aGatewayTables;
  protected readonly nip9aCallbacks: Nip9aCallbackTables;
  protected readonly clientQuotas: ClientQuotaTable;
  protected readonly campaigns: CampaignTables;
  protected readonly quietHours: QuietHoursTables;
  protected readonly selectOne: Statement<[]>;
  /** Writes of one event-loop turn share one transaction (see group-commit.ts). */
  protected readonly group: GroupCommit;

  constructor(
    protected readonly db: Database,
    readonly clock: Clock,
    logger: Logger,
    protected readonly checkpointer: BackgroundCheckpointer | null = null,
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
    this.ntfyScheduled = new NtfyScheduledTable(db, clock, logger, this.group, this.ntfy);
    this.deliveries = new DeliveryOps(db, logger, { tokens: this.tokens, records: this.records, claims: this.claims, queues: this.queues });
    this.apiKeys = new ApiKeyTable(db, clock);
    this.fleet = new FleetTables(db, clock);
    this.sends = new SendTables(db, clock);
    this.deliveryLog = new DeliveryLogTables(db, clock);
    this.throttle = new ThrottleTable(db, clock);
    this.socialFilters = new SocialFilterTable(db, logger);
    this.userRelays = new UserRelayTable(db, logger, clock);
    this.nip9a = new Nip9aGatewayTables(db, clock);
    this.nip9aCallbacks = new Nip9aCallbackTables(db, clock, this.queues);
    this.clientQuotas = new ClientQuotaTable(db, clock);
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

  async claimEvent(eventId: string, ttlSecs: number, owner?: string): Promise<boolean> {
    return this.group.run(() => this.claims.claimEvent(eventId, ttlSecs, owner));
  }

  async claimRecipientDelivery(eventId: string, recipient: string, ttlSecs: number): Promise<RecipientClaim | null> {
    return this.group.run(() => this.claims.claimRecipient(eventId, recipient, ttlSecs));
  }

  async isRecipientClaimed(eventId: string, recipient: string): Promise<boolean> {
    return this.claims.isRecipientClaimed(eventId, recipient);
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

  async enqueueLeased<T>(queue: QueueName, items: ReadonlyArray<EnqueueItem<T>>, leaseMs: number): Promise<Array<LeasedItem<T> | null>> {
    if (items.length === 0) return [];
    return this.group.run(() => this.queues.enqueueLeased(queue, items, leaseMs) as Array<LeasedItem<T> | null>);
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

  async oldestDueAtMs(queue: QueueName): Promise<number | null> {
    return this.queues.oldestDueAtMs(queue);
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

  async recordNip9aOutcomes(keys: readonly string[], maxEntries: number, maxAgeMs: number): Promise<boolean[]> {
    return this.group.run(() => this.nip9a.recordOutcomes(keys, maxEntries, maxAgeMs));
  }

  async readNip9aDeliveryStates(entries: readonly Nip9aDeliveryRef[], maxAgeMs: number): Promise<Nip9aDeliveryState[]> {
    return this.nip9a.deliveryStates(entries, maxAgeMs);
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

  async touchNip9aCallback(id: string, atMs: number): Promise<void> {
    await this.group.run(() => this.nip9aCallbacks.touch(id, atMs));
  }

  async forgetIdleNip9aCallbacks(idleBeforeMs: number, max: number): Promise<IdleSweepPage> {
    return this.group.run(() => this.nip9aCallbacks.forgetIdle(idleBeforeMs, max));
  }

  // ---- per-client quotas (port-client-quotas.ts) -------------------------------------------

  async takeClientQuota(request: ClientQuotaRequest): Promise<ClientQuotaResult> {
    return this.group.run(() => this.clientQuotas.take(request));
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
}
