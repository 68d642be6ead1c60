/**
 * NIP-10 thread references of a kind-1 note: which note it replies to and which note started the
 * thread, each with the author when the tag names one.
 *
 * Two forms exist. The marked form (`["e", id, relay, "root"|"reply", pubkey]`) says what each tag
 * is; the deprecated positional form (unmarked `e` tags) means: one tag is the root and the parent,
 * two are root then parent, more are root, mentions…, parent. A note mixing both is read by its
 * marked tags only (NIP-10: clients that mark use no positional meaning), and unmarked `e` tags are
 * then mentions of notes, which notify nobody.
 */
import type { NostrEvent } from '../../nostr/event.ts';
import { isHexPubkey } from '../../nostr/tags.ts';

const EVENT_ID = /^[0-9a-f]{64}$/;

/** One referenced note: its id, and its author's pubkey when the tag gives it (NIP-10's 5th element). */
export interface NoteReference {
  eventId: string;
  /** 64-hex author hint, or undefined when the tag has none (or not a valid one). */
  authorHint?: string;
}

export interface ThreadReferences {
  /** The thread's first note. Equal to `parent` for a direct reply to a root. */
  root?: NoteReference;
  /** The note replied to. Absent: the note is no reply. */
  parent?: NoteReference;
}

interface EventTag {
  ref: NoteReference;
  marker: string;
}

function eventTags(event: Pick<NostrEvent, 'tags'>): EventTag[] {
  const tags: EventTag[] = [];
  for (const tag of event.tags) {
    const id = tag[1];
    if (tag[0] !== 'e' || id === undefined || !EVENT_ID.test(id)) continue;
    const hint = tag[4];
    const ref: NoteReference = isHexPubkey(hint) ? { eventId: id, authorHint: hint } : { eventId: id };
    tags.push({ ref, marker: tag[3] ?? '' });
  }
  return tags;
}

/**
 * The root and parent of a note (NIP-10). Marked: `root` and `reply` as tagged; a `root` alone is
 * a direct reply to the root; a `reply` alone is a reply whose root is unknown, treated as its own
 * root. Positional, when no tag is marked: as described at the top of this module.
 */
export function threadReferences(event: Pick<NostrEvent, 'tags'>): ThreadReferences {
  const tags = eventTags(event);
  const marked = tags.filter((t) => t.marker === 'root' || t.marker === 'reply');
  if (marked.length > 0) {
    const root = marked.find((t) => t.marker === 'root')?.ref;
    const reply = marked.find((t) => t.marker === 'reply')?.ref;
    const parent = reply ?? root;
    return { ...((root ?? parent) ? { root: root ?? parent } : {}), ...(parent ? { parent } : {}) };
  }
  // Positional: only unmarked tags count here (a tag marked `mention` is a citation, not a thread).
  const positional = tags.filter((t) => t.marker === '');
  const first = positional[0]?.ref;
  const last = positional[positional.length - 1]?.ref;
  if (first === undefined || last === undefined) return {};
  return { root: first, parent: last };
}
