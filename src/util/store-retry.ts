/**
 * How a producer asks the store again, in place, after a step that failed (issue 42): a replica
 * acknowledgement that timed out, a failover under way, a lost answer. Such a failure is usually
 * over within a second, and the steps asked again are idempotent (an enqueue by its id), so a
 * retry after a step that was applied but reported failed takes nothing twice. In place means
 * the producer keeps what it holds (a relay socket and its subscriptions, a matched event),
 * where giving up would cost a reconnect with its growing backoff, or the work itself.
 *
 * The delays, ms (~3.9 s in all); the producer gives up (and says so) only after the last.
 */
export const STORE_RETRY_DELAYS_MS: readonly number[] = [100, 250, 500, 1_000, 2_000];
