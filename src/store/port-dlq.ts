/**
 * Storage operations an operator uses on dead letters: a paged listing with what each item went
 * through, and replaying a whole queue's dead letters. Part of {@link StorePort}; implemented by
 * both adapters; tested in `test/store/contract/dlq.ts`. The single-item operations
 * (`listDead`, `replayDead`, `deleteDead`) are the core queue's, in `port.ts`.
 *
 * A *failure* of an item is a recorded failed attempt: a `retry`, a `deadLetter`, or a lease that
 * expired unsettled (noticed by a later lease, dated at the lease's expiry). An item dead-lettered
 * for `maxAttempts` at its next lease is dated by its last failure, and its first failure is
 * never later than that.
 *
 * @remarks Not part of this contract: who may see which dead letters (the HTTP layer's auth), and
 * tenancy (a later change scopes queues per app).
 */
import type { Lane, QueueName } from './port.ts';

/** One dead letter as an operator sees it. */
export interface DeadLetter<T = unknown> {
  id: string;
  /** The lane it was enqueued in; a replay puts it back there. */
  lane: Lane;
  /** The payload as enqueued (a payload that no longer parses is its stored text). */
  payload: T;
  /** Leases it had. */
  attempts: number;
  /** Why it was dead-lettered (`max attempts exceeded`, or a consumer's reason). */
  reason: string;
  /** The error of its last retried attempt, if any. */
  lastError: string | null;
  /** When its first failure was recorded, ms. */
  firstFailedAtMs: number;
  /** When its last failure was recorded, ms (the dead-letter time when a consumer dead-lettered it). */
  lastFailedAtMs: number;
  /** When it moved to the dead-letter list, ms. */
  deadAtMs: number;
}

/** One page of {@link DeadLetterStore.listDeadPage}. */
export interface DeadLetterPage<T = unknown> {
  /** Oldest dead-letter time first, ties by id. */
  items: DeadLetter<T>[];
  /** Pass to the next call for the items after these; null when there are none (as of this call). */
  nextCursor: string | null;
}

export interface DeadLetterPageOptions {
  /** Most items to return, ≥ 1. */
  limit: number;
  /** A `nextCursor` of an earlier page of the same queue; absent for the first page. */
  cursor?: string;
}

/** Thrown by {@link DeadLetterStore.listDeadPage} for a cursor it did not make (the HTTP layer answers 400). */
export class InvalidCursorError extends Error {
  constructor(cursor: string) {
    super(`not a dead-letter cursor: ${cursor.slice(0, 40)}`);
    this.name = 'InvalidCursorError';
  }
}

export interface DeadLetterStore {
  /**
   * A page of `queue`'s dead letters, oldest first. Paging is stable under concurrent changes:
   * the cursor names a position (dead-letter time and id), so items replayed or deleted meanwhile
   * never shift the next page, and each item is listed at most once per walk (an item dead again
   * after a replay sorts by its new time).
   */
  listDeadPage<T>(queue: QueueName, options: DeadLetterPageOptions): Promise<DeadLetterPage<T>>;

  /** One dead letter by id, or null. */
  getDead<T>(queue: QueueName, id: string): Promise<DeadLetter<T> | null>;

  /**
   * Replay every dead letter of `queue` (as {@link StorePort.replayDead} does each: back to its
   * lane, available now, attempts reset). Runs in steps of a bounded size, so a huge list does
   * not stall the store; an item dead-lettered while it runs may or may not be included.
   * Returns how many were replayed.
   */
  replayAllDead(queue: QueueName): Promise<number>;
}
