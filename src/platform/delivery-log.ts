/**
 * The delivery stage's side of the delivery log: what one settled outbound item amounts to as log
 * entries (one per device, or one without devices), written a turn's worth at a time. Logging
 * never fails a delivery: a failed write is counted (`push_delivery_log_failures_total`), logged
 * at warn, and the pushes stand.
 */
import type { DeliveryReport } from '../delivery/deliver.ts';
import { redact, type Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { DeliveryStatus, NewDeliveryLogEntry } from '../store/port-delivery-log.ts';
import type { StorePort } from '../store/port.ts';
import { TurnBatcher } from '../util/turn-batcher.ts';
import { DEFAULT_APP_ID } from './apps.ts';
import type { OutboundNotification } from '../notification/types.ts';

/** Records the outcome of one delivery attempt; never throws. */
export type DeliveryLogRecorder = (
  notification: OutboundNotification,
  report: DeliveryReport,
  latencyMs: number,
  retrying: boolean,
) => void;

/** The log entries of one attempt (exported for tests). */
export function deliveryLogEntries(
  notification: OutboundNotification,
  report: DeliveryReport,
  latencyMs: number,
  retrying: boolean,
  appId: string = DEFAULT_APP_ID,
): NewDeliveryLogEntry[] {
  const base = {
    // A send names its app; a relay notification is the delivering app's.
    appId: notification.send?.appId ?? appId,
    notificationId: notification.send?.notificationId ?? notification.eventId,
    recipient: notification.recipient,
    type: notification.send?.type ?? notification.type,
    latencyMs,
  };
  if (report.suppressed !== undefined) return [{ ...base, status: 'suppressed', error: report.suppressed }];
  const attempts = report.attempts ?? [];
  if (attempts.length === 0) return [{ ...base, status: 'failed', error: 'no registered devices' }];
  return attempts.map(({ token, transport, outcome }) => {
    const status: DeliveryStatus = outcome.ok ? 'sent' : retrying && outcome.error.kind === 'retryable_internal' ? 'retrying' : 'failed';
    const entry: NewDeliveryLogEntry = { ...base, status, transport, tokenPrefix: redact(token) };
    if (outcome.ok) {
      if (outcome.messageId !== undefined) entry.providerMessageId = outcome.messageId;
    } else entry.error = `${outcome.error.kind}: ${outcome.error.message}`.slice(0, 300);
    return entry;
  });
}

/** A recorder appending to `store` (app `appId`'s view), one append per event-loop turn. */
export function storeDeliveryLog(store: StorePort, metrics: Metrics, logger: Logger, appId: string = DEFAULT_APP_ID): DeliveryLogRecorder {
  const batcher = new TurnBatcher<NewDeliveryLogEntry[], undefined>(async (lists) => {
    await store.appendDeliveryLog(lists.flat());
    return lists.map(() => undefined);
  });
  return (notification, report, latencyMs, retrying) => {
    batcher.add(deliveryLogEntries(notification, report, latencyMs, retrying, appId)).catch((err: unknown) => {
      metrics.deliveryLogFailures.inc();
      logger.warn({ eventId: notification.eventId, err: (err as Error).message }, 'delivery log write failed; the push is unaffected');
    });
  };
}
