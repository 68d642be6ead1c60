/**
 * Connections opened on someone else's say-so: a relay URL in a NIP-9a registration (and, next, a
 * user's own relays), a callback URL, a Web Push endpoint, a wallet's lnurl domain. Anyone with a
 * key can name such a host, and a public-looking name can resolve to 127.0.0.1, 10.0.0.1 or a
 * cloud metadata address, so every one of these connections goes through an {@link OutboundPolicy}:
 *
 * 1. the name is resolved once, by the policy's {@link Resolver};
 * 2. every address it resolves to is judged (`address-policy.ts`); one address that is not
 *    admitted refuses the whole name (a client must not pick which of its records we use);
 * 3. the socket connects to exactly the addresses that were judged: the policy's
 *    {@link OutboundPolicy.lookup} is the socket's `lookup`, so there is no second resolution to
 *    rebind (DNS rebinding), and an IP literal, which sockets never look up, is judged before the
 *    connection starts ({@link OutboundPolicy.checkLiteral});
 * 4. redirects are never followed by any caller (`ws` with `followRedirects: false`, undici's
 *    `request` and `node:http`, which follow none).
 *
 * A refusal is an {@link OutboundRefusedError} (code {@link OUTBOUND_REFUSED_CODE}) and is
 * reported once through the policy's `onRefused` (`refusals.ts`: the metric
 * `push_outbound_refused_total{purpose,reason}` and a warning log line).
 *
 * @example A WebSocket to a relay somebody named:
 * ```ts
 * const policy = new OutboundPolicy({ purpose: 'user_relay', onRefused: outboundRefusalReporter(metrics, logger) });
 * const socket = openPolicyWebSocket('wss://relay.example.com/', policy, { maxPayload: 1 << 20 });
 * socket.on('error', (err) => { if (isOutboundRefusal(err)) ...already logged and counted... });
 * ```
 */
import { promises as dns, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import WebSocket, { type ClientOptions } from 'ws';
import { admits, bareHost, classifyAddress, describeVerdict, PUBLIC_ONLY, type AddressClass, type AdmitRules } from './address-policy.ts';

/** What the connection is for: the `purpose` label of the refusal metric. */
export type OutboundPurpose = 'nip9a_relay' | 'nip9a_callback' | 'webpush' | 'lnurl' | 'user_relay';

/** One resolved address. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address a name resolves to (an IP literal is never passed here). Rejects like `dns.lookup`. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** The operating system's resolver (`getaddrinfo`, /etc/hosts included), every address, in its order. */
export const systemResolver: Resolver = async (hostname) =>
  (await dns.lookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

/**
 * Test-only hosts override for the real binary (honoured only under `NODE_ENV=test`, like the
 * other `NOSTR_PUSH_TEST_*` injectors): `name=address[|address…][,name=…]`. Names listed resolve
 * to the addresses given; all other names go to the system resolver. End-to-end and abuse tests
 * use it to give a public-looking name a loopback or private address.
 */
export const TEST_HOSTS_ENV = 'NOSTR_PUSH_TEST_HOSTS';

/** Parse {@link TEST_HOSTS_ENV}'s value; throws on an entry that is not `name=ip[|ip…]`. */
export function parseHostsOverride(text: string): Map<string, ResolvedAddress[]> {
  const hosts = new Map<string, ResolvedAddress[]>();
  for (const entry of text.split(',').map((e) => e.trim())) {
    if (entry === '') continue;
    const [name, list] = entry.split('=') as [string, string | undefined];
    const addresses = (list ?? '').split('|').map((a) => a.trim());
    if (name.trim() === '' || addresses.some((a) => isIP(a) === 0)) throw new Error(`${TEST_HOSTS_ENV}: "${entry}" is not name=ip[|ip…]`);
    hosts.set(
      name.trim().toLowerCase(),
      addresses.map((address) => ({ address, family: isIP(address) === 6 ? 6 : 4 })),
    );
  }
  return hosts;
}

/** A resolver answering `hosts` from the table and every other name through `fallback`. */
export function hostsResolver(hosts: ReadonlyMap<string, ResolvedAddress[]>, fallback: Resolver = systemResolver): Resolver {
  return (hostname) => {
    const listed = hosts.get(hostname.toLowerCase().replace(/\.$/, ''));
    return listed ? Promise.resolve(listed.map((a) => ({ ...a }))) : fallback(hostname);
  };
}

/** The resolver of this process: the system's, or the test hosts override under `NODE_ENV=test`. */
export function resolverFromEnvironment(env: NodeJS.ProcessEnv = process.env): Resolver {
  const override = env[TEST_HOSTS_ENV];
  if (env.NODE_ENV !== 'test' || override === undefined || override === '') return systemResolver;
  return hostsResolver(parseHostsOverride(override));
}

/** Error code of a connection the policy refused. */
export const OUTBOUND_REFUSED_CODE = 'ERR_OUTBOUND_REFUSED';

/** One refused connection, as reported and as carried by {@link OutboundRefusedError}. */
export interface OutboundRefusal {
  purpose: OutboundPurpose;
  /** The host as the URL named it. */
  host: string;
  /** The address that was refused. */
  address: string;
  /** The refused address's class (the metric's `reason`). */
  reason: AddressClass;
  /** For logs and client-facing messages. */
  message: string;
}

export class OutboundRefusedError extends Error {
  readonly code = OUTBOUND_REFUSED_CODE;
  constructor(readonly refusal: OutboundRefusal) {
    super(refusal.message);
    this.name = 'OutboundRefusedError';
  }
}

/** True for an {@link OutboundRefusedError}, also one that crossed a library (matched by code). */
export function isOutboundRefusal(err: unknown): err is OutboundRefusedError {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === OUTBOUND_REFUSED_CODE;
}

export interface OutboundPolicyOptions {
  purpose: OutboundPurpose;
  /** What is admitted beyond public addresses; public only by default. */
  rules?: Readonly<AdmitRules>;
  /** Default {@link systemResolver}; tests inject one, the binary uses {@link resolverFromEnvironment}. */
  resolver?: Resolver;
  /** Told once per refusal, before the error reaches the caller (metric and log line). */
  onRefused?: (refusal: OutboundRefusal) => void;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** The `lookup` that `net.connect`, `tls.connect`, `http.request`, undici's `connect` and `ws` accept. */
export type PolicyLookup = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

export class OutboundPolicy {
  readonly purpose: OutboundPurpose;
  private readonly rules: Readonly<AdmitRules>;
  private readonly resolver: Resolver;
  private readonly onRefused: ((refusal: OutboundRefusal) => void) | undefined;

  constructor(options: OutboundPolicyOptions) {
    this.purpose = options.purpose;
    this.rules = options.rules ?? PUBLIC_ONLY;
    this.resolver = options.resolver ?? systemResolver;
    this.onRefused = options.onRefused;
  }

  /** The same policy for another purpose (shares resolver, rules and reporting). */
  withPurpose(purpose: OutboundPurpose, rules: Readonly<AdmitRules> = this.rules): OutboundPolicy {
    return new OutboundPolicy({ purpose, rules, resolver: this.resolver, onRefused: this.onRefused });
  }

  /** The refusal of `address` for a URL host `host`, reported; null when admitted. */
  private judge(host: string, address: string): OutboundRefusedError | null {
    const verdict = classifyAddress(address);
    if (admits(verdict, this.rules, host)) return null;
    const shown = bareHost(host) === verdict.address ? verdict.address : `${host} resolves to ${verdict.address}, which`;
    const refusal: OutboundRefusal = {
      purpose: this.purpose,
      host,
      address: verdict.address,
      reason: verdict.addressClass,
      message: `${shown} is ${describeVerdict(verdict)}; this server connects only to public addresses`,
    };
    this.onRefused?.(refusal);
    return new OutboundRefusedError(refusal);
  }

  /**
   * For a URL host that is an IP literal (sockets never look those up): its refusal, reported,
   * or null when admitted. Null for a name too (its addresses are judged by {@link lookup}).
   */
  checkLiteral(host: string): OutboundRefusedError | null {
    const bare = bareHost(host);
    return isIP(bare) === 0 ? null : this.judge(host, bare);
  }

  /**
   * Resolve `host` once and judge every address: the admitted addresses, or a rejection with an
   * {@link OutboundRefusedError} (reported) or the resolver's own error.
   */
  async resolve(host: string): Promise<ResolvedAddress[]> {
    const bare = bareHost(host);
    const family = isIP(bare);
    const addresses: ResolvedAddress[] = family !== 0 ? [{ address: bare, family: family === 6 ? 6 : 4 }] : await this.resolver(bare);
    if (addresses.length === 0) {
      const error: NodeJS.ErrnoException = new Error(`${host} has no address`);
      error.code = 'ENOTFOUND';
      throw error;
    }
    for (const { address } of addresses) {
      const refused = this.judge(host, address);
      if (refused) throw refused;
    }
    return addresses;
  }

  /**
   * A socket `lookup`: resolves through {@link resolve} and answers with the judged addresses
   * only, in both the one-address and the `all: true` form (Node asks for all when it races IPv4
   * and IPv6, `autoSelectFamily`), honouring a requested family.
   */
  readonly lookup: PolicyLookup = (hostname, options, callback) => {
    this.resolve(hostname).then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        if (wanted.length === 0) {
          const error: NodeJS.ErrnoException = new Error(`${hostname} has no IPv${String(options.family)} address`);
          error.code = 'ENOTFOUND';
          callback(error, []);
        } else if (options.all) callback(null, wanted);
        else callback(null, (wanted[0] as ResolvedAddress).address, (wanted[0] as ResolvedAddress).family);
      },
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), []),
    );
  };
}

/**
 * Open a WebSocket to `url` under `policy`: the `ws` client with the policy's `lookup` and
 * redirects off (whatever `options` say). The reusable door for every relay connection made on a
 * client's say-so (the NIP-9a gateway's watched relays; users' own relays next).
 *
 * Contract: throws an {@link OutboundRefusedError} at once when the URL's host is an IP literal
 * the policy refuses (nothing is opened). For a name, the socket is returned and a refused
 * resolution surfaces as its `error` event with that error (then `close`), before any connection
 * is made. Either way the refusal has already been reported (metric and log line); callers
 * should not log it again. Throws what `new WebSocket` throws for a malformed URL.
 */
export function openPolicyWebSocket(url: string, policy: OutboundPolicy, options: ClientOptions = {}): WebSocket {
  const refused = policy.checkLiteral(new URL(url).hostname);
  if (refused) throw refused;
  const withLookup: ClientOptions & { lookup: PolicyLookup } = { ...options, followRedirects: false, lookup: policy.lookup };
  return new WebSocket(url, withLookup);
}
