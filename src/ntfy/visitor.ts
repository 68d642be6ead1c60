/**
 * Per-visitor limits, like ntfy's `visitor.go`: a visitor is an IPv4 address or an IPv6 /64
 * (one household, one phone carrier subscriber), and holds a request bucket (publish and
 * subscribe; ntfy's 60 burst, one back every 5 s) and a count of open subscriptions (30).
 * Exempt hosts bypass both (ntfy exempts them from the request bucket only; loopback load tests
 * need more than 30 connections too).
 *
 * Visitors with a full bucket and no subscription are forgotten by a periodic sweep, so the table
 * never grows with the number of distinct addresses ever seen.
 */
import { BlockList, isIP } from 'node:net';
import type { Clock } from '../store/port.ts';

/** How often idle visitors are looked for and forgotten. */
export const VISITOR_SWEEP_INTERVAL_MS = 60_000;
/**
 * Addresses whose exemption is remembered. Checking one builds a SocketAddress and walks the
 * BlockList, which costs more than the rest of a publish's bookkeeping; a busy server sees the
 * same few addresses (its app servers, a proxy) over and over. Past this many the memory is
 * cleared, so a flood of distinct addresses cannot grow it.
 */
export const EXEMPT_CACHE_ADDRESSES = 4_096;

export interface VisitorLimitOptions {
  /** Requests in a burst; 0 switches the request limit off. */
  requestBurst: number;
  /** One request back every this many ms. */
  requestReplenishMs: number;
  /** Concurrent subscriptions; 0 switches the limit off. */
  subscriptionLimit: number;
  /** Addresses and CIDR ranges exempt from every limit. */
  exemptHosts: readonly string[];
  clock: Clock;
}

interface Visitor {
  tokens: number;
  refilledAtMs: number;
  subscriptions: number;
}

/** An exempt-host entry that does not parse, for config validation. */
export function exemptHostProblem(entry: string): string | null {
  const [address, prefix, extra] = entry.split('/');
  if (extra !== undefined || !address || isIP(address) === 0) return `"${entry}" is not an IP address or CIDR range`;
  if (prefix === undefined) return null;
  const bits = Number(prefix);
  const max = isIP(address) === 4 ? 32 : 128;
  return /^\d+$/.test(prefix) && bits <= max ? null : `"${entry}" has a bad prefix length`;
}

/** `::ffff:1.2.3.4` is the IPv4 address it maps. */
function normaliseAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped?.[1] ?? address;
}

/** The visitor an address belongs to: the IPv4 address, or the /64 of an IPv6 one. */
export function visitorKey(address: string): string {
  const normalised = normaliseAddress(address);
  if (isIP(normalised) !== 6) return normalised;
  const [head = '', tail = ''] = normalised.toLowerCase().split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === '' ? [] : tail.split(':');
  const groups = normalised.includes('::')
    ? [...headGroups, ...new Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups]
    : headGroups;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** The release of a subscription that counted against no limit: one function for all of them. */
export function releaseNothing(): void {}

export class VisitorLimits {
  private readonly visitors = new Map<string, Visitor>();
  private readonly exempt = new BlockList();
  private readonly exemptByAddress = new Map<string, boolean>();
  private nextSweepMs = 0;

  constructor(private readonly options: VisitorLimitOptions) {
    for (const entry of options.exemptHosts) {
      const [address = '', prefix] = entry.split('/');
      const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) this.exempt.addAddress(address, family);
      else this.exempt.addSubnet(address, Number(prefix), family);
    }
  }

  isExempt(address: string): boolean {
    const known = this.exemptByAddress.get(address);
    if (known !== undefined) return known;
    const normalised = normaliseAddress(address);
    const family = isIP(normalised);
    const exempt = family !== 0 && this.exempt.check(normalised, family === 6 ? 'ipv6' : 'ipv4');
    if (this.exemptByAddress.size >= EXEMPT_CACHE_ADDRESSES) this.exemptByAddress.clear();
    this.exemptByAddress.set(address, exempt);
    return exempt;
  }

  /** Take one request from the visitor's bucket; false when it is empty (429 42901). */
  takeRequest(address: string): boolean {
    if (this.options.requestBurst <= 0 || this.isExempt(address)) return true;
    const visitor = this.visitor(address);
    if (visitor.tokens < 1) return false;
    visitor.tokens -= 1;
    return true;
  }

  /**
   * Count one more open subscription; returns its release function, or null when the visitor
   * is at its limit (429 42903). Release exactly once, when the subscription closes.
   */
  openSubscription(address: string): (() => void) | null {
    if (this.options.subscriptionLimit <= 0 || this.isExempt(address)) return releaseNothing;
    const key = visitorKey(address);
    const visitor = this.visitor(address);
    if (visitor.subscriptions >= this.options.subscriptionLimit) return null;
    visitor.subscriptions += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const current = this.visitors.get(key);
      if (current) current.subscriptions = Math.max(0, current.subscriptions - 1);
    };
  }

  /** Visitors currently remembered (for tests and metrics). */
  get size(): number {
    return this.visitors.size;
  }

  private visitor(address: string): Visitor {
    const nowMs = this.options.clock.nowMs();
    this.maybeSweep(nowMs);
    const key = visitorKey(address);
    let visitor = this.visitors.get(key);
    if (!visitor) {
      visitor = { tokens: this.options.requestBurst, refilledAtMs: nowMs, subscriptions: 0 };
      this.visitors.set(key, visitor);
    }
    this.refill(visitor, nowMs);
    return visitor;
  }

  private refill(visitor: Visitor, nowMs: number): void {
    const elapsed = nowMs - visitor.refilledAtMs;
    if (elapsed <= 0) return;
    const gained = elapsed / Math.max(1, this.options.requestReplenishMs);
    visitor.tokens = Math.min(this.options.requestBurst, visitor.tokens + gained);
    visitor.refilledAtMs = nowMs;
  }

  private maybeSweep(nowMs: number): void {
    if (nowMs < this.nextSweepMs) return;
    this.nextSweepMs = nowMs + VISITOR_SWEEP_INTERVAL_MS;
    for (const [key, visitor] of this.visitors) {
      this.refill(visitor, nowMs);
      if (visitor.subscriptions === 0 && visitor.tokens >= this.options.requestBurst) this.visitors.delete(key);
    }
  }
}
