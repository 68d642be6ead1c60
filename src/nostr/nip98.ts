/**
 * NIP-98 HTTP auth: `Authorization: Nostr <base64 of a signed kind 27235 event>`.
 *
 * Every rule the NIP states, checked in this order so the cheap refusals come first and the
 * signature (the costly part) is checked only for a well-formed event about this very request:
 * header shape, event shape, kind 27235, `created_at` within {@link NIP98_MAX_SKEW_SECS} of now
 * (past and future, as nostr-tools does), `u` equal to the absolute request URL (query included),
 * `method` equal to the request method, `payload` equal to the body's sha256 (required whenever
 * the request has a body), then id and signature, then replay: an auth event is good for one
 * request only, remembered through the store so every replica refuses a second use.
 */

import { createHash } from 'node:crypto';
import { isEventRejection, parseEvent, type EventVerifier, type NostrEvent } from './event.ts';
import { firstTagValue } from './tags.ts';

/** The NIP-98 event kind. */
export const HTTP_AUTH_KIND = 27235;

/** Allowed distance between `created_at` and now, either way: 60 s, the NIP's suggestion. */
export const NIP98_MAX_SKEW_SECS = 60;

/**
 * How long a used auth event id is remembered: past the last second at which its `created_at`
 * could still pass the window (2 × skew), plus a margin for clock differences between replicas.
 */
export const NIP98_REPLAY_TTL_SECS = 2 * NIP98_MAX_SKEW_SECS + 60;

/** Largest header accepted: an auth event has no content and a few tags; 16 KiB is generous. */
export const NIP98_MAX_HEADER_CHARS = 16 * 1024;

export type Nip98FailureCode =
  'missing' | 'malformed' | 'wrong-kind' | 'stale' | 'url-mismatch' | 'method-mismatch' | 'payload-mismatch' | 'bad-signature' | 'replayed';

export type Nip98Result = { ok: true; pubkey: string; event: NostrEvent } | { ok: false; code: Nip98FailureCode; reason: string };

export interface Nip98Request {
  method: string;
  /** The absolute URL the client addressed, query included (behind a proxy: the public URL). */
  url: string;
  /** The request body; absent or empty for none. */
  body?: Uint8Array;
  /** The `Authorization` header as received. */
  authorization?: string;
}

/** Takes the one-time claim on an auth event id; false when it was already used. */
export type Nip98ReplayClaim = (eventId: string, ttlSecs: number) => Promise<boolean>;

export interface Nip98Options {
  /** Now, in unix seconds (from the store's clock, so replicas agree). */
  nowSecs: number;
  verifier: EventVerifier;
  replay: Nip98ReplayClaim;
  maxSkewSecs?: number;
}

function fail(code: Nip98FailureCode, reason: string): Nip98Result {
  return { ok: false, code, reason };
}

/** Decode the header into an event; a refusal says what was wrong with it. */
function decodeHeader(authorization: string | undefined): NostrEvent | Nip98Result {
  if (authorization === undefined || authorization === '') return fail('missing', 'no Authorization header');
  if (authorization.length > NIP98_MAX_HEADER_CHARS) return fail('malformed', 'Authorization header too long');
  const match = /^Nostr\s+([A-Za-z0-9+/=_-]+)\s*$/.exec(authorization);
  if (!match?.[1]) return fail('malformed', 'Authorization is not "Nostr <base64 event>"');
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(match[1], 'base64').toString('utf8'));
  } catch {
    return fail('malformed', 'Authorization event is not base64 JSON');
  }
  const event = parseEvent(json);
  if (isEventRejection(event)) return fail('malformed', `Authorization event is malformed: ${event.message}`);
  return event;
}

function sha256Hex(body: Uint8Array): string {
  return createHash('sha256').update(body).digest('hex');
}

/** Check a request's NIP-98 authorization; on success, the authenticated pubkey. */
export async function verifyNip98(request: Nip98Request, options: Nip98Options): Promise<Nip98Result> {
  const decoded = decodeHeader(request.authorization);
  if ('ok' in decoded) return decoded;
  const event = decoded;
  if (event.kind !== HTTP_AUTH_KIND) return fail('wrong-kind', `kind ${event.kind}, expected ${HTTP_AUTH_KIND}`);

  const skew = options.maxSkewSecs ?? NIP98_MAX_SKEW_SECS;
  if (Math.abs(options.nowSecs - event.created_at) > skew) {
    return fail('stale', `created_at ${event.created_at} is more than ${skew} s from now (${options.nowSecs})`);
  }

  const url = firstTagValue(event, 'u');
  if (url === undefined) return fail('url-mismatch', 'no u tag');
  if (!/^https?:\/\//i.test(url)) return fail('url-mismatch', 'u tag is not an absolute URL');
  if (url !== request.url) return fail('url-mismatch', 'u tag does not equal the request URL');

  const method = firstTagValue(event, 'method');
  if (method?.toUpperCase() !== request.method.toUpperCase()) {
    return fail('method-mismatch', `method tag ${JSON.stringify(method ?? null)} does not equal ${request.method.toUpperCase()}`);
  }

  const payload = firstTagValue(event, 'payload');
  const body = request.body ?? new Uint8Array(0);
  if (body.byteLength > 0 || payload !== undefined) {
    if (payload === undefined) return fail('payload-mismatch', 'the request has a body but no payload tag');
    if (payload.toLowerCase() !== sha256Hex(body)) return fail('payload-mismatch', 'payload tag is not the sha256 of the body');
  }

  if (!options.verifier.verify(event)) return fail('bad-signature', 'event id or signature does not verify');

  // Last, so a refused request never burns the event for a correct retry of the same request.
  if (!(await options.replay(event.id, NIP98_REPLAY_TTL_SECS))) return fail('replayed', 'this auth event was already used');
  return { ok: true, pubkey: event.pubkey, event };
}

/** The store-backed replay claim: one per-event claim (`dedup:nip98:{id}`), shared by every replica. */
export function nip98ReplayGuard(store: { claimEvent(eventId: string, ttlSecs: number): Promise<boolean> }): Nip98ReplayClaim {
  return (eventId, ttlSecs) => store.claimEvent(`nip98:${eventId}`, ttlSecs);
}
