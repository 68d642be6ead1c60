/**
 * The new-post fan-out worker (divine's `run_new_post_fanout`, reference §9.2): the scheduler's
 * `new_post_fanout` task. It leases one page job at a time, reads that page of the author's
 * watchers, claims and queues their bells on the outbound queue (`bell-page.ts`; the delivery
 * stage sends them), and then completes the page, which atomically removes it and queues the next
 * cursor. The guarantees below are over "queued": a page is done once its bells are queued, and
 * the outbound queue's own lease, retry and dead letters take it from there.
 *
 * - A crash leaves the page leased; it returns after `new_post_fanout_lease_secs`. Watchers
 *   whose bell was queued hold their recipient claims (taken in the same store step as the
 *   queueing), so the retried page skips them; the others are claimed and queued then.
 * - A failed page (a store error) is retried with backoff ({@link nextFanoutRetry}); after 12
 *   attempts it is dropped, but its successor, when known, is queued with the inherited delay so
 *   one poison page does not end the whole walk.
 * - Graceful shutdown stops between queueing steps and releases the page at once (due now) for
 *   the next worker.
 * - A job past its `expires_at` (the processed-event TTL) is discarded.
 */
import type { Logger } from '../../observability/logger.ts';
import { isEventRejection, parseEvent, type NostrEvent } from '../../nostr/event.ts';
import { VIDEO } from '../../nostr/kinds.ts';
import { dTag, pTagPubkeys } from '../../nostr/tags.ts';
import { WATCHER_WALK_START, type ClaimedFanoutJob, type FanoutJob, type WatcherPage } from '../../store/port-bells.ts';
import { notificationCopy } from '../copy.ts';
import { senderNameOrFallback, type ProfileResolver } from '../profiles.ts';
import { enqueueBellPage, type BellCopy, type BellPageResult, type BellRecipientDeps } from './bell-page.ts';
import { isFanoutJobExpired, nextFanoutRetry } from './retry-policy.ts';
import type { BellVideo } from './rules.ts';
import { sleep } from '../../util/async.ts';

export interface NewPostFanoutDeps extends BellRecipientDeps {
  profiles: ProfileResolver;
  /** `service.new_post_fanout_page_size`: watchers read per page (a hint to SSCAN's COUNT). */
  pageSize: number;
  /** `service.new_post_fanout_lease_secs`. */
  leaseSecs: number;
  /** `service.new_post_fanout_retry_secs`: the backoff base. */
  retrySecs: number;
  /** `service.new_post_fanout_poll_millis`: idle wait between claims. */
  pollMs: number;
}

/** Why a page is retried: the `reason` label of `push_new_post_fanout_retries_total`. */
export type FanoutRetryReason = 'delivery' | 'watcher_page_read' | 'lifetime' | 'worker_error';

/** What became of one claimed page: the `outcome` label of `push_new_post_fanout_pages_total`. */
export type FanoutPageOutcome = 'completed' | 'retried' | 'released' | 'discarded';

const MS_PER_SECOND = 1000;

/** The worker loop; returns once `signal` aborts. */
export async function runNewPostFanout(deps: NewPostFanoutDeps, signal: AbortSignal): Promise<void> {
  const log = deps.logger.child({ task: 'new_post_fanout' });
  while (!signal.aborted) {
    let claimed: ClaimedFanoutJob | null;
    try {
      claimed = await deps.store.claimFanoutJob(deps.leaseSecs * MS_PER_SECOND);
    } catch (err) {
      log.error({ err: (err as Error).message }, 'fan-out claim failed; backing off');
      await sleep(deps.pollMs * 4, signal).catch(() => undefined);
      continue;
    }
    if (!claimed) {
      await sleep(deps.pollMs, signal).catch(() => undefined);
      continue;
    }
    await runClaimedJob(deps, claimed, signal, log);
  }
}

/** Process one claimed job, preserving it (due again after the base delay) when processing itself fails. */
export async function runClaimedJob(
  deps: NewPostFanoutDeps,
  claimed: ClaimedFanoutJob,
  signal: AbortSignal,
  log: Logger = deps.logger,
): Promise<FanoutPageOutcome | null> {
  try {
    const outcome = await processFanoutJob(deps, claimed, signal);
    deps.metrics.newPostFanoutPages.inc({ outcome });
    return outcome;
  } catch (err) {
    // Keep the member as it is (its attempt count is not advanced): a store error may have hit a
    // retry swap that did or did not happen, and the known member is the one that surely exists.
    log.warn({ err: (err as Error).message }, 'fan-out page failed; preserving it for a later attempt');
    deps.metrics.newPostFanoutRetries.inc({ reason: 'worker_error', outcome: 'preserved' });
    await deps.store.rescoreFanoutJob(claimed, deps.retrySecs * MS_PER_SECOND).catch((rescoreErr: unknown) => {
      log.error({ err: (rescoreErr as Error).message }, 'could not preserve the fan-out page; its lease will return it');
    });
    return null;
  }
}

/** The video of a job, or null when the stored job does not hold a usable kind 34236. */
function jobVideo(job: FanoutJob): NostrEvent | null {
  let raw: unknown;
  try {
    raw = JSON.parse(job.eventJson);
  } catch {
    return null;
  }
  const event = parseEvent(raw);
  if (isEventRejection(event) || event.kind !== VIDEO) return null;
  return event;
}

/**
 * One page of one job. Throws only for store failures around the queue itself (the caller
 * preserves the job); everything else ends in a queue transition.
 */
export async function processFanoutJob(
  deps: NewPostFanoutDeps,
  claimed: ClaimedFanoutJob,
  signal: AbortSignal,
): Promise<FanoutPageOutcome> {
  const { store } = deps;
  const job = claimed.job;
  const event = job ? jobVideo(job) : null;
  if (!job || !event || dTag(event) === '') {
    deps.logger.warn({ member: claimed.member.slice(0, 80) }, 'discarding a fan-out job that holds no usable video');
    await store.completeFanoutJob(claimed, null);
    return 'discarded';
  }
  const log = deps.logger.child({ eventId: event.id, author: event.pubkey, cursor: job.cursor });
  const nowSecs = Math.floor(store.clock.nowMs() / MS_PER_SECOND);
  if (isFanoutJobExpired(job, nowSecs)) {
    log.info({ expiresAt: job.expiresAt }, 'fan-out job outlived the processed-event TTL; discarding it');
    deps.metrics.newPostFanoutRetries.inc({ reason: 'lifetime', outcome: 'expired' });
    await store.completeFanoutJob(claimed, null);
    return 'discarded';
  }
  if (signal.aborted) return release(deps, claimed);

  let page: WatcherPage;
  try {
    page = await store.notifyWatchersPage(event.pubkey, job.cursor, deps.pageSize);
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'watcher page read failed');
    return scheduleRetry(deps, claimed, job, 0, 'watcher_page_read', null);
  }

  // Mention wins on overlap: the mentioned watchers got (or will get) the more specific push.
  const excluded = new Set<string>([event.pubkey, ...pTagPubkeys(event)]);
  const targets = page.watchers.filter((watcher) => !excluded.has(watcher));
  const video: BellVideo = { owner: event.pubkey, dTag: dTag(event) };
  // Assigned inside senderName(): the assertion keeps tsc from narrowing it to its initial null.
  let resolvedName = null as Promise<string> | null;
  const senderName = (): Promise<string> =>
    job.senderName !== null ? Promise.resolve(job.senderName) : (resolvedName ??= senderNameOrFallback(deps.profiles, event.pubkey));
  const copy: BellCopy = async () => {
    const name = await senderName();
    return { ...notificationCopy('newPost', name), senderName: name };
  };

  let outcome: BellPageResult | null;
  try {
    outcome = await enqueueBellPage(deps, event, video, targets, copy, signal);
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'bell page failed to queue its bells');
    outcome = null;
  }
  const cancelled = outcome?.cancelled === true;
  const failed = outcome === null;

  const carriedName = resolvedName === null ? job.senderName : await resolvedName;
  const successor: FanoutJob | null =
    page.nextCursor === WATCHER_WALK_START ? null : { ...job, cursor: page.nextCursor, senderName: carriedName, attempt: 0 };
  if (cancelled) return release(deps, claimed);
  if (failed) return scheduleRetry(deps, claimed, { ...job, senderName: carriedName }, 0, 'delivery', successor);
  await store.completeFanoutJob(claimed, successor);
  log.debug({ watchers: page.watchers.length, queued: outcome?.queued ?? 0, next: page.nextCursor }, 'fan-out page completed');
  return 'completed';
}

/** Graceful shutdown: the page is due again at once, for whichever worker comes next. */
async function release(deps: NewPostFanoutDeps, claimed: ClaimedFanoutJob): Promise<FanoutPageOutcome> {
  await deps.store.rescoreFanoutJob(claimed, 0);
  return 'released';
}

/**
 * Retry the page after the backoff (with `minDelaySecs`, a provider's Retry-After, as a floor), or
 * give it up after its last attempt, queueing a known successor with the delay the page would
 * have had so a provider-wide outage does not race through the rest of the walk.
 */
async function scheduleRetry(
  deps: NewPostFanoutDeps,
  claimed: ClaimedFanoutJob,
  job: FanoutJob,
  minDelaySecs: number,
  reason: FanoutRetryReason,
  successor: FanoutJob | null,
): Promise<FanoutPageOutcome> {
  const nowSecs = Math.floor(deps.store.clock.nowMs() / MS_PER_SECOND);
  const decision = nextFanoutRetry(job, deps.retrySecs, minDelaySecs, nowSecs);
  if (decision.kind === 'retry') {
    await deps.store.retryFanoutJob(claimed, decision.job, decision.delaySecs * MS_PER_SECOND);
    deps.metrics.newPostFanoutRetries.inc({ reason, outcome: 'scheduled' });
    deps.logger.info({ reason, attempt: decision.job.attempt, delaySecs: decision.delaySecs }, 'fan-out page retry scheduled');
    return 'retried';
  }
  deps.metrics.newPostFanoutRetries.inc({ reason, outcome: 'exhausted' });
  deps.logger.warn({ reason, attempts: job.attempt + 1, successor: successor !== null }, 'fan-out page used its attempts; dropping it');
  if (successor) await deps.store.retryFanoutJob(claimed, successor, decision.delaySecs * MS_PER_SECOND);
  else await deps.store.completeFanoutJob(claimed, null);
  return 'discarded';
}
