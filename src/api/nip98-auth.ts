import type { Context } from 'hono';
import type { Config } from '../config/defaults.ts';
import type { EventVerifier } from '../nostr/event.ts';
import { verifyNip98, type Nip98ReplayClaim } from '../nostr/nip98.ts';
import type { Logger } from '../observability/logger.ts';
import type { Clock } from '../store/port.ts';
import { HttpError } from './errors.ts';
import type { CallerLimits } from './rate-limits.ts';

/**
 * What `serve` warns and `doctor` says when NIP-98 routes are on (the api role) and
 * `server.public_url` is unset, or null when there is nothing to say: behind a proxy the URL
 * clients sign is the public one, which this process cannot know, so every NIP-98 request fails.
 */
export function nip98PublicUrlWarning(config: Pick<Config, 'roles' | 'server'>): string | null {
  if (!config.roles.includes('api') || config.server.public_url !== '') return null;
  return (
    'server.public_url is unset: NIP-98 requests (user API, opens, NIP-9a registrations and callbacks, the inbox socket) are checked ' +
    'against the URL as this process receives it, so behind a proxy that changes the scheme or host every one fails; ' +
    'set server.public_url (NOSTR_PUSH__SERVER__PUBLIC_URL) to the URL clients use'
  );
}

/** What a route needs to authenticate its caller by NIP-98. */
export interface Nip98Auth {
  verifier: EventVerifier;
  replay: Nip98ReplayClaim;
  /** The store's clock: replicas judge `created_at` by the same time. */
  clock: Clock;
  /**
   * The service's public base URL (`server.public_url`, e.g. `https://push.example.com`). Behind
   * a proxy the URL the client signed is the public one, not the one this process sees; without
   * it the request's own URL (scheme and Host as received) is used.
   */
  publicUrl?: string;
  logger: Logger;
  /** Counts refusals by failure code. */
  onRefused?: (code: string) => void;
  /**
   * The route group's per-client rate limits (`rate-limits.ts`): the client address before the
   * signature is checked, the signer after; over either, 429 `RATE_LIMITED` with `Retry-After`.
   */
  limits?: CallerLimits;
}

/**
 * The absolute URL a client signed: `server.public_url` with the path and query as received when
 * it is set (behind a proxy the client addressed the public URL, not this process); otherwise the
 * scheme and Host as received. Every NIP-98 check builds its `u` here, the Hono routes' and the
 * inbox socket's upgrade alike.
 */
export function nip98SignedUrl(
  publicUrl: string | undefined,
  received: { scheme: 'http' | 'https'; host: string; pathAndQuery: string },
): string {
  if (publicUrl !== undefined && publicUrl !== '') return `${publicUrl.replace(/\/+$/, '')}${received.pathAndQuery}`;
  return `${received.scheme}://${received.host}${received.pathAndQuery}`;
}

/** The absolute URL a Hono request's client signed (see {@link nip98SignedUrl}). */
export function signedRequestUrl(c: Context, publicUrl: string | undefined): string {
  const url = new URL(c.req.url);
  return nip98SignedUrl(publicUrl, {
    scheme: url.protocol === 'https:' ? 'https' : 'http',
    host: url.host,
    pathAndQuery: `${url.pathname}${url.search}`,
  });
}

/**
 * Check one request's NIP-98 header: the one check behind every NIP-98 route. Returns the
 * caller's pubkey, or null after counting (`onRefused`) and logging the refusal at warn with its
 * reason; the caller answers 401 in its own way (a Hono error, or a socket's status line).
 */
export async function checkNip98(
  auth: Nip98Auth,
  request: { method: string; url: string; authorization: string | undefined; body?: Uint8Array | undefined; path: string },
): Promise<{ ok: true; pubkey: string } | { ok: false; reason: string }> {
  const result = await verifyNip98(
    { method: request.method, url: request.url, authorization: request.authorization, body: request.body },
    { nowSecs: Math.floor(auth.clock.nowMs() / 1000), verifier: auth.verifier, replay: auth.replay },
  );
  if (result.ok) return { ok: true, pubkey: result.pubkey };
  auth.onRefused?.(result.code);
  auth.logger.warn({ path: request.path, code: result.code, reason: result.reason }, 'NIP-98 authorization refused');
  return { ok: false, reason: result.reason };
}

/**
 * Authenticate a Hono request by its NIP-98 header; returns the caller's pubkey or throws a 401
 * `NIP98_UNAUTHORIZED` whose message says which rule failed. `body` is the exact bytes received
 * (read them first with `readBodyBytes`), so the `payload` tag is checked against what arrived.
 * With {@link Nip98Auth.limits}, a client over its rate limit gets 429 `RATE_LIMITED` instead.
 */
export async function authenticateNip98(c: Context, auth: Nip98Auth, body?: Uint8Array): Promise<string> {
  await auth.limits?.checkAddress(c);
  const result = await checkNip98(auth, {
    method: c.req.method,
    url: signedRequestUrl(c, auth.publicUrl),
    authorization: c.req.header('authorization'),
    body,
    path: c.req.path,
  });
  if (result.ok) {
    await auth.limits?.checkPubkey(result.pubkey);
    return result.pubkey;
  }
  throw new HttpError('NIP98_UNAUTHORIZED', `NIP-98 authorization failed: ${result.reason}`);
}
