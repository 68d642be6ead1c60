/**
 * Which push endpoints the service will open a connection to. A push endpoint is a URL any
 * Nostr key can register, so without a rule the service is an open proxy into its own network
 * (SSRF). The rule:
 *
 * 1. The endpoint is an absolute `https://` or `http://` URL (UnifiedPush deployments run plain
 *    http behind proxies) of at most {@link MAX_ENDPOINT_CHARS} characters, without `user:pass@`.
 * 2. Unless `webpush.allow_private_endpoints` is on, every address the connection goes to must be
 *    public: no loopback, private (RFC 1918, IPv6 unique-local), link-local, carrier-grade NAT,
 *    unspecified, multicast, benchmarking, documentation or reserved ranges, and no IPv4-mapped or
 *    NAT64 form of those. The check runs on the addresses DNS returns *at connect time* (the
 *    socket's own lookup), so a name that resolves to a public address when registered and to
 *    127.0.0.1 later (DNS rebinding) is still refused.
 * 3. Redirects are never followed (a push service answers 201; a 3xx is a failed push).
 *
 * Endpoints on this server's own ntfy topics never reach this check: they are appended to the
 * topic in the store, with no network hop. Tests and a local ntfy deployment on a private network
 * turn `allow_private_endpoints` on.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** UnifiedPush AND_3 caps endpoints at 1000 bytes; browsers' are shorter. Some slack for odd push services. */
export const MAX_ENDPOINT_CHARS = 2048;

export type EndpointCheck = { ok: true; url: URL } | { ok: false; reason: string };

/** Rule 1: the endpoint's shape. Never throws. */
export function parsePushEndpoint(endpoint: string): EndpointCheck {
  if (endpoint.length > MAX_ENDPOINT_CHARS) return { ok: false, reason: `the endpoint is longer than ${MAX_ENDPOINT_CHARS} characters` };
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return { ok: false, reason: 'the endpoint is not a URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return { ok: false, reason: `the endpoint scheme ${url.protocol} is not http(s)` };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'the endpoint carries credentials' };
  if (url.hostname === '') return { ok: false, reason: 'the endpoint has no host' };
  return { ok: true, url };
}

const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** True for an IP address outside the public internet (rule 2). Non-IP input counts as not public. */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(bare);
  if (family === 4) return NON_PUBLIC.check(bare, 'ipv4');
  if (family !== 6) return true;
  const embedded = embeddedIpv4(bare);
  if (embedded !== null) return NON_PUBLIC.check(embedded, 'ipv4');
  return NON_PUBLIC.check(bare, 'ipv6');
}

/**
 * The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible or NAT64
 * (`64:ff9b::/96`) IPv6 address, which reach the IPv4 host they embed.
 */
function embeddedIpv4(ipv6: string): string | null {
  const groups = expandIpv6(ipv6);
  if (groups === null) return null;
  const high = groups.slice(0, 6);
  const mapped = high.slice(0, 5).every((g) => g === 0) && high[5] === 0xffff;
  const compatible = high.every((g) => g === 0) && !(groups[6] === 0 && (groups[7] ?? 0) <= 1);
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && high.slice(2).every((g) => g === 0);
  if (!mapped && !compatible && !nat64) return null;
  const g6 = groups[6] ?? 0;
  const g7 = groups[7] ?? 0;
  return `${g6 >> 8}.${g6 & 0xff}.${g7 >> 8}.${g7 & 0xff}`;
}

/** Eight 16-bit groups of an IPv6 address (dotted IPv4 tail and `::` allowed), or null. */
function expandIpv6(ipv6: string): number[] | null {
  let text = ipv6.split('%')[0] ?? '';
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const octets = (dotted[1] as string).split('.').map(Number);
    text = `${text.slice(0, dotted.index)}${(((octets[0] ?? 0) << 8) | (octets[1] ?? 0)).toString(16)}:${(((octets[2] ?? 0) << 8) | (octets[3] ?? 0)).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return null;
  const groups = [...left, ...Array<number>(missing).fill(0), ...right];
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

/** Error code of a connection refused by rule 2. */
export const NON_PUBLIC_ADDRESS_CODE = 'ERR_PUSH_ENDPOINT_NOT_PUBLIC';

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `http.request`/`net.connect` that resolves as usual and then refuses (rule 2)
 * when any resolved address is not public. Handles both the single-address and the `all: true`
 * form, since Node asks for every address when it races IPv4 and IPv6 (autoSelectFamily).
 */
export function publicOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const refused = addresses.find((a) => isNonPublicAddress(a.address));
    if (refused) {
      const error: NodeJS.ErrnoException = new Error(`${hostname} resolves to ${refused.address}, which is not a public address`);
      error.code = NON_PUBLIC_ADDRESS_CODE;
      return callback(error, []);
    }
    if (addresses.length === 0) {
      const error: NodeJS.ErrnoException = new Error(`${hostname} has no address`);
      error.code = 'ENOTFOUND';
      return callback(error, []);
    }
    if (options.all) return callback(null, addresses);
    const first = addresses[0] as LookupAddress;
    callback(null, first.address, first.family);
  });
}
