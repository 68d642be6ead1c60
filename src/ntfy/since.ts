/**
 * `since=` as ntfy parses it (`parseSince` in ntfy's server.go), in ntfy's order: the keywords,
 * then a message id (exactly 12 of `[0-9A-Za-z]`, so a 12-digit number is an id), then a unix
 * timestamp in seconds, then a duration back from now. Anything else is 400 40008.
 */
import { isNtfyMessageId } from '../store/ntfy-ids.ts';
import { parseGoDuration } from './duration.ts';
import { NtfyError } from './errors.ts';

export type SinceSpec =
  | { kind: 'all' }
  | { kind: 'none' }
  /** The newest cached message of each topic. */
  | { kind: 'latest' }
  /** Messages after this id, when it is known; every cached message when it is not. */
  | { kind: 'id'; id: string }
  /** Messages at or after this time (ms). */
  | { kind: 'time'; ms: number };

/**
 * @param raw the parameter as given (absent or empty: `none` for a stream, `all` for a poll)
 * @param nowMs the clock durations count back from
 */
export function parseSince(raw: string | undefined, poll: boolean, nowMs: number): SinceSpec {
  const since = raw ?? '';
  if (since === '') return poll ? { kind: 'all' } : { kind: 'none' };
  if (since === 'all') return { kind: 'all' };
  if (since === 'none') return { kind: 'none' };
  if (since === 'latest') return { kind: 'latest' };
  if (isNtfyMessageId(since)) return { kind: 'id', id: since };
  if (/^[+-]?\d+$/.test(since)) {
    const seconds = Number(since);
    if (Number.isSafeInteger(seconds * 1000)) return { kind: 'time', ms: seconds * 1000 };
  }
  const duration = parseGoDuration(since);
  if (duration !== null) return { kind: 'time', ms: nowMs - duration };
  throw new NtfyError('SINCE_INVALID');
}
