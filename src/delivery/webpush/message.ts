/**
 * The Web Push request for one {@link PushMessage}, as pure functions: the plaintext that gets
 * encrypted and the RFC 8030 headers around it.
 *
 * The plaintext is the FCM data map as JSON, so an app decodes the same fields whatever carried
 * them. `Urgency: high` marks user-visible pushes (as FCM's `priority: high` does; iOS needs it
 * to deliver promptly), `Topic` carries the collapse key so a newer push replaces a pending one.
 */
import { createHash } from 'node:crypto';
import { isAlert } from '../fcm/message.ts';
import type { PushMessage } from '../../notification/types.ts';

/** RFC 8030 §5.2 TTL the push service keeps an undelivered message: a day, past which a social push is stale. */
export const DEFAULT_WEBPUSH_TTL_SECS = 86_400;
/** RFC 8030 §5.4: a Topic is at most 32 characters of the URL- and filename-safe base64 alphabet. */
export const MAX_TOPIC_CHARS = 32;
const TOPIC_ALPHABET = /^[A-Za-z0-9_-]+$/;

/** The RFC 8030 / RFC 8188 headers of one push request (lower-case names). */
export interface WebPushHeaders {
  ttl: string;
  urgency: 'high' | 'normal';
  topic?: string;
  'content-encoding': 'aes128gcm';
  'content-type': 'application/octet-stream';
}

/** The plaintext: the data map as JSON, UTF-8. */
export function webPushPlaintext(message: PushMessage): Buffer {
  return Buffer.from(JSON.stringify(message.data), 'utf8');
}

/**
 * A collapse key as an RFC 8030 Topic. A key that already fits is sent as it is; any other key
 * (too long, or with `:` and the like) becomes the first 32 characters of its SHA-256 in
 * base64url, so equal keys still give equal topics and the replace semantic survives.
 */
export function webPushTopic(collapseKey: string): string {
  if (collapseKey.length > 0 && collapseKey.length <= MAX_TOPIC_CHARS && TOPIC_ALPHABET.test(collapseKey)) return collapseKey;
  return createHash('sha256').update(collapseKey, 'utf8').digest('base64url').slice(0, MAX_TOPIC_CHARS);
}

export function webPushHeaders(message: PushMessage, ttlSecs: number): WebPushHeaders {
  const headers: WebPushHeaders = {
    ttl: String(Math.max(0, Math.floor(ttlSecs))),
    urgency: isAlert(message) ? 'high' : 'normal',
    'content-encoding': 'aes128gcm',
    'content-type': 'application/octet-stream',
  };
  if (message.collapseKey !== undefined && message.collapseKey !== '') headers.topic = webPushTopic(message.collapseKey);
  return headers;
}
