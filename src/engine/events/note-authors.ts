/**
 * The author of a note by id, asked of the relays when a reply's `e` tag gives no pubkey hint
 * (NIP-10 makes the hint optional). The note must come back with the asked id and a valid
 * signature; anything else counts as not found. Answers (found or not) are remembered briefly, so
 * a busy thread costs one query per parent, not one per reply.
 */
import { isEventRejection, parseEvent, type EventVerifier } from '../../nostr/event.ts';
import type { RelayQueryFunction } from '../relay-query.ts';
import type { NoteAuthorLookup } from './notes.ts';

/** How long an answer is remembered: a note's author never changes, a miss may be a relay hiccup (5 min). */
export const NOTE_AUTHOR_MEMO_MS = 5 * 60_000;
/** Answers remembered at most (oldest dropped first): ~100 bytes each. */
export const NOTE_AUTHOR_MEMO_ENTRIES = 10_000;

export interface NoteAuthorLookupOptions {
  relays: readonly string[];
  queryRelays: RelayQueryFunction;
  verifier: EventVerifier;
  queryTimeoutMs: number;
  /** Milliseconds now; the memo's clock. */
  nowMs: () => number;
}

export function createNoteAuthorLookup(options: NoteAuthorLookupOptions): NoteAuthorLookup {
  const memo = new Map<string, { author: string | null; expiresAtMs: number }>();
  return async (eventId) => {
    const remembered = memo.get(eventId);
    if (remembered !== undefined && remembered.expiresAtMs > options.nowMs()) return remembered.author;
    const found = await options.queryRelays(options.relays, { ids: [eventId], limit: 1 }, options.queryTimeoutMs);
    let author: string | null = null;
    for (const value of found) {
      const event = parseEvent(value);
      if (isEventRejection(event) || event.id !== eventId) continue;
      if (options.verifier.verify(event)) {
        author = event.pubkey;
        break;
      }
    }
    if (memo.size >= NOTE_AUTHOR_MEMO_ENTRIES) {
      const oldest = memo.keys().next().value;
      if (oldest !== undefined) memo.delete(oldest);
    }
    memo.set(eventId, { author, expiresAtMs: options.nowMs() + NOTE_AUTHOR_MEMO_MS });
    return author;
  };
}
