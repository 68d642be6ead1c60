/**
 * Whole-word, case-insensitive matching of a set of muted words against a text (NIP-51 `word`
 * tags, issue 36).
 *
 * A word is a run of letters, combining marks and digits (`\p{L}\p{M}\p{N}`); everything else
 * (spaces, punctuation, `#`, `@`, emoji) separates words. Both sides are compared in NFKC form and
 * lower case, so `Bitcoin`, `BITCOIN` and the full-width `ｂｉｔｃｏｉｎ` are one word.
 *
 * - A muted word that is one word (`bitcoin`) matches that word of the text: `bitcoin` matches
 *   `#Bitcoin!` but not `bitcoiner`.
 * - A muted phrase of several words (`hot take`, `don't`) matches those words in a row in the
 *   text, whatever separates them: `hot take` matches `a HOT  TAKE:` and `hot-take` but not
 *   `shot takeover`; `don't` matches `DON'T` and `don’t`.
 * - A muted entry that begins or ends with something other than a letter or digit (`c++`, `🍆`,
 *   `#tag`), or is written in a script without spaces between words (Han, Hiragana, Katakana,
 *   Thai, Lao, Khmer, Myanmar), matches where its exact text occurs; at an end that is a letter
 *   or digit, not glued to another one (`c++` matches `I like c++.` but not `abc++`). In a
 *   script without spaces it matches anywhere: word boundaries cannot be seen in such a text,
 *   and a whole-word rule would never match.
 *
 * Why not one regular expression of every entry: a list at the `nostr.mute_list_max_items`
 * bound compiled into an alternation with Unicode lookarounds took most of a second to build and
 * hundreds of microseconds per push to run (bench/mute-match). Here words and phrases are set and
 * map lookups in one pass over the text's words, whatever the list's size, and only the rare
 * exact-text entries search the text one by one (`indexOf`).
 */

const WORD_RUNS = /[\p{L}\p{M}\p{N}]+/gu;
const IS_WORD_CHAR = /^[\p{L}\p{M}\p{N}]$/u;
const STARTS_AND_ENDS_WITH_WORD_CHAR = /^[\p{L}\p{M}\p{N}](?:.*[\p{L}\p{M}\p{N}])?$/su;
const STARTS_WITH_WORD_CHAR = /^[\p{L}\p{M}\p{N}]/u;
const ENDS_WITH_WORD_CHAR = /[\p{L}\p{M}\p{N}]$/u;
const UNSPACED_SCRIPT =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

/** NFKC and lower case: the form both muted words and texts are compared in. */
export function foldText(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

/**
 * A text prepared for matching once, however many muted-word lists it is matched against (one
 * per recipient of an event): folded and split into words on first use.
 */
export class MatchableText {
  private folded: string | null = null;
  private words: readonly string[] | null = null;

  constructor(private readonly raw: string) {}

  /** The text in NFKC lower case. */
  get foldedText(): string {
    this.folded ??= foldText(this.raw);
    return this.folded;
  }

  /** The words of the text, folded, in order. */
  get wordList(): readonly string[] {
    this.words ??= this.foldedText.match(WORD_RUNS) ?? [];
    return this.words;
  }
}

/** An entry matched by its exact text: where it must not be glued to a letter or digit. */
interface ExactEntry {
  text: string;
  boundaryBefore: boolean;
  boundaryAfter: boolean;
}

/** A list of muted words, compiled for matching (see the module comment for the rules). */
export class WholeWordMatcher {
  private readonly singleWords = new Set<string>();
  /** Phrases of several words, by their first word: the words after it. */
  private readonly phrasesByFirstWord = new Map<string, string[][]>();
  private readonly exact: ExactEntry[] = [];
  /** Distinct muted entries kept, folded. */
  readonly size: number;

  /** `words` as written in the list; blank entries are ignored, duplicates (after folding) kept once. */
  constructor(words: Iterable<string>) {
    const distinct = new Set<string>();
    for (const word of words) {
      const folded = foldText(word).trim();
      if (folded === '' || distinct.has(folded)) continue;
      distinct.add(folded);
      this.add(folded);
    }
    this.size = distinct.size;
  }

  /** Whether any muted entry occurs in `text`. */
  matches(text: MatchableText): boolean {
    return this.matchesWords(text) || this.matchesExact(text);
  }

  private add(entry: string): void {
    if (UNSPACED_SCRIPT.test(entry) || !STARTS_AND_ENDS_WITH_WORD_CHAR.test(entry)) {
      const unspaced = UNSPACED_SCRIPT.test(entry);
      this.exact.push({
        text: entry,
        boundaryBefore: !unspaced && STARTS_WITH_WORD_CHAR.test(entry),
        boundaryAfter: !unspaced && ENDS_WITH_WORD_CHAR.test(entry),
      });
      return;
    }
    const [first, ...rest] = entry.match(WORD_RUNS) ?? [];
    if (first === undefined) return;
    if (rest.length === 0) {
      this.singleWords.add(first);
      return;
    }
    const phrases = this.phrasesByFirstWord.get(first);
    if (phrases === undefined) this.phrasesByFirstWord.set(first, [rest]);
    else phrases.push(rest);
  }

  /** Single words and phrases, in one pass over the text's words (no set of them is built: each is looked up once anyway). */
  private matchesWords(text: MatchableText): boolean {
    if (this.singleWords.size === 0 && this.phrasesByFirstWord.size === 0) return false;
    const words = text.wordList;
    for (let i = 0; i < words.length; i++) {
      const word = words[i] as string;
      if (this.singleWords.has(word)) return true;
      const phrases = this.phrasesByFirstWord.get(word);
      if (phrases === undefined) continue;
      for (const rest of phrases) if (rest.every((next, j) => words[i + 1 + j] === next)) return true;
    }
    return false;
  }

  private matchesExact(text: MatchableText): boolean {
    if (this.exact.length === 0) return false;
    const folded = text.foldedText;
    for (const entry of this.exact) {
      for (let at = folded.indexOf(entry.text); at !== -1; at = folded.indexOf(entry.text, at + 1)) {
        const end = at + entry.text.length;
        if (entry.boundaryBefore && isWordCharAt(folded, codePointStartBefore(folded, at))) continue;
        if (entry.boundaryAfter && isWordCharAt(folded, end)) continue;
        return true;
      }
    }
    return false;
  }
}

/** Where the code point ending just before `index` starts (-1 at the start of the text). */
function codePointStartBefore(text: string, index: number): number {
  if (index <= 0) return -1;
  const low = text.charCodeAt(index - 1);
  const isLowSurrogate = low >= 0xdc00 && low <= 0xdfff;
  return isLowSurrogate && index >= 2 ? index - 2 : index - 1;
}

/** Whether the code point starting at `index` is a letter, mark or digit (false outside the text). */
function isWordCharAt(text: string, index: number): boolean {
  if (index < 0 || index >= text.length) return false;
  const codePoint = text.codePointAt(index);
  return codePoint !== undefined && IS_WORD_CHAR.test(String.fromCodePoint(codePoint));
}
