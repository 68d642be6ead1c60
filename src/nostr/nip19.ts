import { decode, npubEncode as encodeNpubBech32, nsecEncode as encodeNsec } from 'nostr-tools/nip19';
import { isHexPubkey } from './tags.ts';
import { isValidSecretKeyHex } from './keys.ts';
import { RecentValues } from '../util/recent-values.ts';

/**
 * NIP-19 bech32 forms, for display and operator input only: events, filters and storage always
 * use hex.
 */

/** Characters of the npub kept by `shortNpub` (divine's `format_short_npub`). */
export const SHORT_NPUB_PREFIX_CHARS = 12;
/** Characters kept at the front by `truncateNpub` (divine's `truncate_npub`). */
export const TRUNCATED_NPUB_HEAD_CHARS = 10;
/** Characters kept at the end by `truncateNpub`. */
export const TRUNCATED_NPUB_TAIL_CHARS = 6;
/** What `shortNpub` shows for something that is not a pubkey, as divine does. */
export const UNKNOWN_SENDER_LABEL = 'unknown';

/** The npub of a 64-hex pubkey; throws RangeError for anything else. */
export function npubEncode(pubkeyHex: string): string {
  if (!isHexPubkey(pubkeyHex)) throw new RangeError('npubEncode expects 64 lowercase hex');
  return encodeNpub(pubkeyHex);
}

/**
 * Recipients' npubs, remembered: every push's data carries `receiverNpub`, and bech32 encoding
 * cost ~2 % of the NIP-9a receiver's main thread and more of its garbage (bench/nip9a). 4,096
 * entries of ~200 bytes each.
 */
export const NPUB_MEMO_ENTRIES = 4096;
const recentNpubs = new RecentValues(encodeNpubBech32, NPUB_MEMO_ENTRIES);

function encodeNpub(pubkeyHex: string): string {
  return recentNpubs.get(pubkeyHex);
}

/** The hex pubkey of an npub, or null when the input is not a valid npub. */
export function decodeNpub(npub: string): string | null {
  return decodeAs(npub, 'npub');
}

/** The nsec of a 64-hex secret key; throws RangeError for anything that is not a valid key. */
export function nsecEncode(secretHex: string): string {
  if (!isValidSecretKeyHex(secretHex)) throw new RangeError('nsecEncode expects a valid 64-hex secret key');
  return encodeNsec(Uint8Array.from(Buffer.from(secretHex, 'hex')));
}

/** The 64 lowercase hex secret key of an nsec, or null when the input is not a valid nsec. */
export function decodeNsec(nsec: string): string | null {
  return decodeAs(nsec, 'nsec');
}

function decodeAs(input: string, prefix: 'npub' | 'nsec'): string | null {
  // Bech32 may be written all in upper case (BIP-173); mixed case stays invalid.
  const value = input === input.toUpperCase() ? input.toLowerCase() : input;
  // Reject before bech32 does any work on input that cannot be the form asked for.
  if (!value.startsWith(`${prefix}1`)) return null;
  try {
    const decoded = decode(value);
    if (decoded.type === 'npub' && prefix === 'npub') {
      return isHexPubkey(decoded.data) ? decoded.data : null;
    }
    if (decoded.type === 'nsec' && prefix === 'nsec') {
      const hex = Buffer.from(decoded.data).toString('hex');
      return isValidSecretKeyHex(hex) ? hex : null;
    }
    return null;
  } catch {
    return null;
  }
}

/** The first 12 characters of the npub followed by "...", or "unknown" for a non-pubkey. */
export function shortNpub(pubkeyHex: string): string {
  if (!isHexPubkey(pubkeyHex)) return UNKNOWN_SENDER_LABEL;
  return `${encodeNpub(pubkeyHex).slice(0, SHORT_NPUB_PREFIX_CHARS)}...`;
}

/**
 * The first 10 characters, "...", and the last 6 of an npub (for `nostr:npub…` mentions without a
 * resolved name). A string too short to lose anything by it is returned unchanged.
 */
export function truncateNpub(npub: string): string {
  if (npub.length <= TRUNCATED_NPUB_HEAD_CHARS + TRUNCATED_NPUB_TAIL_CHARS) return npub;
  return `${npub.slice(0, TRUNCATED_NPUB_HEAD_CHARS)}...${npub.slice(-TRUNCATED_NPUB_TAIL_CHARS)}`;
}
