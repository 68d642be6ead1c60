/**
 * Who may sign a user's zap receipts (NIP-57 appendix F): the `nostrPubkey` of the lnurl-pay
 * endpoint of the `lud16` lightning address in their newest kind 0. Found, the receipt's signer
 * must be that key; not found (no kind 0, no `lud16`, an endpoint that is down or does not allow
 * Nostr), the zap is unverified and the app's `events.zaps_allow_unverified` decides.
 *
 * The request is a GET of `https://<domain>/.well-known/lnurlp/<name>` (LUD-16): only public DNS
 * names on the default port (the NIP-9a SSRF rules: no IP literals, local or special-use names,
 * credentials), no redirects, a bounded time and body, and nothing of the answer but a pubkey is
 * used. A public name that resolves to a private address is not caught (no allowlist can list
 * every wallet); the fixed path and the unread answer keep that to a blind GET.
 *
 * Answers are remembered per user (an hour when found, five minutes when not), in this process.
 */
import { isEventRejection, parseEvent, type EventVerifier, type NostrEvent } from '../../nostr/event.ts';
import { METADATA } from '../../nostr/kinds.ts';
import { isHexPubkey } from '../../nostr/tags.ts';
import type { Logger } from '../../observability/logger.ts';
import { isLoopbackHost, publicNameProblem } from '../../nip9a/ssrf.ts';
import type { RelayQueryFunction } from '../relay-query.ts';
import type { ZapProviderLookup } from './zap-receipt.ts';

/** How long a found provider is believed (1 h): people rarely change wallets, and a change only delays verification. */
export const PROVIDER_FOUND_MEMO_MS = 3_600_000;
/** How long "no provider" is believed (5 min): an endpoint that was down gets another chance soon. */
export const PROVIDER_MISSING_MEMO_MS = 300_000;
/** Users remembered at most, the oldest dropped first. */
export const PROVIDER_MEMO_ENTRIES = 10_000;
/** Largest lnurl-pay answer read (16 KiB): the real ones are a few hundred bytes. */
export const LNURL_MAX_BODY_BYTES = 16 * 1024;

/** LUD-16: `name@domain`, the name of `a-z0-9-_.+`. */
const LIGHTNING_ADDRESS = /^([a-z0-9\-_.+]+)@([^@/?#\s]+)$/;

export interface LnurlProviderOptions {
  relays: readonly string[];
  queryRelays: RelayQueryFunction;
  verifier: EventVerifier;
  /** Bound of the kind-0 query and of the lnurl GET each. */
  timeoutMs: number;
  /** Also ask `http://` endpoints on loopback hosts (`events.lnurl_allow_loopback`, tests only). */
  allowLoopback: boolean;
  nowMs: () => number;
  logger: Logger;
  fetchImpl?: typeof fetch;
}

/** The lnurl-pay URL of a lightning address, or null when it may not be asked (see the module comment). */
export function lnurlPayUrl(lud16: string, allowLoopback: boolean): URL | null {
  const match = LIGHTNING_ADDRESS.exec(lud16.trim().toLowerCase());
  if (match === null) return null;
  const [, name, domain] = match;
  let url: URL;
  try {
    url = new URL(`https://${domain}/.well-known/lnurlp/${name}`);
  } catch {
    return null;
  }
  if (allowLoopback && isLoopbackHost(url)) return new URL(`http://${url.host}${url.pathname}`);
  if (url.port !== '' || publicNameProblem(url) !== null) return null;
  return url;
}

/** The `nostrPubkey` of an lnurl-pay answer that allows Nostr, or null. */
export function providerOfLnurlAnswer(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const { allowsNostr, nostrPubkey } = body as Record<string, unknown>;
  return allowsNostr === true && isHexPubkey(nostrPubkey) ? nostrPubkey : null;
}

function newestMetadata(answers: unknown[], pubkey: string, verifier: EventVerifier): NostrEvent | null {
  let newest: NostrEvent | null = null;
  for (const answer of answers) {
    const event = parseEvent(answer);
    if (isEventRejection(event) || event.kind !== METADATA || event.pubkey !== pubkey) continue;
    if (newest !== null && event.created_at <= newest.created_at) continue;
    if (verifier.verify(event)) newest = event;
  }
  return newest;
}

function lud16Of(profile: NostrEvent): string | null {
  try {
    const content: unknown = JSON.parse(profile.content);
    if (typeof content !== 'object' || content === null) return null;
    const { lud16 } = content as Record<string, unknown>;
    return typeof lud16 === 'string' ? lud16 : null;
  } catch {
    return null;
  }
}

async function fetchProvider(url: URL, options: LnurlProviderOptions): Promise<string | null> {
  const response = await (options.fetchImpl ?? fetch)(url, {
    redirect: 'manual',
    signal: AbortSignal.timeout(options.timeoutMs),
    headers: { accept: 'application/json' },
  });
  if (response.status !== 200) {
    await response.body?.cancel();
    return null;
  }
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > LNURL_MAX_BODY_BYTES) {
    await response.body?.cancel();
    return null;
  }
  const text = await response.text();
  if (Buffer.byteLength(text) > LNURL_MAX_BODY_BYTES) return null;
  return providerOfLnurlAnswer(JSON.parse(text));
}

export function createLnurlProviderLookup(options: LnurlProviderOptions): ZapProviderLookup {
  const memo = new Map<string, { provider: string | null; expiresAtMs: number }>();
  const remember = (pubkey: string, provider: string | null): string | null => {
    if (memo.size >= PROVIDER_MEMO_ENTRIES) {
      const oldest = memo.keys().next().value;
      if (oldest !== undefined) memo.delete(oldest);
    }
    const ttl = provider === null ? PROVIDER_MISSING_MEMO_MS : PROVIDER_FOUND_MEMO_MS;
    memo.set(pubkey, { provider, expiresAtMs: options.nowMs() + ttl });
    return provider;
  };
  return async (recipient) => {
    const remembered = memo.get(recipient);
    if (remembered !== undefined && remembered.expiresAtMs > options.nowMs()) return remembered.provider;
    try {
      const answers = await options.queryRelays(options.relays, { kinds: [METADATA], authors: [recipient], limit: 1 }, options.timeoutMs);
      const profile = newestMetadata(answers, recipient, options.verifier);
      const lud16 = profile === null ? null : lud16Of(profile);
      const url = lud16 === null ? null : lnurlPayUrl(lud16, options.allowLoopback);
      return remember(recipient, url === null ? null : await fetchProvider(url, options));
    } catch (error) {
      options.logger.debug({ recipient, err: (error as Error).message }, 'lnurl provider lookup failed; the zap is unverified');
      return remember(recipient, null);
    }
  };
}
