/**
 * The front check of the NIP-9a gateway's SSRF boundary: which callback URLs it accepts and which
 * relays it accepts to connect to on a registration's behalf (seed 003, "Enable delivery"), judged
 * by the URL alone when a registration arrives, so a client gets a reason it can act on.
 *
 * It is one of two layers. Here: the operator's origin allowlist (`nip9a.callback_origins`), an
 * exact `https://` origin of a public DNS name on port 443, and the outbound policy's name rules
 * (`src/net/address-policy.ts`): IP literals (every IPv4 and IPv6 form the WHATWG URL parser
 * normalises), local and special-use names, credentials, fragments and other ports are refused.
 * At connect time: the outbound address policy (`src/net/public-connect.ts`) resolves the name
 * and connects only to public addresses it checked, so a public name whose A record says
 * 127.0.0.1 or 10.x gets no connection (relay sockets in `gateway/relay-watch.ts`, callback POSTs
 * in `gateway/callback-post.ts`). Redirects are never followed, so a public origin cannot bounce
 * a request to a private address.
 *
 * `allowLoopback` (`nip9a.allow_loopback_callbacks`, for test suites only) additionally admits
 * `http(s)://` and `ws(s)://` URLs whose host is a loopback address, and nothing else.
 */
import { isLoopbackName, publicNameProblem as publicNameRule } from '../net/address-policy.ts';

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

export interface CallbackPolicy {
  /** Normalised origins (`https://host`), as {@link parseAllowedOrigin} returns them. */
  allowedOrigins: ReadonlySet<string>;
  /** Admit loopback hosts on any scheme and port (tests only). */
  allowLoopback: boolean;
}

/** True for 127.0.0.0/8, ::1 (and its IPv4-mapped form) and `localhost`. */
export function isLoopbackHost(url: URL): boolean {
  return isLoopbackName(url.hostname);
}

/** Null when the URL's host is a public DNS name; otherwise why it is not (the outbound policy's name rules). */
export function publicNameProblem(url: URL): string | null {
  return publicNameRule(url.hostname);
}

/** Problems every URL shares, whatever its scheme: credentials and fragments. */
function credentialOrFragmentProblem(raw: string, url: URL): string | null {
  if (url.username !== '' || url.password !== '') return 'credentials (userinfo) in the URL are refused';
  if (url.hash !== '' || raw.includes('#')) return 'fragments are refused';
  return null;
}

function parse(raw: string): URL | null {
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

/**
 * An entry of `nip9a.callback_origins`, normalised to `https://host`, or why it is refused
 * (the config is then refused at start).
 */
export function parseAllowedOrigin(entry: string): UrlCheck {
  const url = parse(entry);
  if (!url) return { ok: false, reason: `"${entry}" is not a URL` };
  if (url.protocol !== 'https:') return { ok: false, reason: `"${entry}" is not an https:// origin` };
  const common = credentialOrFragmentProblem(entry, url);
  if (common) return { ok: false, reason: `"${entry}": ${common}` };
  if (url.port !== '') return { ok: false, reason: `"${entry}": only port 443 is allowed` };
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '')
    return { ok: false, reason: `"${entry}" is not an origin: no path or query allowed` };
  if (url.hostname.includes('*')) return { ok: false, reason: `"${entry}": wildcard hosts are refused` };
  const hostProblem = publicNameProblem(url);
  if (hostProblem) return { ok: false, reason: `"${entry}": ${hostProblem}` };
  return { ok: true, url };
}

/**
 * Whether the gateway may POST to `raw`. Checked when a registration is accepted and again
 * before every attempt (the allowlist may have changed since).
 */
export function checkCallbackUrl(raw: string, policy: CallbackPolicy): UrlCheck {
  const url = parse(raw);
  if (!url) return { ok: false, reason: 'the callback is not a URL' };
  const common = credentialOrFragmentProblem(raw, url);
  if (common) return { ok: false, reason: `callback: ${common}` };
  if (policy.allowLoopback && (url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackHost(url)) return { ok: true, url };
  if (url.protocol !== 'https:') return { ok: false, reason: `callback: ${url.protocol}// is refused, only https:// origins are called` };
  if (url.port !== '') return { ok: false, reason: `callback: port ${url.port} is refused, only 443 is called` };
  const hostProblem = publicNameProblem(url);
  if (hostProblem) return { ok: false, reason: `callback: ${hostProblem}` };
  if (!policy.allowedOrigins.has(url.origin))
    return { ok: false, reason: `callback: origin ${url.origin} is not on this gateway's allowlist` };
  return { ok: true, url };
}

/**
 * Whether the gateway may connect to relay `raw` on a registration's behalf: `wss://` with a
 * public DNS name (any port: relays are not restricted to 443), or a loopback `ws(s)://` when
 * loopback is allowed.
 */
export function checkRelayUrl(raw: string, allowLoopback: boolean): UrlCheck {
  const url = parse(raw);
  if (!url) return { ok: false, reason: 'the relay is not a URL' };
  const common = credentialOrFragmentProblem(raw, url);
  if (common) return { ok: false, reason: `relay: ${common}` };
  if (allowLoopback && (url.protocol === 'ws:' || url.protocol === 'wss:') && isLoopbackHost(url)) return { ok: true, url };
  if (url.protocol !== 'wss:') return { ok: false, reason: `relay: ${url.protocol}// is refused, only wss:// relays are watched` };
  const hostProblem = publicNameProblem(url);
  if (hostProblem) return { ok: false, reason: `relay: ${hostProblem}` };
  return { ok: true, url };
}

/** NIP-9a's "normalized URL" as nostr-push compares relays: `ws(s)://host[:port]/path`, lower-case host, trailing `/`. */
export function normalizeRelayUrl(url: URL): string {
  const path = url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`;
  return `${url.protocol}//${url.host.toLowerCase()}${path}${url.search}`;
}
