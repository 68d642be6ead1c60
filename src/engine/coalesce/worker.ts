/**
 * The coalescing flush worker (reference §8.6 `run_coalesce_flush`): a leased outbox consumer that
 * runs in the `scheduler` role of every replica. Replicas share nothing but the store: the claim
 * script hands each due group to one of them under a lease token, and a crashed or stuck flush is
 * recovered by lease expiry (possibly sending the summary twice — an accepted loss — never zero
 * times).
 */
import type { GroupClaim } from '../../store/port-coalesce.ts';
import { FlushCancelled, flushGroup, type FlushDeps, type FlushOutcome } from './flush.ts';
import { sleep } from '../../util/async.ts';

/** The supervisor task name, which is also its `/health` flag (divine's name). */
export const COALESCE_FLUSH_TASK = 'coalesce_flush';

/** After a store error, the worker waits this many poll intervals before claiming again. */
const STORE_ERROR_BACKOFF_POLLS = 4;

/**
 * Claim and flush due groups until `signal` aborts. Each iteration samples
 * `push_coalesce_oldest_due_age_seconds`, reconciles and claims one group (counting dropped
 * groups), and flushes it under the flush timeout. Store errors are logged and retried: the task
 * only ends at shutdown.
 */
export async function runCoalesceFlush(deps: FlushDeps, signal: AbortSignal): Promise<void> {
  const { store, metrics, settings } = deps;
  const log = deps.logger;
  while (!signal.aborted) {
    let claim: GroupClaim | null;
    let dropped: number;
    try {
      metrics.coalesceOldestDueAge.set(await store.oldestCoalesceDueAgeSecs());
      const result = await store.claimDueCoalesceGroup(settings.leaseSecs);
      if (result.expiredDropped > 0) {
        metrics.coalesceSkipped.inc({ reason: 'expired' }, result.expiredDropped);
        log.warn({ groups: result.expiredDropped }, 'coalescing groups past their lifetime dropped at lease recovery');
      }
      if (result.danglingDropped > 0) metrics.coalesceSkipped.inc({ reason: 'dangling_due' }, result.danglingDropped);
      claim = result.claim;
      dropped = result.expiredDropped + result.danglingDropped;
    } catch (err) {
      log.error({ err: (err as Error).message }, 'coalescing claim failed; backing off');
      await sleep(settings.pollMs * STORE_ERROR_BACKOFF_POLLS, signal).catch(() => undefined);
      continue;
    }
    if (claim) await flushClaimed(deps, claim, signal);
    // Dropping entries may have left more behind them: look again at once.
    else if (dropped === 0) await sleep(settings.pollMs, signal).catch(() => undefined);
  }
}

const TIMED_OUT = Symbol('timed out');

/**
 * One flush under the timeout. On timeout the lease is left in place (the work comes back when it
 * expires); on shutdown the group is given back at once; on an error it is requeued after
 * `coalesce_retry_secs`.
 */
export async function flushClaimed(deps: FlushDeps, claim: GroupClaim, shutdown: AbortSignal): Promise<FlushOutcome | null> {
  const { store, metrics, settings } = deps;
  const log = deps.logger.child({ groupId: claim.groupId });
  const controller = new AbortController();
  const onShutdown = (): void => controller.abort();
  shutdown.addEventListener('abort', onShutdown, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve(TIMED_OUT);
    }, settings.flushTimeoutMs);
  });
  const flushing = flushGroup(deps, claim, controller.signal);
  // After a timeout the flush runs on alone; whatever it ends with is logged, never thrown.
  flushing.catch((err: unknown) => {
    if (!(err instanceof FlushCancelled)) log.debug({ err: (err as Error).message }, 'abandoned coalescing flush failed');
  });
  try {
    const outcome = await Promise.race([flushing, timeout]);
    if (outcome === TIMED_OUT) {
      metrics.coalesceFlushFailures.inc({ reason: 'timeout' });
      log.warn({ timeoutMs: settings.flushTimeoutMs }, 'coalescing flush timed out; its lease will return the group');
      return null;
    }
    log.debug({ outcome }, 'coalescing group flushed');
    return outcome;
  } catch (err) {
    if (err instanceof FlushCancelled && shutdown.aborted) {
      await store.completeCoalesceGroup(claim, 0).catch((releaseErr: unknown) => {
        log.warn({ err: (releaseErr as Error).message }, 'could not give a coalescing group back at shutdown; its lease will');
      });
      return null;
    }
    metrics.coalesceFlushFailures.inc({ reason: 'error' });
    log.warn({ err: (err as Error).message }, 'coalescing flush failed; requeued');
    try {
      if ((await store.completeCoalesceGroup(claim, settings.retrySecs)) === 'expired') metrics.coalesceSkipped.inc({ reason: 'expired' });
    } catch (requeueErr) {
      log.warn({ err: (requeueErr as Error).message }, 'could not requeue a failed coalescing flush; its lease will return it');
    }
    return null;
  } finally {
    clearTimeout(timer);
    shutdown.removeEventListener('abort', onShutdown);
  }
}
