import type { LeasedItem, QueueName, Settlement, StorePort } from '../store/port.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { sleep } from './supervisor.ts';
import { TurnBatcher } from '../util/turn-batcher.ts';

/** What a handler decided about one item. */
export type WorkOutcome = { kind: 'done' } | { kind: 'retry'; afterMs: number; error: string } | { kind: 'dead'; reason: string };

export const DONE: WorkOutcome = { kind: 'done' };

/** First retry delay after a handler throws; doubles per attempt. */
export const RETRY_BASE_MS = 1_000;
/** Ceiling of the retry delay after a handler throws. */
export const RETRY_MAX_MS = 5 * 60_000;

/** Exponential backoff for the `attempt`-th failure (1-based), capped. */
export function retryDelayMs(attempt: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.max(0, Math.min(attempt - 1, 30)));
}

/**
 * Wakes idle consumers when something was enqueued in this process. Advisory only: consumers
 * also poll, so a missed wake-up (another process enqueued) costs latency, never an item.
 */
export class QueueSignal {
  private waiters = new Map<QueueName, Set<() => void>>();

  notify(queue: QueueName): void {
    const set = this.waiters.get(queue);
    if (!set) return;
    this.waiters.delete(queue);
    for (const wake of set) wake();
  }

  /** Resolve on the next notify of `queue`, after `ms`, or on abort, whichever comes first. */
  wait(queue: QueueName, ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let set = this.waiters.get(queue);
      if (!set) this.waiters.set(queue, (set = new Set()));
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      set.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}

/**
 * Items leased by another part of this process (`StorePort.enqueueLeased`) for a worker to handle
 * as if it had leased them itself: a producer that must persist its work before any I/O and then
 * wants it started at once skips the lease round trip. Items pushed while no worker is attached
 * are not lost: they stay leased in the store until their lease expires, then any worker leases
 * them again.
 */
export class LeasedInlet<T> {
  private sink: ((items: LeasedItem<T>[]) => void) | null = null;

  /** Hand items to the attached worker; false when none is attached (they wait out their lease). */
  push(items: LeasedItem<T>[]): boolean {
    if (!this.sink) return false;
    if (items.length > 0) this.sink(items);
    return true;
  }

  attach(sink: (items: LeasedItem<T>[]) => void): void {
    this.sink = sink;
  }

  detach(): void {
    this.sink = null;
  }
}

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

/**
 * Resolve on the next turn of the event loop. A handler over a synchronous store (SQLite)
 * resolves in microtasks only, so without this a sequential consumer would starve every socket
 * in the process (relays, HTTP/2 sends) until its whole batch is done.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Run `fn` over `items` with at most `limit` in flight, yielding to I/O between items. */
export async function forEachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  if (limit <= 1) {
    for (const item of items) {
      await fn(item);
      await yieldToEventLoop();
    }
    return;
  }
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
      await yieldToEventLoop();
    }
  });
  await Promise.all(lanes);
}
