import type { NostrEvent } from '../nostr/event.ts';
import { COMMENT, CONTROL_KINDS, GENERIC_REPOST, NOTIFY_LIST_D_TAG, PEOPLE_LIST, REACTION } from '../nostr/kinds.ts';
import type { Clock, StorePort } from '../store/port.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { handleControlEvent, type ControlDecryptor, type ControlOutcome } from './control-events.ts';

/** An event as the listener hands it to the inbound queue. */
export interface InboundEnvelope {
  event: NostrEvent;
  /** Historical events (startup replay) update state but never push. */
  context: 'historical' | 'live';
  relay: string;
  receivedAtMs: number;
}

/**
 * Control events older than this are ignored (divine's hard-coded `REPLAY_HORIZON_DAYS`): a
 * replayed registration from last month must not resurrect a device. Notify lists are exempt.
 */
export const REPLAY_HORIZON_SECS = 7 * 86_400;

export type RouteOutcome =
  | { route: 'too_old' }
  | { route: 'not_addressed' }
  | { route: 'duplicate' }
  | { route: 'control'; outcome: ControlOutcome }
  | { route: 'notify_list' }
  | { route: 'historical_content' }
  | { route: 'content' }
  | { route: 'ignored' };

export interface RouterDeps {
  store: StorePort;
  decryptor: ControlDecryptor;
  servicePubkey: string;
  processedEventTtlSecs: number;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** Content routing (likes, comments, …); absent until the social-notification stage is wired. */
  handleContent?: (envelope: InboundEnvelope) => Promise<void>;
  /** Notify-list replacement; absent until bells are wired. */
  handleNotifyList?: (event: NostrEvent) => Promise<void>;
}

/**
 * Kinds whose handling keeps no state of their author's: a like, repost or comment touches only
 * its own claims (per event and recipient) and atomic coalescing groups, so two of one author's
 * may be handled side by side, in either order. They are most of the traffic, and one busy author
 * must not hold them up behind each other.
 */
const AUTHOR_INDEPENDENT_KINDS: ReadonlySet<number> = new Set([REACTION, GENERIC_REPOST, COMMENT]);

/**
 * What orders the inbound queue's events: events with the same key are handled one after another
 * in queue order, others side by side. divine's handler is one sequential loop, and its control,
 * notify-list, video-record and bell rules rely on one author's events being handled in order, so
 * everything is keyed by its author except the kinds of {@link AUTHOR_INDEPENDENT_KINDS}, keyed by
 * their own id.
 */
export function inboundOrderingKey(event: NostrEvent): string {
  return AUTHOR_INDEPENDENT_KINDS.has(event.kind) ? event.id : event.pubkey;
}

export function isNotifyList(event: NostrEvent): boolean {
  if (event.kind !== PEOPLE_LIST) return false;
  const d = event.tags.find((t) => t[0] === 'd');
  return d?.[1] === NOTIFY_LIST_D_TAG;
}

/** Strict: `created_at < now − 7 d` is too old; future timestamps are accepted. */
export function isBeyondReplayHorizon(event: NostrEvent, nowSecs: number): boolean {
  if (isNotifyList(event)) return false;
  return event.created_at < nowSecs - REPLAY_HORIZON_SECS;
}

/** A control event is ours only when one of its `p` tags is the service pubkey. */
export function isAddressedTo(event: NostrEvent, pubkey: string): boolean {
  return event.tags.some((t) => t[0] === 'p' && t[1]?.toLowerCase() === pubkey);
}

/**
 * Let the decryptor start on every control event of a leased batch that will need decrypting,
 * so worker threads decrypt in parallel while the engine still handles events one at a time.
 */
export function prefetchInbound(deps: RouterDeps, envelopes: readonly InboundEnvelope[]): void {
  if (!deps.decryptor.prefetch) return;
  const nowSecs = Math.floor(deps.clock.nowMs() / 1000);
  for (const { event } of envelopes) {
    if (CONTROL_KINDS.includes(event.kind) && !isBeyondReplayHorizon(event, nowSecs) && isAddressedTo(event, deps.servicePubkey)) {
      deps.decryptor.prefetch(event);
    }
  }
}

/**
 * The engine's entry point for one inbound event (reference §4.1–§4.2): replay horizon, the p-tag
 * gate and the coarse per-event claim for control events, then the handler for its kind.
 */
export async function routeInbound(deps: RouterDeps, envelope: InboundEnvelope): Promise<RouteOutcome> {
  const { event } = envelope;
  const nowSecs = Math.floor(deps.clock.nowMs() / 1000);
  if (isBeyondReplayHorizon(event, nowSecs)) {
    deps.logger.debug({ eventId: event.id, kind: event.kind }, 'event beyond the replay horizon');
    return { route: 'too_old' };
  }

  if (event.kind === PEOPLE_LIST) {
    if (!isNotifyList(event) || !deps.handleNotifyList) return { route: 'ignored' };
    await deps.handleNotifyList(event);
    return { route: 'notify_list' };
  }

  if (CONTROL_KINDS.includes(event.kind)) {
    if (!isAddressedTo(event, deps.servicePubkey)) {
      deps.metrics.controlEvents.inc({ kind: String(event.kind), outcome: 'not_addressed' });
      return { route: 'not_addressed' };
    }
    if (!(await deps.store.claimEvent(event.id, deps.processedEventTtlSecs))) {
      deps.metrics.controlEvents.inc({ kind: String(event.kind), outcome: 'duplicate' });
      return { route: 'duplicate' };
    }
    try {
      const outcome = await handleControlEvent(deps, event);
      return { route: 'control', outcome };
    } catch (err) {
      // A store failure mid-handling: give the claim back so the queue's retry can redo the work.
      await deps.store.releaseEvent(event.id).catch(() => undefined);
      throw err;
    }
  }

  if (envelope.context === 'historical') return { route: 'historical_content' };
  if (!deps.handleContent) return { route: 'ignored' };
  await deps.handleContent(envelope);
  return { route: 'content' };
}
