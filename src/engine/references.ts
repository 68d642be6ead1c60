/**
 * What a notification points at (reference §4.6 and seed 000's "Routing & attribution contract").
 *
 * Two different questions, answered by two functions:
 * - {@link referenceFields}: where a tap should take the user. Root-aware: a NIP-22 comment anchors
 *   to its root video (uppercase `E`/`A`), not to the parent comment. These become the
 *   `referenced*` data fields, which clients treat as authoritative.
 * - {@link coalesceTarget}: which object was directly acted upon, so likes and reposts of the same
 *   thing group together. Direct-first: a lowercase `a`, then the last lowercase `e` (NIP-25).
 */
import type { NostrEvent } from '../nostr/event.ts';
import { LONG_FORM, VIDEO } from '../nostr/kinds.ts';
import { dTag, formatCoordinate, parseCoordinate, type AddressCoordinate, type Tagged } from '../nostr/tags.ts';

/**
 * The `referenced*` fields of a social payload, already as the strings the data map carries.
 * The four coordinate fields are present together or not at all; `referencedEventId` is
 * independent of them.
 */
export interface ReferenceFields {
  /** Target event id: the kind-34236 trigger's own id, else the root `E`, else the first `e`. */
  referencedEventId?: string;
  /** `kind:pubkey:d`, verbatim from the tag (or the video's own identity). Authoritative. */
  referencedAddress?: string;
  /** The kind component, in decimal. */
  referencedKind?: string;
  /** The owner component: the pubkey the actor signed into the event, never the recipient. */
  referencedAuthorPubkey?: string;
  /** The d-tag component; may contain ':'. */
  referencedDTag?: string;
}

const EVENT_ID = /^[0-9a-f]{64}$/;

/** The value of the first tag `name` whose value is a 64-hex event id. */
function firstEventIdTag(event: Tagged, name: string): string | undefined {
  for (const tag of event.tags) {
    const value = tag[0] === name ? tag[1] : undefined;
    if (value !== undefined && EVENT_ID.test(value)) return value;
  }
  return undefined;
}

/** The value of the last tag `name` whose value is a 64-hex event id (NIP-25: the last `e` is the target). */
function lastEventIdTag(event: Tagged, name: string): string | undefined {
  for (let i = event.tags.length - 1; i >= 0; i--) {
    const tag = event.tags[i];
    const value = tag?.[0] === name ? tag[1] : undefined;
    if (value !== undefined && EVENT_ID.test(value)) return value;
  }
  return undefined;
}

/** The raw value of the first tag named `name`, if that tag has a value. */
function firstRawValue(event: Tagged, name: string): string | undefined {
  return event.tags.find((tag) => tag[0] === name)?.[1];
}

interface VerbatimCoordinate {
  /** The tag value exactly as signed. */
  raw: string;
  parsed: AddressCoordinate;
}

/**
 * The coordinate of the first `A` tag if there is one, else of the first `a` tag. Only the first
 * tag of the chosen name is considered (as divine does): a malformed first `A` means no
 * coordinate rather than a guess from some later tag.
 */
function rootAwareCoordinate(event: Tagged): VerbatimCoordinate | undefined {
  const raw = firstRawValue(event, 'A') ?? firstRawValue(event, 'a');
  if (raw === undefined) return undefined;
  const parsed = parseCoordinate(raw);
  return parsed === null ? undefined : { raw, parsed };
}

function coordinateFields(coordinate: VerbatimCoordinate): ReferenceFields {
  return {
    referencedAddress: coordinate.raw,
    referencedKind: String(coordinate.parsed.kind),
    referencedAuthorPubkey: coordinate.parsed.pubkey,
    referencedDTag: coordinate.parsed.dTag,
  };
}

/**
 * The `referenced*` fields of a trigger event (reference §4.6).
 *
 * - A kind-34236 video is its own target: its id, and `34236:{author}:{d}` when it has a d tag.
 * - A kind-30023 article (a long-form mention) has no reference fields at all.
 * - Otherwise `referencedEventId` is the first uppercase `E` (NIP-22 root) holding an event id,
 *   else the first lowercase `e` holding one; and the coordinate is the first `A`, else the first
 *   `a`, taken verbatim. A coordinate is never synthesised from anything else, in particular not
 *   from the recipient.
 *
 * Absent fields are absent keys (not `undefined` values), so the result spreads cleanly into a
 * data map.
 */
export function referenceFields(event: NostrEvent): ReferenceFields {
  // Seed 000: "long-form mentions omit them". An article's e/a tags are citations, not what the
  // mention is about, so routing a tap to one would open the wrong thing.
  if (event.kind === LONG_FORM) return {};
  if (event.kind === VIDEO) {
    const fields: ReferenceFields = { referencedEventId: event.id };
    const raw = formatCoordinate({ kind: VIDEO, pubkey: event.pubkey, dTag: dTag(event) });
    const parsed = parseCoordinate(raw);
    return parsed === null ? fields : { ...fields, ...coordinateFields({ raw, parsed }) };
  }
  const fields: ReferenceFields = {};
  const eventId = firstEventIdTag(event, 'E') ?? firstEventIdTag(event, 'e');
  if (eventId !== undefined) fields.referencedEventId = eventId;
  const coordinate = rootAwareCoordinate(event);
  return coordinate === undefined ? fields : { ...fields, ...coordinateFields(coordinate) };
}

/**
 * The coalescing target key of a like or repost (reference §4.6, last bullet; plan rev 11): the
 * directly acted-upon object.
 *
 * 1. the first lowercase `a`, when it parses → `a:{kind:pubkey:d}`;
 * 2. else the LAST lowercase `e` (NIP-25 puts the reacted-to event last; divine's code reads the
 *    first, the plan says last) → `e:{id}`;
 * 3. else the root-aware address of {@link referenceFields} → `a:{…}`;
 * 4. else the root-aware event id → `e:{…}`;
 * 5. else null: nothing to group on, so the event is not coalesced.
 *
 * The address in the key is re-formatted from its parsed parts, so `034236:…` and `34236:…` name
 * one group; the payload keeps the verbatim form.
 */
export function coalesceTarget(event: NostrEvent): string | null {
  const directAddress = firstRawValue(event, 'a');
  const parsed = directAddress === undefined ? null : parseCoordinate(directAddress);
  if (parsed !== null) return `a:${formatCoordinate(parsed)}`;
  const directEventId = lastEventIdTag(event, 'e');
  if (directEventId !== undefined) return `e:${directEventId}`;
  const fields = referenceFields(event);
  const rootAddress = fields.referencedAddress === undefined ? null : parseCoordinate(fields.referencedAddress);
  if (rootAddress !== null) return `a:${formatCoordinate(rootAddress)}`;
  if (fields.referencedEventId !== undefined) return `e:${fields.referencedEventId}`;
  return null;
}
