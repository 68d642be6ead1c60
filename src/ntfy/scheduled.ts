/**
 * Scheduled delivery (`Delay`, `At`, `In`) on the pusher's side: the task that hands due messages
 * to their topics, and how a pending message looks on the wire (`?scheduled=1`, the publish answer).
 *
 * The store does the delivery (`releaseDueNtfyMessages`: append and forget in one atomic step, a
 * claim keeping other processes off it meanwhile), so any number of pusher processes can run this
 * task over one store and each message is delivered once; a process killed at any instant leaves
 * its messages scheduled or delivered, never lost. The appends wake subscribers like any append.
 */
import type { NtfyMessage, NtfyScheduledMessage } from '../store/port-ntfy.ts';
import type { StorePort } from '../store/port.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { sleep } from '../util/async.ts';

/**
 * How often the pusher looks for due messages: a message is delivered at most this long after
 * its time (ntfy's delayed sender looks every 10 s); each look is one indexed read.
 */
export const SCHEDULED_POLL_MS = 1_000;
/** Messages one store call delivers at most (a backlog takes several calls). */
export const SCHEDULED_BATCH_SIZE = 100;
/** Pending messages `?scheduled=1` lists at most per subscription. */
export const SCHEDULED_LIST_LIMIT = 1_000;

/** A pending message as its publisher is answered and `?scheduled=1` lists it: `time` is its delivery time. */
export function scheduledAsMessage(scheduled: NtfyScheduledMessage): NtfyMessage {
  const { deliverAtMs, ttlMs, ...rest } = scheduled;
  return { ...rest, timeMs: deliverAtMs, expiresMs: deliverAtMs + ttlMs };
}

/** One pass: deliver batches until one comes back short. Returns how many were delivered. */
export async function deliverDueNtfyMessages(store: StorePort, metrics: Metrics, signal?: AbortSignal): Promise<NtfyMessage[]> {
  const delivered: NtfyMessage[] = [];
  for (;;) {
    const batch = await store.releaseDueNtfyMessages(SCHEDULED_BATCH_SIZE);
    delivered.push(...batch);
    if (batch.length > 0) metrics.ntfyScheduledDelivered.inc(batch.length);
    if (batch.length < SCHEDULED_BATCH_SIZE || signal?.aborted) return delivered;
  }
}

/** The pusher task: a pass every `intervalMs` until `signal` aborts. */
export async function runNtfyScheduledDelivery(
  deps: { store: StorePort; metrics: Metrics; logger: Logger; intervalMs?: number },
  signal: AbortSignal,
): Promise<void> {
  const log = deps.logger.child({ role: 'pusher', task: 'ntfy_scheduled' });
  while (!signal.aborted) {
    try {
      const lookedAt = deps.store.clock.nowMs();
      const delivered = await deliverDueNtfyMessages(deps.store, deps.metrics, signal);
      // Everything due by `lookedAt` is delivered now (by this process or another).
      deps.metrics.ntfyScheduledPassClock.set(lookedAt);
      if (delivered.length > 0)
        log.info(
          { delivered: delivered.length, ids: delivered.map((m) => m.sequenceId).slice(0, 10) },
          'scheduled ntfy messages delivered',
        );
    } catch (err) {
      deps.metrics.ntfyScheduledFailures.inc();
      log.warn({ err: (err as Error).message }, 'scheduled ntfy delivery failed; trying again next interval');
    }
    await sleep(deps.intervalMs ?? SCHEDULED_POLL_MS, signal).catch(() => undefined);
  }
}
