/**
 * Kind-1 notes (issue 21, `events.text_notes`): who a note notifies and its copy.
 *
 * - A reply (NIP-10, {@link threadReferences}) notifies its parent's author and its thread root's
 *   author, as `reply`. An author comes from the `e` tag's pubkey hint when the tag has one, else
 *   from the relays (`lookupAuthor`, the note fetched by id and its signature checked). A note
 *   whose author cannot be found notifies nobody as its author.
 * - Everyone the note mentions (`p` tags, NIP-27 `nostr:npub`/`nprofile`) gets `mention`, unless
 *   already notified as a replied-to author: NIP-10 replies `p`-tag the parent's author, and one
 *   reply is one push.
 * - The note's author never, and each user once.
 */
import type { NostrEvent } from '../../nostr/event.ts';
import type { Logger } from '../../observability/logger.ts';
import { textNoteCopy, type NotificationCopy } from '../copy.ts';
import type { CopySource } from '../content.ts';
import { LazyEventCopy } from '../event-copy.ts';
import type { ProfileResolver } from '../profiles.ts';
import type { ContentRecipient } from '../recipients.ts';
import { threadReferences, type NoteReference } from './nip10.ts';
import { noteMentions } from './note-mentions.ts';
import type { NotificationType } from '../../notification/types.ts';

/** The author of a note by id, or null when no relay has it (or it does not verify). */
export type NoteAuthorLookup = (eventId: string) => Promise<string | null>;

async function authorOf(reference: NoteReference | undefined, lookupAuthor: NoteAuthorLookup): Promise<string | null> {
  if (reference === undefined) return null;
  return reference.authorHint ?? (await lookupAuthor(reference.eventId));
}

/** The users a kind-1 note notifies, in order: the parent's author, the root's, then the mentioned. */
export async function noteRecipients(event: NostrEvent, lookupAuthor: NoteAuthorLookup): Promise<ContentRecipient[]> {
  const { root, parent } = threadReferences(event);
  const [parentAuthor, rootAuthor] = await Promise.all([
    authorOf(parent, lookupAuthor),
    root !== undefined && root.eventId !== parent?.eventId ? authorOf(root, lookupAuthor) : Promise.resolve(null),
  ]);
  const recipients: ContentRecipient[] = [];
  const seen = new Set<string>([event.pubkey]);
  const add = (pubkey: string | null, type: NotificationType): void => {
    if (pubkey === null || seen.has(pubkey)) return;
    seen.add(pubkey);
    recipients.push({ pubkey, type });
  };
  add(parentAuthor, 'reply');
  add(rootAuthor, 'reply');
  for (const pubkey of noteMentions(event)) add(pubkey, 'mention');
  return recipients;
}

/**
 * The copy of a note's pushes: divine's lazy sender name and mention-formatted text (looked up
 * once, and only when a recipient passed the gates), worded for notes ({@link textNoteCopy}).
 */
export class NoteCopy implements CopySource {
  private readonly parts: LazyEventCopy;

  constructor(event: NostrEvent, profiles: ProfileResolver, logger?: Logger) {
    // `reply` renders content, so the text is formatted together with the sender's name.
    this.parts = new LazyEventCopy({ event, types: ['reply'], profiles, ...(logger === undefined ? {} : { logger }) });
  }

  async copyFor(type: NotificationType): Promise<NotificationCopy & { senderName: string }> {
    const { senderName, content } = await this.parts.parts();
    const noteType = type === 'reply' ? 'reply' : 'mention';
    return { ...textNoteCopy(noteType, senderName, content ?? ''), senderName };
  }
}
