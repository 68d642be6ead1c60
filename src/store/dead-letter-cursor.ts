/**
 * The dead-letter page cursor of both adapters: a position in the (dead-letter time, id) order,
 * base64url so it passes through a query string untouched. Opaque to callers.
 */
import { InvalidCursorError } from './port-dlq.ts';

export interface DeadLetterPosition {
  deadAtMs: number;
  id: string;
}

export function encodeDeadLetterCursor(position: DeadLetterPosition): string {
  return Buffer.from(`${position.deadAtMs}:${position.id}`, 'utf8').toString('base64url');
}

export function decodeDeadLetterCursor(cursor: string): DeadLetterPosition {
  const text = /^[A-Za-z0-9_-]{1,2048}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const colon = text.indexOf(':');
  const deadAtMs = Number(text.slice(0, colon));
  if (colon < 1 || !Number.isSafeInteger(deadAtMs)) throw new InvalidCursorError(cursor);
  return { deadAtMs, id: text.slice(colon + 1) };
}
