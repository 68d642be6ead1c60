/**
 * Whole-word, case-insensitive matching of a set of muted words against a text (NIP-51 `word`
 * tags, issue 36).
 *
 * A word is a run of letters, combining marks and digits (`\p{L}\p{M}\p{N}`); everything else
 * (spaces, punctuation, `#`, `@`, emoji) separates words. Both sides are compared in NFKC form and
 * lower case, so `Bitcoin`, `BITCOIN` and the full-width `ｂｉｔｃｏｉｎ` are one word.
 *
 * - A muted word that is one word (`bitcoin`) matches a word of the text exactly: it is a set
 *   lookup against the text's words, so a list of a thousand such words costs one pass over the
 *   text. `bitcoin` matches `#Bitcoin!` but not `bitcoiner`.
 * - A muted phrase (`hot take`, `don't`, `c++`) matches where it occurs with no letter or digit
 *   joined to either end that is itself a letter or digit: `c++` matches `I like c++.` and
 *   `hot take` matches `a HOT  TAKE:` (any spacing) but not `shot takeover`.
 * - A muted word in a script written without spaces between words (Han, Hiragana, Katakana,
 *   Thai, Lao, Khmer, Myanmar) matches anywhere in the text: there, word boundaries cannot be
 *   seen in the text, and a whole-word rule would never match.
 *
 * Phrases are searched with one compiled regular expression of escaped literals (an alternation
 * with fixed lookarounds, no nested quantifiers), so its cost grows with text × phrases and never
 * backtracks catastrophically.
 */

const WORD_RUNS = /[\p{L}\p{M}\p{N}]+/gu;
const WHOLE_WORD = /^[\p{L}\p{M}\p{N}]+$/u;
const STARTS_WITH_WORD_CHAR = /^[\p{L}\p{M}\p{N}]/u;
const ENDS_WITH_WORD_CHAR = /[\p{L}\p{M}\p{N}]$/u;
const UNSPACED_SCRIPT =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
/** The characters a regular expression in `u` mode lets (and needs) a backslash before. */
const REGEX_SYNTAX = /[\\^$.*+?()[\]{}|/]/g;
const NOT_JOINED_BEFORE = '(?<![\\p{L}\\p{M}\\p{N}])';
const NOT_JOINED_AFTER = '(?![\\p{L}\\p{M}\\p{N}])';

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
  private words: Set<string> | null = null;

  constructor(private readonly raw: string) {}

  /** The text in NFKC lower case. */
  get foldedText(): string {
    this.folded ??= foldText(this.raw);
    return this.folded;
  }

  /** The distinct words of the text, folded. */
  get wordSet(): ReadonlySet<string> {
    this.words ??= new Set(this.foldedText.match(WORD_RUNS) ?? []);
    return this.words;
  }
}

/** A list of muted words, compiled for matching (see the module comment for the rules). */
export class WholeWordMatcher {
  private readonly singleWords = new Set<string>();
  private readonly phrases: RegExp | null;
  /** Distinct muted words kept, folded. */
  readonly size: number;

  /** `words` as written in the list; blank entries are ignored, duplicates (after folding) kept once. */
  constructor(words: Iterable<string>) {
    const patterns = new Set<string>();
    const distinct = new Set<string>();
    for (const word of words) {
      const folded = foldText(word).trim();
      if (folded === '' || distinct.has(folded)) continue;
      distinct.add(folded);
      if (!UNSPACED_SCRIPT.test(folded) && WHOLE_WORD.test(folded)) this.singleWords.add(folded);
      else patterns.add(phrasePattern(folded));
    }
    this.size = distinct.size;
    this.phrases = patterns.size === 0 ? null : new RegExp([...patterns].join('|'), 'u');
  }

  /** Whether any muted word occurs in `text`. */
  matches(text: MatchableText): boolean {
    if (this.singleWords.size > 0) {
      const words = text.wordSet;
      // Walk the smaller of the two sets.
      if (words.size <= this.singleWords.size) {
        for (const word of words) if (this.singleWords.has(word)) return true;
      } else {
        for (const word of this.singleWords) if (words.has(word)) return true;
      }
    }
    return this.phrases !== null && this.phrases.test(text.foldedText);
  }
}

/** The pattern of one folded phrase: its escaped text, held apart from letters and digits where its own ends are letters or digits. */
function phrasePattern(phrase: string): string {
  // Any run of spaces or line breaks in the phrase matches any such run in the text.
  const escaped = phrase.replace(REGEX_SYNTAX, '\\$&').replace(/\s+/gu, '\\s+');
  if (UNSPACED_SCRIPT.test(phrase)) return escaped;
  const before = STARTS_WITH_WORD_CHAR.test(phrase) ? NOT_JOINED_BEFORE : '';
  const after = ENDS_WITH_WORD_CHAR.test(phrase) ? NOT_JOINED_AFTER : '';
  return `${before}${escaped}${after}`;
}
