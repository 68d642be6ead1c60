/**
 * Who a content event notifies, and as what (reference §4.4). Recipients come only from the
 * event's own `p`/`P` tags; the kind-34236 bell fan-out (watchers of the author) is resolved
 * elsewhere and is not part of this.
 */
import type { NostrEvent } from '../nostr/event.ts';
import { COMMENT, GENERIC_REPOST, LONG_FORM, REACTION, VIDEO } from '../nostr/kinds.ts';
import { isHexPubkey, pTagPubkeys, type Tagged } from '../nostr/tags.ts';
import type { NotificationType } from '../notification/types.ts';

export interface ContentRecipient {
  /** 64-hex pubkey of the user to notify. */
  pubkey: string;
  type: NotificationType;
}

/** The notification type each watched content kind produces for its tagged users. */
const TYPE_BY_KIND: ReadonlyMap<number, NotificationType> = new Map<number, NotificationType>([
  [REACTION, 'like'],
  [GENERIC_REPOST, 'repost'],
  [COMMENT, 'comment'],
  [LONG_FORM, 'mention'],
  [VIDEO, 'mention'],
]);

/** The notification type a content kind produces, or undefined for a kind that notifies nobody. */
export function notificationTypeOfKind(kind: number): NotificationType | undefined {
  return TYPE_BY_KIND.get(kind);
}

/** The valid hex pubkeys of every uppercase `P` tag (NIP-22 root author), in order. */
function rootAuthorPubkeys(event: Tagged): string[] {
  const pubkeys: string[] = [];
  for (const tag of event.tags) {
    const value = tag[1];
    if (tag[0] === 'P' && isHexPubkey(value)) pubkeys.push(value);
  }
  return pubkeys;
}

/**
 * The users a content event notifies, each once, in delivery order:
 *
 * - kind 7 like, kind 16 repost, kind 30023 and kind 34236 mention: every `p` tag holding a
 *   valid pubkey (no lookup of the `e` target's author);
 * - kind 1111 comment: the root authors (`P`) first, then the parent authors (`p`), deduplicated,
 *   so a top-level comment, whose `P` and `p` coincide, notifies the video owner once. A comment
 *   carrying only `I`/`K` tags (on an external resource) notifies nobody;
 * - any other kind: nobody.
 *
 * The event author is always left out, so self-likes and self-tags never notify.
 */
export function contentRecipients(event: NostrEvent): ContentRecipient[] {
  const type = notificationTypeOfKind(event.kind);
  if (type === undefined) return [];
  const tagged = event.kind === COMMENT ? [...rootAuthorPubkeys(event), ...pTagPubkeys(event)] : pTagPubkeys(event);
  const recipients: ContentRecipient[] = [];
  const seen = new Set<string>([event.pubkey]);
  for (const pubkey of tagged) {
    if (seen.has(pubkey)) continue;
    seen.add(pubkey);
    recipients.push({ pubkey, type });
  }
  return recipients;
}
