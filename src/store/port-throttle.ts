/**
 * Storage operations of the per-user push throttle (issue 15, docs/copy.md): a counter per user
 * and clock window (an hour in production) of pushes let through and pushes withheld. Part of
 * {@link StorePort}; implemented by both adapters; tested in `test/store/contract/throttle.ts`.
 *
 * Windows are fixed and aligned to the store clock (`floor(now / window)`), so every process of
 * a fleet counts into the same window. A window's counters outlive it by one window, then go.
 *
 * @remarks Not part of this contract: which pushes are throttled (urgent ones never are, see
 * `delivery/throttle.ts`), and what a withheld push becomes (the delivery log, the inbox).
 */

/** One user's numbers in one window. */
export interface ThrottleWindow {
  /** Start of the window (ms, store clock). */
  startMs: number;
  /** Pushes let through in it. */
  pushed: number;
  /** Pushes withheld in it because `pushed` had reached the limit. */
  withheld: number;
}

/** What {@link ThrottleStore.takeThrottleSlot} decided. */
export interface ThrottleDecision {
  /** True when the push may go: it was counted as pushed; false: it was counted as withheld. */
  allowed: boolean;
  /** The window after this decision. */
  window: ThrottleWindow;
}

export interface ThrottleStore {
  /**
   * Atomically, in `pubkey`'s current window of `windowSecs`: when fewer than `limit` pushes were
   * let through, count one more and allow it; otherwise count one withheld and refuse it.
   * `limit` is 1 or more (a limit of 0 means no throttle, and the caller does not ask).
   */
  takeThrottleSlot(pubkey: string, limit: number, windowSecs: number): Promise<ThrottleDecision>;

  /** `pubkey`'s current window of `windowSecs` (zero counts when nothing was counted in it). */
  readThrottleWindow(pubkey: string, windowSecs: number): Promise<ThrottleWindow>;
}

/** Start (ms) of the window of `windowSecs` holding `nowMs`. */
export function throttleWindowStartMs(nowMs: number, windowSecs: number): number {
  const windowMs = windowSecs * 1000;
  return Math.floor(nowMs / windowMs) * windowMs;
}
