/**
 * The contract between a durable queue's consumers and the runner that leases for them
 * (`src/roles/queue-worker.ts`): what a handler answers for one leased item, the retry backoff the
 * runner applies, and the in-process hand-offs (a wake-up signal, an inlet for items another part
 * of the process already leased). Stages import this, never the runner.
 */
import type { LeasedItem, QueueName } from './port.ts';

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
