import type { Context } from 'hono';
import type { EventVerifier } from '../nostr/event.ts';
import { verifyNip98, type Nip98ReplayClaim } from '../nostr/nip98.ts';
import type { Logger } from '../observability/logger.ts';
import type { Clock } from '../store/port.ts';
import { HttpError } from './errors.ts';
import type { CallerLimits } from './rate-limits.ts';

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

/** The absolute URL a client addressed: the public base when configured, with path and query as received. */
export function signedRequestUrl(c: Context, publicUrl: string | undefined): string {
  if (publicUrl === undefined) return c.req.url;
  const url = new URL(c.req.url);
  return `${publicUrl.replace(/\/+$/, '')}${url.pathname}${url.search}`;
}

/**
 * Authenticate a request by its NIP-98 header; returns the caller's pubkey or throws a 401
 * `NIP98_UNAUTHORIZED` whose message says which rule failed. `body` is the exact bytes received
 * (read them first with `readBodyBytes`), so the `payload` tag is checked against what arrived.
 * With {@link Nip98Auth.limits}, a client over its rate limit gets 429 `RATE_LIMITED` instead.
 */
export async function authenticateNip98(c: Context, auth: Nip98Auth, body?: Uint8Array): Promise<string> {
  await auth.limits?.checkAddress(c);
  const result = await verifyNip98(
    { method: c.req.method, url: signedRequestUrl(c, auth.publicUrl), authorization: c.req.header('authorization'), body },
    { nowSecs: Math.floor(auth.clock.nowMs() / 1000), verifier: auth.verifier, replay: auth.replay },
  );
  if (result.ok) {
    await auth.limits?.checkPubkey(result.pubkey);
    return result.pubkey;
  }
  auth.onRefused?.(result.code);
  auth.logger.warn({ path: c.req.path, code: result.code, reason: result.reason }, 'NIP-98 authorization refused');
  throw new HttpError('NIP98_UNAUTHORIZED', `NIP-98 authorization failed: ${result.reason}`);
}
