/**
 * The filters nostr-push sends to every relay, and the subscription ids it owns.
 */
import { MAX_KIND, type NostrEvent } from '../nostr/event.ts';
import { CONTROL_KINDS, DM_RELAY_LIST, GIFT_WRAP, NOTIFY_LIST_D_TAG, PEOPLE_LIST, RELAY_LIST } from '../nostr/kinds.ts';

/** Live control + notification kinds. */
export const LIVE_EVENTS_SUBSCRIPTION_ID = 'push-live-events';
/** Live notify lists (kind 30000, d=notify). */
export const LIVE_NOTIFY_LISTS_SUBSCRIPTION_ID = 'push-live-notify-lists';
/** Startup replay of control events. */
export const HISTORY_CONTROL_SUBSCRIPTION_ID = 'push-history-control';
/** Prefix of the startup replay's notify-list pages (`push-history-lists-<page>`). */
export const HISTORY_NOTIFY_LISTS_SUBSCRIPTION_PREFIX = 'push-history-lists-';

/** Live gift wraps (kind 1059), only when an app turns `events.gift_wraps` on (issue 21). */
export const LIVE_GIFT_WRAPS_SUBSCRIPTION_ID = 'push-live-gift-wraps';

/** Live relay lists (kinds 10002, 10050), only while `nostr.user_relays.enabled` is on (issue 36). */
export const LIVE_RELAY_LISTS_SUBSCRIPTION_ID = 'push-live-relay-lists';

export const LIVE_SUBSCRIPTION_IDS: readonly string[] = [LIVE_EVENTS_SUBSCRIPTION_ID, LIVE_NOTIFY_LISTS_SUBSCRIPTION_ID];

/**
 * How much earlier than the other live kinds gift wraps are asked for (2 days): NIP-59 randomises
 * a wrap's `created_at` up to two days into the past, so a wrap sent now may carry a timestamp
 * far before the live `since`. Wraps seen again after a reconnect are absorbed by the per-wrap claim.
 */
export const GIFT_WRAP_BACKDATE_SECS = 2 * 86_400;

/**
 * How far before the stored cursor a (re)subscription starts (10 min). Relays and publishers
 * disagree on clocks, and events arrive out of order, so the newest created_at seen is not a
 * promise that nothing older is still on its way. Redeliveries are absorbed by dedupe and claims.
 */
export const LIVE_RESUME_OVERLAP_SECS = 600;

/** Lookback of the live subscriptions when a relay has no cursor yet (1 h, as divine). */
export const LIVE_FIRST_START_LOOKBACK_SECS = 3_600;

const SECONDS_PER_DAY = 86_400;

/** A NIP-01 filter, limited to the fields nostr-push sends. */
export interface RelayFilter {
  kinds?: number[];
  '#d'?: string[];
  /** Events tagging these pubkeys (user relays, `user-relays.ts`). */
  '#p'?: string[];
  since?: number;
  until?: number;
  limit?: number;
}

export interface LiveKinds {
  /** Sorted, deduplicated, always including the control kinds. */
  kinds: number[];
  /** Values that are not NIP-01 kinds (not integers in 0..65535), dropped. */
  skipped: unknown[];
}

/** The live-events kinds: control kinds ∪ `requested`, deduplicated, invalid values skipped. */
export function normalizeLiveKinds(requested: readonly unknown[]): LiveKinds {
  const kinds = new Set<number>(CONTROL_KINDS);
  const skipped: unknown[] = [];
  for (const kind of requested) {
    if (typeof kind === 'number' && Number.isInteger(kind) && kind >= 0 && kind <= MAX_KIND) kinds.add(kind);
    else skipped.push(kind);
  }
  return { kinds: [...kinds].sort((a, b) => a - b), skipped };
}

/** `since` of a live (re)subscription: cursor − overlap, or now − 1 h without a cursor. */
export function liveResumeSince(cursorSecs: number | null, nowSecs: number): number {
  const since = cursorSecs === null ? nowSecs - LIVE_FIRST_START_LOOKBACK_SECS : Math.min(cursorSecs, nowSecs) - LIVE_RESUME_OVERLAP_SECS;
  return Math.max(0, since);
}

/**
 * For the `#p` filters of user relays: the event has a kind of the filter and tags one of its
 * pubkeys. Any other filter admits every event (the configured relays are the operator's own
 * choice and are trusted with what they send).
 */
export function withinTagFilter(event: Pick<NostrEvent, 'kind' | 'tags'>, filter: RelayFilter): boolean {
  const pubkeys = filter['#p'];
  if (pubkeys === undefined) return true;
  if (filter.kinds !== undefined && !filter.kinds.includes(event.kind)) return false;
  return event.tags.some((tag) => tag[0] === 'p' && tag[1] !== undefined && pubkeys.includes(tag[1]));
}

/** One REQ: a subscription id and its filter. */
export interface SubscriptionRequest {
  id: string;
  filter: RelayFilter;
}

/**
 * The two live REQs. They are separate because a `#d` constraint applies to every kind of its
 * filter: folded together, `#d:["notify"]` would hide every reaction and comment.
 */
export function liveSubscriptions(kinds: readonly number[], since: number): SubscriptionRequest[] {
  const relayLists: number[] = kinds.filter((kind) => kind === RELAY_LIST || kind === DM_RELAY_LIST);
  const requests: SubscriptionRequest[] = [
    { id: LIVE_EVENTS_SUBSCRIPTION_ID, filter: { kinds: kinds.filter((kind) => kind !== GIFT_WRAP && !relayLists.includes(kind)), since } },
    { id: LIVE_NOTIFY_LISTS_SUBSCRIPTION_ID, filter: { kinds: [PEOPLE_LIST], '#d': [NOTIFY_LIST_D_TAG], since } },
  ];
  // A third REQ only when gift wraps are on, so divine's two REQs stay exactly as they were.
  if (kinds.includes(GIFT_WRAP))
    requests.push({
      id: LIVE_GIFT_WRAPS_SUBSCRIPTION_ID,
      filter: { kinds: [GIFT_WRAP], since: Math.max(0, since - GIFT_WRAP_BACKDATE_SECS) },
    });
  // Its own REQ too, so the events REQ stays divine's whether users' relays are followed or not.
  if (relayLists.length > 0) requests.push({ id: LIVE_RELAY_LISTS_SUBSCRIPTION_ID, filter: { kinds: relayLists, since } });
  return requests;
}

/** Startup replay of control events within the process window. */
export function historyControlFilter(nowSecs: number, processWindowDays: number): RelayFilter {
  return { kinds: [...CONTROL_KINDS], since: Math.max(0, Math.floor(nowSecs - processWindowDays * SECONDS_PER_DAY)) };
}

/**
 * One page of the notify-list replay: newest first, no `since` (a list is current however old it
 * is), `until` inclusive when paging backwards.
 */
export function notifyListPageFilter(limit: number, until?: number): RelayFilter {
  const filter: RelayFilter = { kinds: [PEOPLE_LIST], '#d': [NOTIFY_LIST_D_TAG], limit };
  if (until !== undefined) filter.until = until;
  return filter;
}
