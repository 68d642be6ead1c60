/**
 * The stored form of a fan-out page job, shared by both adapters: divine-push-service's job JSON
 * `{"event_json": "<signed event>", "cursor": u64, "sender_name": string|null, "attempt": u16,
 * "expires_at": unix secs}`, with the keys in that order. In Redis the JSON is the sorted-set
 * member itself, so a divine Redis's queued jobs are read and continued as they are.
 *
 * A cursor is a decimal number in divine's form (SSCAN cursors); a cursor that is not one (a
 * SQLite keyset position) is stored as a JSON string instead.
 */
import type { FanoutJob } from './port-bells.ts';

/** Largest `attempt` divine's u16 field holds. */
const MAX_ATTEMPT = 65_535;
const DECIMAL = /^(0|[1-9][0-9]*)$/;

function encodeCursor(cursor: string): number | string {
  if (DECIMAL.test(cursor)) {
    const value = Number(cursor);
    if (Number.isSafeInteger(value)) return value;
  }
  return cursor;
}

/** The stored form of `job`; equal jobs always encode to the same string. */
export function encodeFanoutJob(job: FanoutJob): string {
  return JSON.stringify({
    event_json: job.eventJson,
    cursor: encodeCursor(job.cursor),
    sender_name: job.senderName,
    attempt: job.attempt,
    expires_at: job.expiresAt,
  });
}

/** The job in a stored form, or null when it is not a well-formed job. */
export function decodeFanoutJob(member: string): FanoutJob | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(member);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const record = parsed as Record<string, unknown>;
  const { event_json: eventJson, cursor, sender_name: senderName, attempt, expires_at: expiresAt } = record;
  if (typeof eventJson !== 'string') return null;
  let cursorText: string;
  if (typeof cursor === 'number' && Number.isInteger(cursor) && cursor >= 0) cursorText = BigInt(cursor).toString();
  else if (typeof cursor === 'string' && cursor !== '') cursorText = cursor;
  else return null;
  if (senderName !== null && senderName !== undefined && typeof senderName !== 'string') return null;
  if (typeof attempt !== 'number' || !Number.isInteger(attempt) || attempt < 0 || attempt > MAX_ATTEMPT) return null;
  if (typeof expiresAt !== 'number' || !Number.isFinite(expiresAt)) return null;
  return { eventJson, cursor: cursorText, senderName: senderName ?? null, attempt, expiresAt };
}
