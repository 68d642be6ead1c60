/**
 * ntfy message ids: 12 characters of `[0-9A-Za-z]`, the shape ntfy and its Android app expect
 * (ntfy's `validMessageID`), made globally ordered so that any id is a cursor across topics.
 *
 * An id is a position `(ms, seq)` written in base 62 with the alphabet in ASCII order, so
 * comparing two ids as strings compares their positions:
 *
 * | chars | meaning                                                                      |
 * |-------|------------------------------------------------------------------------------|
 * | 1–8   | `ms`: store-clock milliseconds at append (62^8 ms ≈ 6,900 years)             |
 * | 9–12  | `seq`: order among ids allocated in the same millisecond (0…62^4 − 1)        |
 *
 * The store allocates positions atomically with {@link nextNtfyPosition}: never below the last
 * allocated one, so ids rise in commit order even when the clocks of two writers disagree. Every
 * 12-character alphanumeric string decodes to some position, which is why a well-formed but
 * unknown id (one from another server) must be looked up before it is trusted as a cursor.
 */

export const NTFY_ID_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BASE = 62;
/** Characters of an id. */
export const NTFY_ID_LENGTH = 12;
/** Characters holding the millisecond part. */
const MS_CHARS = 8;
/** Characters holding the sequence part. */
const SEQ_CHARS = 4;
/** The largest sequence number within one millisecond (62^4 − 1). */
export const NTFY_MAX_SEQ = BASE ** SEQ_CHARS - 1;
/** The largest millisecond an id can carry (62^8 − 1). */
export const NTFY_MAX_MS = BASE ** MS_CHARS - 1;

const ID_PATTERN = /^[0-9A-Za-z]{12}$/;

/** Where an id sits in the global order. */
export interface NtfyPosition {
  ms: number;
  seq: number;
}

function encodeDigits(value: number, width: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = NTFY_ID_ALPHABET.charAt(rest % BASE) + out;
    rest = Math.floor(rest / BASE);
  }
  return out;
}

function decodeDigits(text: string): number {
  let value = 0;
  for (const char of text) value = value * BASE + NTFY_ID_ALPHABET.indexOf(char);
  return value;
}

/** True for exactly 12 characters of `[0-9A-Za-z]` (ntfy's `validMessageID`). */
export function isNtfyMessageId(text: string): boolean {
  return ID_PATTERN.test(text);
}

export function encodeNtfyId(position: NtfyPosition): string {
  const { ms, seq } = position;
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > NTFY_MAX_MS) throw new RangeError(`ntfy id: ms out of range: ${ms}`);
  if (!Number.isSafeInteger(seq) || seq < 0 || seq > NTFY_MAX_SEQ) throw new RangeError(`ntfy id: seq out of range: ${seq}`);
  return encodeDigits(ms, MS_CHARS) + encodeDigits(seq, SEQ_CHARS);
}

/** The position of an id, or null when it is not 12 alphanumeric characters. */
export function decodeNtfyId(id: string): NtfyPosition | null {
  if (!isNtfyMessageId(id)) return null;
  return { ms: decodeDigits(id.slice(0, MS_CHARS)), seq: decodeDigits(id.slice(MS_CHARS)) };
}

/**
 * The position after `last` for an append at `nowMs`: the current millisecond when the clock is
 * past the last id, otherwise the next sequence number of the last id's millisecond (rolling into
 * the next millisecond when a millisecond's sequence space is used up).
 */
export function nextNtfyPosition(last: NtfyPosition | null, nowMs: number): NtfyPosition {
  const now = Math.max(0, Math.floor(nowMs));
  if (last === null || now > last.ms) return { ms: now, seq: 0 };
  if (last.seq < NTFY_MAX_SEQ) return { ms: last.ms, seq: last.seq + 1 };
  return { ms: last.ms + 1, seq: 0 };
}

/**
 * The largest id below every id allocated at or after `ms`: a cursor "after" which exactly the
 * messages from `ms` on follow (how `since=<time>` becomes a cursor).
 */
export function ntfyIdBefore(ms: number): string | null {
  const at = Math.floor(ms);
  if (at <= 0) return null;
  return encodeNtfyId({ ms: Math.min(at - 1, NTFY_MAX_MS), seq: NTFY_MAX_SEQ });
}

/** The millisecond an id was allocated at (its `time` is this in whole seconds). */
export function ntfyIdMs(id: string): number {
  const position = decodeNtfyId(id);
  if (!position) throw new RangeError(`not an ntfy message id: ${id}`);
  return position.ms;
}
