/** The pubkeys an operator types into the console: an npub or 64 hex characters. */
import { decodeNpub } from '../nostr/nip19.ts';

const HEX_PUBKEY = /^[0-9a-f]{64}$/;

/** A hex pubkey from an npub or hex (any case, surrounding spaces ignored), or null. */
export function parsePubkey(raw: string): string | null {
  const text = raw.trim();
  if (text.startsWith('npub1')) return decodeNpub(text);
  const lower = text.toLowerCase();
  return HEX_PUBKEY.test(lower) ? lower : null;
}
