/** First reconnect delay ceiling (1 s). */
export const RECONNECT_INITIAL_BACKOFF_MS = 1_000;
/** Largest reconnect delay ceiling (60 s). */
export const RECONNECT_MAX_BACKOFF_MS = 60_000;

export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  /** Uniform in [0, 1); Math.random by default. */
  random: () => number;
}

export const DEFAULT_BACKOFF_POLICY: Readonly<BackoffPolicy> = Object.freeze({
  initialMs: RECONNECT_INITIAL_BACKOFF_MS,
  maxMs: RECONNECT_MAX_BACKOFF_MS,
  random: Math.random,
});

/**
 * Exponential backoff with full jitter: a delay uniform in [0, min(max, initial·2^attempt)).
 * Full jitter spreads the reconnects of many replicas after a relay restart instead of having
 * them arrive in waves. `attempt` counts consecutive failures from 0.
 */
export function reconnectDelayMs(attempt: number, policy: Readonly<BackoffPolicy> = DEFAULT_BACKOFF_POLICY): number {
  // Capping the exponent keeps 2^attempt finite for any attempt count.
  const exponent = Math.min(Math.max(0, attempt), 30);
  const ceiling = Math.min(policy.maxMs, policy.initialMs * 2 ** exponent);
  return Math.floor(policy.random() * ceiling);
}
