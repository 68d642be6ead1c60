/**
 * NIP-27 `nostr:npub1…` mentions in comment and mention bodies, rewritten to `@name` for the
 * push text (reference §7.1, `format_content_for_push`).
 */
import type { Logger } from '../observability/logger.ts';
import { decodeNpub, truncateNpub } from '../nostr/nip19.ts';

/**
 * divine's `(?i)nostr:(npub[a-z0-9]{58,60})`. Kept as is, including its slack: a real npub is
 * `npub1` + 58 characters, and an alphanumeric character glued to the end is swallowed, so that
 * match fails to decode and reads as a truncated npub, as it does in divine.
 */
const NPUB_MENTION = /nostr:(npub[a-z0-9]{58,60})/gi;

/**
 * Most distinct mentioned users looked up for one body. Only the first 150 characters reach the
 * push, so a note with hundreds of mentions would otherwise cost hundreds of profile lookups for
 * text nobody sees; the rest read as truncated npubs.
 */
export const MAX_RESOLVED_MENTIONS = 10;

/** A display name for a hex pubkey (display_name, else name), or null when there is none. */
export type MentionNameResolver = (pubkeyHex: string) => Promise<string | null>;

export interface FormatContentOptions {
  /** Told (at warn) when resolution failed and the raw content is used instead. */
  logger?: Logger;
  /** Override of {@link MAX_RESOLVED_MENTIONS}. */
  maxResolvedMentions?: number;
}

async function labelFor(npub: string, resolveName: MentionNameResolver | null): Promise<string> {
  const pubkey = resolveName === null ? null : decodeNpub(npub);
  const name = pubkey === null || resolveName === null ? null : await resolveName(pubkey);
  return `@${name ?? truncateNpub(npub)}`;
}

/**
 * `content` with every `nostr:npub1…` mention replaced by `@{display_name|name|truncated npub}`.
 * Each distinct npub is resolved once, concurrently. Content without mentions is returned as is;
 * if a lookup fails, the raw content is returned (a push with raw npubs beats no push).
 */
export async function formatContentForPush(
  content: string,
  resolveName: MentionNameResolver,
  options: FormatContentOptions = {},
): Promise<string> {
  const matches = [...content.matchAll(NPUB_MENTION)];
  if (matches.length === 0) return content;
  const maxResolved = options.maxResolvedMentions ?? MAX_RESOLVED_MENTIONS;
  try {
    const distinct = [...new Set(matches.map((match) => (match[1] ?? '').toLowerCase()))];
    const labels = new Map<string, string>();
    const resolved = await Promise.all(distinct.map((npub, index) => labelFor(npub, index < maxResolved ? resolveName : null)));
    distinct.forEach((npub, index) => labels.set(npub, resolved[index] ?? `@${truncateNpub(npub)}`));

    // Built front to back from the match offsets, which equals divine's replace-from-the-end.
    let formatted = '';
    let cursor = 0;
    for (const match of matches) {
      const start = match.index;
      formatted += content.slice(cursor, start) + (labels.get((match[1] ?? '').toLowerCase()) ?? match[0]);
      cursor = start + match[0].length;
    }
    return formatted + content.slice(cursor);
  } catch (error) {
    options.logger?.warn({ err: error }, 'mention resolution failed; using the raw content');
    return content;
  }
}
