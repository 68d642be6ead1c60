/**
 * Who may sign a user's zap receipts (NIP-57 appendix F): the `nostrPubkey` of the lnurl-pay
 * endpoint of the `lud16` lightning address in their newest kind 0. Found, the receipt's signer
 * must be that key; not found (no kind 0, no `lud16`, an endpoint that is down or does not allow
 * Nostr), the zap is unverified and the app's `events.zaps_allow_unverified` decides.
 *
 * The request is a GET of `https://<domain>/.well-known/lnurlp/<name>` (LUD-16): only public DNS
 * names on the default port (the outbound name rules: no IP literals, local or special-use names,
 * credentials), no redirects, a bounded time and body, and nothing of the answer but a pubkey is
 * used. The connection goes through the outbound address policy (`src/net/public-connect.ts`,
 * purpose `lnurl`): a wallet name that resolves to a loopback, private or other non-public
 * address gets no connection (counted and logged), and the socket connects to the address that
 * was checked.
 *
 * Answers are remembered per user (an hour when found, five minutes when not), in this process.
 */
import { isEventRejection, parseEvent, type EventVerifier, type NostrEvent } from '../../nostr/event.ts';
import { METADATA } from '../../nostr/kinds.ts';
import { isHexPubkey } from '../../nostr/tags.ts';
import { Agent } from 'undici';
import { isLoopbackName, publicNameProblem } from '../../net/address-policy.ts';
import { isOutboundRefusal, type OutboundPolicy } from '../../net/public-connect.ts';
import type { Logger } from '../../observability/logger.ts';
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
  /**
   * The outbound address policy of purpose `lnurl`, with `allowLoopback` as its loopback rule;
   * the connections of every lookup go through it.
   */
  policy: OutboundPolicy;
  nowMs: () => number;
  logger: Logger;
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
  if (allowLoopback && isLoopbackName(url.hostname)) return new URL(`http://${url.host}${url.pathname}`);
  if (url.port !== '' || publicNameProblem(url.hostname) !== null) return null;
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

/** The GET of one lnurl-pay URL through `agent` (whose connections the policy checks); null unless a 200 with a provider. */
async function fetchProvider(url: URL, agent: Agent, policy: OutboundPolicy, timeoutMs: number): Promise<string | null> {
  // A literal host is never looked up, so the policy judges it here (only loopback can be one: lnurlPayUrl).
  const refused = policy.checkLiteral(url.hostname);
  if (refused) throw refused;
  // undici's `request` follows no redirect: a 3xx is no answer.
  const response = await agent.request({
    origin: url.origin,
    path: url.pathname,
    method: 'GET',
    headers: { accept: 'application/json' },
    signal: AbortSignal.timeout(timeoutMs),
  });
  const declared = Number(response.headers['content-length'] ?? '0');
  if (response.statusCode !== 200 || declared > LNURL_MAX_BODY_BYTES) {
    await response.body.dump({ limit: 0 }).catch(() => undefined);
    return null;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += (chunk as Buffer).length;
    if (size > LNURL_MAX_BODY_BYTES) {
      response.body.destroy();
      return null;
    }
    chunks.push(chunk as Buffer);
  }
  return providerOfLnurlAnswer(JSON.parse(Buffer.concat(chunks).toString('utf8')));
}

export function createLnurlProviderLookup(options: LnurlProviderOptions): ZapProviderLookup {
  const agent = new Agent({ connect: { lookup: options.policy.lookup } });
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
      return remember(recipient, url === null ? null : await fetchProvider(url, agent, options.policy, options.timeoutMs));
    } catch (error) {
      // A refusal by the address policy was logged and counted by the policy.
      if (!isOutboundRefusal(error))
        options.logger.debug({ recipient, err: (error as Error).message }, 'lnurl provider lookup failed; the zap is unverified');
      return remember(recipient, null);
    }
  };
}
