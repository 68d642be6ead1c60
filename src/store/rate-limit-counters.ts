/**
 * The rate-limit counters of both adapters (port-rate-limits.ts), on `rate-limiter-flexible`:
 * `RateLimiterMemory` for the SQLite store (one process owns it, so its memory is the whole
 * truth), `RateLimiterRedis` for the Redis store (one key per window, shared by every replica).
 *
 * The Redis limiter is given a small client of ours instead of the ioredis client: its one
 * command (`rlflxIncr`, the window's `SET NX EX` + `INCRBY` + `PTTL`) is handed to the adapter's
 * {@link RateLimitIncrement}, which names the key (the adapter's key module) and counts a turn's
 * checks in one call of its own script (`redis/rate-limits.ts`, `redis/lua/rateLimitIncrMany-n.lua`),
 * called by SHA and listed with every other script.
 * What the library adds: the window arithmetic, and a per-process block of a key already over its
 * budget (`inMemoryBlockOnConsumed`), so a flood from one client costs one Redis call per window
 * and process, not one per request.
 *
 * A counter that decides locally (`decideLocally`, the receiver's per-owner limit) keeps its own
 * fixed window per key in a map instead ({@link locallyDecidedCounter}): the library's memory
 * store sets a timer for every new key, and there nearly every request is a new key. It counts in
 * Redis through the same {@link RateLimitIncrement}, every 100 ms.
 */
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger } from '../observability/logger.ts';
import type { RateLimitCounter, RateLimitDecision, RateLimitWindow } from './port-rate-limits.ts';

/** At most one warning a minute per counter while its store fails (every request would say the same). */
const STORE_ERROR_LOG_INTERVAL_MS = 60_000;

const ALLOWED: RateLimitDecision = Object.freeze({ allowed: true });

/**
 * Counts `points` requests of `key` (the caller's key: an address, a pubkey, an id) in the
 * counter's window, opening it when it is closed: `[consumed points, ms until the window ends]`.
 * The adapter knows the counter (its name and window) it was made for.
 */
export type RateLimitIncrement = (key: string, points: number) => Promise<[number, number]>;

function checkWindow(window: RateLimitWindow): void {
  if (!Number.isInteger(window.points) || window.points < 1) throw new RangeError(`rate limit ${window.name}: points must be 1 or more`);
  if (!Number.isInteger(window.windowSecs) || window.windowSecs < 1)
    throw new RangeError(`rate limit ${window.name}: windowSecs must be a whole number of seconds, 1 or more`);
}

/** The decision of a refusal the library reported. */
function refusal(window: RateLimitWindow, res: RateLimiterRes): RateLimitDecision {
  // A key without expiry cannot happen here (every window is set with EX); say a window then.
  const retryAfterMs = res.msBeforeNext > 0 ? res.msBeforeNext : window.windowSecs * 1000;
  // Blocked in memory (a flood past the first refusal) reports 0 consumed points.
  return { allowed: false, retryAfterMs, firstRefusal: res.consumedPoints === window.points + 1 };
}

/** A counter in this process's memory. */
export function memoryRateLimitCounter(window: RateLimitWindow): RateLimitCounter {
  checkWindow(window);
  const limiter = new RateLimiterMemory({ points: window.points, duration: window.windowSecs, keyPrefix: window.name });
  return {
    async take(key) {
      try {
        await limiter.consume(key);
        return ALLOWED;
      } catch (err) {
        if (err instanceof RateLimiterRes) return refusal(window, err);
        throw err;
      }
    },
  };
}

export interface SharedRateLimitCounterOptions {
  /** The window step of the adapter, made for this counter. */
  increment: RateLimitIncrement;
  /**
   * Warned (at most once a minute) when the store failed to answer; the request is then counted in
   * this process's memory instead (the same limit, per process), so a store outage neither opens
   * every limit nor refuses every request.
   */
  logger: Logger;
  /** The clock of a locally decided counter's own windows (tests); default `Date.now`. */
  nowMs?: () => number;
}

/** A counter in a shared store (Redis), falling back to process memory while the store fails. */
export function sharedRateLimitCounter(window: RateLimitWindow, options: SharedRateLimitCounterOptions): RateLimitCounter {
  checkWindow(window);
  let lastWarnedAtMs = -Infinity;
  const storeFailed = (err: Error): void => {
    const nowMs = Date.now();
    if (nowMs - lastWarnedAtMs < STORE_ERROR_LOG_INTERVAL_MS) return;
    lastWarnedAtMs = nowMs;
    options.logger.warn({ limit: window.name, err: err.message }, 'rate limit store failed; counting in this process until it answers');
  };
  if (window.decideLocally) return locallyDecidedCounter(window, options.increment, storeFailed, options.nowMs ?? Date.now);
  const fallback = memoryRateLimitCounter(window);
  const storeClient = {
    // The library's whole use of its client for `consume` (RateLimiterRedis._upsert): the key
    // (unprefixed: the adapter names it), the points, and the `[consumed, pttl]` answer. The
    // window is the counter's, which the adapter's step was made with.
    rlflxIncr: ([key, points]: string[]): Promise<[number, number]> => options.increment(key ?? '', Number(points)),
  };
  const limiter = new RateLimiterRedis({
    storeClient,
    keyPrefix: '',
    points: window.points,
    duration: window.windowSecs,
    // Once a key is over its budget, refuse it from memory until its window ends (no Redis call).
    inMemoryBlockOnConsumed: window.points + 1,
  });
  return {
    async take(key) {
      try {
        await limiter.consume(key);
        return ALLOWED;
      } catch (err) {
        if (err instanceof RateLimiterRes) return refusal(window, err);
        storeFailed(err as Error);
        return fallback.take(key);
      }
    },
  };
}

/**
 * Keys a locally decided counter holds at most: past it, expired windows are swept (at most once a
 * window), and while every held key is live a new key is counted in the shared store only. Each
 * entry is a few dozen bytes and lives a window.
 */
const MAX_LOCAL_KEYS = 100_000;

/**
 * How long a locally decided counter gathers its allowed requests before counting them in the
 * shared store, ms. One script call per counter and interval, each key's requests summed, instead
 * of a call (and its promises) per turn: on the receiver, where nearly every callback is another
 * owner's, that was the limits' whole cost (issue 35's pairs). The price is the bound a fleet
 * enforces: a replica learns of the others' requests up to this much later.
 */
export const SHARED_COUNT_INTERVAL_MS = 100;

/** Distinct keys gathered at most between two counts; past it, counted at once (memory stays bounded under a flood of keys). */
const MAX_PENDING_KEYS = 10_000;

/** One key's fixed window in this process: requests counted, and whether its refusal was said. */
interface LocalWindow {
  endsAtMs: number;
  consumed: number;
  refusalSaid: boolean;
}

/**
 * {@link RateLimitWindow.decideLocally}: this process's own fixed window per key decides at once
 * (a map entry, no timer and no library call: the receiver checks a new owner on nearly every
 * callback); every allowed request is also counted in the shared store, gathered for
 * {@link SHARED_COUNT_INTERVAL_MS} and summed per key, and a key the shared count finds over its
 * budget is refused from then until the shared window ends.
 */
function locallyDecidedCounter(
  window: RateLimitWindow,
  increment: RateLimitIncrement,
  storeFailed: (err: Error) => void,
  now: () => number,
): RateLimitCounter {
  const windowMs = window.windowSecs * 1000;
  const windows = new Map<string, LocalWindow>();
  let nextSweepAtMs = 0;
  /** The key's window now, opened when closed; undefined when the map is full of live windows. */
  const windowOf = (key: string, nowMs: number): LocalWindow | undefined => {
    const found = windows.get(key);
    if (found && found.endsAtMs > nowMs) return found;
    if (!found && windows.size >= MAX_LOCAL_KEYS) {
      if (nowMs < nextSweepAtMs) return undefined;
      nextSweepAtMs = nowMs + windowMs;
      for (const [held, { endsAtMs }] of windows) if (endsAtMs <= nowMs) windows.delete(held);
      if (windows.size >= MAX_LOCAL_KEYS) return undefined;
    }
    const opened = { endsAtMs: nowMs + windowMs, consumed: 0, refusalSaid: false };
    windows.set(key, opened);
    return opened;
  };
  /** The shared count's refusal: the key is spent here until the shared window ends. */
  const refuseUntil = (key: string, endsAtMs: number): void => {
    const held = windows.get(key);
    if (held) {
      held.consumed = Math.max(held.consumed, window.points);
      held.endsAtMs = Math.max(held.endsAtMs, endsAtMs);
    } else if (windows.size < MAX_LOCAL_KEYS) windows.set(key, { endsAtMs, consumed: window.points, refusalSaid: false });
  };
  let pending = new Map<string, number>();
  let countTimer: NodeJS.Timeout | undefined;
  const countPending = (): void => {
    if (countTimer) clearTimeout(countTimer);
    countTimer = undefined;
    const counted = pending;
    pending = new Map();
    for (const [key, points] of counted)
      increment(key, points).then(
        ([consumed, msLeft]) => {
          if (consumed > window.points) refuseUntil(key, now() + (msLeft > 0 ? msLeft : windowMs));
        },
        (err: unknown) => storeFailed(err as Error),
      );
  };
  return {
    take(key) {
      const nowMs = now();
      const local = windowOf(key, nowMs);
      if (local) {
        if (local.consumed >= window.points) {
          const firstRefusal = !local.refusalSaid;
          local.refusalSaid = true;
          return Promise.resolve({ allowed: false, retryAfterMs: Math.max(1, local.endsAtMs - nowMs), firstRefusal });
        }
        local.consumed += 1;
      }
      pending.set(key, (pending.get(key) ?? 0) + 1);
      if (pending.size >= MAX_PENDING_KEYS) countPending();
      // Unref'd: a pending count never holds a process open (a replica stopping loses at most an interval's count).
      else countTimer ??= setTimeout(countPending, SHARED_COUNT_INTERVAL_MS).unref();
      return ALLOWED_NOW;
    },
  };
}

/** The answer of every allowed locally decided request (one settled promise, not one per request). */
const ALLOWED_NOW: Promise<RateLimitDecision> = Promise.resolve(ALLOWED);
