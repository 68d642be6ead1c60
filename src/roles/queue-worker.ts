import type { LeasedItem, QueueName, StorePort } from '../store/port.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { sleep } from './supervisor.ts';

/** What a handler decided about one item. */
export type WorkOutcome =
  | { kind: 'done' }
  | { kind: 'retry'; afterMs: number; error: string }
  | { kind: 'dead'; reason: string };

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

export interface QueueWorkerOptions<T> {
  store: StorePort;
  queue: QueueName;
  /** Handles one item; throwing is a retryable failure. */
  handle: (item: LeasedItem<T>) => Promise<WorkOutcome>;
  /** Called with each leased batch before its items are handled (e.g. to start parallel work). */
  prepare?: (items: LeasedItem<T>[]) => void;
  leaseMs: number;
  maxAttempts: number;
  /** Items leased per round trip. */
  batchSize: number;
  /** Items handled at once. */
  concurrency: number;
  /**
   * Items with the same key are handled one after another, in lease order; items with different
   * keys run concurrently up to `concurrency`. Without it every item is independent.
   */
  orderingKey?: (item: LeasedItem<T>) => string;
  pollMs: number;
  signal: AbortSignal;
  wake: QueueSignal;
  logger: Logger;
  metrics: Metrics;
}

/**
 * Lease, handle, acknowledge — until the signal aborts. An item is acknowledged only after its
 * handler finished, so a crash at any instant leaves it leased, and the lease expiry returns it.
 */
export async function runQueueWorker<T>(options: QueueWorkerOptions<T>): Promise<void> {
  const { store, queue, signal, logger } = options;
  while (!signal.aborted) {
    let items: LeasedItem<T>[];
    try {
      items = await store.lease<T>(queue, { max: options.batchSize, leaseMs: options.leaseMs, maxAttempts: options.maxAttempts });
    } catch (err) {
      logger.error({ queue, err: (err as Error).message }, 'queue lease failed; backing off');
      await sleep(options.pollMs * 4, signal).catch(() => undefined);
      continue;
    }
    if (items.length === 0) {
      await options.wake.wait(queue, options.pollMs, signal);
      continue;
    }
    options.prepare?.(items);
    const orderingKey = options.orderingKey;
    if (orderingKey) {
      await forEachLimited(partitionInOrder(items, orderingKey), options.concurrency, async (lane) => {
        for (const item of lane) await settle(options, item);
      });
    } else {
      await forEachLimited(items, options.concurrency, (item) => settle(options, item));
    }
  }
}

async function settle<T>(options: QueueWorkerOptions<T>, item: LeasedItem<T>): Promise<void> {
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
    if (outcome.kind === 'done') await store.ack(queue, item.id, item.leaseToken);
    else if (outcome.kind === 'retry') await store.retry(queue, item.id, item.leaseToken, store.clock.nowMs() + outcome.afterMs, outcome.error);
    else {
      await store.deadLetter(queue, item.id, item.leaseToken, outcome.reason);
      options.metrics.queueDeadLettered.inc({ queue });
      logger.warn({ queue, id: item.id, reason: outcome.reason }, 'queue item dead-lettered');
    }
  } catch (err) {
    // The lease will expire and return the item: at-least-once, never lost.
    logger.error({ queue, id: item.id, err: (err as Error).message }, 'could not settle queue item; its lease will expire');
  }
}

/** Split `items` into lanes by key, each lane in the original order. */
export function partitionInOrder<T>(items: readonly T[], key: (item: T) => string): T[][] {
  const lanes = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const lane = lanes.get(k);
    if (lane) lane.push(item);
    else lanes.set(k, [item]);
  }
  return [...lanes.values()];
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
