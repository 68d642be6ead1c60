import type { LeasedItem } from '../store/port.ts';
import { deliverNotification, type DeliveryDeps, type DeliveryReport } from './deliver.ts';
import { isUrgent, THROTTLED } from './throttle.ts';
import { deliverCampaignItem, type CampaignClaimFn, type CampaignCounterFn } from './campaign.ts';
import {
  BELL_EXPANDER_MISSING,
  CAMPAIGN_RECORD_MISSING,
  CampaignCopies,
  withNotification,
  type OutboundPayload,
} from './campaign-items.ts';
import { isBellItemRef, type ExpandBellItem } from '../notification/bell-item.ts';
import type { SuppressionGate } from './suppression-gate.ts';
import type { QuietHoursGate } from './quiet-hours-gate.ts';
import type { DeviceRegistration } from '../store/port.ts';
import { CAMPAIGN_CLAIM_IN_FLIGHT_SECS } from '../config/defaults.ts';
import type { OutboundNotification } from '../notification/types.ts';
import { DONE, retryDelayMs, type WorkOutcome } from '../store/queue-work.ts';
import { THROTTLE_WINDOW_SECS } from '../notification/types.ts';

/** The app of a notification without one: relay notifications belong to the default app (platform/apps.ts). */
const DEFAULT_APP_ID = 'default';

/**
 * What to do with an outbound item after one delivery attempt:
 * - something was delivered, or every failure was final: done, and the claim stays (a partial
 *   success must never re-send to the devices that got it; a final failure is not retried);
 * - every device failed retryably: retry after max(Retry-After, backoff), unless the notification
 *   would by then be older than `maxEventAgeSecs` — then it is given up: dead-lettered, and its
 *   claim released so a later replay of the event may try again.
 */
export function decideAfterDelivery(
  report: DeliveryReport,
  notification: OutboundNotification,
  attempts: number,
  nowMs: number,
  maxEventAgeSecs: number,
): { outcome: WorkOutcome; releaseClaim: boolean } {
  if (report.retryAfterSecs === null) return { outcome: DONE, releaseClaim: report.devices === 0 };
  const delayMs = Math.max(report.retryAfterSecs * 1000, retryDelayMs(attempts));
  const deadlineMs = (notification.eventCreatedAt + maxEventAgeSecs) * 1000;
  if (nowMs + delayMs > deadlineMs) {
    return {
      outcome: { kind: 'dead', reason: `every device failed retryably until the notification was older than ${maxEventAgeSecs} s` },
      releaseClaim: true,
    };
  }
  return {
    outcome: { kind: 'retry', afterMs: delayMs, error: `every device failed retryably (Retry-After ${report.retryAfterSecs} s)` },
    releaseClaim: false,
  };
}

export interface OutboundHandlerDeps extends DeliveryDeps {
  maxEventAgeSecs: number;
  /** `throttle.per_user_per_hour`: most non-urgent pushes per user and clock hour (`throttle.ts`); 0 or absent is off. */
  throttlePerUserPerHour?: number;
  /** Records each attempt in the delivery log (`src/platform/delivery-log.ts`); absent, nothing is logged. */
  recordAttempt?: (notification: OutboundNotification, report: DeliveryReport, latencyMs: number, retrying: boolean) => void;
  /** App-level suppressions, checked before every send (`suppression-gate.ts`); absent, nothing is suppressed. */
  suppressionGate?: SuppressionGate;
  /** How long a delivered campaign claim is kept (`campaign_delivery.dedup_ttl_secs`). */
  campaignDedupTtlSecs?: number;
  /** The campaign claim's in-flight window (`campaign_delivery.claim_ttl_secs`). */
  campaignClaimTtlSecs?: number;
  /** Counts campaign outcomes (sent, failed); default one store write per outcome. */
  countCampaignOutcome?: CampaignCounterFn;
  /** Takes campaign delivery claims; default one store call per claim. */
  claimCampaignDelivery?: CampaignClaimFn;
  /** Quiet hours: holds social pushes for the user's digest (`quiet-hours-gate.ts`); absent, nothing is held. */
  quietHoursGate?: QuietHoursGate;
  /** The campaign records a campaign item's notification is rebuilt from (`campaign-items.ts`); absent, read per item. */
  campaignCopies?: CampaignCopies;
  /**
   * Expands a bell's reference into its notification (the engine's `bellNotificationExpander`;
   * `notification/bell-item.ts`). Absent, a bell reference is dead-lettered: a wiring error.
   */
  expandBellItem?: ExpandBellItem;
}

/** The campaign records' cache, or for a handler built without one (tests) a fresh one: nothing shared between stores. */
function campaignCopiesOf(deps: OutboundHandlerDeps): CampaignCopies {
  return deps.campaignCopies ?? new CampaignCopies(deps.store);
}

/** Seed 000's `campaign_delivery.dedup_ttl_secs` default, for handlers built without a configuration (tests). */
const DEFAULT_CAMPAIGN_DEDUP_TTL_SECS = 7 * 86_400;

/**
 * The devices this attempt goes to: the first attempt sends to the devices the gates read, a
 * retry reads them afresh (a campaign item only ever its own device); then the suppression gate.
 * `suppressed` when the gate left none of a non-empty list.
 */
async function devicesOf(
  deps: OutboundHandlerDeps,
  item: LeasedItem<OutboundNotification>,
): Promise<{ devices: DeviceRegistration[] | undefined; suppressed: boolean }> {
  const notification = item.payload;
  let devices = item.attempts === 1 ? notification.devices : undefined;
  const campaign = notification.campaign;
  if (devices === undefined && (campaign || deps.suppressionGate || deps.quietHoursGate)) {
    devices = await deps.store.listDevices(notification.recipient);
    if (campaign) devices = devices.filter((d) => d.token === campaign.token);
  }
  if (!deps.suppressionGate || devices === undefined || devices.length === 0) return { devices, suppressed: false };
  const kept = await deps.suppressionGate(notification.send?.appId ?? DEFAULT_APP_ID, notification.recipient, devices);
  return { devices: kept, suppressed: kept.length === 0 };
}

/**
 * Whether the per-user throttle withholds `notification` (counting it either way). Asked on the
 * first attempt only: a retry of a push the throttle let through must not take a second slot.
 */
async function throttled(deps: OutboundHandlerDeps, notification: OutboundNotification, attempts: number): Promise<boolean> {
  const limit = deps.throttlePerUserPerHour ?? 0;
  if (limit <= 0 || attempts !== 1 || isUrgent(notification) || notification.devices?.length === 0) return false;
  const decision = await deps.store.takeThrottleSlot(notification.recipient, limit, THROTTLE_WINDOW_SECS);
  if (decision.allowed) return false;
  deps.metrics.pushesThrottled.inc({ type: notification.type });
  deps.logger.info(
    { eventId: notification.eventId, recipient: notification.recipient, type: notification.type, withheld: decision.window.withheld },
    'push withheld by the per-user throttle; counted in the inbox',
  );
  return true;
}

/** The delivery role's handler of one `outbound` queue item. */
export async function handleOutbound(
  deps: OutboundHandlerDeps,
  leased: LeasedItem<OutboundPayload>,
  signal?: AbortSignal,
): Promise<WorkOutcome> {
  const whole = withNotification(campaignCopiesOf(deps), leased, deps.expandBellItem);
  const item = whole instanceof Promise ? await whole : whole;
  if (item === null) return { kind: 'dead', reason: isBellItemRef(leased.payload) ? BELL_EXPANDER_MISSING : CAMPAIGN_RECORD_MISSING };
  const notification = item.payload;
  const startedMs = performance.now();
  const { devices, suppressed } = await devicesOf(deps, item);
  if (suppressed) {
    // No transport call. A relay notification's claim stays (this push is decided); a campaign's is never taken.
    const report: DeliveryReport = { devices: 0, delivered: 0, failed: 0, pruned: 0, retryAfterSecs: null, suppressed: 'suppression' };
    deps.recordAttempt?.(notification, report, performance.now() - startedMs, false);
    return DONE;
  }
  if (deps.quietHoursGate && devices !== undefined && (await deps.quietHoursGate(notification, devices))) {
    // Held for the digest at the end of the user's quiet hours; the claim stays (the digest stands for it).
    const report: DeliveryReport = { devices: 0, delivered: 0, failed: 0, pruned: 0, retryAfterSecs: null, suppressed: 'quiet_hours' };
    deps.recordAttempt?.(notification, report, performance.now() - startedMs, false);
    return DONE;
  }
  if (notification.campaign && devices !== undefined) {
    return deliverCampaignItem(
      {
        ...deps,
        campaignDedupTtlSecs: deps.campaignDedupTtlSecs ?? DEFAULT_CAMPAIGN_DEDUP_TTL_SECS,
        campaignClaimTtlSecs: deps.campaignClaimTtlSecs ?? CAMPAIGN_CLAIM_IN_FLIGHT_SECS,
      },
      item,
      notification.campaign,
      devices,
      signal,
    );
  }
  if (await throttled(deps, notification, item.attempts)) {
    const report: DeliveryReport = { devices: 0, delivered: 0, failed: 0, pruned: 0, retryAfterSecs: null, suppressed: THROTTLED };
    deps.recordAttempt?.(notification, report, performance.now() - startedMs, false);
    // Done, and the claim kept: the notification was counted in the inbox, and a replay must not push it later.
    return DONE;
  }
  const report = await deliverNotification(deps, notification, signal, devices);
  const { outcome, releaseClaim } = decideAfterDelivery(
    report,
    notification,
    item.attempts,
    deps.store.clock.nowMs(),
    deps.maxEventAgeSecs,
  );
  deps.recordAttempt?.(notification, report, performance.now() - startedMs, outcome.kind === 'retry');
  if (releaseClaim && notification.claim) await deps.store.releaseRecipientDelivery(notification.claim);
  if (outcome.kind === 'dead') deps.metrics.deliveriesGivenUp.inc({ type: notification.type });
  return outcome;
}
