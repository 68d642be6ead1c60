/**
 * The delivery stage's side of a campaign push (issue 15 item 1): seed 000's claim lifecycle on
 * `campaign_delivery:{idempotencyKey}`, per (campaign idempotency key, device):
 *
 * 1. a device whose local time is in 21:00–06:59 is not pushed: the item waits until its next
 *    07:00 local (the expansion already queued it for then; this catches a retry that lands in
 *    the window), never dropped;
 * 2. the claim is taken for the in-flight window (`campaign_delivery.claim_ttl_secs`, 600 s)
 *    just before the provider call. Held with more life than that window means delivered: nothing
 *    is sent. Held within the window means a send in flight elsewhere or killed mid-way: the item
 *    is retried when the claim's time is up (seed 000: "the key being present does not by itself
 *    mean the push was delivered; a TTL beyond the in-flight window does");
 * 3. a provider accepting the push extends the claim to `campaign_delivery.dedup_ttl_secs`
 *    (7 days); every outcome that sends nothing (retryable or final failure, no device) drops
 *    it, so a later attempt may send.
 *
 * A process killed between the provider's answer and the extension leaves a claim in its
 * window: the redelivery waits it out and sends again. Those are the "at most two pushes for the
 * devices in flight" of a crash; every other device gets exactly one.
 */
import { campaignSendAtMs, inCampaignQuietHours } from '../platform/local-time.ts';
import type { DeviceRegistration, LeasedItem, StorePort } from '../store/port.ts';
import { TurnBatcher } from '../util/turn-batcher.ts';
import { deliverNotification } from './deliver.ts';
import { decideAfterDelivery, type OutboundHandlerDeps } from './outbound.ts';
import type { OutboundNotification } from '../notification/types.ts';
import type { CampaignDelivery } from '../notification/types.ts';
import { DONE, type WorkOutcome } from '../store/queue-work.ts';

/** Counts one outcome of a campaign; the delivery role passes {@link batchedCampaignCounter}. */
export type CampaignCounterFn = (appId: string, campaignId: string, counter: 'sent' | 'failed') => Promise<void>;

/** A counter that adds up one turn's outcomes and writes one increment per (campaign, counter). */
export function batchedCampaignCounter(store: StorePort): CampaignCounterFn {
  const batcher = new TurnBatcher<string, undefined>(async (keys) => {
    const sums = new Map<string, number>();
    for (const key of keys) sums.set(key, (sums.get(key) ?? 0) + 1);
    for (const [key, n] of sums) {
      const [appId, campaignId, counter] = key.split('\n') as [string, string, 'sent' | 'failed'];
      await store.countCampaign(appId, campaignId, counter, n);
    }
    return keys.map(() => undefined);
  });
  return (appId, campaignId, counter) => batcher.add(`${appId}\n${campaignId}\n${counter}`);
}

/** Takes one campaign delivery claim (owner token, or null when held); the delivery role passes {@link batchedCampaignClaims}. */
export type CampaignClaimFn = (key: string, ttlSecs: number) => Promise<string | null>;

/**
 * Claims that gather one turn's takes and write them with one store call per in-flight window
 * ({@link StorePort.claimCampaignDeliveries}): the delivery stage starts up to its concurrency of
 * campaign items in one turn after a lease, and one SQLite transaction (one Redis pipeline) for
 * all of them costs about what one claim did. Each caller still gets its own owner token (or
 * null) once the batch is written. A window is always the same `campaign_delivery.claim_ttl_secs`;
 * a batch that mixes windows is written per window all the same.
 */
export function batchedCampaignClaims(store: StorePort): CampaignClaimFn {
  const batcher = new TurnBatcher<{ key: string; ttlSecs: number }, string | null>(async (claims) => {
    const owners: Array<string | null> = new Array<string | null>(claims.length).fill(null);
    const byTtl = new Map<number, number[]>();
    claims.forEach(({ ttlSecs }, i) => {
      const at = byTtl.get(ttlSecs);
      if (at) at.push(i);
      else byTtl.set(ttlSecs, [i]);
    });
    for (const [ttlSecs, indexes] of byTtl) {
      const taken = await store.claimCampaignDeliveries(
        indexes.map((i) => (claims[i] as { key: string }).key),
        ttlSecs,
      );
      indexes.forEach((at, j) => (owners[at] = taken[j] ?? null));
    }
    return owners;
  });
  return (key, ttlSecs) => batcher.add({ key, ttlSecs });
}

/** Retry reason of an item whose device's claim is held within its in-flight window. */
export const CAMPAIGN_CLAIM_IN_FLIGHT = 'campaign claim in flight';
/** Retry reason of an item whose device's claim was held at the take and gone at the read after it. */
export const CAMPAIGN_CLAIM_LAPSED = 'campaign claim lapsed while read';

export interface CampaignDeliveryDeps extends OutboundHandlerDeps {
  campaignDedupTtlSecs: number;
  /** The in-flight window (`campaign_delivery.claim_ttl_secs`, 600 s). */
  campaignClaimTtlSecs: number;
}

export async function deliverCampaignItem(
  deps: CampaignDeliveryDeps,
  item: LeasedItem<OutboundNotification>,
  campaign: CampaignDelivery,
  devices: DeviceRegistration[],
  signal?: AbortSignal,
): Promise<WorkOutcome> {
  const { store } = deps;
  const notification = item.payload;
  const count: CampaignCounterFn = deps.countCampaignOutcome ?? ((appId, id, counter) => store.countCampaign(appId, id, counter, 1));
  const nowMs = store.clock.nowMs();
  const offset = campaign.timezoneOffsetMinutes;
  if (offset !== undefined && inCampaignQuietHours(nowMs, offset)) {
    return { kind: 'retry', afterMs: campaignSendAtMs(nowMs, offset) - nowMs, error: 'campaign quiet hours' };
  }
  const claim: CampaignClaimFn = deps.claimCampaignDelivery ?? ((key, ttlSecs) => store.claimCampaignDelivery(key, ttlSecs));
  const owner = await claim(campaign.deliveryKey, deps.campaignClaimTtlSecs);
  if (owner === null) {
    // Held within the in-flight window: a send running elsewhere, or one killed mid-way. Try again
    // once it ends: an extension (delivered) refuses that retry, a lapse lets it send.
    const ttlSecs = await store.campaignDeliveryTtlSecs(campaign.deliveryKey);
    // Gone by now: it lapsed between the refused take and this read (a send killed mid-way whose
    // window just ended). Taken as delivered, the device would never get the push.
    if (ttlSecs === null) return { kind: 'retry', afterMs: 0, error: CAMPAIGN_CLAIM_LAPSED };
    if (ttlSecs <= deps.campaignClaimTtlSecs) {
      return { kind: 'retry', afterMs: ttlSecs * 1000, error: CAMPAIGN_CLAIM_IN_FLIGHT };
    }
    deps.recordAttempt?.(
      notification,
      { devices: 0, delivered: 0, failed: 0, pruned: 0, retryAfterSecs: null, suppressed: 'already_delivered' },
      0,
      false,
    );
    return DONE;
  }
  const startedMs = performance.now();
  let report;
  try {
    report = await deliverNotification(deps, notification, signal, devices);
  } catch (err) {
    await store.releaseCampaignDelivery(campaign.deliveryKey, owner).catch(() => false);
    throw err;
  }
  const { outcome } = decideAfterDelivery(report, notification, item.attempts, store.clock.nowMs(), deps.maxEventAgeSecs);
  deps.recordAttempt?.(notification, report, performance.now() - startedMs, outcome.kind === 'retry');
  if (report.delivered > 0) {
    if (!(await store.extendCampaignDelivery(campaign.deliveryKey, owner, deps.campaignDedupTtlSecs))) {
      deps.logger.warn({ campaignId: campaign.campaignId }, 'campaign claim lost before its extension; the push stands as delivered');
    }
    await count(campaign.appId, campaign.campaignId, 'sent');
    return outcome;
  }
  await store.releaseCampaignDelivery(campaign.deliveryKey, owner);
  if (outcome.kind !== 'retry') await count(campaign.appId, campaign.campaignId, 'failed');
  return outcome;
}
