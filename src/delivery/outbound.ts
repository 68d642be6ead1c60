import type { LeasedItem } from '../store/port.ts';
import { DONE, retryDelayMs, type WorkOutcome } from '../roles/queue-worker.ts';
import { deliverNotification, type DeliveryDeps, type DeliveryReport, type OutboundNotification } from './deliver.ts';
import { isUrgent, THROTTLE_WINDOW_SECS, THROTTLED } from './throttle.ts';

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
  item: LeasedItem<OutboundNotification>,
  signal?: AbortSignal,
): Promise<WorkOutcome> {
  const notification = item.payload;
  const startedMs = performance.now();
  if (await throttled(deps, notification, item.attempts)) {
    const report: DeliveryReport = { devices: 0, delivered: 0, failed: 0, pruned: 0, retryAfterSecs: null, suppressed: THROTTLED };
    deps.recordAttempt?.(notification, report, performance.now() - startedMs, false);
    // Done, and the claim kept: the notification was counted in the inbox, and a replay must not push it later.
    return DONE;
  }
  // The first attempt sends to the devices the gates read; a retry reads them afresh.
  const report = await deliverNotification(deps, notification, signal, item.attempts === 1 ? notification.devices : undefined);
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
