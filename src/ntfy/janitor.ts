/**
 * The janitor's part of the ntfy server: delete expired messages every `expiry_interval_secs`,
 * in bounded batches until the backlog is gone. Readers already skip expired messages, so a late
 * or failed pass only costs space.
 */
import type { StorePort } from '../store/port.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { sleep } from '../util/async.ts';

/** Messages one store call deletes at most. */
export const EXPIRY_BATCH_SIZE = 1000;

/** One pass: delete batches until a batch comes back short. Returns how many were deleted. */
export async function expireNtfyMessagesOnce(store: StorePort, metrics: Metrics, signal?: AbortSignal): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await store.expireNtfyMessages(EXPIRY_BATCH_SIZE);
    total += deleted;
    if (deleted > 0) metrics.ntfyExpired.inc(deleted);
    if (deleted < EXPIRY_BATCH_SIZE || signal?.aborted) return total;
  }
}

/** The janitor task: a pass now, then one every `intervalMs`, until `signal` aborts. */
export async function runNtfyExpiry(
  deps: { store: StorePort; metrics: Metrics; logger: Logger; intervalMs: number },
  signal: AbortSignal,
): Promise<void> {
  const log = deps.logger.child({ role: 'janitor', task: 'ntfy_expiry' });
  while (!signal.aborted) {
    try {
      const deleted = await expireNtfyMessagesOnce(deps.store, deps.metrics, signal);
      if (deleted > 0) log.debug({ deleted }, 'expired ntfy messages deleted');
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'ntfy expiry pass failed; trying again next interval');
    }
    await sleep(deps.intervalMs, signal).catch(() => undefined);
  }
}
