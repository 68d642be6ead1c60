/**
 * A live kind 34236 (reference §9.1): the video's mentions first, inline, by the content handler;
 * then one durable fan-out job for the author's watchers, queued once per event id. The pages are
 * delivered by the scheduler's `new_post_fanout` worker, never on the engine's loop, so a creator
 * with 100,000 watchers does not hold up the next event.
 */
import type { NostrEvent } from '../../nostr/event.ts';
import { VIDEO } from '../../nostr/kinds.ts';
import { dTag } from '../../nostr/tags.ts';
import type { Logger } from '../../observability/logger.ts';
import { WATCHER_WALK_START, type FanoutJob } from '../../store/port-bells.ts';
import type { Clock, StorePort } from '../../store/port.ts';
import type { InboundEnvelope } from '../router.ts';

export interface VideoFanoutDeps {
  store: StorePort;
  /** Lifetime of the enqueue marker and of the job itself (`service.processed_event_ttl_secs`). */
  processedEventTtlSecs: number;
  /** Videos older than this are not pushed at all (`notification.max_event_age_secs`), as for mentions. */
  maxEventAgeSecs: number;
  clock: Clock;
  logger: Logger;
}

/** The first page job of a video's fan-out. The sender name is resolved by the first page that reaches someone. */
export function initialFanoutJob(event: NostrEvent, nowSecs: number, processedEventTtlSecs: number): FanoutJob {
  return {
    eventJson: JSON.stringify(event),
    cursor: WATCHER_WALK_START,
    senderName: null,
    attempt: 0,
    expiresAt: nowSecs + processedEventTtlSecs,
  };
}

/**
 * Queue the fan-out of a live video, once per event id. False when it was queued before, or when
 * the video reaches no watcher by construction (too old to push, or without a `d` tag, which every
 * recipient would treat as already notified).
 */
export async function enqueueNewPostFanout(deps: VideoFanoutDeps, event: NostrEvent): Promise<boolean> {
  if (event.kind !== VIDEO) return false;
  const nowSecs = Math.floor(deps.clock.nowMs() / 1000);
  if (event.created_at < nowSecs - deps.maxEventAgeSecs) return false;
  if (dTag(event) === '') return false;
  const queued = await deps.store.enqueueFanoutJob(
    event.id,
    initialFanoutJob(event, nowSecs, deps.processedEventTtlSecs),
    deps.processedEventTtlSecs,
  );
  deps.logger.debug(
    { eventId: event.id, author: event.pubkey, queued },
    queued ? 'new-post fan-out queued' : 'new-post fan-out was queued before',
  );
  return queued;
}

/**
 * The content handler wrapped for videos: `mentions` runs first; the fan-out is queued even when
 * a mention failed (the mention's error is rethrown afterwards, so the inbound queue retries the
 * event, and the enqueue marker makes that retry queue nothing twice). An enqueue error
 * propagates the same way once the mentions were attempted.
 */
export async function withNewPostFanout(deps: VideoFanoutDeps, envelope: InboundEnvelope, mentions: () => Promise<unknown>): Promise<void> {
  let mentionsFailed = false;
  let mentionError: unknown;
  try {
    await mentions();
  } catch (err) {
    mentionsFailed = true;
    mentionError = err;
  }
  // An event restricted to one recipient (a NIP-9a callback's) never reaches the author's watchers.
  if (envelope.context === 'live' && envelope.onlyRecipient === undefined && envelope.event.kind === VIDEO)
    await enqueueNewPostFanout(deps, envelope.event);
  if (mentionsFailed) throw mentionError;
}
