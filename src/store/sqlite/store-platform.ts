import type { DueDigest, QuietHours } from '../port-quiet-hours.ts';
import type { RateLimitCounter, RateLimitWindow } from '../port-rate-limits.ts';
import { memoryRateLimitCounter } from '../rate-limit-counters.ts';
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
import type { ThrottleDecision, ThrottleWindow } from '../port-throttle.ts';
import type { ApiKeyRecord, NewApiKey } from '../port-apikeys.ts';
import type { CancelSendResult, ClaimedSend, CreateSendResult, IdempotencyClaim, NewSend, SendRecord } from '../port-sends.ts';
import type { DeliveryLogEntry, DeliveryLogQuery, NewDeliveryLogEntry, TypeOpenRate } from '../port-delivery-log.ts';
import { SqliteCoreStore } from './store-core.ts';

/**
 * The SQLite store, part two of three: the app platform — API keys, sends, the delivery log, the
 * per-user throttle, campaigns and suppressions, quiet hours. Built on {@link SqliteCoreStore}.
 */
export abstract class SqlitePlatformStore extends SqliteCoreStore {
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

  async touchApiKeyUse(id: string, atMs: number): Promise<boolean> {
    return this.group.run(() => this.apiKeys.touch(id, atMs));
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

  // ---- rate-limit counters (port-rate-limits.ts) ---------------------------------------------

  // In this process's memory: a SQLite store belongs to one process, so this is every request.
  private readonly rateLimitCounters = new Map<string, RateLimitCounter>();
  rateLimitCounter(window: RateLimitWindow): RateLimitCounter {
    const id = `${window.name}|${window.points}|${window.windowSecs}|${window.decideLocally === true}`;
    let counter = this.rateLimitCounters.get(id);
    if (!counter) this.rateLimitCounters.set(id, (counter = memoryRateLimitCounter(window)));
    return counter;
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
}
