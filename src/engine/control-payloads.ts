import type { DeviceRegistration, Preferences, Transport } from '../store/port.ts';
import type { SocialFilters } from '../store/port-social-filters.ts';
import { canonicalLocale } from '../notification/templates/compile.ts';
import type { QuietHours } from '../store/port-quiet-hours.ts';
import { parseClockTime } from '../platform/local-time.ts';
import type { NotificationType } from '../notification/types.ts';
import { HOLDABLE_TYPES } from '../notification/types.ts';

/**
 * The decrypted JSON bodies of the control events (NIP-XX push notifications, reference §2.2):
 *
 * - 3079/3080: `{"token": "...", "timezoneOffsetMinutes"?: int}` as divine-push-service reads it,
 *   plus nostr-push's optional `"transport"` (`fcm` default, `apns`, `webpush`, `unifiedpush`) with
 *   `"endpoint"`, `"p256dh"` and `"auth"` for the last two, so later transports need no protocol change;
 *   `"sandbox": true` (apns only: a development build, pushed through Apple's sandbox),
 *   `"encryptTo": "<device pubkey hex>"` (any transport: the data map travels NIP-44 encrypted to it)
 *   and `"locale": "pt-BR"` (a BCP 47 tag, `pt_BR` accepted: the language of the device's copy).
 * - 3083: `{"kinds": [int...], "campaignsEnabled"?: bool}`, plus nostr-push's optional
 *   `"mutedPubkeys": [hex...]` (the private part of the user's kind 10000 mute list, shared with
 *   the service) and `"onlyFollowing": true | [type...]` (limit those notification types to
 *   senders in the user's kind 3 contact list).
 *
 * Parsers return a value or a reason string; they never throw.
 */

export const TRANSPORTS: readonly Transport[] = ['fcm', 'apns', 'webpush', 'unifiedpush'];

/** Longest token accepted; real FCM tokens are ~160 chars, APNs 64, push endpoints a few hundred. */
export const MAX_TOKEN_CHARS = 4096;
/** Timezone offsets run from UTC−12 to UTC+14. */
const MAX_OFFSET_MINUTES = 14 * 60;
const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;
/** An x-only secp256k1 public key as Nostr writes it. */
const HEX_PUBKEY = /^[0-9a-f]{64}$/;

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

function parseJsonObject(plaintext: string): Record<string, unknown> | string {
  let value: unknown;
  try {
    value = JSON.parse(plaintext);
  } catch {
    return 'payload is not JSON';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'payload is not a JSON object';
  return value as Record<string, unknown>;
}

/** Parse a 3079/3080 payload into the device it names. */
export function parseTokenPayload(plaintext: string): Parsed<DeviceRegistration> {
  const body = parseJsonObject(plaintext);
  if (typeof body === 'string') return { ok: false, reason: body };
  if (typeof body.token !== 'string') return { ok: false, reason: 'token is missing' };
  const token = body.token.trim();
  if (token === '') return { ok: false, reason: 'Token cannot be empty' };
  if (token.length > MAX_TOKEN_CHARS) return { ok: false, reason: 'token is too long' };

  const transport = body.transport === undefined ? 'fcm' : body.transport;
  if (typeof transport !== 'string' || !(TRANSPORTS as readonly string[]).includes(transport)) {
    return { ok: false, reason: `unknown transport ${JSON.stringify(transport)}` };
  }
  const device: DeviceRegistration = { token, transport: transport as Transport };

  const offset = body.timezoneOffsetMinutes;
  if (offset !== undefined && offset !== null) {
    if (typeof offset !== 'number' || !Number.isInteger(offset) || Math.abs(offset) > MAX_OFFSET_MINUTES) {
      return { ok: false, reason: 'timezoneOffsetMinutes must be an integer between -840 and 840' };
    }
    device.timezoneOffsetMinutes = offset;
  }

  if (body.sandbox !== undefined && body.sandbox !== null) {
    if (typeof body.sandbox !== 'boolean') return { ok: false, reason: 'sandbox must be a boolean' };
    if (body.sandbox && device.transport !== 'apns') return { ok: false, reason: 'sandbox applies to apns devices only' };
    if (body.sandbox) device.sandbox = true;
  }
  if (body.encryptTo !== undefined && body.encryptTo !== null) {
    if (typeof body.encryptTo !== 'string' || !HEX_PUBKEY.test(body.encryptTo.toLowerCase()))
      return { ok: false, reason: 'encryptTo must be a 64-character hex public key' };
    device.encryptTo = body.encryptTo.toLowerCase();
  }

  if (body.locale !== undefined && body.locale !== null) {
    const locale = typeof body.locale === 'string' ? canonicalLocale(body.locale) : null;
    if (locale === null) return { ok: false, reason: 'locale must be a BCP 47 language tag such as pt-BR' };
    device.locale = locale;
  }

  if (device.transport === 'webpush' || device.transport === 'unifiedpush') {
    const endpoint = typeof body.endpoint === 'string' ? body.endpoint.trim() : token;
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch {
      return { ok: false, reason: 'endpoint is not a URL' };
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: 'endpoint must be http(s)' };
    if (typeof body.p256dh !== 'string' || !BASE64URL.test(body.p256dh)) return { ok: false, reason: 'p256dh must be base64url' };
    if (typeof body.auth !== 'string' || !BASE64URL.test(body.auth)) return { ok: false, reason: 'auth must be base64url' };
    device.endpoint = endpoint;
    device.p256dh = body.p256dh;
    device.auth = body.auth;
  }
  return { ok: true, value: device };
}

/** Parse a 3083 payload. An empty `kinds` list is valid: it disables everything. */
export function parsePreferencesPayload(plaintext: string): Parsed<Preferences> {
  const body = parseJsonObject(plaintext);
  if (typeof body === 'string') return { ok: false, reason: body };
  const kinds = body.kinds;
  if (!Array.isArray(kinds)) return { ok: false, reason: 'kinds must be an array' };
  if (kinds.length > 1000) return { ok: false, reason: 'kinds lists at most 1000 entries' };
  const clean: number[] = [];
  for (const k of kinds) {
    if (typeof k !== 'number' || !Number.isInteger(k) || k < 0 || k > 65535)
      return { ok: false, reason: `kinds holds ${JSON.stringify(k)}` };
    if (!clean.includes(k)) clean.push(k);
  }
  const consent = body.campaignsEnabled;
  if (consent !== undefined && typeof consent !== 'boolean') return { ok: false, reason: 'campaignsEnabled must be a boolean' };
  return { ok: true, value: { kinds: clean, campaignsEnabled: consent === true } };
}

/** Most privately muted pubkeys kept from one 3083 (a mute list of thousands is already unusual). */
export const MAX_MUTED_PUBKEYS = 10_000;
/** The notification types `onlyFollowing` may name. */
export const FILTERABLE_TYPES: readonly NotificationType[] = ['like', 'comment', 'mention', 'repost', 'directMessage', 'newPost'];

/** The social filters of a 3083 payload (absent fields filter nothing). */
export function parseSocialFiltersPayload(plaintext: string): Parsed<SocialFilters> {
  const body = parseJsonObject(plaintext);
  if (typeof body === 'string') return { ok: false, reason: body };
  const filters: SocialFilters = { mutedPubkeys: [], onlyFollowing: null };
  const muted = body.mutedPubkeys;
  if (muted !== undefined && muted !== null) {
    if (!Array.isArray(muted)) return { ok: false, reason: 'mutedPubkeys must be an array' };
    if (muted.length > MAX_MUTED_PUBKEYS) return { ok: false, reason: `mutedPubkeys lists at most ${MAX_MUTED_PUBKEYS} entries` };
    const seen = new Set<string>();
    for (const entry of muted) {
      const pubkey = typeof entry === 'string' ? entry.toLowerCase() : '';
      if (!HEX_PUBKEY.test(pubkey)) return { ok: false, reason: `mutedPubkeys holds ${JSON.stringify(entry)}, not a hex pubkey` };
      seen.add(pubkey);
    }
    filters.mutedPubkeys = [...seen];
  }
  const only = body.onlyFollowing;
  if (only === true) filters.onlyFollowing = 'all';
  else if (Array.isArray(only)) {
    const types: string[] = [];
    for (const type of only) {
      if (typeof type !== 'string' || !(FILTERABLE_TYPES as readonly string[]).includes(type))
        return { ok: false, reason: `onlyFollowing holds ${JSON.stringify(type)}, not a notification type` };
      if (!types.includes(type)) types.push(type);
    }
    if (types.length > 0) filters.onlyFollowing = types;
  } else if (only !== undefined && only !== null && only !== false) {
    return { ok: false, reason: 'onlyFollowing must be true, false or a list of notification types' };
  }
  return { ok: true, value: filters };
}

/**
 * The quiet hours of a 3083 payload (issue 15): `"quietHours": {"start": "22:00", "end": "07:00"}`
 * (24-hour device-local times; the window is [start, end), wrapping midnight when start > end)
 * and `"urgentTypes": [type...]` (held types pushed during the window anyway). Absent or null
 * `quietHours` is none (a 3083 is the whole description: it clears earlier ones).
 */
export function parseQuietHoursPayload(plaintext: string): Parsed<QuietHours | null> {
  const body = parseJsonObject(plaintext);
  if (typeof body === 'string') return { ok: false, reason: body };
  const hours = body.quietHours;
  if (hours === undefined || hours === null) return { ok: true, value: null };
  if (typeof hours !== 'object' || Array.isArray(hours)) return { ok: false, reason: 'quietHours must be {start, end}' };
  const { start, end } = hours as Record<string, unknown>;
  const startMinute = typeof start === 'string' ? parseClockTime(start) : null;
  const endMinute = typeof end === 'string' ? parseClockTime(end) : null;
  if (startMinute === null || endMinute === null) return { ok: false, reason: 'quietHours start and end must be "HH:MM"' };
  if (startMinute === endMinute) return { ok: false, reason: 'quietHours start and end must differ' };
  const urgent = body.urgentTypes;
  const urgentTypes: string[] = [];
  if (urgent !== undefined && urgent !== null) {
    if (!Array.isArray(urgent)) return { ok: false, reason: 'urgentTypes must be a list of notification types' };
    for (const type of urgent) {
      if (typeof type !== 'string' || !(HOLDABLE_TYPES as readonly string[]).includes(type))
        return { ok: false, reason: `urgentTypes holds ${JSON.stringify(type)}, not a notification type quiet hours hold` };
      if (!urgentTypes.includes(type)) urgentTypes.push(type);
    }
  }
  return { ok: true, value: { startMinute, endMinute, urgentTypes } };
}
