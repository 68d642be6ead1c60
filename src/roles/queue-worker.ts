import type { LeasedItem, QueueName, Settlement, StorePort } from '../store/port.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { TurnBatcher } from '../util/turn-batcher.ts';
import { sleep } from '../util/async.ts';
import { yieldToEventLoop } from '../util/async.ts';
import { retryDelayMs, type LeasedInlet, type QueueSignal, type WorkOutcome } from '../store/queue-work.ts';

export interface QueueWorkerOptions<T> {
  store: StorePort;
  queue: QueueName;
  /** Handles one item; throwing is a retryable failure. */
  handle: (item: LeasedItem<T>) => Promise<WorkOutcome>;
  /** Called with each leased batch before its items are handled (e.g. to start parallel work). */
  prepare?: (items: LeasedItem<T>[]) => void;
  leaseMs: number;
  maxAttempts: number;
  /**
   * Items held at once: leased and not yet settled, running or waiting to run. The worker leases
   * again as soon as half of this is free, so the handlers never wait for a whole batch to finish.
   */
  batchSize: number;
  /** Items handled at once. */
  concurrency: number;
  /**
   * Items with the same key are handled one after another, in lease order (across lease calls
   * too); items with different keys run concurrently up to `concurrency`. Without it every item
   * is independent.
   */
  orderingKey?: (item: LeasedItem<T>) => string;
  pollMs: number;
  /** Items leased elsewhere in the process, handled with those this worker leases. */
  inlet?: LeasedInlet<T>;
  signal: AbortSignal;
  wake: QueueSignal;
  logger: Logger;
  metrics: Metrics;
}

/** The settlement of one handled item, as the worker records it. */
function settlementOf(item: LeasedItem, outcome: WorkOutcome, nowMs: number): Settlement {
  if (outcome.kind === 'done') return { id: item.id, leaseToken: item.leaseToken, outcome: 'ack' };
  if (outcome.kind === 'retry')
    return { id: item.id, leaseToken: item.leaseToken, outcome: 'retry', availableAtMs: nowMs + outcome.afterMs, error: outcome.error };
  return { id: item.id, leaseToken: item.leaseToken, outcome: 'dead', reason: outcome.reason };
}

/** Reason recorded on items leased but never started when the worker stops. */
export const RELEASED_AT_SHUTDOWN = 'released unstarted at shutdown';

/**
 * Lease, handle, settle — until the signal aborts. Items flow continuously: a handler slot that
 * frees up takes the next held item at once, and the worker leases more whenever half of its
 * {@link QueueWorkerOptions.batchSize} is free. Settlements made in one turn of the event loop
 * are written together ({@link StorePort.settleLeased}).
 *
 * An item is settled only after its handler finished, so a crash at any instant leaves it leased
 * and the lease expiry returns it. On abort the worker stops leasing, lets running handlers finish,
 * and gives the items it held but never started back to the queue, available at once.
 */
export async function runQueueWorker<T>(options: QueueWorkerOptions<T>): Promise<void> {
  const { store, queue, signal, logger } = options;
  const concurrency = Math.max(1, options.concurrency);
  const window = Math.max(1, options.batchSize);
  const leaseWhenFree = Math.max(1, Math.floor(window / 2));
  const settler = new TurnBatcher<Settlement, boolean>((batch) => store.settleLeased(queue, batch));

  /** Items leased and not yet settled. */
  let held = 0;
  let running = 0;
  /** Items free to start now, in lease order. */
  const runnable: Array<LeasedItem<T>> = [];
  /** Per ordering key: items waiting for the running (or runnable) one of that key. */
  const waitingByKey = new Map<string, Array<LeasedItem<T>>>();
  const keyOf = options.orderingKey;
  let roomOrIdle: (() => void) | null = null;
  const signalRoom = (): void => {
    const wake = roomOrIdle;
    roomOrIdle = null;
    wake?.();
  };
  signal.addEventListener('abort', signalRoom, { once: true });

  const admit = (item: LeasedItem<T>): void => {
    if (!keyOf) {
      runnable.push(item);
      return;
    }
    const key = keyOf(item);
    const waiting = waitingByKey.get(key);
    if (waiting) waiting.push(item);
    else {
      waitingByKey.set(key, []);
      runnable.push(item);
    }
  };

  const finished = (item: LeasedItem<T>): void => {
    running--;
    held--;
    if (keyOf) {
      const key = keyOf(item);
      const next = waitingByKey.get(key)?.shift();
      if (next) runnable.push(next);
      else waitingByKey.delete(key);
    }
    pump();
    signalRoom();
  };

  const pump = (): void => {
    while (running < concurrency && runnable.length > 0 && !signal.aborted) {
      const item = runnable.shift() as LeasedItem<T>;
      running++;
      void settle(options, settler, item).finally(() => finished(item));
    }
  };

  const take = (items: LeasedItem<T>[]): void => {
    held += items.length;
    options.prepare?.(items);
    for (const item of items) admit(item);
    pump();
  };
  // Handed-in items count as held, so the worker leases less while they wait; their number is
  // bounded by the producer (the NIP-9a gateway's pending bound per relay).
  options.inlet?.attach(take);

  while (!signal.aborted) {
    if (window - held < leaseWhenFree) {
      await new Promise<void>((resolve) => (roomOrIdle = resolve));
      continue;
    }
    let items: LeasedItem<T>[];
    try {
      items = await store.lease<T>(queue, { max: window - held, leaseMs: options.leaseMs, maxAttempts: options.maxAttempts });
    } catch (err) {
      logger.error({ queue, err: (err as Error).message }, 'queue lease failed; backing off');
      await sleep(options.pollMs * 4, signal).catch(() => undefined);
      continue;
    }
    if (items.length === 0) {
      // Nothing due: wait for an enqueue in this process, the poll interval, or abort.
      await options.wake.wait(queue, options.pollMs, signal);
      continue;
    }
    take(items);
    // Let the handlers just started run before asking the store for more.
    await yieldToEventLoop();
  }

  // Shutdown: hand back what never started, then wait for the running handlers to settle.
  options.inlet?.detach();
  const unstarted = [...runnable, ...[...waitingByKey.values()].flat()];
  runnable.length = 0;
  waitingByKey.clear();
  if (unstarted.length > 0) {
    held -= unstarted.length;
    const nowMs = store.clock.nowMs();
    await store
      .settleLeased(
        queue,
        unstarted.map((item) => ({
          id: item.id,
          leaseToken: item.leaseToken,
          outcome: 'retry' as const,
          availableAtMs: nowMs,
          error: RELEASED_AT_SHUTDOWN,
        })),
      )
      .catch((err: unknown) =>
        logger.warn(
          { queue, items: unstarted.length, err: err instanceof Error ? err.message : String(err) },
          'could not hand back unstarted items; their leases will expire',
        ),
      );
  }
  while (running > 0) await new Promise<void>((resolve) => (roomOrIdle = resolve));
}

async function settle<T>(options: QueueWorkerOptions<T>, settler: TurnBatcher<Settlement, boolean>, item: LeasedItem<T>): Promise<void> {
  const { store, queue, logger } = options;
  let outcome: WorkOutcome;
  try {
    outcome = await options.handle(item);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    logger.warn({ queue, id: item.id, attempts: item.attempts, err: message }, 'queue item failed; will retry');
    outcome = { kind: 'retry', afterMs: retryDelayMs(item.attempts), error: message };
  }
  try {
    await settler.add(settlementOf(item, outcome, store.clock.nowMs()));
    if (outcome.kind === 'dead') {
      options.metrics.queueDeadLettered.inc({ queue });
      logger.warn({ queue, id: item.id, reason: outcome.reason }, 'queue item dead-lettered');
    }
  } catch (err) {
    // The lease will expire and return the item: at-least-once, never lost.
    logger.error({ queue, id: item.id, err: (err as Error).message }, 'could not settle queue item; its lease will expire');
  }
}
