/**
 * Who is asking: the client address every per-client limit is keyed by, and whether the request
 * reached the edge over https.
 *
 * The socket's peer is the client unless that peer is one of `server.trusted_proxies` (CIDRs). Only
 * then are `X-Forwarded-For` and `X-Forwarded-Proto` believed: a proxy appends the address it saw
 * to `X-Forwarded-For`, so the list is read from the right, skipping the operator's own proxies, and
 * the first address not among them is the client (anything further left is the client's own word).
 * A request straight from the internet can therefore never choose its own address or scheme.
 */
import { BlockList, isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';

/** Stands for a request whose peer is unknown (a detached socket): all such share one budget. */
export const UNKNOWN_CLIENT_ADDRESS = 'unknown';

export interface ClientAddressPolicy {
  /** The client address of a request whose socket peer is `socketAddress`. */
  clientAddress(socketAddress: string | undefined, forwardedFor: string | undefined): string;
  /** Whether the request came in over https, per a trusted proxy's `X-Forwarded-Proto`. */
  forwardedHttps(socketAddress: string | undefined, forwardedProto: string | undefined): boolean;
  /** Whether `address` is one of the operator's proxies. */
  isTrustedProxy(address: string | undefined): boolean;
}

/** Why `cidr` is not a usable `server.trusted_proxies` entry, or null. */
export function trustedProxyProblem(cidr: string): string | null {
  return parseCidr(cidr) ? null : `"${cidr}" is not an IPv4 or IPv6 address or CIDR (e.g. 10.0.0.0/8, fd00::/8, 127.0.0.1)`;
}

export function createClientAddressPolicy(trustedProxies: readonly string[]): ClientAddressPolicy {
  const trusted = new BlockList();
  for (const entry of trustedProxies) {
    const cidr = parseCidr(entry);
    if (!cidr) throw new Error(`server.trusted_proxies: ${trustedProxyProblem(entry)}`);
    trusted.addSubnet(cidr.address, cidr.prefix, cidr.family);
  }
  const isTrustedProxy = (address: string | undefined): boolean => {
    if (!address || trustedProxies.length === 0) return false;
    const plain = normaliseAddress(address);
    const family = isIP(plain);
    if (family === 0) return false;
    return trusted.check(plain, family === 4 ? 'ipv4' : 'ipv6');
  };
  return {
    isTrustedProxy,
    clientAddress(socketAddress, forwardedFor) {
      if (!socketAddress) return UNKNOWN_CLIENT_ADDRESS;
      const peer = normaliseAddress(socketAddress);
      if (!forwardedFor || !isTrustedProxy(peer)) return peer;
      const hops = forwardedFor.split(',').map((hop) => normaliseAddress(hop.trim()));
      for (const hop of [...hops].reverse()) {
        if (isIP(hop) === 0) return peer; // a malformed hop: the last address we can vouch for
        if (!isTrustedProxy(hop)) return hop;
      }
      // Every hop is one of ours: the leftmost is as far as the chain goes.
      return hops[0] && isIP(hops[0]) !== 0 ? hops[0] : peer;
    },
    forwardedHttps(socketAddress, forwardedProto) {
      if (!forwardedProto || !isTrustedProxy(socketAddress)) return false;
      // The nearest proxy appends last; it is the one that saw the client's scheme when there is one.
      return forwardedProto.split(',')[0]?.trim().toLowerCase() === 'https';
    },
  };
}

/** `::ffff:192.0.2.1` → `192.0.2.1`, so one client has one key whichever socket family it came on. */
export function normaliseAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  return (mapped ?? address).toLowerCase();
}

interface Cidr {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

function parseCidr(entry: string): Cidr | null {
  const [rawAddress, rawPrefix, extra] = entry.trim().split('/');
  if (extra !== undefined || !rawAddress) return null;
  const address = normaliseAddress(rawAddress);
  const family = isIP(address);
  if (family === 0) return null;
  const max = family === 4 ? 32 : 128;
  const prefix = rawPrefix === undefined ? max : Number(rawPrefix);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max || (rawPrefix !== undefined && !/^\d+$/.test(rawPrefix))) return null;
  return { address, prefix, family: family === 4 ? 'ipv4' : 'ipv6' };
}

/** The Node request under a Hono context, when the app is served by @hono/node-server. */
function incomingOf(c: Context): IncomingMessage | undefined {
  return (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
}

/** The client address of a Hono request (see {@link ClientAddressPolicy.clientAddress}). */
export function requestClientAddress(c: Context, policy: ClientAddressPolicy): string {
  const incoming = incomingOf(c);
  // Node nulls a request's socket once it is detached (its type does not say so).
  const socket = incoming?.socket as IncomingMessage['socket'] | null | undefined;
  return policy.clientAddress(socket?.remoteAddress, c.req.header('x-forwarded-for'));
}

/** Whether a Hono request reached the edge over https (its own socket's TLS, or a trusted proxy's word). */
export function requestIsHttps(c: Context, policy: ClientAddressPolicy): boolean {
  const incoming = incomingOf(c);
  const socket = incoming?.socket as (IncomingMessage['socket'] & { encrypted?: boolean }) | null | undefined;
  if (socket?.encrypted) return true;
  return policy.forwardedHttps(socket?.remoteAddress, c.req.header('x-forwarded-proto'));
}
