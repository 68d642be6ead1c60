/**
 * The outbound address policy's rules, without I/O: which IP addresses are public, and which host
 * names may be asked at all. `public-connect.ts` applies them to every connection the service opens
 * on someone else's say-so (NIP-9a gateway relays and callbacks, Web Push endpoints, lnurl lookups,
 * user relays); `src/nip9a/ssrf.ts` applies the name rules as a front check when a URL is accepted.
 *
 * An address is public when it is in none of the special-purpose ranges of IANA's IPv4 and IPv6
 * Special-Purpose Address Registries (RFC 6890 and its updates) that are not globally reachable,
 * and, for IPv6, when it lies in global unicast space (2000::/3, RFC 4291): everything else is
 * unassigned or special. Forms that carry an IPv4 address reach the host they embed, so they are
 * judged as that IPv4 address:
 *
 * - `::ffff:0:0/96` IPv4-mapped (what a dual-stack socket reports for an IPv4 peer);
 * - `64:ff9b::/96` the well-known NAT64 prefix (RFC 6052), and `64:ff9b:1::/96`, the /96 form of
 *   the local-use NAT64 prefix (RFC 8215); other addresses of `64:ff9b:1::/48` are refused, since
 *   where a local translator puts the IPv4 address depends on a prefix length we cannot know;
 * - `2002::/16` 6to4 (RFC 3056), the IPv4 address in bits 16–47.
 *
 * Ranges refused although IANA marks a few addresses in them globally reachable:
 * `192.0.0.0/24` and `2001::/23` (IETF protocol assignments: PCP and TURN anycast, AMT, AS112,
 * ORCHIDv2, drone remote ID, Teredo). None of them is a relay, a push service, a webhook or a
 * wallet; Teredo (`2001::/32`) carries an obfuscated IPv4 address we would have to trust.
 */
import { isIP } from 'node:net';

/**
 * Why an address is not public (or that it is). The values are the `reason` label of
 * `push_outbound_refused_total`, so they are a small fixed set.
 */
export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'unique_local'
  | 'link_local'
  | 'site_local'
  | 'shared_cgnat'
  | 'unspecified'
  | 'this_network'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'documentation'
  | 'benchmarking'
  | 'protocol_assignment'
  | 'discard'
  | 'nat64_local'
  | 'not_global_unicast'
  | 'not_an_ip';

/** How an IPv6 address carries the IPv4 address it was judged as. */
export type EmbeddingForm = 'ipv4_mapped' | 'nat64' | '6to4';

export interface AddressVerdict {
  /** The address as given (brackets and zone removed). */
  address: string;
  addressClass: AddressClass;
  /** When the address was judged as an embedded IPv4 address: which one and how it was carried. */
  embedded?: { ipv4: string; form: EmbeddingForm };
}

interface Range {
  bytes: Uint8Array;
  bits: number;
  addressClass: AddressClass;
}

const IPV4_RANGES: ReadonlyArray<readonly [string, number, AddressClass]> = [
  ['0.0.0.0', 8, 'this_network'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared_cgnat'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link_local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'protocol_assignment'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, 'reserved'], // the deprecated 6to4 relay anycast (RFC 7526)
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['255.255.255.255', 32, 'broadcast'], // before 240/4, so the broadcast address gets its own reason
  ['240.0.0.0', 4, 'reserved'],
];

/** Checked in order after the embedded forms; the first match decides. */
const IPV6_RANGES: ReadonlyArray<readonly [string, number, AddressClass]> = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['100::', 64, 'discard'],
  ['2001::', 23, 'protocol_assignment'],
  ['2001:db8::', 32, 'documentation'],
  ['3fff::', 20, 'documentation'], // RFC 9637
  ['5f00::', 16, 'reserved'], // SRv6 SIDs (RFC 9602), not globally reachable
  ['fc00::', 7, 'unique_local'],
  ['fe80::', 10, 'link_local'],
  ['fec0::', 10, 'site_local'],
  ['ff00::', 8, 'multicast'],
];

const compile = (table: ReadonlyArray<readonly [string, number, AddressClass]>): Range[] =>
  table.map(([network, bits, addressClass]) => ({ bytes: parseIp(network) as Uint8Array, bits, addressClass }));
const V4: Range[] = compile(IPV4_RANGES);
const V6: Range[] = compile(IPV6_RANGES);
const GLOBAL_UNICAST = parseIp('2000::') as Uint8Array;
const MAPPED = parseIp('::ffff:0:0') as Uint8Array;
const NAT64 = parseIp('64:ff9b::') as Uint8Array;
const NAT64_LOCAL = parseIp('64:ff9b:1::') as Uint8Array;
const SIX_TO_FOUR = parseIp('2002::') as Uint8Array;

function inPrefix(address: Uint8Array, network: Uint8Array, bits: number): boolean {
  if (address.length !== network.length) return false;
  const whole = bits >> 3;
  for (let i = 0; i < whole; i++) if (address[i] !== network[i]) return false;
  const rest = bits & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((address[whole] ?? 0) & mask) === ((network[whole] ?? 0) & mask);
}

function parseIpv4(text: string): Uint8Array | null {
  if (isIP(text) !== 4) return null;
  return Uint8Array.from(text.split('.').map(Number));
}

/** Sixteen bytes of an IPv6 address (compressed, with a dotted IPv4 tail or a zone), or null. */
function parseIpv6(text: string): Uint8Array | null {
  const bare = text.split('%')[0] ?? '';
  if (isIP(bare) !== 6) return null;
  let hex = bare;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(hex);
  if (dotted) {
    const v4 = parseIpv4(dotted[1] as string);
    if (!v4) return null;
    hex = `${hex.slice(0, dotted.index)}${(((v4[0] as number) << 8) | (v4[1] as number)).toString(16)}:${(((v4[2] as number) << 8) | (v4[3] as number)).toString(16)}`;
  }
  const [head, tail] = hex.split('::') as [string, string | undefined];
  const groups = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  const bytes = new Uint8Array(16);
  all.forEach((group, i) => {
    bytes[2 * i] = group >> 8;
    bytes[2 * i + 1] = group & 0xff;
  });
  return bytes;
}

/** The 4 or 16 bytes of an IP address (IPv6 may be bracketed or carry a zone), or null for anything else. */
export function parseIp(text: string): Uint8Array | null {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  return parseIpv4(bare) ?? parseIpv6(bare);
}

const dotted = (bytes: Uint8Array, at: number): string => Array.from(bytes.subarray(at, at + 4)).join('.');

function classifyIpv4(bytes: Uint8Array): AddressClass {
  for (const range of V4) if (inPrefix(bytes, range.bytes, range.bits)) return range.addressClass;
  return 'public';
}

/** Judge one IP address (see the module comment). Never throws; anything but an IP is `not_an_ip`. */
export function classifyAddress(address: string): AddressVerdict {
  const bare = (address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address).split('%')[0] ?? '';
  const bytes = parseIp(bare);
  if (!bytes) return { address: bare, addressClass: 'not_an_ip' };
  if (bytes.length === 4) return { address: bare, addressClass: classifyIpv4(bytes) };
  const embedded = (at: number, form: EmbeddingForm): AddressVerdict => {
    const v4 = bytes.subarray(at, at + 4);
    return { address: bare, addressClass: classifyIpv4(v4), embedded: { ipv4: dotted(bytes, at), form } };
  };
  if (inPrefix(bytes, MAPPED, 96)) return embedded(12, 'ipv4_mapped');
  if (inPrefix(bytes, NAT64, 96)) return embedded(12, 'nat64');
  if (inPrefix(bytes, NAT64_LOCAL, 96)) return embedded(12, 'nat64');
  if (inPrefix(bytes, NAT64_LOCAL, 48)) return { address: bare, addressClass: 'nat64_local' };
  if (inPrefix(bytes, SIX_TO_FOUR, 16)) return embedded(2, '6to4');
  for (const range of V6) if (inPrefix(bytes, range.bytes, range.bits)) return { address: bare, addressClass: range.addressClass };
  if (!inPrefix(bytes, GLOBAL_UNICAST, 3)) return { address: bare, addressClass: 'not_global_unicast' };
  return { address: bare, addressClass: 'public' };
}

/** True for an address the policy calls public. */
export function isPublicAddress(address: string): boolean {
  return classifyAddress(address).addressClass === 'public';
}

/** What an {@link OutboundPolicy}'s caller admits beyond public addresses. */
export interface AdmitRules {
  /**
   * Admit loopback addresses, but only for a host that names loopback itself (`localhost`,
   * `127.x.x.x`, `[::1]`): a public-looking name that resolves to 127.0.0.1 stays refused. The
   * test-suite settings `nip9a.allow_loopback_callbacks` and `events.lnurl_allow_loopback`.
   */
  allowLoopback: boolean;
  /**
   * Admit every address (`webpush.allow_private_endpoints`: a push service on the operator's own
   * network). Only an operator sets this; no client can.
   */
  allowPrivate: boolean;
}

export const PUBLIC_ONLY: Readonly<AdmitRules> = Object.freeze({ allowLoopback: false, allowPrivate: false });

/**
 * Whether `verdict` may be connected to for a URL whose host was `host`. Loopback is admitted
 * under {@link AdmitRules.allowLoopback} only as 127/8, `::1` or their IPv4-mapped form (what the
 * socket sees), never through NAT64 or 6to4, which leave this host.
 */
export function admits(verdict: AddressVerdict, rules: Readonly<AdmitRules>, host: string): boolean {
  if (verdict.addressClass === 'public') return true;
  if (rules.allowPrivate) return verdict.addressClass !== 'not_an_ip';
  if (!rules.allowLoopback || verdict.addressClass !== 'loopback') return false;
  if (verdict.embedded && verdict.embedded.form !== 'ipv4_mapped') return false;
  return isLoopbackName(host);
}

// ---- Host name rules (checked before any resolution) ---------------------------------------------

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

/** A URL host without IPv6 brackets. */
export function bareHost(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** True for `localhost`, 127.0.0.0/8 and `::1` (the names {@link AdmitRules.allowLoopback} admits). */
export function isLoopbackName(host: string): boolean {
  const bare = bareHost(host).toLowerCase();
  if (bare === 'localhost') return true;
  if (isIP(bare) === 0) return false;
  const verdict = classifyAddress(bare);
  return verdict.addressClass === 'loopback' && (verdict.embedded === undefined || verdict.embedded.form === 'ipv4_mapped');
}

const CLASS_WORDS: Record<AddressClass, string> = {
  public: 'a public address',
  loopback: 'a loopback address',
  private: 'a private address',
  unique_local: 'a unique-local address',
  link_local: 'a link-local address',
  site_local: 'a site-local address',
  shared_cgnat: 'a carrier-grade NAT address',
  unspecified: 'the unspecified address',
  this_network: 'a "this network" address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved address',
  documentation: 'a documentation address',
  benchmarking: 'a benchmarking address',
  protocol_assignment: 'an IETF protocol-assignment address',
  discard: 'a discard-only address',
  nat64_local: 'a local-use NAT64 address',
  not_global_unicast: 'outside IPv6 global unicast space',
  not_an_ip: 'not an IP address',
};

/** Words for an address class in a refusal message ("is a loopback address"). */
export function describeVerdict(verdict: AddressVerdict): string {
  const words = CLASS_WORDS[verdict.addressClass];
  if (!verdict.embedded) return words;
  const form = { ipv4_mapped: 'IPv4-mapped', nat64: 'NAT64', '6to4': '6to4' }[verdict.embedded.form];
  return `the ${form} form of ${verdict.embedded.ipv4}, ${words}`;
}

/**
 * Null when `host` (a URL's hostname) is a public DNS name; otherwise why it is not. IP literals
 * are refused whatever they are (a client names a service by name), with the class of the address
 * in the reason.
 */
export function publicNameProblem(host: string): string | null {
  const bare = bareHost(host).toLowerCase();
  const family = isIP(bare);
  if (family !== 0) {
    const shown = family === 6 ? `[${bare}]` : bare;
    const verdict = classifyAddress(bare);
    const what = verdict.addressClass === 'public' ? `an IPv${family} literal` : describeVerdict(verdict);
    return `${shown} is ${what}; IP literals are refused, use a public DNS name`;
  }
  const name = bare.endsWith('.') ? bare.slice(0, -1) : bare;
  if (LOCAL_NAMES.has(name) || LOCAL_NAME_SUFFIXES.some((suffix) => name.endsWith(suffix)))
    return `${host} is a local or special-use name, not a public DNS name`;
  if (!name.includes('.')) return `${host} is a single-label name, not a public DNS name`;
  return null;
}
