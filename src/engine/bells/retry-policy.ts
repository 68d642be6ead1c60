/**
 * When a failed fan-out page is tried again (reference §9.2). Pure functions, so the vectors of
 * divine's tests apply as they are.
 */
import type { FanoutJob } from '../../store/port-bells.ts';

/** Delivery attempts of one page, the first included, before it is given up. */
export const MAX_FANOUT_ATTEMPTS = 12;
/** Ceiling of the exponential backoff (not of a provider's Retry-After, which stays a floor). */
export const FANOUT_BACKOFF_CAP_SECS = 300;
/** Doublings before the cap: base × 2^6 is already past five minutes for the default base of 5 s. */
const MAX_DOUBLINGS = 6;

/**
 * The delay before retry number `attempt` (1-based): `base · 2^(attempt−1)` capped at five
 * minutes, but never below `minDelaySecs` (a provider's Retry-After), even when that is longer.
 *
 * @example fanoutRetryDelaySecs(5, 2, 0) // 10
 * @example fanoutRetryDelaySecs(5, 1, 3600) // 3600
 */
export function fanoutRetryDelaySecs(baseSecs: number, attempt: number, minDelaySecs: number): number {
  const doublings = Math.min(Math.max(attempt - 1, 0), MAX_DOUBLINGS);
  return Math.max(Math.min(baseSecs * 2 ** doublings, FANOUT_BACKOFF_CAP_SECS), minDelaySecs);
}

/** A delay bounded by what is left of the job's lifetime (never negative). */
export function clampToLifetime(delaySecs: number, expiresAt: number, nowSecs: number): number {
  return Math.max(0, Math.min(delaySecs, expiresAt - nowSecs));
}

export type FanoutRetryDecision =
  /** Try the page again: `job` is the page with its attempt count raised, due after `delaySecs`. */
  | { kind: 'retry'; job: FanoutJob; delaySecs: number }
  /**
   * The page used its attempts. A known successor is queued after `delaySecs` (the backoff the
   * page would have had next), so a provider-wide outage does not race through the rest of the chain.
   */
  | { kind: 'exhausted'; delaySecs: number };

/** What to do after a failed delivery attempt of `job` (`minDelaySecs`: the provider's Retry-After, or 0). */
export function nextFanoutRetry(job: FanoutJob, baseSecs: number, minDelaySecs: number, nowSecs: number): FanoutRetryDecision {
  if (job.attempt + 1 >= MAX_FANOUT_ATTEMPTS) {
    return {
      kind: 'exhausted',
      delaySecs: clampToLifetime(fanoutRetryDelaySecs(baseSecs, MAX_FANOUT_ATTEMPTS, minDelaySecs), job.expiresAt, nowSecs),
    };
  }
  const attempt = job.attempt + 1;
  return {
    kind: 'retry',
    job: { ...job, attempt },
    delaySecs: clampToLifetime(fanoutRetryDelaySecs(baseSecs, attempt, minDelaySecs), job.expiresAt, nowSecs),
  };
}

/** Whether the job's lifetime is over (`expires_at` itself is expired). */
export function isFanoutJobExpired(job: FanoutJob, nowSecs: number): boolean {
  return nowSecs >= job.expiresAt;
}
