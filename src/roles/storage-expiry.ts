/**
 * The janitor's storage expiry (issue 35): what an anonymous client can make the service store is
 * forgotten once idle, in pages, on every store.
 *
 * - Inbox users with no device and no request for `inbox.idle_user_ttl_days` (30) are forgotten
 *   with their alert words and counters (`forgetIdleInboxUsers`), per app.
 * - NIP-9a callback URLs that received nothing for `nip9a.receiver.idle_callback_ttl_days` (90)
 *   are deleted (`forgetIdleNip9aCallbacks`), once per process (the receiver serves the default app).
 *
 * Once at start, then every `cleanup.interval_secs` (a day by default, like the stale-token
 * sweep); each sweep runs pages of {@link STORAGE_EXPIRY_PAGE_SIZE} until a page comes back short.
 * Replicas may sweep at once: every step re-checks its candidate, so two sweeps forget a user once.
 */
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { StorePort } from '../store/port.ts';
import type { IdleSweepPage } from '../store/port-inbox.ts';
import { sleep } from '../util/async.ts';

export const TASK_STORAGE_EXPIRY = 'storage_expiry';

/** Candidates per store call: each is a few store steps, so a page is a few hundred milliseconds of store work at most. */
export const STORAGE_EXPIRY_PAGE_SIZE = 500;

const DAY_MS = 86_400_000;

export interface StorageExpiryDeps {
  store: Pick<StorePort, 'forgetIdleInboxUsers' | 'forgetIdleNip9aCallbacks' | 'clock'>;
  /** `inbox.idle_user_ttl_days`. */
  idleUserTtlDays: number;
  /** `nip9a.receiver.idle_callback_ttl_days`; null where this task does not sweep callbacks (an app other than the default). */
  idleCallbackTtlDays: number | null;
  intervalMs: number;
  metrics: Metrics;
  logger: Logger;
}

/** Every page of one idle sweep; the number removed. */
async function sweepAll(sweep: (idleBeforeMs: number, max: number) => Promise<IdleSweepPage>, idleBeforeMs: number): Promise<number> {
  let removed = 0;
  for (;;) {
    const page = await sweep(idleBeforeMs, STORAGE_EXPIRY_PAGE_SIZE);
    removed += page.removed;
    if (page.examined < STORAGE_EXPIRY_PAGE_SIZE) return removed;
  }
}

/** One pass of both sweeps, as of the store clock now. */
export async function expireIdleStorage(deps: StorageExpiryDeps): Promise<{ inboxUsers: number; callbacks: number }> {
  const nowMs = deps.store.clock.nowMs();
  const inboxUsers = await sweepAll((before, max) => deps.store.forgetIdleInboxUsers(before, max), nowMs - deps.idleUserTtlDays * DAY_MS);
  const callbacks =
    deps.idleCallbackTtlDays === null
      ? 0
      : await sweepAll((before, max) => deps.store.forgetIdleNip9aCallbacks(before, max), nowMs - deps.idleCallbackTtlDays * DAY_MS);
  return { inboxUsers, callbacks };
}

export async function runStorageExpiry(deps: StorageExpiryDeps, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    try {
      const { inboxUsers, callbacks } = await expireIdleStorage(deps);
      if (inboxUsers > 0) deps.metrics.storageExpired.inc({ kind: 'inbox_user' }, inboxUsers);
      if (callbacks > 0) deps.metrics.storageExpired.inc({ kind: 'nip9a_callback' }, callbacks);
      deps.logger.info({ inboxUsers, callbacks }, 'idle storage expired');
    } catch (err) {
      deps.logger.error({ err: (err as Error).message }, 'idle storage sweep failed');
    }
    await sleep(deps.intervalMs, signal).catch(() => undefined);
  }
}
