/**
 * What every ntfy handler works with, and the small request helpers they share.
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import type { HttpBindings } from '@hono/node-server';
import type { Clock, StorePort } from '../store/port.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { NtfySettings } from './config.ts';
import type { NtfyHub } from './hub.ts';
import type { ParamSource } from './publish-params.ts';
import type { Scheduler } from './scheduler.ts';
import type { SubscriptionTimers } from './subscription-timers.ts';
import type { VisitorLimits } from './visitor.ts';

export interface NtfyContext {
  store: StorePort;
  settings: NtfySettings;
  limits: VisitorLimits;
  /** The pusher's subscriptions; null when this process does not run the pusher role. */
  hub: NtfyHub | null;
  scheduler: Scheduler;
  /** The timers every open subscription holds. */
  timers: SubscriptionTimers;
  /** Time for `since=` durations, event times and visitor buckets: the store's clock. */
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** `metrics.ntfyPublished` bound to its modes once (a label object is hashed on every `inc`). */
  publishedUnifiedPush: { inc(): void };
  publishedPlain: { inc(): void };
  publishedUncached: { inc(): void };
  publishedScheduled: { inc(): void };
}

export type NtfyEnv = { Bindings: HttpBindings };
export type NtfyHonoContext = Context<NtfyEnv>;

/**
 * Node's request and response behind a Hono request. Hono types `c.env` as always present, but it
 * is undefined when the app is called without @hono/node-server (`app.request`, `app.fetch`).
 */
export function nodeBindings(c: NtfyHonoContext): Partial<HttpBindings> {
  // Spreading undefined gives {}: the two fields, or neither.
  return { ...c.env };
}

/** Headers and query of a Hono request as a {@link ParamSource}. */
export function honoParamSource(c: NtfyHonoContext): ParamSource {
  return { header: (name) => c.req.header(name), query: (name) => c.req.query(name) };
}

/** Headers and query of a raw Node request (a WebSocket upgrade) as a {@link ParamSource}. */
export function nodeParamSource(request: IncomingMessage, url: URL): ParamSource {
  return {
    header: (name) => headerOf(request, name),
    query: (name) => url.searchParams.get(name) ?? undefined,
  };
}

/** Stands for a request whose peer address is unknown (never exempt, one shared visitor). */
const UNKNOWN_ADDRESS = 'unknown';

/**
 * The visitor's address: the socket's peer, or with `behind_proxy` the last `X-Forwarded-For`
 * entry (the one the operator's own proxy appended; earlier entries are the client's word).
 */
export function visitorAddress(socketAddress: string | undefined, forwardedFor: string | undefined, behindProxy: boolean): string {
  if (behindProxy && forwardedFor) {
    const last = forwardedFor.split(',').pop()?.trim();
    if (last) return last;
  }
  return socketAddress ?? UNKNOWN_ADDRESS;
}

function headerOf(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

export function honoVisitorAddress(c: NtfyHonoContext, behindProxy: boolean): string {
  const { incoming } = nodeBindings(c);
  const forwarded = incoming ? headerOf(incoming, 'x-forwarded-for') : c.req.header('x-forwarded-for');
  // Node nulls a request's socket once it is detached (its type does not say so).
  const socket = incoming?.socket as IncomingMessage['socket'] | null | undefined;
  return visitorAddress(socket?.remoteAddress, forwarded, behindProxy);
}

/**
 * The request's parameters read from Node's own request when there is one. Reading headers
 * through Hono's `c.req` makes @hono/node-server build a full fetch `Request`, which a
 * subscription would then keep alive (about 8 KiB) for as long as it is open.
 */
export function lightParamSource(c: NtfyHonoContext): ParamSource {
  const { incoming } = nodeBindings(c);
  if (!incoming) return honoParamSource(c);
  return nodeParamSource(incoming, new URL(incoming.url ?? '/', 'http://request.invalid'));
}
