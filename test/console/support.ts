/**
 * What the console's route tests share (`api.test.ts`, `apps.test.ts`): a console mounted on a
 * fresh store of either adapter (SQLite in memory, or a fresh key prefix on a private Redis) with
 * a manual clock, hosting two apps (`default` and {@link CLIPS}, each on its own store view), an
 * admin key of `default`, and helpers to log in and call the console API as the page does.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Hono } from 'hono';
import { createApiApp } from '../../src/api/app.ts';
import { createClientAddressPolicy } from '../../src/api/client-address.ts';
import type { SendApiAppSettings } from '../../src/api/notifications.ts';
import { mountConsole } from '../../src/console/index.ts';
import { CSRF_HEADER } from '../../src/console/session.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { createApiKey } from '../../src/platform/api-keys.ts';
import type { TransportState } from '../../src/platform/transport-states.ts';
import type { QueueName, StorePort } from '../../src/store/port.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';

export const SESSION_TTL_MS = 3_600_000;
export const SAMPLE_INTERVAL_MS = 10_000;
export const ALICE = 'a'.repeat(64);
export const FCM_TOKEN = 'fcm-token-of-alice-0123456789abcdef';
export const LEASE = { max: 10, leaseMs: 60_000, maxAttempts: 5 };

/** The default app's transports as the console is told them: FCM off, the others on. */
export const DEFAULT_TRANSPORTS: TransportState[] = [
  { transport: 'fcm', configured: false, detail: 'off: firebase.credentials_path is not set' },
  { transport: 'apns', configured: true, detail: 'bundle b' },
  { transport: 'webpush', configured: true, detail: 'VAPID' },
  { transport: 'unifiedpush', configured: true, detail: 'VAPID' },
];

/** The second app every fixture hosts beside `default`, on a store view of its own. */
export const CLIPS = 'clips';

export interface Fixture {
  store: StorePort;
  /** The store view of app {@link CLIPS}. */
  clips: StorePort;
  /** Sends the console's test send created (its wake-ups of the scheduler). */
  sendsCreated: number;
  clock: ManualClock;
  metrics: Metrics;
  app: Hono;
  adminKey: string;
}

export type Adapter = 'sqlite' | 'redis';
let redis: PrivateRedisServer | undefined;

/** Start the private redis-server the Redis fixtures use (a file's `before`). */
export async function startConsoleTestRedis(): Promise<void> {
  redis = await startRedisServer();
}

/** Stop it (the file's `after`). */
export async function stopConsoleTestRedis(): Promise<void> {
  await redis?.stop();
  redis = undefined;
}

/** The log lines a fixture's console writes (info and above). */
export type LogSink = Array<Record<string, unknown>>;

export function capturingLogger(lines: LogSink) {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return createLogger({ level: 'info', destination: sink });
}

export async function fixture(adapter: Adapter, options: { publicUrl?: string; logs?: LogSink } = {}): Promise<Fixture> {
  const clock = new ManualClock();
  const open = (app: string) =>
    adapter === 'sqlite'
      ? openSqliteStore({ path: ':memory:', clock })
      : openRedisStore({ url: (redis as PrivateRedisServer).url, clock, keyPrefix: `t-${randomUUID()}:${app}:` });
  const store = await open('default');
  const clips = await open(CLIPS);
  const metrics = new Metrics();
  const logger = options.logs ? capturingLogger(options.logs) : createLogger({ level: 'silent' });
  const app = createApiApp({ health: { pubkey: () => 'ab'.repeat(32), criticalFlags: () => ({}) }, metrics, logger });
  const settings = (appStore: StorePort): SendApiAppSettings => ({
    store: appStore,
    typeCategories: new Map([
      ['payout', 1059],
      ['note', 1],
    ]),
    maxRecipients: 10_000,
    idempotencyTtlSecs: 86_400,
    recordTtlSecs: 86_400,
    openedClaimTtlSecs: 86_400,
    retentionDays: 7,
  });
  const created = { n: 0 };
  mountConsole(app, {
    store,
    sendApi: {
      settingsOf: (appId) => settings(appId === CLIPS ? clips : store),
      onCreated: () => {
        created.n += 1;
      },
    },
    apps: [
      { id: 'default', store, transports: DEFAULT_TRANSPORTS },
      { id: CLIPS, store: clips },
    ],
    publicUrl: options.publicUrl ?? '',
    // No proxy is trusted; in-process requests have no socket, so nothing says they came over https.
    clientAddress: createClientAddressPolicy([]),
    sessionTtlMs: SESSION_TTL_MS,
    sampleIntervalMs: SAMPLE_INTERVAL_MS,
    deliveryLogRetentionMs: 7 * 86_400_000,
    metrics,
    logger,
  });
  const adminKey = (await createApiKey(store, 'default', 'admin')).key;
  return {
    store,
    clips,
    get sendsCreated() {
      return created.n;
    },
    clock,
    metrics,
    app,
    adminKey,
  };
}

export async function closeFixture(f: Fixture): Promise<void> {
  await Promise.all([f.store.close(), f.clips.close()]);
}

export interface Session {
  cookie: string;
  csrf: string;
}

export async function login(f: Fixture, key = f.adminKey, headers: Record<string, string> = {}): Promise<Response> {
  return f.app.request('/console/api/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ key }),
  });
}

export async function session(f: Fixture): Promise<Session> {
  const response = await login(f);
  assert.equal(response.status, 200);
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const { csrfToken } = (await response.json()) as { csrfToken: string };
  return { cookie, csrf: csrfToken };
}

export function call(f: Fixture, s: Session | null, path: string, init: { method?: string; csrf?: string | null } = {}): Promise<Response> {
  const headers: Record<string, string> = {};
  if (s) headers.cookie = s.cookie;
  const csrf = init.csrf === undefined ? s?.csrf : init.csrf;
  if (csrf) headers[CSRF_HEADER] = csrf;
  return Promise.resolve(f.app.request(`/console/api/${path}`, { method: init.method ?? 'GET', headers }));
}

export async function code(response: Response): Promise<string> {
  return ((await response.json()) as { code: string }).code;
}

/** A dead letter with this id in `queue`. */
export async function deadLetter(f: Fixture, queue: QueueName, id: string): Promise<void> {
  await f.store.enqueue(queue, { id, payload: { id } });
  const [item] = await f.store.lease(queue, LEASE);
  assert.ok(item);
  assert.equal(await f.store.deadLetter(queue, id, item.leaseToken, `poison ${id}`), true);
  f.clock.advance(1000);
}
