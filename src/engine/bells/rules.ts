/**
 * The per-recipient rules of bells (`newPost`, category 34236; seed 000, reference §4.5 and §9.3)
 * that both bell paths share: the fan-out worker's pages, and a muted video mention that falls
 * back to a bell in the content handler's preference gate. A leaf module (it imports nothing of
 * the engine) so `content.ts` can use it without an import cycle.
 *
 * - Coordinate records: a delivered or rate-limited bell writes only its own (`newPost`) record,
 *   since "X posted a vine" says nothing about being mentioned; a delivered mention writes both
 *   (see `satisfiedVideoRecords`), so a later edit dropping the `p` tag does not bell them.
 * - Rate limit: one bell per (subscriber, creator) per `new_post_rate_limit_secs`, checked before
 *   the claim and opened only by a delivered push (`OutboundNotification.rateWindow`), so a failed
 *   send does not use up the hour. Two replicas may both pass the check and double-send: accepted.
 * - A rate-limited bell still writes its coordinate record: the video was deliberately dropped for
 *   that watcher, and an edit of it must not be announced as a new post later.
 */
import type { Logger } from '../../observability/logger.ts';
import type { StorePort } from '../../store/port.ts';
import type { OutboundNotification } from '../../notification/types.ts';

/** The coordinate records a delivered or rate-limited bell writes. */
export const BELL_RECORD_TYPES: readonly string[] = ['newPost'];

/** A video by its coordinate (author and `d` tag). */
export interface BellVideo {
  owner: string;
  dTag: string;
}

/**
 * Whether `recipient` watches `author` (`SISMEMBER notify_watchers:{author}`). The bell fallback
 * asks this of a muted mention; a read error counts as "not watching", as divine does, so a store
 * blip can only drop a fallback, never fail the mention event.
 */
export async function watchesAuthor(store: StorePort, author: string, recipient: string, logger: Logger): Promise<boolean> {
  try {
    return await store.isNotifyWatcher(author, recipient);
  } catch (err) {
    logger.warn({ author, recipient, err: (err as Error).message }, 'notify-watcher lookup failed; no bell fallback');
    return false;
  }
}

/**
 * The bell rate gate: true when a bell from the video's author to `recipient` is inside the rate
 * window, in which case the bell's coordinate record is written (a failure to write it is logged;
 * the bell is suppressed either way).
 */
export async function bellRateLimited(
  store: StorePort,
  video: BellVideo,
  recipient: string,
  videoRecordTtlSecs: number,
  logger: Logger,
): Promise<boolean> {
  if (!(await store.isNewPostRateLimited(recipient, video.owner))) return false;
  try {
    await store.writeVideoRecords({ owner: video.owner, dTag: video.dTag, recipient }, [...BELL_RECORD_TYPES], videoRecordTtlSecs);
  } catch (err) {
    logger.warn({ recipient, owner: video.owner, err: (err as Error).message }, 'could not record a rate-limited bell');
  }
  return true;
}

/** What a bell's outbound notification carries for delivery: its record types and the rate window to open. */
export function bellDelivery(
  video: BellVideo,
  recipient: string,
  rateLimitSecs: number,
): Required<Pick<OutboundNotification, 'video' | 'rateWindow'>> {
  return {
    video: { owner: video.owner, dTag: video.dTag, recordTypes: [...BELL_RECORD_TYPES] },
    rateWindow: { subscriber: recipient, creator: video.owner, ttlSecs: rateLimitSecs },
  };
}
