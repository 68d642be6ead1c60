/**
 * An ntfy server for black-box HTTP tests: the real routes, hub and WebSocket handler on a real
 * loopback port, over a real store, with a manual store clock and a manual scheduler so that
 * keepalive and expiry timing is driven by the test, never waited for.
 */
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import { defaultConfig, type NtfyConfig } from '../../src/config/defaults.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { createNtfyServer, type NtfyServer } from '../../src/ntfy/server.ts';
import { ManualScheduler } from '../../src/ntfy/scheduler.ts';
import type { NtfyEnv } from '../../src/ntfy/context.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { ManualClock } from '../../src/util/clock.ts';

export interface NtfyTestServer {
  baseUrl: string;
  /** The HTTP server (its connections, its timeouts). */
  http: Server;
  store: StorePort;
  clock: ManualClock;
  scheduler: ManualScheduler;
  ntfy: NtfyServer;
  metrics: Metrics;
  close(): Promise<void>;
}

export interface NtfyTestServerOptions {
  /** A Redis URL selects the Redis store (with a fresh key prefix); default in-memory SQLite. */
  redisUrl?: string;
  /** A SQLite file instead of an in-memory database (so a second store can share it). */
  sqlitePath?: string;
  /** The Redis key prefix (default: a fresh one), so a second store can share it. */
  keyPrefix?: string;
  /** Overrides of the `ntfy` section; loopback is exempt from visitor limits unless this says otherwise. */
  config?: Partial<NtfyConfig>;
  publish?: boolean;
  subscribe?: boolean;
  drainBatchSize?: number;
}

/** Loopback in both families, as the tests' clients connect. */
export const LOOPBACK_EXEMPT = ['127.0.0.1', '::1'];

export async function startNtfyTestServer(options: NtfyTestServerOptions = {}): Promise<NtfyTestServer> {
  const clock = new ManualClock(Date.now());
  const scheduler = new ManualScheduler();
  const store: StorePort = options.redisUrl
    ? await openRedisStore({ url: options.redisUrl, clock, keyPrefix: options.keyPrefix ?? `ntfy-${randomUUID()}:` })
    : await openSqliteStore({ path: options.sqlitePath ?? ':memory:', clock });
  const metrics = new Metrics();
  const config: NtfyConfig = { ...defaultConfig().ntfy, visitor_exempt_hosts: LOOPBACK_EXEMPT, ...options.config };
  const ntfy = createNtfyServer({
    store,
    config,
    logger: createLogger({ level: process.env.NTFY_TEST_LOG ?? 'silent' }),
    metrics,
    publish: options.publish ?? true,
    subscribe: options.subscribe ?? true,
    scheduler,
    drainBatchSize: options.drainBatchSize,
  });
  const app = new Hono<NtfyEnv>();
  app.route('/', ntfy.routes);
  // Served as the service serves it: publishes answered by the front listener, the rest by Hono.
  const handleWithHono = getRequestListener(app.fetch);
  const server = createServer(ntfy.frontListener((req, res) => void handleWithHono(req, res)));
  const address = await new Promise<AddressInfo>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(server.address() as AddressInfo)),
  );
  ntfy.attach(server);
  ntfy.hub?.listen();
  return {
    baseUrl: `http://127.0.0.1:${address.port}`,
    http: server,
    store,
    clock,
    scheduler,
    ntfy,
    metrics,
    async close() {
      ntfy.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.close();
    },
  };
}
