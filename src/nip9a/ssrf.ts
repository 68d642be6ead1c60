/**
 * The SSRF boundary of the NIP-9a gateway: which callback URLs it may POST to and which relays it
 * may connect to on a registration's behalf (seed 003, "Enable delivery").
 *
 * The operator's origin allowlist (`nip9a.callback_origins`) is the boundary, not a DNS preflight
 * that could race a later resolution: an origin is admitted only when it is an exact `https://`
 * origin of a public DNS name on port 443, and a callback only when its origin is on the list.
 * IP literals (every IPv4 and IPv6 form the WHATWG URL parser normalises), local and special-use
 * names, credentials, fragments and other ports are refused with a reason a client can act on.
 * Redirects are never followed (`gateway/delivery.ts`), so a public origin cannot
 * bounce a request to a private address.
 *
 * `allowLoopback` (`nip9a.allow_loopback_callbacks`, for test suites only) additionally admits
 * `http(s)://` and `ws(s)://` URLs whose host is a loopback address, and nothing else.
 */
import { isIP } from 'node:net';

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

export interface CallbackPolicy {
  /** Normalised origins (`https://host`), as {@link parseAllowedOrigin} returns them. */
  allowedOrigins: ReadonlySet<string>;
  /** Admit loopback hosts on any scheme and port (tests only). */
  allowLoopback: boolean;
}

/** Suffixes of names that never resolve publicly (RFC 6761, RFC 6762, RFC 8375, RFC 7686, common private zones). */
const LOCAL_NAME_SUFFIXES = [
  '.localhost',
  '.local',
  '.internal',
  '.test',
  '.invalid',
  '.example',
  '.onion',
  '.home.arpa',
  '.lan',
  '.intranet',
  '.corp',
  '.private',
];
const LOCAL_NAMES = new Set(['localhost', 'local', 'internal', 'test', 'invalid', 'example', 'onion', 'home.arpa', 'lan']);

/** Why an IPv4 literal is refused; every literal is, the reason names the worst class it is in. */
function ipv4Class(address: string): string {
  const [a = 0, b = 0] = address.split('.').map(Number);
  if (a === 127) return 'a loopback IPv4 address';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'a private IPv4 address';
  if (a === 169 && b === 254) return 'a link-local IPv4 address';
  if (a === 100 && b >= 64 && b <= 127) return 'a carrier-grade NAT IPv4 address';
  if (a === 0) return 'an unspecified IPv4 address';
  return 'an IPv4 literal';
}

function ipv6Class(address: string): string {
  const lower = address.toLowerCase();
  if (lower === '::1') return 'the IPv6 loopback address';
  if (lower.startsWith('::ffff:')) return 'an IPv4-mapped IPv6 address';
  if (/^f[cd]/.test(lower)) return 'a unique-local IPv6 address';
  if (/^fe[89ab]/.test(lower)) return 'a link-local IPv6 address';
  return 'an IPv6 literal';
}

/** The URL's host without IPv6 brackets. */
function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** True for 127.0.0.0/8, ::1 and `localhost`. */
export function isLoopbackHost(url: URL): boolean {
  const host = bareHost(url);
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/** Null when `host` is a public DNS name; otherwise why it is not. */
export function publicNameProblem(url: URL): string | null {
  const host = bareHost(url);
  const family = isIP(host);
  if (family === 4) return `${host} is ${ipv4Class(host)}; IP literals are refused, use a public DNS name`;
  if (family === 6) return `[${host}] is ${ipv6Class(host)}; IP literals are refused, use a public DNS name`;
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (LOCAL_NAMES.has(name) || LOCAL_NAME_SUFFIXES.some((suffix) => name.endsWith(suffix)))
    return `${host} is a local or special-use name, not a public DNS name`;
  if (!name.includes('.')) return `${host} is a single-label name, not a public DNS name`;
  return null;
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
