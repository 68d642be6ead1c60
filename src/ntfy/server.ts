/**
 * The ntfy-compatible UnifiedPush server, put together: routes for the service's Hono app, the
 * pusher hub (when this process runs the pusher role) and the WebSocket upgrade handler. The
 * composition root (`service.ts`) mounts {@link NtfyServer.routes}, attaches the HTTP server, and
 * hands {@link NtfyServer.hub} to the pusher role, which runs it.
 */
import type { RequestListener, Server } from 'node:http';
import type { Hono } from 'hono';
import type { NtfyConfig } from '../config/defaults.ts';
import type { Clock, StorePort } from '../store/port.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { ntfySettings } from './config.ts';
import type { NtfyContext, NtfyEnv } from './context.ts';
import { NtfyError, type NtfyErrorBody } from './errors.ts';
import { JSON_BODY_LIMIT_FACTOR } from './publish.ts';
import type { LargerBody } from '../api/body-limit.ts';
import { ntfyFrontListener } from './front.ts';
import { NtfyHub } from './hub.ts';
import { ntfyRoutes } from './routes.ts';
import { realScheduler, type Scheduler } from './scheduler.ts';
import { VisitorLimits } from './visitor.ts';
import { attachRawStreams } from './raw-streams.ts';
import { createSubscriptionTimers } from './subscription-timers.ts';
import { attachNtfyWebSockets } from './websocket.ts';
import { withTurnBatching } from '../store/turn-batching.ts';

export interface NtfyServerOptions {
  store: StorePort;
  config: NtfyConfig;
  logger: Logger;
  metrics: Metrics;
  /** Serve publishing (the api role). */
  publish: boolean;
  /** Serve subscriptions (the pusher role). */
  subscribe: boolean;
  /** Timers for keepalives and pings; tests pass a ManualScheduler. */
  scheduler?: Scheduler;
  /** Defaults to the store's clock. */
  clock?: Clock;
  /** Messages per store read of a drain (tests use small batches). */
  drainBatchSize?: number;
}

export interface NtfyServer {
  readonly routes: Hono<NtfyEnv>;
  /** The pusher's subscriptions; null without the pusher role. */
  readonly hub: NtfyHub | null;
  readonly context: NtfyContext;
  /**
   * The HTTP server's request listener: publishes answered by this server directly (with the api
   * role, see `front.ts`), everything else by `next` (the service's Hono app, which mounts {@link routes}).
   */
  frontListener(next: RequestListener): RequestListener;
  /**
   * The publish routes' body limits when ntfy's message limit is set above `server.max_body_bytes`
   * (empty without publishing): a message up to `ntfy.message_size_limit_bytes`, a JSON publish twice that.
   */
  readonly largerBodies: readonly LargerBody[];
  /** ntfy's answer to a body refused by the service's body limit on `path` (41303 for a JSON publish, else 41304). */
  bodyTooLarge(path: string | null): NtfyErrorBody;
  /**
   * Serve WebSocket subscriptions on `server` (only with the pusher role). Upgrades to
   * `foreignUpgradePaths` (served by another part of the service) are left alone.
   */
  attach(server: Server, foreignUpgradePaths?: ReadonlySet<string>): void;
  /** End every subscription and stop hearing append events. */
  close(): void;
}

export function createNtfyServer(options: NtfyServerOptions): NtfyServer {
  // The head and catch-up reads of a subscription burst reach the store as one call per turn.
  const store = withTurnBatching(options.store);
  const settings = ntfySettings(options.config);
  const clock = options.clock ?? options.store.clock;
  const scheduler = options.scheduler ?? realScheduler;
  const logger = options.logger.child({ component: 'ntfy' });
  const hub = options.subscribe
    ? new NtfyHub({
        store,
        scheduler,
        logger,
        metrics: options.metrics,
        safetyRedrainMs: settings.safetyRedrainMs,
        drainBatchSize: options.drainBatchSize,
      })
    : null;
  const context: NtfyContext = {
    store,
    settings,
    limits: new VisitorLimits({
      requestBurst: settings.visitorRequestBurst,
      requestReplenishMs: settings.visitorRequestReplenishMs,
      subscriptionLimit: settings.visitorSubscriptionLimit,
      exemptHosts: settings.visitorExemptHosts,
      clock,
    }),
    hub,
    scheduler,
    timers: createSubscriptionTimers(scheduler, settings),
    clock,
    logger,
    metrics: options.metrics,
    publishedUnifiedPush: options.metrics.ntfyPublished.labels('unifiedpush'),
    publishedPlain: options.metrics.ntfyPublished.labels('plain'),
    publishedUncached: options.metrics.ntfyPublished.labels('uncached'),
    publishedScheduled: options.metrics.ntfyPublished.labels('scheduled'),
  };
  const routes = ntfyRoutes(context, { publish: options.publish });
  const sockets: Array<{ close(): void }> = [];
  const rawStreams: Array<{ close(): void }> = [];
  const message = settings.messageSizeLimitBytes;
  const messageReason = 'an ntfy message up to ntfy.message_size_limit_bytes';
  const jsonReason = 'an ntfy JSON publish: twice ntfy.message_size_limit_bytes (ntfy’s rule, room for the other fields)';
  const largerBodies: LargerBody[] = options.publish
    ? ['PUT', 'POST'].flatMap((method) => [
        { method, path: '/', maxBytes: JSON_BODY_LIMIT_FACTOR * message, reason: jsonReason },
        { method, path: '/:topic', maxBytes: message, reason: messageReason },
      ])
    : [];
  return {
    routes,
    hub,
    context,
    largerBodies,
    bodyTooLarge: (path) => new NtfyError(path === '/' ? 'JSON_BODY_TOO_LARGE' : 'MESSAGE_TOO_LARGE').toJSON(),
    frontListener(next) {
      return options.publish ? ntfyFrontListener(context, next) : next;
    },
    attach(server, foreignUpgradePaths) {
      if (!hub) return;
      sockets.push(attachNtfyWebSockets(context, server, foreignUpgradePaths));
      rawStreams.push(attachRawStreams(context, server));
    },
    close() {
      hub?.close();
      for (const raw of rawStreams) raw.close();
      // A peer that never answers the close handshake would hold the HTTP server's close for
      // the close timeout; the ntfy app reconnects either way.
      for (const webSockets of sockets) webSockets.close();
    },
  };
}
