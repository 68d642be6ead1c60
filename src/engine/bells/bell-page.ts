/**
 * One page of bells (`newPost`) for one video, as the fan-out worker queues it. The gates are
 * divine's, in its order (reference §4.5): allowlist, tokens, preference (category 34236), the
 * video's `newPost` coordinate record, the bell rate limit, the recipient claim; then the bell is
 * queued on the outbound queue (normal lane), and the delivery stage sends it and does the
 * bookkeeping of §4.5 step 11 (token activity, the `newPost` record, the rate window: see
 * `bellDelivery` and `deliverNotification`) like every other push. The outbound queue is the only
 * way to a transport.
 *
 * The store work is batched per page (DESIGN §5: one pipeline or one transaction per step): one
 * read of every watcher's gate state, then claims and queue items in steps of
 * {@link BELL_ENQUEUE_BATCH}, each claim taken and its delivery queued in one atomic store step
 * (`claimAndEnqueueDeliveries`, as the social path does). A claim is therefore never held without
 * its delivery queued: a worker killed mid-page leaves every claimed watcher's bell queued, and
 * the retried page skips them as claimed. Nobody is lost and nobody is belled twice by the page.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../observability/logger.ts';
import type { Metrics } from '../../observability/metrics.ts';
import type { NostrEvent } from '../../nostr/event.ts';
import type { BellWatcherState } from '../../store/port-bells.ts';
import type { StorePort } from '../../store/port.ts';
import { PREFERENCE_CATEGORY } from '../content.ts';
import type { NotificationCopy } from '../copy.ts';
import type { OutboundQueue } from '../outbound-queue.ts';
import type { BellVideo } from './rules.ts';
import { countRouted } from '../inbox/count.ts';
import type { BellItemRef } from '../../notification/bell-item.ts';
import { bellItemOf } from './bell-items.ts';

export interface BellRecipientDeps {
  store: StorePort;
  /** Where bells go: the outbound queue (the delivery stage sends them). */
  outbound: OutboundQueue;
  /** Recipient allowlist; empty means everyone. */
  allowedPubkeys: ReadonlySet<string>;
  defaultPreferenceKinds: readonly number[];
  /** Life of a bell's recipient claim (`service.processed_event_ttl_secs`). */
  processedEventTtlSecs: number;
  /** `service.new_post_rate_limit_secs`. */
  rateLimitSecs: number;
  /** `service.video_coordinate_dedup_ttl_secs`. */
  videoRecordTtlSecs: number;
  /** Bells claimed and queued per store step; default {@link BELL_ENQUEUE_BATCH}. */
  enqueueBatchSize?: number;
  /** Count each watcher's new post into the inbox counters (issue 13); default true. */
  countInbox?: boolean;
  logger: Logger;
  metrics: Metrics;
}

/**
 * What became of one watcher at this stage: the `outcome` label of
 * `push_content_recipients_total` for type `newPost` (`queued`: claimed and handed to the
 * delivery stage, whose own metrics say what the provider answered).
 */
export type BellOutcome =
  'not_allowlisted' | 'no_tokens' | 'preference_disabled' | 'already_notified' | 'rate_limited' | 'claimed' | 'queued';

/** The bell's text and sender name, resolved once per page. */
export type BellCopy = () => Promise<NotificationCopy & { senderName: string }>;

export interface BellPageResult {
  /** Shutdown began before every eligible watcher was claimed and queued (the rest wait for the page's return). */
  cancelled: boolean;
  /** Bells queued by this call. */
  queued: number;
}

/**
 * Bells claimed and queued per store step: one Redis script or one SQLite transaction of this
 * many entries is a few milliseconds, short enough not to hold the store from other writers, and
 * large enough that a page of 5,000 watchers is five steps.
 */
export const BELL_ENQUEUE_BATCH = 1000;

/** The gates before the claim, from the batched state; null when the watcher passes them. */
function gate(deps: BellRecipientDeps, state: BellWatcherState): BellOutcome | null {
  if (deps.allowedPubkeys.size > 0 && !deps.allowedPubkeys.has(state.watcher)) return 'not_allowlisted';
  if (state.devices.length === 0) return 'no_tokens';
  if (!(state.preferenceKinds ?? deps.defaultPreferenceKinds).includes(PREFERENCE_CATEGORY.newPost)) return 'preference_disabled';
  if (state.alreadyNotified) return 'already_notified';
  if (state.rateLimited) return 'rate_limited';
  return null;
}

/**
 * Bell `targets` (watchers of `event`'s author, mentioned users already removed) for one page:
 * gate them, then claim and queue the bells of those who pass. Store failures propagate (the
 * page is retried; bells queued before the failure hold their claims and are skipped then).
 */
export async function enqueueBellPage(
  deps: BellRecipientDeps,
  event: NostrEvent,
  video: BellVideo,
  targets: readonly string[],
  copy: BellCopy,
  signal: AbortSignal,
): Promise<BellPageResult> {
  const result: BellPageResult = { cancelled: false, queued: 0 };
  if (targets.length === 0) return result;
  const count = (outcome: BellOutcome, n = 1) => {
    if (n > 0) deps.metrics.contentRecipients.inc({ type: 'newPost', outcome }, n);
  };

  // The inbox counters (issue 13): every known watcher counts a new post once, pushed or not.
  if (deps.countInbox !== false)
    await countRouted(
      deps,
      event,
      targets.map((pubkey) => ({ pubkey, type: 'newPost' as const })),
    );
  const states = await deps.store.readBellWatchers(video, targets);
  const eligible: BellWatcherState[] = [];
  const rateLimited: string[] = [];
  for (const state of states) {
    const stopped = gate(deps, state);
    if (stopped === null) eligible.push(state);
    else count(stopped);
    if (stopped === 'rate_limited') rateLimited.push(state.watcher);
  }
  if (rateLimited.length > 0) {
    // A rate-limited bell is decided for good: its `newPost` record keeps a later page or replay from asking again.
    await deps.store.recordBellBatch({
      video,
      delivered: [],
      failed: [],
      released: [],
      rateLimited,
      claimTtlSecs: deps.processedEventTtlSecs,
      rateLimitSecs: deps.rateLimitSecs,
      videoRecordTtlSecs: deps.videoRecordTtlSecs,
    });
  }
  if (eligible.length === 0) return result;

  const text = await copy();
  const step = Math.max(1, deps.enqueueBatchSize ?? BELL_ENQUEUE_BATCH);
  for (let start = 0; start < eligible.length; start += step) {
    if (signal.aborted) {
      result.cancelled = true;
      break;
    }
    // References, not whole notifications: the delivery stage rebuilds each (`bell-items.ts`).
    const bells: BellItemRef[] = eligible.slice(start, start + step).map((state) => ({
      bellItem: bellItemOf(
        event,
        video.dTag,
        text,
        { recipient: state.watcher, owner: randomUUID(), devices: state.devices },
        deps.rateLimitSecs,
      ),
    }));
    const taken = await deps.outbound.claimAndEnqueue(bells, deps.processedEventTtlSecs);
    const queued = taken.filter(Boolean).length;
    result.queued += queued;
    count('queued', queued);
    count('claimed', taken.length - queued);
  }
  return result;
}
