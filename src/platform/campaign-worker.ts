/**
 * The campaign scheduler (scheduler role): expands a campaign's audience into the outbound
 * queue's low lane, one page of devices at a time, durably (issue 15 item 1).
 *
 * A page is claimed from the store's campaign schedule (`claimDueCampaign`; due again when its
 * lease runs out, should this worker die). Audience `all` walks the store's cursor over every
 * registered device (`scanDeviceOwners`: Redis `HSCAN` of `token_to_pubkey`, SQLite by token
 * order), `{pubkeys}` walks the list by offset; so a page holds at most `page_size` devices or
 * users and a million users are never in memory at once. A device is consenting when its owner
 * enabled campaigns (kind 3083 `campaignsEnabled`) and it registered a `timezoneOffsetMinutes`;
 * each consenting device gets one outbound item, available now or, when its local time is in
 * 21:00–06:59, at its next 07:00 local (deferred, never dropped). Then the page is recorded
 * (`advanceCampaign`: cursor and counts in one step) and the next one is due at once.
 *
 * A page redone after a crash queues the same item ids (a no-op while they wait) and the delivery
 * claims (`src/delivery/campaign.ts`) keep a delivered device from a second push.
 */
import { campaignItemId, type CampaignItemRef } from '../delivery/campaign-items.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { CampaignRecord, ClaimedCampaign, DeviceOwner } from '../store/port-campaigns.ts';
import type { DeviceRegistration, EnqueueItem, StorePort } from '../store/port.ts';
import { campaignSendAtMs } from './local-time.ts';
import { ANNOUNCEMENT_PREFERENCE_CATEGORY } from '../engine/content.ts';
import type { SendWakeup } from './send-worker.ts';
import { sleep } from '../util/async.ts';

/** Health flag of the campaign scheduler task. */
export const TASK_CAMPAIGN_SCHEDULER = 'campaign_scheduler';

export interface CampaignWorkerDeps {
  store: StorePort;
  /** Recipient allowlist; empty means everyone. */
  allowedPubkeys: ReadonlySet<string>;
  pageSize: number;
  /** The categories of a user with no stored preferences (`notification.default_preferences.kinds`): who gets announcements by default. */
  defaultPreferenceKinds: readonly number[];
  leaseMs: number;
  pollMs: number;
  wakeup: SendWakeup;
  /** Wakes this process's delivery stage after queueing. */
  onQueued: () => void;
  logger: Logger;
  metrics: Metrics;
}

/** One page of (owner, device) pairs to consider, and the cursor after it (null: the last page). */
async function readPage(
  deps: CampaignWorkerDeps,
  campaign: CampaignRecord,
): Promise<{ pairs: Array<[string, DeviceRegistration]>; next: string | null }> {
  const { store } = deps;
  const { audience } = campaign.request;
  let owners: DeviceOwner[] | null = null;
  let pubkeys: string[];
  let next: string | null;
  if (audience === 'all') {
    const page = await store.scanDeviceOwners(campaign.cursor, deps.pageSize);
    owners = page.entries;
    pubkeys = [...new Set(owners.map((o) => o.pubkey))];
    next = page.next;
  } else {
    const offset = campaign.cursor === '' ? 0 : Number(campaign.cursor);
    pubkeys = audience.pubkeys.slice(offset, offset + deps.pageSize);
    const end = offset + pubkeys.length;
    next = end >= audience.pubkeys.length ? null : String(end);
  }
  if (pubkeys.length === 0) return { pairs: [], next };
  const announcement = campaign.request.kind === 'announcement';
  const states = await store.readRecipients(pubkeys);
  // An announcement goes to who enabled its preference category; a campaign to who enabled campaigns.
  const consent = announcement
    ? states.map((state) => (state.preferenceKinds ?? deps.defaultPreferenceKinds).includes(ANNOUNCEMENT_PREFERENCE_CATEGORY))
    : await store.readCampaignConsent(pubkeys);
  const pairs: Array<[string, DeviceRegistration]> = [];
  const scanned = owners ? new Set(owners.map((o) => `${o.pubkey}\n${o.token}`)) : null;
  pubkeys.forEach((pubkey, i) => {
    if (!consent[i]) return;
    if (deps.allowedPubkeys.size > 0 && !deps.allowedPubkeys.has(pubkey)) return;
    for (const device of states[i]?.devices ?? []) {
      // The scan walks devices: only this page's devices of the owner, the others come in their own page.
      if (scanned && !scanned.has(`${pubkey}\n${device.token}`)) continue;
      pairs.push([pubkey, device]);
    }
  });
  return { pairs, next };
}

/** Expand one claimed page. Returns what it queued (for tests and logs). */
export async function expandCampaignPage(
  deps: CampaignWorkerDeps,
  claimed: ClaimedCampaign,
): Promise<{ consenting: number; deferred: number; done: boolean }> {
  const { store } = deps;
  const { campaign } = claimed;
  const { pairs, next } = await readPage(deps, campaign);
  const nowMs = store.clock.nowMs();
  const announcement = campaign.request.kind === 'announcement';
  const items: Array<EnqueueItem<CampaignItemRef>> = [];
  for (const [recipient, device] of pairs) {
    const offset = device.timezoneOffsetMinutes;
    // No registered offset: quiet hours cannot be honoured, so no campaign (seed 000). An
    // announcement the user opted into goes out at once, local time or not.
    if (offset === undefined && !announcement) continue;
    const sendAtMs = announcement || offset === undefined ? nowMs : campaignSendAtMs(nowMs, offset);
    // A reference, not the notification: the delivery stage rebuilds it from the campaign record
    // (campaign-items.ts), so the queue does not hold the same copy once per device.
    const payload: CampaignItemRef = { campaignItem: { appId: campaign.appId, campaignId: campaign.id, recipient, device, sendAtMs } };
    const id = campaignItemId(campaign.appId, campaign.request.idempotencyKey, device.token);
    items.push({ id, payload, lane: 'low', availableAtMs: sendAtMs });
  }
  const queued = items.length === 0 ? [] : await store.enqueueMany('outbound', items);
  let consenting = 0;
  let deferred = 0;
  items.forEach((item, i) => {
    if (!queued[i]) return;
    consenting++;
    if ((item.availableAtMs ?? nowMs) > nowMs) deferred++;
  });
  if (consenting > deferred) deps.onQueued();
  await store.advanceCampaign(campaign.appId, campaign.id, next, { consenting, deferred });
  return { consenting, deferred, done: next === null };
}

/** The scheduler task: claim due campaign pages and expand them until `signal` aborts. */
export async function runCampaignScheduler(deps: CampaignWorkerDeps, signal: AbortSignal): Promise<void> {
  const log = deps.logger;
  while (!signal.aborted) {
    let claimed: ClaimedCampaign | null = null;
    try {
      claimed = await deps.store.claimDueCampaign(deps.leaseMs);
      if (claimed) {
        const page = await expandCampaignPage(deps, claimed);
        log.debug(
          { appId: claimed.campaign.appId, campaignId: claimed.campaign.id, cursor: claimed.campaign.cursor, ...page },
          'campaign page expanded',
        );
        if (page.done) log.info({ appId: claimed.campaign.appId, campaignId: claimed.campaign.id }, 'campaign expanded');
        continue;
      }
    } catch (err) {
      // The page stays leased and returns when the lease runs out; item ids and claims keep a redo from re-pushing.
      log.error({ campaignId: claimed?.campaign.id, err: (err as Error).message }, 'campaign page failed; it returns after its lease');
      await sleep(deps.pollMs, signal).catch(() => undefined);
      continue;
    }
    await deps.wakeup.wait(deps.pollMs, signal);
  }
}
