/**
 * The data map of social and direct-message pushes (reference §7.3, seed 000's data-map field
 * tables). Every value is a string; the key order follows seed 000's example, which keeps the
 * serialised form stable for golden tests and logs.
 *
 * Routing contract (seed 000): `referencedAddress`/`referencedAuthorPubkey` are authoritative and
 * come from the trigger event only ({@link referenceFields}); nothing here ever pairs a d-tag with
 * the recipient.
 */
import type { NostrEvent } from '../nostr/event.ts';
import { GIFT_WRAP } from '../nostr/kinds.ts';
import { npubEncode } from '../nostr/nip19.ts';
import { notificationCopy, type NotificationCopy } from './copy.ts';
import { referenceFields, type ReferenceFields } from './references.ts';
import type { NotificationType, PushMessage } from '../notification/types.ts';

/** The types that carry a sender, a timestamp and reference fields. */
export type SocialNotificationType = Exclude<NotificationType, 'directMessage' | 'relayEvent'>;

export interface SocialPayloadInput {
  type: SocialNotificationType;
  /** The trigger event (the like, comment, repost, mention or video itself). */
  event: NostrEvent;
  /** 64-hex pubkey of the user being notified. */
  recipient: string;
  /** Resolved display name, or the short-npub fallback. */
  senderName: string;
  /** Who the push is from when not the event's signer (a zap's payer); default `event.pubkey`. */
  senderPubkey?: string;
  /** Title and body, from `notificationCopy` (or `summaryCopy`). */
  copy: NotificationCopy;
  /** Collapse key (coalescing); passed through to the transports, never a data field. */
  collapseKey?: string;
  /** Reference fields to use instead of the event's own (a summary's stored ones). */
  references?: ReferenceFields;
}

/** Key order of the reference fields in the data map. */
const REFERENCE_KEYS = [
  'referencedEventId',
  'referencedAddress',
  'referencedKind',
  'referencedAuthorPubkey',
  'referencedDTag',
] as const satisfies ReadonlyArray<keyof ReferenceFields>;

/**
 * The event's reference fields, worked out once per event object: a fan-out builds one payload
 * per watcher of the same video, and the fields depend on the event alone.
 */
const referencesByEvent = new WeakMap<NostrEvent, ReferenceFields>();
function referencesOf(event: NostrEvent): ReferenceFields {
  let references = referencesByEvent.get(event);
  if (references === undefined) {
    references = referenceFields(event);
    referencesByEvent.set(event, references);
  }
  return references;
}

function withCollapseKey(data: Record<string, string>, collapseKey: string | undefined, copy: NotificationCopy): PushMessage {
  const message: PushMessage = collapseKey === undefined ? { data } : { data, collapseKey };
  if (copy.template) message.copy = copy.template;
  return message;
}

/**
 * The push for a like, comment, mention, repost or new post.
 *
 * @throws RangeError when `recipient` is not a 64-hex pubkey (recipients come from validated
 * tags, so this is a programming error, not bad input).
 */
export function buildSocialPayload(input: SocialPayloadInput): PushMessage {
  const { event, recipient } = input;
  const data: Record<string, string> = {
    type: input.type,
    eventId: event.id,
    title: input.copy.title,
    body: input.copy.body,
    senderPubkey: input.senderPubkey ?? event.pubkey,
    senderName: input.senderName,
    receiverPubkey: recipient,
    receiverNpub: npubEncode(recipient),
    eventKind: String(event.kind),
    timestamp: String(event.created_at),
  };
  const references = input.references ?? referencesOf(event);
  for (const key of REFERENCE_KEYS) {
    const value = references[key];
    if (value !== undefined) data[key] = value;
  }
  return withCollapseKey(data, input.collapseKey, input.copy);
}

/**
 * The content-free push for a NIP-59 gift wrap. A wrap reveals neither its real sender nor its
 * inner event, so there is no sender, timestamp or reference, and nothing of the wrap but its id.
 *
 * @throws RangeError when `recipient` is not a 64-hex pubkey.
 */
export function buildDirectMessagePayload(giftWrapId: string, recipient: string, collapseKey?: string): PushMessage {
  const copy = notificationCopy('directMessage', '');
  const data: Record<string, string> = {
    type: 'directMessage',
    eventId: giftWrapId,
    title: copy.title,
    body: copy.body,
    receiverPubkey: recipient,
    receiverNpub: npubEncode(recipient),
    eventKind: String(GIFT_WRAP),
  };
  return withCollapseKey(data, collapseKey, copy);
}

/**
 * The generic push for an event a NIP-9a relay pushed to `recipient`'s callback URL without a
 * kind nostr-push renders: its id and relay, for the app to fetch it (NIP-9a's id-only delivery).
 * `eventKind` only when the relay included the event.
 *
 * @throws RangeError when `recipient` is not a 64-hex pubkey.
 */
export function buildRelayEventPayload(input: { eventId: string; relay: string; recipient: string; eventKind?: number }): PushMessage {
  const copy = notificationCopy('relayEvent', '', relayHost(input.relay));
  const data: Record<string, string> = {
    type: 'relayEvent',
    eventId: input.eventId,
    relay: input.relay,
    title: copy.title,
    body: copy.body,
    receiverPubkey: input.recipient,
    receiverNpub: npubEncode(input.recipient),
  };
  if (input.eventKind !== undefined) data.eventKind = String(input.eventKind);
  return copy.template ? { data, copy: copy.template } : { data };
}

/** The host a relay URL names (what a person recognises), or '' when it does not parse. */
function relayHost(relay: string): string {
  try {
    return new URL(relay).host;
  } catch {
    return '';
  }
}
