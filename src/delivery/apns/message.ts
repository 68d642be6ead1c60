/**
 * The APNs request for one push (reference §2.3), as a pure function: the same `aps` body as the
 * FCM message's APNs override of seed 000 (`aps.alert` + `mutable-content: 1`, push type
 * `alert`, priority 10, never `content-available` on an alert; the background shape for a push
 * without text), plus the headers Apple reads directly: `apns-topic` (the bundle id),
 * `apns-expiration` and `apns-collapse-id` (the coalescing collapse key).
 *
 * `aps.badge` is the data map's `badge` field when it holds a whole number (the inbox's unread
 * count); the field also stays in the custom data for the app.
 */
import { buildApnsConfig, type FcmApsDictionary } from '../fcm/message.ts';
import type { PushMessage } from '../../notification/types.ts';

/** `aps` as Apple reads it here: FCM's override dictionary plus the badge. */
export interface ApnsApsDictionary extends FcmApsDictionary {
  badge?: number;
}

/** The JSON body: `aps` first, then every data field except `title` and `body`. */
export type ApnsPayload = { aps: ApnsApsDictionary } & Record<string, string | ApnsApsDictionary>;

export interface ApnsRequestParts {
  /** Header fields in a fixed order (golden tests compare them): push type, priority, topic, expiration, collapse id. */
  headers: Array<[string, string]>;
  payload: ApnsPayload;
}

export interface ApnsRequestOptions {
  /** `apns-topic`: the app's bundle id. */
  topic: string;
  /** `apns-expiration` (unix seconds); 0 means deliver now or never. */
  expiresAtSecs: number;
}

/** Largest badge Apple's `aps.badge` sensibly carries (an unsigned 32-bit count). */
const MAX_BADGE = 0xffff_ffff;

/** The headers and body for `message`; null for an empty data map (nothing to show or deliver). */
export function toApnsRequest(message: PushMessage, options: ApnsRequestOptions): ApnsRequestParts | null {
  const config = buildApnsConfig(message);
  if (!config) return null;
  const aps: ApnsApsDictionary = config.payload.aps;
  const badge = parseBadge(message.data.badge);
  if (badge !== undefined) aps.badge = badge;
  const headers: Array<[string, string]> = [
    ['apns-push-type', config.headers['apns-push-type']],
    ['apns-priority', config.headers['apns-priority']],
    ['apns-topic', options.topic],
    ['apns-expiration', String(options.expiresAtSecs)],
  ];
  const collapseId = config.headers['apns-collapse-id'];
  if (collapseId !== undefined) headers.push(['apns-collapse-id', collapseId]);
  return { headers, payload: config.payload };
}

function parseBadge(raw: string | undefined): number | undefined {
  if (raw === undefined || !/^\d{1,10}$/.test(raw)) return undefined;
  const count = Number(raw);
  return count <= MAX_BADGE ? count : undefined;
}
