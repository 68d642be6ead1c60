/**
 * Scheduled delivery times (`X-Delay`, `Delay`, `X-At`, `At`, `X-In`, `In`; `delay` in a JSON
 * publish) read the way ntfy reads them (its `ParseFutureTime`), first match wins:
 *
 * 1. a Unix timestamp in seconds, not in the past (`1639194738`);
 * 2. a duration from now: Go's syntax (`30m`, `1h30m`, `100s`), days (`2d`), or a number and a
 *    word (`30 min`, `2 hours`, `1 day`, `10 seconds`);
 * 3. a natural-language or absolute time, by the chrono-node parser (ntfy uses Go's `when`):
 *    `10am`, `8:30pm`, `tomorrow, 3pm`, `Tuesday, 7am`, `next week`, `2026-09-02T10:00:00Z`; a time
 *    of day already past today means tomorrow. It is read in the IANA zone `X-Timezone` names
 *    (`Asia/Tokyo`), else in the server's own zone.
 *
 * The result must lie within the configured bounds (at least `ntfy.min_delay`, at most
 * `ntfy.max_delay` from now, compared in whole seconds as ntfy does): 40005 and 40006 otherwise,
 * 40004 for text that is none of the above or an unknown timezone.
 */
import * as chrono from 'chrono-node';
import { parseGoDuration } from './duration.ts';
import { NtfyError } from './errors.ts';

const SECOND_MS = 1000;
const UNIT_MS: Readonly<Record<string, number>> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 };
/** ntfy's duration words (`durationStrRegex`). */
const WORD_DURATION = /^(\d+)\s*(d|days?|h|hours?|m|mins?|minutes?|s|secs?|seconds?)$/i;
/** IANA zone names only: `Area/City` or a single word such as `UTC` (no offsets, no paths). */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

export interface DelayBounds {
  minMs: number;
  maxMs: number;
}

/**
 * The offset from UTC (minutes) of IANA zone `zone` at `atMs`, or null when the zone is unknown.
 * (One offset for the whole parse: a time across a daylight-saving change from now is read with
 * today's offset.)
 */
export function zoneOffsetMinutes(zone: string, atMs: number): number | null {
  if (!ZONE_NAME.test(zone) || zone.includes('..')) return null;
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch {
    return null;
  }
  const parts: Record<string, number> = {};
  for (const part of format.formatToParts(new Date(atMs))) if (part.type !== 'literal') parts[part.type] = Number(part.value);
  const asUtc = Date.UTC(parts.year ?? 0, (parts.month ?? 1) - 1, parts.day ?? 1, parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0);
  return Math.round((asUtc - Math.floor(atMs / SECOND_MS) * SECOND_MS) / 60_000);
}

function durationMs(text: string): number | null {
  const go = parseGoDuration(text);
  if (go !== null) return go;
  const words = WORD_DURATION.exec(text);
  if (!words?.[1] || !words[2]) return null;
  return Number(words[1]) * (UNIT_MS[words[2].charAt(0).toLowerCase()] as number);
}

function naturalMs(text: string, nowMs: number, offsetMinutes: number | undefined): number | null {
  const reference = { instant: new Date(nowMs), timezone: offsetMinutes };
  const first = chrono.parseDate(text, reference, { forwardDate: true });
  if (first === null) return null;
  if (first.getTime() > nowMs) return first.getTime();
  // ntfy's rule for a time it can read but that is not in the future: the same, tomorrow.
  const tomorrow = chrono.parseDate(`tomorrow, ${text}`, reference, { forwardDate: true });
  return tomorrow && tomorrow.getTime() > nowMs ? tomorrow.getTime() : null;
}

/** When `text` says to deliver (ms), or null when it says nothing this reader understands. */
export function parseFutureTime(text: string, nowMs: number, offsetMinutes?: number): number | null {
  const trimmed = text.trim();
  if (/^[+-]?\d+$/.test(trimmed)) {
    // A bare number is a timestamp (Go's duration syntax needs a unit, and no natural form is one).
    const seconds = Number(trimmed);
    if (seconds === 0) return nowMs; // Go's duration "0"
    return Number.isSafeInteger(seconds) && seconds >= Math.floor(nowMs / SECOND_MS) ? seconds * SECOND_MS : null;
  }
  const duration = durationMs(trimmed);
  if (duration !== null) return nowMs + duration;
  return naturalMs(trimmed, nowMs, offsetMinutes);
}

/**
 * The delivery time (ms) of a publish with `delay` (and optionally `timezone`), checked against
 * `bounds`. Throws ntfy's 40004, 40005 or 40006.
 */
export function deliveryTime(delay: string, timezone: string | undefined, nowMs: number, bounds: DelayBounds): number {
  let offset: number | undefined;
  if (timezone !== undefined) {
    const zoneOffset = zoneOffsetMinutes(timezone, nowMs);
    if (zoneOffset === null) throw new NtfyError('DELAY_CANNOT_PARSE', `unknown timezone ${JSON.stringify(timezone)}`);
    offset = zoneOffset;
  }
  const at = parseFutureTime(delay, nowMs, offset);
  if (at === null || !Number.isFinite(at)) throw new NtfyError('DELAY_CANNOT_PARSE');
  const atSecs = Math.floor(at / SECOND_MS);
  if (atSecs < Math.floor((nowMs + bounds.minMs) / SECOND_MS)) throw new NtfyError('DELAY_TOO_SMALL');
  if (atSecs > Math.floor((nowMs + bounds.maxMs) / SECOND_MS)) throw new NtfyError('DELAY_TOO_LARGE');
  // ntfy keeps the delivery time in whole seconds.
  return atSecs * SECOND_MS;
}
