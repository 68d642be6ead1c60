/**
 * Relay → client frames (NIP-01, NIP-42), parsed defensively: any input gives a typed frame or a
 * low-cardinality error reason, never an exception.
 */

/** Largest frame accepted from a relay (1 MiB); `ws` drops the connection on a bigger one. */
export const MAX_RELAY_FRAME_BYTES = 1024 * 1024;

/** NIP-01 caps subscription ids at 64 characters; longer ones are not ours. */
export const MAX_SUBSCRIPTION_ID_CHARS = 64;

/** Longest NOTICE / CLOSED / OK message kept (longer ones are cut for logs). */
export const MAX_RELAY_MESSAGE_CHARS = 512;

/** Longest NIP-42 challenge we sign; real relays send a UUID or a few dozen characters. */
export const MAX_AUTH_CHALLENGE_CHARS = 1024;

export type RelayFrame =
  | { type: 'EVENT'; subscriptionId: string; event: unknown }
  | { type: 'EOSE'; subscriptionId: string }
  | { type: 'CLOSED'; subscriptionId: string; reason: string }
  | { type: 'NOTICE'; message: string }
  | { type: 'OK'; eventId: string; accepted: boolean; message: string }
  | { type: 'AUTH'; challenge: string };

/** Why a frame was dropped; the `reason` label of `push_relay_protocol_errors_total`. */
export type FrameErrorReason =
  'not_json' | 'not_array' | 'unknown_type' | 'bad_event' | 'bad_eose' | 'bad_closed' | 'bad_notice' | 'bad_ok' | 'bad_auth';

export interface FrameError {
  type: 'invalid';
  reason: FrameErrorReason;
}

function isSubscriptionId(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_SUBSCRIPTION_ID_CHARS;
}

function message(value: unknown): string {
  if (typeof value !== 'string') return '';
  return value.length > MAX_RELAY_MESSAGE_CHARS ? `${value.slice(0, MAX_RELAY_MESSAGE_CHARS)}…` : value;
}

const invalid = (reason: FrameErrorReason): FrameError => ({ type: 'invalid', reason });

/** Parses one text frame. The EVENT body is left as `unknown` for `parseEvent`. */
export function parseRelayFrame(text: string): RelayFrame | FrameError {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return invalid('not_json');
  }
  if (!Array.isArray(value) || typeof value[0] !== 'string') return invalid('not_array');
  const items: unknown[] = value;
  switch (items[0]) {
    case 'EVENT':
      if (items.length !== 3 || !isSubscriptionId(items[1])) return invalid('bad_event');
      return { type: 'EVENT', subscriptionId: items[1], event: items[2] };
    case 'EOSE':
      if (!isSubscriptionId(items[1])) return invalid('bad_eose');
      return { type: 'EOSE', subscriptionId: items[1] };
    case 'CLOSED':
      if (!isSubscriptionId(items[1]) || (items[2] !== undefined && typeof items[2] !== 'string')) return invalid('bad_closed');
      return { type: 'CLOSED', subscriptionId: items[1], reason: message(items[2]) };
    case 'NOTICE':
      if (typeof items[1] !== 'string') return invalid('bad_notice');
      return { type: 'NOTICE', message: message(items[1]) };
    case 'OK':
      if (typeof items[1] !== 'string' || typeof items[2] !== 'boolean') return invalid('bad_ok');
      return { type: 'OK', eventId: items[1], accepted: items[2], message: message(items[3]) };
    case 'AUTH':
      if (typeof items[1] !== 'string' || items[1].length === 0 || items[1].length > MAX_AUTH_CHALLENGE_CHARS) {
        return invalid('bad_auth');
      }
      return { type: 'AUTH', challenge: items[1] };
    default:
      return invalid('unknown_type');
  }
}

/** What {@link peekEventFrame} reads from a raw EVENT frame without parsing it. */
export interface EventFramePeek {
  subscriptionId: string;
  /** The event id, when one was found; null otherwise. */
  eventId: string | null;
}

// Our subscription ids are plain ASCII without escapes, so a frame whose id needs escaping is
// simply not peeked (and gets the full parse).
const EVENT_FRAME_PREFIX = /^\s*\[\s*"EVENT"\s*,\s*"([^"\\]{1,64})"\s*,/;
// Inside a JSON string every quote is escaped, so an unescaped `"id":` is a key: the event's own
// unless the relay nests objects in extra fields. The peek is only ever used to DROP a frame
// (unknown subscription, id already accepted), so a lying relay can only hide its own events.
const EVENT_ID_KEY = /"id"\s*:\s*"([0-9a-f]{64})"/;

/**
 * Reads the subscription id and event id of an EVENT frame with two regular expressions, so
 * frames for unknown subscriptions and events already accepted are dropped before JSON.parse
 * (the firehose is mostly duplicates when several relays are listened to). Null when the text
 * does not look like an EVENT frame; the caller then parses it fully.
 */
export function peekEventFrame(text: string): EventFramePeek | null {
  const prefix = EVENT_FRAME_PREFIX.exec(text);
  if (prefix === null || prefix[1] === undefined) return null;
  const id = EVENT_ID_KEY.exec(text);
  return { subscriptionId: prefix[1], eventId: id?.[1] ?? null };
}

/** The machine prefix of a CLOSED/OK message (`auth-required`, `rate-limited`, …), or ''. */
export function machinePrefix(reason: string): string {
  const colon = reason.indexOf(':');
  return colon > 0 ? reason.slice(0, colon).trim() : '';
}

/** Decodes a `ws` message payload to text. */
export function frameText(data: Buffer | ArrayBuffer | Buffer[]): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return data.toString('utf8');
}
