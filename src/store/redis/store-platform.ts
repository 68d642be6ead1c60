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
import * as throttle from './throttle.ts';
import type { ThrottleDecision, ThrottleWindow } from '../port-throttle.ts';
import { RedisCoreStore } from './store-core.ts';
import type { RateLimitCounter, RateLimitWindow } from '../port-rate-limits.ts';
import { sharedRateLimitCounter } from '../rate-limit-counters.ts';
import { batchedRateLimitIncrement } from './rate-limits.ts';

/**
 * The Redis store, part two of three: the app platform — API keys, sends, the delivery log,
 * campaigns and suppressions, the throttle and quiet hours. Built on {@link RedisCoreStore}.
 */
export abstract class RedisPlatformStore extends RedisCoreStore {
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
  touchApiKeyUse(id: string, atMs: number): Promise<boolean> {
    return apiKeys.touchApiKeyUse(this.ctx, id, atMs);
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

  // ---- rate-limit counters (port-rate-limits.ts) ---------------------------------------------
  private readonly rateLimitCounters = new Map<string, RateLimitCounter>();
  rateLimitCounter(window: RateLimitWindow): RateLimitCounter {
    const id = `${window.name}|${window.points}|${window.windowSecs}|${window.decideLocally === true}`;
    let counter = this.rateLimitCounters.get(id);
    if (!counter) {
      counter = sharedRateLimitCounter(window, {
        increment: batchedRateLimitIncrement(this.ctx, window.name, window.windowSecs),
        logger: this.ctx.logger,
      });
      this.rateLimitCounters.set(id, counter);
    }
    return counter;
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
}
