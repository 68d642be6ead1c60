import type { NostrEvent } from './event.ts';

/** Anything with NIP-01 tags: signed events, templates, NIP-59 rumors. */
export type Tagged = Pick<NostrEvent, 'tags'>;

const HEX_64 = /^[0-9a-f]{64}$/;
const DECIMAL = /^[0-9]+$/;
const MAX_U32 = 0xffff_ffff;

/** True for a 64-character lowercase hex string, the only pubkey form events and filters use. */
export function isHexPubkey(value: unknown): value is string {
  return typeof value === 'string' && HEX_64.test(value);
}

/** The value (second element) of the first tag with this name, or undefined. */
export function firstTagValue(event: Tagged, name: string): string | undefined {
  for (const tag of event.tags) {
    if (tag[0] === name) return tag[1];
  }
  return undefined;
}

/** The values (second elements) of every tag with this name, in order; tags with no value are skipped. */
export function tagValues(event: Tagged, name: string): string[] {
  const values: string[] = [];
  for (const tag of event.tags) {
    const value = tag[1];
    if (tag[0] === name && value !== undefined) values.push(value);
  }
  return values;
}

/** The pubkeys of the `p` tags that hold a valid 64-hex lowercase pubkey, in order, each once. */
export function pTagPubkeys(event: Tagged): string[] {
  const seen = new Set<string>();
  for (const tag of event.tags) {
    const value = tag[1];
    if (tag[0] === 'p' && isHexPubkey(value)) seen.add(value);
  }
  return [...seen];
}

/** The `d` tag of an addressable event; NIP-01 treats a missing one as the empty string. */
export function dTag(event: Tagged): string {
  return firstTagValue(event, 'd') ?? '';
}

/** A NIP-01 `a` tag value `kind:pubkey:d`, parsed. */
export interface AddressCoordinate {
  kind: number;
  pubkey: string;
  dTag: string;
}

/**
 * Parses `kind:pubkey:d`. The kind must be a decimal u32, the pubkey and d-tag non-empty; the
 * d-tag is everything after the second colon and may itself contain colons. The pubkey is not
 * required to be hex here: callers that look it up check with `isHexPubkey`. Returns null when
 * the value does not parse (including the trailing-colon form of plain replaceable events).
 */
export function parseCoordinate(value: string): AddressCoordinate | null {
  const firstColon = value.indexOf(':');
  if (firstColon <= 0) return null;
  const secondColon = value.indexOf(':', firstColon + 1);
  if (secondColon < 0) return null;
  const kindText = value.slice(0, firstColon);
  const pubkey = value.slice(firstColon + 1, secondColon);
  const d = value.slice(secondColon + 1);
  if (!DECIMAL.test(kindText) || pubkey.length === 0 || d.length === 0) return null;
  const kind = Number(kindText);
  if (kind > MAX_U32) return null;
  return { kind, pubkey, dTag: d };
}

/** The `a` tag value of an addressable event: `kind:pubkey:d`. */
export function formatCoordinate(coordinate: AddressCoordinate): string {
  return `${coordinate.kind}:${coordinate.pubkey}:${coordinate.dTag}`;
}
