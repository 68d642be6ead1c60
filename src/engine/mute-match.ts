/**
 * Whether a recipient's NIP-51 mute list ({@link MuteList}) stops a notification (issue 36): by
 * who it is from, or by what it is about.
 *
 * - `pubkey`: the sender is muted;
 * - `hashtag`: the event carries a muted hashtag in its `t` tags (case-insensitive, `#` ignored);
 * - `word`: a muted word occurs, as a whole word and case-insensitively, in the event's own text
 *   ({@link MuteSubject}; `util/whole-words.ts` has the rules);
 * - `thread`: the event is a muted event itself, or refers to one as its thread root or parent:
 *   NIP-10 root and reply (marked, or positional — which also reads the target of a like, a
 *   repost and a zap, whose `e` tags are unmarked), and NIP-22's root `E` of a comment. An `e`
 *   marked `mention` only cites a note and does not put the event in its thread.
 */
import type { NostrEvent } from '../nostr/event.ts';
import { GENERIC_REPOST } from '../nostr/kinds.ts';
import { foldHashtag, type MuteList } from '../nostr/nip51-mutes.ts';
import { tagValues } from '../nostr/tags.ts';
import { MatchableText } from '../util/whole-words.ts';
import { threadReferences } from './events/nip10.ts';

/** What stopped a notification; also the `reason` label of `push_mutes_matched_total`. */
export type MuteReason = 'pubkey' | 'hashtag' | 'word' | 'thread';

const EVENT_ID = /^[0-9a-f]{64}$/;

/**
 * The text of an event that is its sender's own words: its content, except for a repost, whose
 * content is the reposted event (the recipient's own post, as a rule) and says nothing of the
 * reposter's.
 */
export function ownText(event: Pick<NostrEvent, 'kind' | 'content'>): string {
  return event.kind === GENERIC_REPOST ? '' : event.content;
}

/**
 * One event as mutes look at it, prepared lazily and once for all its recipients: its text
 * folded and split into words, its hashtags, and the ids of the threads it belongs to.
 */
export class MuteSubject {
  private matchable: MatchableText | null = null;
  private tags: ReadonlySet<string> | null = null;
  private threads: readonly string[] | null = null;

  /**
   * @param event the event the notification is about.
   * @param text the text muted words are looked for in: {@link ownText} of the event unless the
   *   notification's words live elsewhere (a zap's comment is the content of its zap request).
   */
  constructor(
    private readonly event: NostrEvent,
    private readonly text: string = ownText(event),
  ) {}

  get words(): MatchableText {
    this.matchable ??= new MatchableText(this.text);
    return this.matchable;
  }

  /** The event's hashtags, folded. */
  get hashtags(): ReadonlySet<string> {
    this.tags ??= new Set(tagValues(this.event, 't').map(foldHashtag));
    return this.tags;
  }

  /** The event's own id, its NIP-10 root and parent, and its NIP-22 root (`E`). */
  get threadIds(): readonly string[] {
    if (this.threads === null) {
      const { root, parent } = threadReferences(this.event);
      const ids = [this.event.id, ...tagValues(this.event, 'E').filter((id) => EVENT_ID.test(id))];
      if (root) ids.push(root.eventId);
      if (parent) ids.push(parent.eventId);
      this.threads = ids;
    }
    return this.threads;
  }
}

/**
 * Why `list` mutes a notification from `sender` about `subject`, or null when it does not.
 * Without a subject (a coalesced summary, which is about many events) only the sender is checked.
 * The checks run cheapest first, so a muted sender costs no text work.
 */
export function muteReason(list: MuteList, sender: string, subject: MuteSubject | null): MuteReason | null {
  if (list.pubkeys.has(sender)) return 'pubkey';
  if (subject === null) return null;
  if (list.threads.size > 0 && subject.threadIds.some((id) => list.threads.has(id))) return 'thread';
  if (list.hashtags.size > 0) {
    for (const hashtag of subject.hashtags) if (list.hashtags.has(hashtag)) return 'hashtag';
  }
  if (list.words.size > 0 && list.words.matches(subject.words)) return 'word';
  return null;
}
