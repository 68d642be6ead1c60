/**
 * The push of a coalesced summary (reference §7.3 "Summary"): the social data map, built from
 * the stored group instead of one event, with the group's collapse key.
 */
import { GENERIC_REPOST, REACTION, ZAP_RECEIPT } from '../../nostr/kinds.ts';
import { npubEncode } from '../../nostr/nip19.ts';
import type { CoalesceGroup, CoalesceReferences, CoalesceType } from '../../store/port-coalesce.ts';
import { ANONYMOUS_ACTOR_NAME, summaryCopy } from '../copy.ts';
import type { PushMessage } from '../../notification/types.ts';

/** Same order as the social payload's reference fields. */
const REFERENCE_KEYS = [
  'referencedEventId',
  'referencedAddress',
  'referencedKind',
  'referencedAuthorPubkey',
  'referencedDTag',
] as const satisfies ReadonlyArray<keyof CoalesceReferences>;

const KIND_OF_TYPE: Readonly<Record<CoalesceType, number>> = { like: REACTION, repost: GENERIC_REPOST, zap: ZAP_RECEIPT };

export interface SummaryInput {
  group: CoalesceGroup;
  type: CoalesceType;
  /** The first buffered actor's name as resolved at flush time; empty reads "Someone". */
  firstActorName: string;
  collapseKey: string;
}

/**
 * The data map of a summary, in the social payload's key order: `eventId` is the first buffered
 * event (else the target key), `senderPubkey` the first actor, `timestamp` the newest buffered
 * `created_at` (else the deadline), the reference fields the stored ones. The body counts the
 * distinct actors ("alice and 12 others liked your post").
 *
 * @throws RangeError when the owner is not a 64-hex pubkey (the flush checks that first).
 */
export function buildSummaryMessage(input: SummaryInput): PushMessage {
  const { group, type } = input;
  const copy = summaryCopy(type, input.firstActorName, group.distinctActors);
  const data: Record<string, string> = {
    type,
    eventId: group.firstEvent ?? group.target,
    title: copy.title,
    body: copy.body,
    senderPubkey: group.firstActor ?? '',
    senderName: input.firstActorName === '' ? ANONYMOUS_ACTOR_NAME : input.firstActorName,
    receiverPubkey: group.owner,
    receiverNpub: npubEncode(group.owner),
    eventKind: String(group.eventKind ?? KIND_OF_TYPE[type]),
    timestamp: String(group.lastAt ?? group.dueAtSecs),
  };
  for (const key of REFERENCE_KEYS) {
    const value = group.references[key];
    if (value !== undefined) data[key] = value;
  }
  const message: PushMessage = { data, collapseKey: input.collapseKey };
  if (copy.template) message.copy = copy.template;
  return message;
}
