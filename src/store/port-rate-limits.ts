/**
 * Request counters of the per-client rate limits (issue 35, `src/api/rate-limits.ts`). Part of
 * {@link StorePort}; implemented by both adapters on `rate-limiter-flexible`
 * (`rate-limit-counters.ts`); tested in `test/store/contract/rate-limits.ts`.
 *
 * A counter is a fixed window per key: the first request of a key opens a window of `windowSecs`,
 * in which `points` requests are allowed; the window ends `windowSecs` after it opened, and the
 * next request opens a new one. On Redis the windows are Redis keys that expire by the server's
 * clock, so every replica counts into the same window; on SQLite (one process owns the store)
 * they are kept in the process's memory.
 *
 * @remarks Not part of this contract: what a key is (a client address, a pubkey, an API key id:
 * the caller's), what a refusal answers (429, `src/api/rate-limits.ts`), and window expiry itself,
 * which follows the Redis server's clock or the process's (each adapter relies on its library for
 * it; the contract runs on a manual clock neither follows).
 */

/** One named limit: `points` requests per key in every window of `windowSecs`. */
export interface RateLimitWindow {
  /** Names the counter (its keys' namespace): counters of one name share their counts, on every replica. */
  name: string;
  /** Requests allowed per key in one window (1 or more). */
  points: number;
  /** Length of a window, whole seconds (1 or more). */
  windowSecs: number;
  /**
   * Decide from this process's own count at once, and count in the shared store (Redis) in the
   * background: a key the store then says is over its budget (other replicas' requests counted
   * in) is refused here until its window ends. For the hottest route (the NIP-9a receiver), where
   * waiting for the store's answer put a round trip in every request's path. The shared count is
   * fed every 100 ms (`SHARED_COUNT_INTERVAL_MS`), each key's requests summed, so a fleet admits at
   * most that interval and a round trip's worth of requests more per replica than the points. Absent or false:
   * every decision waits for the shared count. The same on SQLite (its count is the process's).
   */
  decideLocally?: boolean;
}

/** What {@link RateLimitCounter.take} decided. */
export type RateLimitDecision =
  | { allowed: true }
  | {
      allowed: false;
      /** Until the key's window ends and requests are allowed again, ms (more than 0). */
      retryAfterMs: number;
      /**
       * True for the request that went over the budget first in this window (on this process, when
       * the counter is shared): callers log that one, not every request of a flood.
       */
      firstRefusal: boolean;
    };

export interface RateLimitCounter {
  /** Count one request of `key`, allowed while the key's window has room, refused otherwise. */
  take(key: string): Promise<RateLimitDecision>;
}

export interface RateLimitStore {
  /**
   * The counter of `window`. Counters of one name made by one store share their counts (and, on
   * Redis, with every other process's); the caller makes each once and keeps it.
   */
  rateLimitCounter(window: RateLimitWindow): RateLimitCounter;
}
