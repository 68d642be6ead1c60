/**
 * Alert-word tokenisation (issue 13): what counts as a word, in a user's watch list and in an
 * event's text, so both sides agree.
 *
 * A word is a Unicode word segment (`Intl.Segmenter`, granularity `word`, which follows UAX #29
 * and segments CJK text with ICU's dictionary), normalised to NFC and lower-cased (full Unicode
 * case mapping, locale-independent), of at least {@link MIN_ALERT_WORD_CHARS} code points.
 * Punctuation and emoji separate words and are never part of one; accents are kept (`café` and
 * `cafe` are different words, a decomposed `cafe\u0301` is `café`); an apostrophe inside a word
 * keeps it whole (`don't`), a hyphen splits (`e-mail` is `e` and `mail`). Matching is on whole
 * words only: `pizza` does not match `pizzas`.
 *
 * Differences from Twitarr's `buildCleanWordsArray` (reference part B6), on purpose: Twitarr deletes
 * every non-letter (so `abc123` is `abc` and `e-mail` is `email`) and splits only on the ASCII space;
 * a segmenter splits on every separator and script boundary, and keeps digits inside words.
 */

/** Shortest watchable word, in code points (issue 13: "at least 3 characters"). */
export const MIN_ALERT_WORD_CHARS = 3;
/** Longest token considered, in code points: longer runs are not words anyone watches, and bound the index lookups. */
export const MAX_ALERT_WORD_CHARS = 64;
/** Text of one event tokenised at most (UTF-16 units): a long-form article past this adds no lookups. */
export const MAX_TOKENISED_TEXT = 20_000;

const segmenter = new Intl.Segmenter(undefined, { granularity: 'word' });

function codePoints(word: string): number {
  let n = 0;
  for (const _ of word) n++;
  return n;
}

/** NFC, lower-cased. */
function normalise(text: string): string {
  return text.normalize('NFC').toLowerCase();
}

/** The distinct words of `text` that could be alert words, in first-seen order. */
export function alertWordTokens(text: string): string[] {
  const words = new Set<string>();
  const clipped = text.length > MAX_TOKENISED_TEXT ? text.slice(0, MAX_TOKENISED_TEXT) : text;
  for (const segment of segmenter.segment(normalise(clipped))) {
    if (!segment.isWordLike) continue;
    const length = codePoints(segment.segment);
    if (length >= MIN_ALERT_WORD_CHARS && length <= MAX_ALERT_WORD_CHARS) words.add(segment.segment);
  }
  return [...words];
}

export type ParsedAlertWord = { ok: true; word: string } | { ok: false; reason: string };

/**
 * A user's watch word as given (`"Pizza"`, `" café "`, `"#pizza"`): the one word it tokenises to,
 * or why it is not watchable (no word, several words, too short or too long).
 */
export function parseAlertWord(input: string): ParsedAlertWord {
  const words: string[] = [];
  for (const segment of segmenter.segment(normalise(input.slice(0, 4 * MAX_ALERT_WORD_CHARS)))) {
    if (segment.isWordLike) words.push(segment.segment);
  }
  if (words.length === 0) return { ok: false, reason: `${JSON.stringify(input)} holds no word` };
  if (words.length > 1) return { ok: false, reason: `${JSON.stringify(input)} is ${words.length} words; watch one word at a time` };
  const word = words[0] as string;
  const length = codePoints(word);
  if (length < MIN_ALERT_WORD_CHARS)
    return { ok: false, reason: `${JSON.stringify(input)} is shorter than ${MIN_ALERT_WORD_CHARS} characters` };
  if (length > MAX_ALERT_WORD_CHARS)
    return { ok: false, reason: `${JSON.stringify(input)} is longer than ${MAX_ALERT_WORD_CHARS} characters` };
  return { ok: true, word };
}

export type ParsedAlertWords = { ok: true; words: string[] } | { ok: false; reason: string };

/**
 * A whole watch list (from the user API or a 3083's `alertWords`): an array of strings, each one
 * word, at most `maxWords` distinct words once normalised. The first problem is the reason.
 */
export function parseAlertWordList(value: unknown, maxWords: number): ParsedAlertWords {
  if (!Array.isArray(value)) return { ok: false, reason: 'alertWords must be an array of strings' };
  const words = new Set<string>();
  for (const item of value as unknown[]) {
    if (typeof item !== 'string') return { ok: false, reason: `alertWords holds ${JSON.stringify(item)}, not a string` };
    const parsed = parseAlertWord(item);
    if (!parsed.ok) return parsed;
    words.add(parsed.word);
  }
  if (words.size > maxWords) return { ok: false, reason: `alertWords holds ${words.size} words; at most ${maxWords}` };
  return { ok: true, words: [...words] };
}
