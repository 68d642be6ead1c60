/**
 * Who a kind-1 note mentions: its `p` tags and its NIP-27 `nostr:npub1…` / `nostr:nprofile1…`
 * references in the content, each pubkey once, in order of appearance (tags first).
 */
import { decode } from 'nostr-tools/nip19';
import type { NostrEvent } from '../../nostr/event.ts';
import { isHexPubkey, pTagPubkeys } from '../../nostr/tags.ts';

/**
 * A NIP-27 profile reference. Bech32 is lowercase (or all upper); the data part uses the bech32
 * alphabet only, so the match stops at the first character that cannot belong to it.
 */
const PROFILE_REFERENCE = /nostr:((?:npub|nprofile)1[023456789acdefghjklmnpqrstuvwxyz]+)/gi;

/** Most content references decoded per note: a note quoting hundreds of profiles mentions none of them usefully. */
export const MAX_CONTENT_MENTIONS = 32;

/** The hex pubkey a `npub`/`nprofile` string names, or null when it does not decode. */
function pubkeyOfReference(reference: string): string | null {
  try {
    const decoded = decode(reference.toLowerCase());
    if (decoded.type === 'npub') return isHexPubkey(decoded.data) ? decoded.data : null;
    if (decoded.type === 'nprofile') return isHexPubkey(decoded.data.pubkey) ? decoded.data.pubkey : null;
    return null;
  } catch {
    return null;
  }
}

/** The pubkeys of the NIP-27 profile references in `content`, each once, at most {@link MAX_CONTENT_MENTIONS}. */
export function contentMentions(content: string): string[] {
  const found = new Set<string>();
  for (const match of content.matchAll(PROFILE_REFERENCE)) {
    if (found.size >= MAX_CONTENT_MENTIONS) break;
    const pubkey = pubkeyOfReference(match[1] ?? '');
    if (pubkey !== null) found.add(pubkey);
  }
  return [...found];
}

/** Everyone a note mentions: valid `p` tags, then content references, each once. */
export function noteMentions(event: Pick<NostrEvent, 'tags' | 'content'>): string[] {
  return [...new Set([...pTagPubkeys(event), ...contentMentions(event.content)])];
}
