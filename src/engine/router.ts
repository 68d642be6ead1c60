import type { NostrEvent } from '../nostr/event.ts';
import {
  COMMENT,
  CONTROL_KINDS,
  GENERIC_REPOST,
  GIFT_WRAP,
  NOTIFY_LIST_D_TAG,
  PEOPLE_LIST,
  REACTION,
  TEXT_NOTE,
  ZAP_RECEIPT,
} from '../nostr/kinds.ts';
import type { Clock, StorePort } from '../store/port.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { handleControlEvent, type ControlDecryptor, type ControlHandlerDeps, type ControlOutcome } from './control-events.ts';
import { envelopeWorkOwner } from './work-owner.ts';
import { isUserRelayListEvent } from './user-relay-lists.ts';

/** An event as the listener hands it to the inbound queue. */
export interface InboundEnvelope {
  event: NostrEvent;
  /** Historical events (startup replay) update state but never push. */
  context: 'historical' | 'live';
  relay: string;
  receivedAtMs: number;
  /**
   * The only user this event may notify: the owner of the NIP-9a callback URL a relay pushed it
   * to (what arrives on one user's callback is that user's business alone). Preferences, claims,
   * coalescing and mutes apply as to any event; a restricted event changes no state (control
   * events and notify lists are ignored) and starts no new-post fan-out. Absent: everyone the
   * event tags.
   */
  onlyRecipient?: string;
}

/**
 * An event a NIP-9a relay pushed to `recipient`'s callback URL that nostr-push cannot render: the
 * relay sent its id only, or a kind without notification copy. It becomes one generic
 * `relayEvent` push for the app to fetch the event from `relay`.
 */
export interface RelayEventNotice {
  notice: 'relayEvent';
  eventId: string;
  /** The relay that pushed it, normalised. */
  relay: string;
  recipient: string;
  /** Present when the relay included the (verified) event. */
  eventKind?: number;
  /** Unix seconds: the event's `created_at` when included, else when the callback arrived. */
  createdAt: number;
  receivedAtMs: number;
}

/** What the inbound queue carries: events (from relays, or from NIP-9a callbacks) and relay-event notices. */
export type InboundItem = InboundEnvelope | RelayEventNotice;

export function isRelayEventNotice(item: InboundItem): item is RelayEventNotice {
  return 'notice' in item;
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
  | { route: 'user_relay_list' }
  | { route: 'historical_content' }
  | { route: 'content' }
  | { route: 'relay_event' }
  | { route: 'ignored' }
  | { route: 'other_app' };

export interface RouterDeps {
  store: StorePort;
  decryptor: ControlDecryptor;
  servicePubkey: string;
  /**
   * Tenancy: the service keys of the other configured apps. Every app's engine sees every
   * control event of its relays; one addressed to another app is that app's (`other_app`, not
   * counted here). Absent: none.
   */
  otherAppPubkeys?: ReadonlySet<string>;
  /**
   * Count and log (debug) control events addressed to no configured app, as `not_addressed`.
   * Only one app's engine does (the default's), so each is counted once. Absent: true.
   */
  reportUnaddressed?: boolean;
  processedEventTtlSecs: number;
  /** `inbox.max_alert_words_per_user`: a 3083's `alertWords` above it are ignored. Absent: the default. */
  maxAlertWordsPerUser?: number;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** Content routing (likes, comments, …); absent until the social-notification stage is wired. */
  handleContent?: (envelope: InboundEnvelope) => Promise<void>;
  /** Notify-list replacement; absent until bells are wired. */
  handleNotifyList?: (event: NostrEvent) => Promise<void>;
  /** The generic push of a NIP-9a relay-event notice; absent, notices are ignored. */
  handleRelayEvent?: (notice: RelayEventNotice) => Promise<void>;
  /** Users' relays at registration (issue 36); see {@link ControlHandlerDeps.userRelays}. */
  userRelays?: ControlHandlerDeps['userRelays'];
  /** A user's kind 10002 or 10050 (issue 36); absent (`nostr.user_relays.enabled` off), they are ignored. */
  handleUserRelayList?: (event: NostrEvent) => Promise<void>;
}

/**
 * Kinds whose handling keeps no state of their author's: a like, repost or comment touches only
 * its own claims (per event and recipient) and atomic coalescing groups, so two of one author's
 * may be handled side by side, in either order. They are most of the traffic, and one busy author
 * must not hold them up behind each other.
 */
const AUTHOR_INDEPENDENT_KINDS: ReadonlySet<number> = new Set([
  REACTION,
  GENERIC_REPOST,
  COMMENT,
  // Issue 21's optional kinds, equally stateless per author: a zap's signer is the payee's lnurl
  // provider, which would otherwise put every zap of a big wallet in one line; wraps are signed by
  // throwaway keys anyway; a note's reply lookup may wait on relays.
  TEXT_NOTE,
  ZAP_RECEIPT,
  GIFT_WRAP,
]);

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

/** {@link inboundOrderingKey} of any inbound item: a notice touches only its own claim, so it is keyed by itself. */
export function inboundItemOrderingKey(item: InboundItem): string {
  return isRelayEventNotice(item) ? `${item.eventId}:${item.recipient}` : inboundOrderingKey(item.event);
}

export function isNotifyList(event: NostrEvent): boolean {
  if (event.kind !== PEOPLE_LIST) return false;
  const d = event.tags.find((t) => t[0] === 'd');
  return d?.[1] === NOTIFY_LIST_D_TAG;
}

/**
 * Strict: `created_at < now − 7 d` is too old; future timestamps are accepted. Replaceable lists
 * (notify lists, relay lists) are exempt: a list is current however old it is.
 */
export function isBeyondReplayHorizon(event: NostrEvent, nowSecs: number): boolean {
  if (isNotifyList(event) || isUserRelayListEvent(event)) return false;
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
export function prefetchInbound(deps: RouterDeps, items: readonly InboundItem[]): void {
  if (!deps.decryptor.prefetch) return;
  const nowSecs = Math.floor(deps.clock.nowMs() / 1000);
  for (const item of items) {
    if (isRelayEventNotice(item) || item.onlyRecipient !== undefined) continue;
    const { event } = item;
    if (CONTROL_KINDS.includes(event.kind) && !isBeyondReplayHorizon(event, nowSecs) && isAddressedTo(event, deps.servicePubkey)) {
      deps.decryptor.prefetch(event);
    }
  }
}

/**
 * The engine's entry point for one inbound event (reference §4.1–§4.2): replay horizon, the p-tag
 * gate and the coarse per-event claim for control events, then the handler for its kind.
 */
export async function routeInbound(deps: RouterDeps, item: InboundItem): Promise<RouteOutcome> {
  if (isRelayEventNotice(item)) {
    if (!deps.handleRelayEvent) return { route: 'ignored' };
    await deps.handleRelayEvent(item);
    return { route: 'relay_event' };
  }
  const envelope = item;
  const { event } = envelope;
  // Restricted events (NIP-9a callbacks) only ever notify; the receiver queues content kinds only.
  if (
    envelope.onlyRecipient !== undefined &&
    (event.kind === PEOPLE_LIST || CONTROL_KINDS.includes(event.kind) || isUserRelayListEvent(event))
  ) {
    return { route: 'ignored' };
  }
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

  if (isUserRelayListEvent(event)) {
    if (!deps.handleUserRelayList) return { route: 'ignored' };
    await deps.handleUserRelayList(event);
    return { route: 'user_relay_list' };
  }

  if (CONTROL_KINDS.includes(event.kind)) {
    if (!isAddressedTo(event, deps.servicePubkey)) {
      const others = deps.otherAppPubkeys;
      if (others && others.size > 0 && event.tags.some((t) => t[0] === 'p' && others.has(t[1]?.toLowerCase() ?? '')))
        return { route: 'other_app' };
      if (deps.reportUnaddressed !== false) {
        deps.metrics.controlEvents.inc({ kind: String(event.kind), outcome: 'not_addressed' });
        deps.logger.debug({ eventId: event.id, kind: event.kind }, 'control event addressed to no configured app; ignored');
      }
      return { route: 'not_addressed' };
    }
    // Owned by this inbound item, so its retry after a claim that was applied but reported
    // failed goes on instead of taking the event for a duplicate (work-owner.ts).
    if (!(await deps.store.claimEvent(event.id, deps.processedEventTtlSecs, envelopeWorkOwner(envelope)))) {
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
