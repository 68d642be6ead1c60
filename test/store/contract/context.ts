import assert from 'node:assert/strict';
import type { QueueStats, StorePort } from '../../../src/store/port.ts';
import type { ManualClock } from '../../../src/util/clock.ts';

/**
 * What every contract test gets: the fresh store of the running test and the manual clock it was
 * made with. Getters, because each test has its own pair (made in beforeEach).
 */
export interface ContractContext {
  store(): StorePort;
  clock(): ManualClock;
}

export const SECOND_MS = 1000;
export const MINUTE_MS = 60 * SECOND_MS;
export const DAY_MS = 24 * 60 * MINUTE_MS;

/**
 * Token activity is compared at whole seconds: the Redis adapter keeps it in the seed's
 * `stale_tokens` zset as unix seconds, the SQLite adapter in milliseconds.
 */
export function assertSameSecond(actualMs: number | null, expectedMs: number, message?: string): void {
  assert.notEqual(actualMs, null, message ?? 'expected an activity time, got null');
  assert.equal(Math.floor((actualMs ?? 0) / SECOND_MS), Math.floor(expectedMs / SECOND_MS), message);
}

/** The queue-wide counts of {@link QueueStats}, without the per-lane ones (tests of one lane compare these). */
export function totals(stats: QueueStats): { ready: number; leased: number; dead: number } {
  return { ready: stats.ready, leased: stats.leased, dead: stats.dead };
}
