/**
 * The send scheduler (scheduler role): expands the recipient lists of send API notifications,
 * one page at a time, into the outbound queue.
 *
 * A page is claimed from the store's due schedule (`claimDueSend`: the send becomes `started`,
 * so it can no longer be cancelled, and is due again when the lease runs out should this worker
 * die). Its recipients go through the gates relay notifications go through (allowlist, devices,
 * the preference category `send_api.types` maps the app's type to); those that pass are claimed
 * and queued in one store step (`claimAndEnqueueDeliveries`, the claim `(notification id,
 * recipient)`), on the lane of the notification's priority. Each recipient's expansion is logged
 * (`queued`, or `suppressed` with the gate), then the page is recorded (`advanceSend`), which
 * makes the next page due at once. A page redone after a crash re-queues nobody: the claims hold.
 * Nothing is expanded before `sendAt` (the store clock decides due times), and nothing after
 * `sendAt + ttlSecs` (those recipients are suppressed as `expired`).
 */
import { randomUUID } from 'node:crypto';
import { outboundItemId } from '../engine/outbound-queue.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { NewDeliveryLogEntry } from '../store/port-delivery-log.ts';
import type { ClaimedSend, SendRecord } from '../store/port-sends.ts';
import type { ClaimedDelivery, StorePort } from '../store/port.ts';
import type { OutboundNotification, PushMessage } from '../notification/types.ts';
import { sleep } from '../util/async.ts';

/** Health flag of the send scheduler task. */
export const TASK_SEND_SCHEDULER = 'send_scheduler';

/** Wakes the scheduler of this process when the API of this process created a send (others poll). */
export class SendWakeup {
  private waiters = new Set<() => void>();

  notify(): void {
    const waiters = this.waiters;
    this.waiters = new Set();
    for (const wake of waiters) wake();
  }

  /** Resolve on the next notify, after `ms`, or on abort. */
  wait(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}

export interface SendWorkerDeps {
  store: StorePort;
  /** App type → the preference category that enables it (`send_api.types`). */
  typeCategories: ReadonlyMap<string, number>;
  defaultPreferenceKinds: readonly number[];
  /** Recipient allowlist; empty means everyone. */
  allowedPubkeys: ReadonlySet<string>;
  pageSize: number;
  leaseMs: number;
  pollMs: number;
  /** Lifetime of the (notification, recipient) claims. */
  claimTtlSecs: number;
  /** Log expansion outcomes (`delivery_log.enabled`). */
  logEnabled: boolean;
  wakeup: SendWakeup;
  /** Wakes this process's delivery stage after queueing. */
  onQueued: () => void;
  logger: Logger;
  metrics: Metrics;
}

/** The push of a send API notification: title and body in the data map, as every push of the service. */
export function sendPushMessage(send: SendRecord, recipient: string): PushMessage {
  const { request } = send;
  const data: Record<string, string> = {
    ...request.data,
    type: request.type,
    title: request.title,
    body: request.body,
    notificationId: send.id,
    receiverPubkey: recipient,
  };
  return request.collapseKey === undefined ? { data } : { data, collapseKey: request.collapseKey };
}

type GateOutcome = 'queued' | 'duplicate' | 'not_allowlisted' | 'no_tokens' | 'preference_disabled' | 'unknown_type' | 'expired';

/** Expand one claimed page. Returns the outcome counts (for tests and logs). */
export async function expandSendPage(deps: SendWorkerDeps, claimed: ClaimedSend): Promise<Map<GateOutcome, number>> {
  const { store } = deps;
  const { send } = claimed;
  const { request } = send;
  const page = request.recipients.slice(send.offset, send.offset + deps.pageSize);
  const nextOffset = send.offset + page.length;
  const outcomes = new Map<GateOutcome, number>();
  const gated = new Map<string, GateOutcome>();
  const category = deps.typeCategories.get(request.type);
  const expired = request.ttlSecs !== undefined && store.clock.nowMs() > send.sendAtMs + request.ttlSecs * 1000;

  const candidates: Array<ClaimedDelivery<OutboundNotification>> = [];
  if (category === undefined) for (const r of page) gated.set(r, 'unknown_type');
  else if (expired) for (const r of page) gated.set(r, 'expired');
  else {
    const states = await store.readRecipients(page);
    page.forEach((recipient, i) => {
      const state = states[i];
      if (deps.allowedPubkeys.size > 0 && !deps.allowedPubkeys.has(recipient)) gated.set(recipient, 'not_allowlisted');
      else if (!state || state.devices.length === 0) gated.set(recipient, 'no_tokens');
      else if (!(state.preferenceKinds ?? deps.defaultPreferenceKinds).includes(category)) gated.set(recipient, 'preference_disabled');
      else {
        const claim = { eventId: send.id, recipient, owner: randomUUID() };
        const notification: OutboundNotification = {
          eventId: send.id,
          recipient,
          type: `app:${request.type}`,
          message: sendPushMessage(send, recipient),
          claim,
          eventCreatedAt: Math.floor(send.sendAtMs / 1000),
          devices: state.devices,
          send: { appId: send.appId, notificationId: send.id, type: request.type },
        };
        // The per-user throttle lets critical sends through (delivery/throttle.ts).
        if (request.priority === 'critical') notification.lane = 'critical';
        candidates.push({ claim, item: { id: outboundItemId(notification), payload: notification, lane: request.priority } });
      }
    });
  }
  const taken = candidates.length === 0 ? [] : await store.claimAndEnqueueDeliveries('outbound', deps.claimTtlSecs, candidates);
  const log: NewDeliveryLogEntry[] = [];
  const base = (recipient: string) => ({ appId: send.appId, notificationId: send.id, recipient, type: request.type });
  candidates.forEach((candidate, i) => {
    const outcome: GateOutcome = taken[i] === true ? 'queued' : 'duplicate';
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    if (outcome === 'queued') log.push({ ...base(candidate.claim.recipient), status: 'queued' });
  });
  for (const [recipient, outcome] of gated) {
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    log.push({ ...base(recipient), status: 'suppressed', error: outcome });
  }
  if (taken.includes(true)) deps.onQueued();
  if (deps.logEnabled) await store.appendDeliveryLog(log);
  for (const [outcome, count] of outcomes) deps.metrics.sendRecipients.inc({ outcome }, count);
  await store.advanceSend(send.appId, send.id, nextOffset, nextOffset >= request.recipients.length);
  return outcomes;
}

/** The scheduler task: claim due pages and expand them until `signal` aborts. */
export async function runSendScheduler(deps: SendWorkerDeps, signal: AbortSignal): Promise<void> {
  const log = deps.logger;
  while (!signal.aborted) {
    let claimed: ClaimedSend | null = null;
    try {
      claimed = await deps.store.claimDueSend(deps.leaseMs);
      if (claimed) {
        const outcomes = await expandSendPage(deps, claimed);
        log.debug(
          {
            appId: claimed.send.appId,
            notificationId: claimed.send.id,
            offset: claimed.send.offset,
            outcomes: Object.fromEntries(outcomes),
          },
          'send page expanded',
        );
        continue;
      }
    } catch (err) {
      // The page stays leased and returns when the lease runs out; the claims keep a redo from re-pushing.
      log.error({ notificationId: claimed?.send.id, err: (err as Error).message }, 'send page failed; it returns after its lease');
      await sleep(deps.pollMs, signal).catch(() => undefined);
      continue;
    }
    await deps.wakeup.wait(deps.pollMs, signal);
  }
}
