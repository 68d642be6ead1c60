/**
 * One bell (`newPost`) for one watcher, as the fan-out worker delivers it: divine's gate order
 * (reference §4.5) — allowlist, tokens, preference (category 34236), the video's `newPost`
 * coordinate record, the bell rate limit, the recipient claim — then the send, straight through
 * `deliverNotification` rather than the outbound queue, so a page is complete only once its sends
 * are. The claim (`dedup:{event}:{recipient}`) is what makes a page retry safe: a watcher already
 * delivered is skipped.
 */
import { deliverNotification, type DeliveryDeps, type OutboundNotification } from '../../delivery/deliver.ts';
import type { NostrEvent } from '../../nostr/event.ts';
import type { StorePort } from '../../store/port.ts';
import type { Logger } from '../../observability/logger.ts';
import { typeEnabled } from '../content.ts';
import type { NotificationCopy } from '../copy.ts';
import { buildSocialPayload } from '../payload.ts';
import { bellDelivery, bellRateLimited, type BellVideo } from './rules.ts';

export interface BellRecipientDeps {
  store: StorePort;
  delivery: DeliveryDeps;
  /** Recipient allowlist; empty means everyone. */
  allowedPubkeys: ReadonlySet<string>;
  defaultPreferenceKinds: readonly number[];
  processedEventTtlSecs: number;
  /** Life of a bell's claim while its send is in flight ({@link inFlightClaimSecs}). */
  inFlightClaimSecs: number;
  /** `service.new_post_rate_limit_secs`. */
  rateLimitSecs: number;
  /** `service.video_coordinate_dedup_ttl_secs`. */
  videoRecordTtlSecs: number;
  logger: Logger;
}

/**
 * What became of one watcher; also the `outcome` label of `push_content_recipients_total` for
 * type `newPost`. `retryable`: every device failed retryably, the claim was released, the page
 * should be tried again.
 */
export type BellOutcome =
  | 'not_allowlisted'
  | 'no_tokens'
  | 'preference_disabled'
  | 'already_notified'
  | 'rate_limited'
  | 'claimed'
  | 'delivered'
  | 'failed'
  | 'retryable';

export interface BellResult {
  outcome: BellOutcome;
  /** For `retryable`: the longest Retry-After a provider asked for, in seconds. */
  retryAfterSecs?: number;
}

/**
 * How long a bell's claim lives while its send is in flight: half the page lease. Once the send has
 * an outcome the claim is extended to the processed-event TTL; a worker killed mid-send leaves
 * claims that expire before its page's lease does, so the retried page sends those watchers again
 * (at most twice, if the killed send had reached the provider) instead of skipping them as
 * claimed. A page must therefore finish within half its lease, which the lease guidance of
 * `ceil(page_size / concurrency) × 45 s` plus headroom leaves room for.
 */
export function inFlightClaimSecs(leaseSecs: number): number {
  return Math.max(1, Math.floor(leaseSecs / 2));
}

/** The bell's text and sender name, resolved once per page. */
export type BellCopy = () => Promise<NotificationCopy & { senderName: string }>;

/** Every gate before the claim; a string when the watcher gets nothing. */
async function bellGates(deps: BellRecipientDeps, video: BellVideo, recipient: string): Promise<BellOutcome | null> {
  const { store } = deps;
  if (deps.allowedPubkeys.size > 0 && !deps.allowedPubkeys.has(recipient)) return 'not_allowlisted';
  if ((await store.listDevices(recipient)).length === 0) return 'no_tokens';
  if (!(await typeEnabled(store, deps.defaultPreferenceKinds, recipient, 'newPost'))) return 'preference_disabled';
  if (await store.hasVideoRecord({ type: 'newPost', owner: video.owner, dTag: video.dTag, recipient })) return 'already_notified';
  if (await bellRateLimited(store, video, recipient, deps.videoRecordTtlSecs, deps.logger)) return 'rate_limited';
  return null;
}

/**
 * Deliver the bell of `event` (a kind 34236 with a `d` tag) to `recipient`. Store errors before
 * the send propagate (the claim, if taken, is released first); provider failures are outcomes.
 */
export async function deliverBell(deps: BellRecipientDeps, event: NostrEvent, video: BellVideo, recipient: string, copy: BellCopy): Promise<BellResult> {
  const stopped = await bellGates(deps, video, recipient);
  if (stopped !== null) return { outcome: stopped };
  const claim = await deps.store.claimRecipientDelivery(event.id, recipient, deps.inFlightClaimSecs);
  if (!claim) return { outcome: 'claimed' };

  let delivered: number;
  let retryAfterSecs: number | null;
  let devices: number;
  try {
    const text = await copy();
    const message = buildSocialPayload({ type: 'newPost', event, recipient, senderName: text.senderName, copy: { title: text.title, body: text.body } });
    const notification: OutboundNotification = {
      eventId: event.id,
      recipient,
      type: 'newPost',
      message,
      claim,
      eventCreatedAt: event.created_at,
      ...bellDelivery(video, recipient, deps.rateLimitSecs),
    };
    ({ delivered, retryAfterSecs, devices } = await deliverNotification(deps.delivery, notification));
  } catch (err) {
    await deps.store.releaseRecipientDelivery(claim).catch(() => undefined);
    throw err;
  }
  // The devices went away between the gate and the send, or every device failed retryably: give
  // the claim back so a later page retry (or replay) can still reach this watcher.
  if (devices === 0) {
    await deps.store.releaseRecipientDelivery(claim);
    return { outcome: 'no_tokens' };
  }
  if (retryAfterSecs !== null) {
    await deps.store.releaseRecipientDelivery(claim);
    return { outcome: 'retryable', retryAfterSecs };
  }
  // Delivered, or failed for good: the claim now holds for the processed-event TTL, as any claim.
  if (!(await deps.store.extendRecipientDelivery(claim, deps.processedEventTtlSecs))) {
    deps.logger.warn({ eventId: event.id, recipient }, 'a bell claim expired while its send was in flight; a page retry may send it again');
  }
  return { outcome: delivered > 0 ? 'delivered' : 'failed' };
}
