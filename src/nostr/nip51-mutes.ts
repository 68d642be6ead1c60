/**
 * NIP-51 mute lists (kind 10000): what a user does not want to see — pubkeys (`p`), hashtags
 * (`t`), words (`word`) and threads (`e`) — read from the list's public tags.
 *
 * The list may also hold a private part: the same tags, JSON-encoded and encrypted in `.content`
 * to the author's own key (NIP-44; older clients NIP-04). Only the author's secret key opens it,
 * which the service never holds, so the private part is not read here (docs/mutes.md says how an
 * app can share private mutes with the service).
 *
 * Hashtags, words and threads are bounded per list ({@link parseMuteList}'s `maxItems`,
 * `nostr.mute_list_max_items`); NIP-51 appends new items at the end of a list, so the last ones,
 * the newest mutes, are kept. Pubkeys are not bounded here: they are a set lookup each, and the
 * public `p` tags have been honoured in full since issue 16, so cutting them would unmute people.
 */
import type { Tagged } from './tags.ts';
import { isHexPubkey } from './tags.ts';
import { foldText, WholeWordMatcher } from '../util/whole-words.ts';

const EVENT_ID = /^[0-9a-f]{64}$/;

/** The mute items a list is bounded in; also the `item` label of the truncation metric. */
export type BoundedMuteItem = 'hashtag' | 'word' | 'thread';

/** A parsed mute list, ready for matching. */
export interface MuteList {
  /** Muted pubkeys (64-hex, lower case). */
  pubkeys: ReadonlySet<string>;
  /** Muted hashtags, folded ({@link foldHashtag}). */
  hashtags: ReadonlySet<string>;
  /** Muted words and phrases, matched whole and case-insensitively. */
  words: WholeWordMatcher;
  /** Muted threads: ids of the events whose replies, reactions and the events themselves are muted. */
  threads: ReadonlySet<string>;
}

export interface ParsedMuteList {
  list: MuteList;
  /** Distinct items of each bounded kind left out because the list held more than `maxItems`. */
  dropped: Record<BoundedMuteItem, number>;
}

/** A list that mutes nothing: no mute list was found. */
export const EMPTY_MUTE_LIST: MuteList = Object.freeze({
  pubkeys: new Set<string>(),
  hashtags: new Set<string>(),
  words: new WholeWordMatcher([]),
  threads: new Set<string>(),
});

/** A hashtag in the form muted and carried ones are compared in: folded (NFKC, lower case), without leading `#`. */
export function foldHashtag(tag: string): string {
  return foldText(tag).trim().replace(/^#+/, '');
}

/** Distinct values in list order, a repeated value counted at its last place (the newest mention of it). */
class LastPlaced {
  private readonly values = new Map<string, true>();

  add(value: string): void {
    this.values.delete(value);
    this.values.set(value, true);
  }

  /** The last `max` distinct values, and how many were left out before them. */
  newest(max: number): { kept: string[]; dropped: number } {
    const all = [...this.values.keys()];
    const dropped = Math.max(0, all.length - max);
    return { kept: all.slice(dropped), dropped };
  }
}

/**
 * The public items of a kind 10000 mute list. Malformed items (a `p` that is no pubkey, an `e`
 * that is no event id, a blank word or hashtag) are skipped. Of hashtags, words and threads, at
 * most `maxItems` distinct ones each are kept: the last ones of the list.
 */
export function parseMuteList(event: Tagged, maxItems: number): ParsedMuteList {
  const pubkeys = new Set<string>();
  const hashtags = new LastPlaced();
  const words = new LastPlaced();
  const threads = new LastPlaced();
  for (const tag of event.tags) {
    const [name, value] = tag;
    if (value === undefined) continue;
    if (name === 'p') {
      const pubkey = value.toLowerCase();
      if (isHexPubkey(pubkey)) pubkeys.add(pubkey);
    } else if (name === 't') {
      const hashtag = foldHashtag(value);
      if (hashtag !== '') hashtags.add(hashtag);
    } else if (name === 'word') {
      const word = foldText(value).trim();
      if (word !== '') words.add(word);
    } else if (name === 'e') {
      const id = value.toLowerCase();
      if (EVENT_ID.test(id)) threads.add(id);
    }
  }
  const keptHashtags = hashtags.newest(maxItems);
  const keptWords = words.newest(maxItems);
  const keptThreads = threads.newest(maxItems);
  return {
    list: {
      pubkeys,
      hashtags: new Set(keptHashtags.kept),
      words: new WholeWordMatcher(keptWords.kept),
      threads: new Set(keptThreads.kept),
    },
    dropped: { hashtag: keptHashtags.dropped, word: keptWords.dropped, thread: keptThreads.dropped },
  };
}
