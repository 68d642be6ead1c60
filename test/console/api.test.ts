/**
 * Route tests of the console's API (`src/console/`) on each store adapter (SQLite in memory, a
 * private Redis with a fresh key prefix per test) and a manual clock: login and its refusals, the cookie's attributes, sessions (shared through the
 * store, expiring, ended by logout and by revoking the key), the CSRF check of every
 * state-changing route, and every route the console page uses, with its pagination and errors
 * (the overview's transports and relay history, the user page's one row per push). The routes
 * for every app (`?app=`, API keys, test send) are in `apps.test.ts`; the fixture in `support.ts`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { createApiApp } from '../../src/api/app.ts';
import { FleetReporter, showFirstAdminKey } from '../../src/console/index.ts';
import { FIRST_ADMIN_KEY_STORE_ATTEMPTS } from '../../src/console/bootstrap-key.ts';
import { InjectedStoreFault } from '../../src/store/fault-injection.ts';
import { pushSeries } from '../../src/console/series.ts';
import { SESSION_COOKIE } from '../../src/console/session.ts';
import type { TransportState } from '../../src/platform/transport-states.ts';
import { consoleStaticRoutes, loadConsoleAssets } from '../../src/console/static.ts';
import { npubEncode } from '../../src/nostr/nip19.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { createApiKey } from '../../src/platform/api-keys.ts';
import type { NewDeliveryLogEntry } from '../../src/store/port-delivery-log.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { eventually } from '../support/service-process.ts';
import {
  ALICE,
  call,
  closeFixture,
  code,
  deadLetter,
  FCM_TOKEN,
  fixture,
  login,
  SAMPLE_INTERVAL_MS,
  session,
  SESSION_TTL_MS,
  startConsoleTestRedis,
  stopConsoleTestRedis,
  type Fixture,
  type LogSink,
} from './support.ts';

before(startConsoleTestRedis);
after(stopConsoleTestRedis);

for (const adapter of ['sqlite', 'redis'] as const)
  describe(`console API (${adapter})`, () => {
    let f: Fixture;
    beforeEach(async () => {
      f = await fixture(adapter);
    });
    afterEach(async () => {
      await closeFixture(f);
    });

    describe('login', () => {
      test('an admin key of the default app logs in: the session cookie is HttpOnly, SameSite=Strict, Path=/console, not Secure over HTTP', async () => {
        const response = await login(f);
        assert.equal(response.status, 200);
        const cookie = response.headers.get('set-cookie') ?? '';
        assert.match(cookie, new RegExp(`^${SESSION_COOKIE}=[A-Za-z0-9_-]{43};`));
        assert.match(cookie, /HttpOnly/);
        assert.match(cookie, /SameSite=Strict/);
        assert.match(cookie, /Path=\/console(;|$)/);
        assert.doesNotMatch(cookie, /Secure/);
        assert.ok(!cookie.includes(f.adminKey), 'the key is not the cookie');
        const body = (await response.json()) as { csrfToken: string; expiresAt: string };
        assert.match(body.csrfToken, /^[A-Za-z0-9_-]{43}$/);
        assert.equal(Date.parse(body.expiresAt), f.clock.nowMs() + SESSION_TTL_MS);
      });

      test('a failed login logs nothing of what was typed (a near-miss of a real key included)', async () => {
        const logs: LogSink = [];
        const logged = await fixture(adapter, { logs });
        try {
          const typed = ['npk_Sup3rSecretTypedIntoTheWrongBox0123456789ab', `${logged.adminKey.slice(0, -1)}_`];
          for (const key of typed) assert.equal((await login(logged, key)).status, 401);
          await new Promise((resolve) => setImmediate(resolve));
          assert.equal(logs.filter((l) => l.msg === 'console request refused').length, 2);
          const text = JSON.stringify(logs);
          // Not even the prefix the live-key lines use: the first characters after `npk_`.
          for (const key of typed) assert.ok(!text.includes(key.slice(0, 8)), `no part of ${key.slice(0, 8)}… in ${text}`);
        } finally {
          await closeFixture(logged);
        }
      });

      test('X-Forwarded-Proto: https from a peer that is no trusted proxy does not make the cookie Secure', async () => {
        const response = await login(f, f.adminKey, { 'x-forwarded-proto': 'https' });
        assert.equal(response.status, 200);
        assert.doesNotMatch(response.headers.get('set-cookie') ?? '', /Secure/);
      });

      test('with an https server.public_url the cookie is Secure, and only that origin may log in', async () => {
        const behind = await fixture(adapter, { publicUrl: 'https://push.example.com' });
        try {
          const response = await login(behind, behind.adminKey, { origin: 'https://push.example.com', host: '10.0.0.5:8000' });
          assert.equal(response.status, 200);
          assert.match(response.headers.get('set-cookie') ?? '', /Secure/);
          const other = await login(behind, behind.adminKey, { origin: 'http://push.example.com' });
          assert.equal(other.status, 403);
          assert.equal(await code(other), 'CONSOLE_ORIGIN_REFUSED');
        } finally {
          await closeFixture(behind);
        }
      });

      test('login CSRF: another origin, Origin null, or a body that is not application/json is refused before the key is looked at', async () => {
        for (const origin of ['https://evil.example', 'null']) {
          const response = await login(f, f.adminKey, { origin, host: 'localhost' });
          assert.equal(response.status, 403, origin);
          assert.equal(await code(response), 'CONSOLE_ORIGIN_REFUSED');
          assert.equal(response.headers.get('set-cookie'), null);
        }
        // The page's own origin (no public URL: the Host the request came to) logs in.
        assert.equal((await login(f, f.adminKey, { origin: 'http://localhost', host: 'localhost' })).status, 200);
        for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', null]) {
          const response = await f.app.request('/console/api/login', {
            method: 'POST',
            headers: type === null ? {} : { 'content-type': type },
            body: JSON.stringify({ key: f.adminKey }),
          });
          assert.equal(response.status, 415, String(type));
          assert.equal(await code(response), 'UNSUPPORTED_MEDIA_TYPE');
          assert.equal(response.headers.get('set-cookie'), null);
        }
      });

      test('a wrong key, a send key, a revoked admin key and a body without a key are refused alike (401), with no cookie', async () => {
        const sendKey = (await createApiKey(f.store, 'default', 'send')).key;
        const revoked = await createApiKey(f.store, 'default', 'admin');
        await f.store.revokeApiKey(revoked.record.id);
        for (const key of ['npk_wrong', sendKey, revoked.key, '']) {
          const response = await login(f, key);
          assert.equal(response.status, 401, key);
          assert.equal(await code(response), 'CONSOLE_LOGIN_FAILED');
          assert.equal(response.headers.get('set-cookie'), null);
        }
        const notJson = await f.app.request('/console/api/login', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: 'key=x',
        });
        assert.equal(notJson.status, 400);
        assert.equal(await code(notJson), 'INVALID_JSON');
      });
    });

    describe('sessions', () => {
      test('every route refuses a request without a session (401 CONSOLE_SESSION_REQUIRED)', async () => {
        for (const [method, path] of [
          ['GET', 'session'],
          ['POST', 'logout'],
          ['GET', 'overview'],
          ['GET', `users/${ALICE}`],
          ['GET', 'ntfy'],
          ['GET', 'apps'],
          ['GET', 'keys'],
          ['POST', 'keys'],
          ['DELETE', 'keys/key_x'],
          ['POST', 'test-send'],
          ['GET', 'v1/admin/dlq?queue=outbound'],
          ['POST', 'v1/admin/dlq/x/replay'],
          ['POST', 'v1/admin/dlq/replay?queue=outbound'],
          ['DELETE', 'v1/admin/dlq/x'],
        ] as const) {
          const response = await call(f, null, path, { method });
          assert.equal(response.status, 401, `${method} ${path}`);
          assert.equal(await code(response), 'CONSOLE_SESSION_REQUIRED');
        }
        const forged = await call(f, { cookie: `${SESSION_COOKIE}=forged`, csrf: 'x' }, 'overview');
        assert.equal(forged.status, 401);
      });

      test('a session gives a reloaded page its CSRF token, and expires after its time to live', async () => {
        const s = await session(f);
        const again = await call(f, s, 'session');
        assert.equal(again.status, 200);
        assert.equal(((await again.json()) as { csrfToken: string }).csrfToken, s.csrf);
        f.clock.advance(SESSION_TTL_MS);
        assert.equal((await call(f, s, 'overview')).status, 401);
      });

      test('logout ends the session (and needs the CSRF token)', async () => {
        const s = await session(f);
        const noCsrf = await call(f, s, 'logout', { method: 'POST', csrf: null });
        assert.equal(noCsrf.status, 403);
        const out = await call(f, s, 'logout', { method: 'POST' });
        assert.equal(out.status, 204);
        assert.match(out.headers.get('set-cookie') ?? '', new RegExp(`${SESSION_COOKIE}=;.*Max-Age=0`));
        assert.equal((await call(f, s, 'overview')).status, 401);
      });

      test('revoking the key ends its sessions', async () => {
        const s = await session(f);
        const [record] = await f.store.listApiKeys('default');
        assert.ok(record);
        await f.store.revokeApiKey(record.id);
        const response = await call(f, s, 'overview');
        assert.equal(response.status, 401);
        assert.equal(await code(response), 'CONSOLE_SESSION_REQUIRED');
      });

      test('every state-changing route refuses a missing or wrong CSRF token (403 CONSOLE_CSRF_INVALID) and changes nothing', async () => {
        await deadLetter(f, 'outbound', 'job-1');
        const s = await session(f);
        for (const csrf of [null, 'wrong', `${s.csrf}x`]) {
          for (const [method, path] of [
            ['POST', 'v1/admin/dlq/job-1/replay'],
            ['POST', 'v1/admin/dlq/replay?queue=outbound'],
            ['DELETE', 'v1/admin/dlq/job-1'],
          ] as const) {
            const response = await call(f, s, path, { method, csrf });
            assert.equal(response.status, 403, `${method} ${path} with ${csrf}`);
            assert.equal(await code(response), 'CONSOLE_CSRF_INVALID');
          }
        }
        assert.notEqual(await f.store.getDead('outbound', 'job-1'), null, 'still dead');
      });
    });

    describe('overview', () => {
      test('the fleet, queue depths by lane, tokens by transport and the pushes-per-second series', async () => {
        await f.store.registerToken(ALICE, { token: FCM_TOKEN, transport: 'fcm' });
        await f.store.enqueue('outbound', { id: 'waiting', payload: {}, lane: 'critical' });
        const reporter = new FleetReporter({
          store: f.store,
          metrics: f.metrics,
          logger: createLogger({ level: 'silent' }),
          roles: ['api', 'delivery'],
          version: 'test',
          heartbeatIntervalMs: 5000,
          sampleIntervalMs: SAMPLE_INTERVAL_MS,
          tasks: () => [{ name: 'delivery', kind: 'critical', alive: true }],
          relays: () => [
            {
              url: 'wss://relay.example',
              connected: true,
              authenticated: false,
              historicalDone: true,
              lastEventAt: f.clock.nowMs(),
              reconnects: 0,
              lastError: null,
            },
          ],
          ntfySubscribers: () => ({ upTopic: 2 }),
        });
        await reporter.beat();
        await reporter.sample();
        f.clock.advance(SAMPLE_INTERVAL_MS);
        f.metrics.pushDeviceOutcomes.inc({ app: 'default', transport: 'fcm', outcome: 'ok' }, 40);
        f.metrics.pushDeviceOutcomes.inc({ app: 'default', transport: 'fcm', outcome: 'failed' }, 5);
        f.metrics.pushDeviceOutcomes.inc({ app: 'default', transport: 'fcm', outcome: 'unconfigured' }, 3);
        f.metrics.pushDeviceOutcomes.inc({ app: 'default', transport: 'unifiedpush', outcome: 'ok' }, 7);
        f.metrics.pushDeviceOutcomes.inc({ app: 'default', transport: 'webpush', outcome: 'ok' }, 2);
        // Another app's pushes: in the fleet's plot, not in the default app's transports table.
        f.metrics.pushDeviceOutcomes.inc({ app: 'clips', transport: 'fcm', outcome: 'ok' }, 10);
        f.metrics.pushDeviceOutcomes.inc({ app: 'clips', transport: 'apns', outcome: 'unconfigured' }, 4);
        await reporter.sample();

        const s = await session(f);
        const response = await call(f, s, 'overview');
        assert.equal(response.status, 200);
        const body = (await response.json()) as {
          processes: Array<{
            roles: string[];
            tasks: unknown[];
            relays: Array<{ url: string; connected: boolean; lastEventAt: string }>;
            ntfySubscriptions: number;
          }>;
          queues: Record<string, { lanes: Record<string, { ready: number }> }>;
          tokens: Record<string, number>;
          pushes: { times: number[]; rates: Record<string, number[]>; totals: Record<string, number> };
          transports: Array<TransportState & { ok: number; failed: number; unconfigured: number }>;
        };
        assert.equal(body.processes.length, 1);
        const [proc] = body.processes;
        assert.ok(proc);
        assert.deepEqual(proc.roles, ['api', 'delivery']);
        assert.deepEqual(
          proc.relays.map((r) => [r.url, r.connected]),
          [['wss://relay.example', true]],
        );
        assert.equal(proc.ntfySubscriptions, 2);
        assert.equal(body.queues.outbound?.lanes.critical?.ready, 1);
        assert.deepEqual(body.tokens, { fcm: 1, apns: 0, webpush: 0, unifiedpush: 0 });
        assert.equal(body.pushes.totals['fcm:ok'], 50, 'every app’s');
        assert.equal(body.pushes.totals['fcm:failed'], 8, 'the failures of an unconfigured FCM counted too');
        assert.equal(body.pushes.totals['apns:failed'], 4);
        assert.equal(body.pushes.totals['unifiedpush:ok'], 7, 'UnifiedPush is its own series');
        assert.equal(body.pushes.totals['webpush:ok'], 2);
        assert.deepEqual(body.pushes.rates['fcm:ok'], [0, 5], '50 pushes over 10 s: 5 per second in the second bucket');
        assert.deepEqual(
          Object.keys(body.pushes.totals).sort(),
          ['apns:failed', 'apns:ok', 'fcm:failed', 'fcm:ok', 'unifiedpush:failed', 'unifiedpush:ok', 'webpush:failed', 'webpush:ok'],
          'no unconfigured series in the plot',
        );
        assert.deepEqual(
          body.transports.map((t) => [t.transport, t.configured, t.ok, t.failed, t.unconfigured]),
          [
            ['fcm', false, 40, 8, 3],
            ['apns', true, 0, 0, 0],
            ['webpush', true, 2, 0, 0],
            ['unifiedpush', true, 7, 0, 0],
          ],
        );
        assert.match(body.transports[0]?.detail ?? '', /credentials_path/);
      });

      test('a graceful stop removes the heartbeat at once; a reporter run beats and samples until aborted', async () => {
        const reporter = new FleetReporter({
          store: f.store,
          metrics: f.metrics,
          logger: createLogger({ level: 'silent' }),
          roles: ['janitor'],
          version: 'test',
          heartbeatIntervalMs: 60_000,
          sampleIntervalMs: 60_000,
          tasks: () => [],
          relays: () => [],
          ntfySubscribers: () => ({}),
        });
        const controller = new AbortController();
        const running = reporter.run(controller.signal);
        const s = await session(f);
        const overview = async () =>
          (await (await call(f, s, 'overview')).json()) as { processes: Array<{ processId: string }>; tokens: Record<string, number> };
        await eventually(async () => ((await overview()).processes.length > 0 ? true : undefined), 10_000, 'the first heartbeat');
        assert.deepEqual(
          (await overview()).processes.map((p) => p.processId),
          [reporter.processId],
        );
        await eventually(async () => ((await f.store.readMetricSamples(0)).length === 1 ? true : undefined), 10_000, 'the first sample');
        controller.abort();
        await running;
        await reporter.remove();
        assert.deepEqual((await overview()).processes, []);
      });

      test('each relay’s last error and its reconnect history, newest first', async () => {
        await f.store.writeHeartbeat(
          {
            processId: 'p',
            host: 'h',
            pid: 1,
            roles: ['listener'],
            version: 't',
            startedAtMs: 0,
            tasks: [],
            relays: [
              {
                url: 'wss://flaky.example',
                connected: false,
                authenticated: false,
                lastEventAtMs: null,
                reconnects: 2,
                lastError: 'connect ECONNREFUSED',
                disconnects: [
                  { atMs: 1000, error: 'socket closed (1006)' },
                  { atMs: 5000, error: 'connect ECONNREFUSED' },
                ],
              },
            ],
            ntfySubscribers: {},
          },
          15_000,
        );
        const s = await session(f);
        const body = (await (await call(f, s, 'overview')).json()) as {
          processes: Array<{ relays: Array<{ lastError: string; reconnects: number; disconnects: Array<{ at: string; error: string }> }> }>;
        };
        const relay = body.processes[0]?.relays[0];
        assert.equal(relay?.lastError, 'connect ECONNREFUSED');
        assert.equal(relay.reconnects, 2);
        assert.deepEqual(relay.disconnects, [
          { at: new Date(5000).toISOString(), error: 'connect ECONNREFUSED' },
          { at: new Date(1000).toISOString(), error: 'socket closed (1006)' },
        ]);
      });

      test('a process that stopped is not listed once its heartbeat expired', async () => {
        await f.store.writeHeartbeat(
          { processId: 'p', host: 'h', pid: 1, roles: ['api'], version: 't', startedAtMs: 0, tasks: [], relays: [], ntfySubscribers: {} },
          15_000,
        );
        const s = await session(f);
        assert.equal(((await (await call(f, s, 'overview')).json()) as { processes: unknown[] }).processes.length, 1);
        f.clock.advance(15_000);
        assert.equal(((await (await call(f, s, 'overview')).json()) as { processes: unknown[] }).processes.length, 0);
      });
    });

    describe('dead letters', () => {
      test('listed a page at a time with reasons, replayed one, replayed all, deleted', async () => {
        for (const id of ['d1', 'd2', 'd3']) await deadLetter(f, 'outbound', id);
        await deadLetter(f, 'inbound', 'in1');
        const s = await session(f);
        const first = await call(f, s, 'v1/admin/dlq?queue=outbound&limit=2');
        assert.equal(first.status, 200);
        const page1 = (await first.json()) as { items: Array<{ id: string; reason: string }>; nextCursor: string };
        assert.deepEqual(
          page1.items.map((i) => [i.id, i.reason]),
          [
            ['d1', 'poison d1'],
            ['d2', 'poison d2'],
          ],
        );
        const second = await call(f, s, `v1/admin/dlq?queue=outbound&limit=2&cursor=${encodeURIComponent(page1.nextCursor)}`);
        const page2 = (await second.json()) as { items: Array<{ id: string }>; nextCursor: string | null };
        assert.deepEqual(
          page2.items.map((i) => i.id),
          ['d3'],
        );
        assert.equal(page2.nextCursor, null);

        const replay = await call(f, s, 'v1/admin/dlq/d1/replay?queue=outbound', { method: 'POST' });
        assert.equal(replay.status, 200);
        assert.equal(await f.store.getDead('outbound', 'd1'), null);
        assert.equal((await f.store.queueStats('outbound')).ready, 1);

        const removed = await call(f, s, 'v1/admin/dlq/d2', { method: 'DELETE' });
        assert.equal(removed.status, 204);
        assert.equal(await f.store.getDead('outbound', 'd2'), null);

        const all = await call(f, s, 'v1/admin/dlq/replay?queue=inbound', { method: 'POST' });
        assert.deepEqual(await all.json(), { queue: 'inbound', replayed: 1 });
        assert.notEqual(await f.store.getDead('outbound', 'd3'), null, 'another queue is untouched');
      });

      test('errors: unknown id 404, bad queue, limit and cursor 400', async () => {
        const s = await session(f);
        const missing = await call(f, s, 'v1/admin/dlq/nope/replay', { method: 'POST' });
        assert.equal(missing.status, 404);
        assert.equal(await code(missing), 'DEAD_LETTER_NOT_FOUND');
        for (const [path, expected] of [
          ['v1/admin/dlq?queue=elsewhere', 'INVALID_QUERY'],
          ['v1/admin/dlq?queue=outbound&limit=0', 'INVALID_QUERY'],
          ['v1/admin/dlq?queue=outbound&limit=abc', 'INVALID_QUERY'],
          ['v1/admin/dlq?queue=outbound&cursor=garbage', 'INVALID_CURSOR'],
        ] as const) {
          const response = await call(f, s, path);
          assert.equal(response.status, 400, path);
          assert.equal(await code(response), expected);
        }
      });
    });

    describe('users', () => {
      test('an npub or hex finds the devices (tokens redacted), preferences, bells, counters and the newest deliveries', async () => {
        await f.store.registerToken(ALICE, { token: FCM_TOKEN, transport: 'fcm' });
        await f.store.setPreferences(ALICE, { kinds: [7], campaignsEnabled: false });
        await f.store.appendDeliveryLog([
          { appId: 'default', notificationId: 'n1', recipient: ALICE, type: 'like', status: 'sent', transport: 'fcm' },
        ]);
        f.clock.advance(1000);
        await f.store.appendDeliveryLog([
          { appId: 'default', notificationId: 'n2', recipient: ALICE, type: 'like', status: 'failed', error: 'unregistered' },
        ]);
        const s = await session(f);
        for (const key of [npubEncode(ALICE), ALICE, ALICE.toUpperCase()]) {
          const response = await call(f, s, `users/${key}`);
          assert.equal(response.status, 200, key);
          const text = await response.text();
          assert.ok(!text.includes(FCM_TOKEN), 'the token is redacted');
          const body = JSON.parse(text) as {
            pubkey: string;
            devices: Array<{ token: string; transport: string }>;
            preferences: { kinds: number[] };
            bells: unknown[];
            counters: { totalNew: number };
            deliveries: Array<{ notificationId: string; outcome: string }>;
          };
          assert.equal(body.pubkey, ALICE);
          assert.equal(body.devices.length, 1);
          assert.equal(body.devices[0]?.transport, 'fcm');
          const [device] = body.devices;
          assert.ok(device);
          assert.ok(FCM_TOKEN.startsWith(device.token.replace(/…$/, '')));
          assert.deepEqual(body.preferences.kinds, [7]);
          assert.deepEqual(body.bells, []);
          assert.equal(body.counters.totalNew, 0);
          assert.deepEqual(
            body.deliveries.map((d) => [d.notificationId, d.outcome]),
            [
              ['n2', 'failed'],
              ['n1', 'sent'],
            ],
            'newest first',
          );
        }
      });

      test('one row per push: its outcome over its devices and retries, the provider’s answer, each device’s latest attempt, opened', async () => {
        const log = (entries: Array<Partial<NewDeliveryLogEntry> & Pick<NewDeliveryLogEntry, 'notificationId' | 'status'>>) =>
          f.store.appendDeliveryLog(entries.map((e) => ({ appId: 'default', recipient: ALICE, type: 'payout', ...e })));
        await log([
          { notificationId: 'p1', status: 'queued' },
          { notificationId: 'p2', status: 'queued' },
        ]);
        f.clock.advance(1000);
        await log([
          { notificationId: 'p1', status: 'retrying', transport: 'fcm', tokenPrefix: 'aaaa…', error: 'retryable_internal: 503' },
          {
            notificationId: 'p1',
            status: 'failed',
            transport: 'apns',
            tokenPrefix: 'bbbb…',
            error: 'initialization: no apns transport is configured',
          },
          { notificationId: 'p2', status: 'failed', error: 'no registered devices' },
        ]);
        f.clock.advance(1000);
        await log([
          { notificationId: 'p1', status: 'sent', transport: 'fcm', tokenPrefix: 'aaaa…', providerMessageId: 'projects/x/messages/1' },
        ]);
        f.clock.advance(1000);
        await log([
          { notificationId: 'p3', status: 'queued' },
          { notificationId: 'p1', status: 'opened' },
        ]);
        const s = await session(f);
        const body = (await (await call(f, s, `users/${ALICE}`)).json()) as {
          deliveries: Array<{
            notificationId: string;
            outcome: string;
            answer: string | null;
            transports: string[];
            opened: boolean;
            devices: Array<{ transport: string | null; tokenPrefix: string | null; status: string; answer: string | null }>;
          }>;
        };
        assert.deepEqual(
          body.deliveries.map((d) => [d.notificationId, d.outcome, d.answer, d.opened]),
          [
            ['p1', 'sent', 'projects/x/messages/1', true],
            ['p3', 'queued', null, false],
            ['p2', 'failed', 'no registered devices', false],
          ],
          'one row per push, by latest entry',
        );
        const [p1] = body.deliveries;
        assert.deepEqual(p1?.transports, ['fcm', 'apns']);
        assert.deepEqual(p1.devices, [
          { transport: 'fcm', tokenPrefix: 'aaaa…', status: 'sent', answer: 'projects/x/messages/1' },
          { transport: 'apns', tokenPrefix: 'bbbb…', status: 'failed', answer: 'initialization: no apns transport is configured' },
        ]);
      });

      test('anything else is 400 INVALID_PUBKEY', async () => {
        const s = await session(f);
        for (const key of ['npub1bad', 'a'.repeat(63), 'zz'.repeat(32)]) {
          const response = await call(f, s, `users/${key}`);
          assert.equal(response.status, 400, key);
          assert.equal(await code(response), 'INVALID_PUBKEY');
        }
      });
    });

    describe('ntfy', () => {
      test('topics with stored messages and the fleet’s subscriptions, limited', async () => {
        await f.store.appendNtfyMessage('alpha', { message: 'one' }, 3_600_000);
        await f.store.appendNtfyMessage('alpha', { message: 'two' }, 3_600_000);
        await f.store.writeHeartbeat(
          {
            processId: 'p1',
            host: 'h',
            pid: 1,
            roles: ['pusher'],
            version: 't',
            startedAtMs: 0,
            tasks: [],
            relays: [],
            ntfySubscribers: { alpha: 1, beta: 2 },
          },
          15_000,
        );
        await f.store.writeHeartbeat(
          {
            processId: 'p2',
            host: 'h',
            pid: 2,
            roles: ['pusher'],
            version: 't',
            startedAtMs: 0,
            tasks: [],
            relays: [],
            ntfySubscribers: { alpha: 3 },
          },
          15_000,
        );
        const s = await session(f);
        const response = await call(f, s, 'ntfy');
        assert.equal(response.status, 200);
        assert.deepEqual(((await response.json()) as { topics: unknown[] }).topics, [
          { topic: 'alpha', messages: 2, subscribers: 4 },
          { topic: 'beta', messages: 0, subscribers: 2 },
        ]);
        const limited = (await (await call(f, s, 'ntfy?limit=1')).json()) as { topics: Array<{ topic: string }>; truncated: boolean };
        assert.deepEqual(
          limited.topics.map((t) => t.topic),
          ['alpha'],
        );
        assert.equal(limited.truncated, true);
        for (const bad of ['0', '-1', 'x', '100000']) assert.equal((await call(f, s, `ntfy?limit=${bad}`)).status, 400, bad);
      });
    });
  });

describe('the first admin key', () => {
  const CONSOLE_URL = 'http://localhost:8000/console';
  const npub = npubEncode('cd'.repeat(32));

  function capture(): { logger: ReturnType<typeof createLogger>; lines: Array<{ level: number; msg: string }> } {
    const lines: Array<{ level: number; msg: string }> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean))
          lines.push(JSON.parse(line) as { level: number; msg: string });
        done();
      },
    });
    return { logger: createLogger({ level: 'info', destination: sink }), lines };
  }

  test('is made when none exists, shown on its own line with the npub and the console, stored as a hash, and only then', async () => {
    const store = await openSqliteStore({ path: ':memory:', clock: new ManualClock() });
    const { logger, lines } = capture();
    const shown: string[] = [];
    const show = (text: string) => (shown.push(text), Promise.resolve());
    const key = await showFirstAdminKey({ store, show, logger, npub, consoleUrl: CONSOLE_URL });
    assert.ok(key?.startsWith('npk_'));
    assert.equal(shown.length, 1);
    const [text] = shown;
    assert.ok(text && key);
    assert.ok(text.split('\n').includes(key), 'the key alone on its line');
    assert.ok(text.includes(npub) && text.includes(CONSOLE_URL));
    const [record] = await store.listApiKeys('default');
    assert.ok(record);
    assert.equal(record.role, 'admin');
    assert.notEqual(record.hash, key, 'only a hash is stored');
    assert.equal(await showFirstAdminKey({ store, show, logger, npub, consoleUrl: CONSOLE_URL }), null, 'not again while it lives');
    assert.equal(shown.length, 1);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(lines.filter((l) => l.msg.includes(key)).length, 0, 'the log never holds the key');
    const said = lines.find((l) => l.msg.startsWith('no admin key existed'));
    assert.equal(said?.level, 40, 'said at warn, with the key’s prefix only');
    await store.revokeApiKey(record.id);
    assert.notEqual(
      await showFirstAdminKey({ store, show, logger, npub, consoleUrl: CONSOLE_URL }),
      null,
      'a fresh one once every admin key is revoked',
    );
    await store.close();
  });

  test('a key that could not be shown is not stored: the next start makes and shows another', async () => {
    const store = await openSqliteStore({ path: ':memory:', clock: new ManualClock() });
    const { logger, lines } = capture();
    const failed = await showFirstAdminKey({
      store,
      show: () => Promise.reject(new Error('EPIPE')),
      logger,
      npub,
      consoleUrl: CONSOLE_URL,
    });
    assert.equal(failed, null);
    assert.deepEqual(await store.listApiKeys('default'), [], 'nothing stored');
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(lines.some((l) => l.level === 50 && l.msg.startsWith('the first admin key could not be shown')));
    const shown: string[] = [];
    const key = await showFirstAdminKey({ store, show: (t) => (shown.push(t), Promise.resolve()), logger, npub, consoleUrl: CONSOLE_URL });
    assert.ok(key);
    assert.equal(shown.length, 1);
    assert.equal((await store.listApiKeys('default')).length, 1);
    await store.close();
  });

  test('a store answer lost after the key was stored (issue 42): the retry finds its own key, one key stored, none refused', async () => {
    const store = await openSqliteStore({ path: ':memory:', clock: new ManualClock() });
    // The first call of each method runs and then reports failure; later calls answer.
    const seen = new Set<string | symbol>();
    const flaky = new Proxy(store, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== 'function' || property === 'close') return value;
        return async (...args: unknown[]) => {
          const answer: unknown = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          if (!seen.has(property)) {
            seen.add(property);
            throw new InjectedStoreFault(String(property));
          }
          return answer;
        };
      },
    });
    const { logger, lines } = capture();
    const shown: string[] = [];
    const key = await showFirstAdminKey({
      store: flaky,
      show: (t) => (shown.push(t), Promise.resolve()),
      logger,
      npub,
      consoleUrl: CONSOLE_URL,
      retryBaseMs: 1,
    });
    assert.ok(key, 'the key shown is returned as stored');
    assert.equal(shown.length, 1, 'shown once');
    const keys = await store.listApiKeys('default');
    assert.equal(keys.length, 1, 'stored once');
    assert.equal(keys[0]?.role, 'admin');
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(lines.some((l) => l.level === 40 && l.msg === 'could not store the first admin key; trying again'));
    assert.ok(lines.some((l) => l.msg.startsWith('no admin key existed')));
    await store.close();
  });

  test('a store that keeps failing: no throw, the key is said not to work, and the next start shows another', async () => {
    const store = await openSqliteStore({ path: ':memory:', clock: new ManualClock() });
    const broken = new Proxy(store, {
      get: (target, property, receiver): unknown =>
        property === 'createApiKey' ? () => Promise.reject(new Error('READONLY')) : Reflect.get(target, property, receiver),
    });
    const { logger, lines } = capture();
    const shown: string[] = [];
    const show = (t: string) => (shown.push(t), Promise.resolve());
    const failed = await showFirstAdminKey({ store: broken, show, logger, npub, consoleUrl: CONSOLE_URL, retryBaseMs: 1 });
    assert.equal(failed, null);
    assert.equal(shown.length, 1);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(lines.filter((l) => l.msg.startsWith('could not store the first admin key')).length, FIRST_ADMIN_KEY_STORE_ATTEMPTS);
    assert.ok(lines.some((l) => l.level === 50 && l.msg.startsWith('the first admin key printed above could not be stored')));
    assert.ok(await showFirstAdminKey({ store, show, logger, npub, consoleUrl: CONSOLE_URL }), 'the next start with a working store');
    assert.equal(shown.length, 2);
    await store.close();
  });

  test('an admin key made with the CLI counts as shown: starts make none', async () => {
    const store = await openSqliteStore({ path: ':memory:', clock: new ManualClock() });
    await createApiKey(store, 'default', 'admin');
    const { logger } = capture();
    const shown: string[] = [];
    assert.equal(
      await showFirstAdminKey({ store, show: (t) => (shown.push(t), Promise.resolve()), logger, npub, consoleUrl: CONSOLE_URL }),
      null,
    );
    assert.deepEqual(shown, []);
    await store.close();
  });
});

describe('pushes per second', () => {
  test('differences of each process’s counters, summed per bucket; a counter that went down counts from zero', () => {
    const series = pushSeries(
      [
        { processId: 'a', atMs: 0, values: { 'push:fcm:ok': 100 } },
        { processId: 'b', atMs: 0, values: { 'push:fcm:ok': 0, 'push:apns:ok': 0 } },
        { processId: 'a', atMs: 10_000, values: { 'push:fcm:ok': 150 } },
        { processId: 'b', atMs: 10_000, values: { 'push:fcm:ok': 20, 'push:apns:ok': 10 } },
        { processId: 'a', atMs: 20_000, values: { 'push:fcm:ok': 30 } },
      ],
      10_000,
    );
    assert.deepEqual(series.times, [0, 10, 20]);
    assert.deepEqual(series.rates, { 'apns:ok': [0, 1, 0], 'fcm:ok': [0, 7, 3] });
    assert.deepEqual(series.totals, { 'apns:ok': 10, 'fcm:ok': 100 });
  });
});

describe('the page’s files', () => {
  const logger = createLogger({ level: 'silent' });
  const dir = mkdtempSync(join(tmpdir(), 'np-console-ui-'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>console</title>');
  writeFileSync(join(dir, 'app-ABC123.js'), 'export {};');
  writeFileSync(join(dir, 'app-ABC123.css'), 'body{}');
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('the page at /console and its app paths, revalidated; bundles cached for a year; each with its content type and a strict CSP', async () => {
    const app = consoleStaticRoutes(loadConsoleAssets(dir), logger);
    for (const path of ['/console', '/console/', '/console/dead-letters']) {
      const page = await app.request(path);
      assert.equal(page.status, 200, path);
      assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.equal(page.headers.get('cache-control'), 'no-cache');
      assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'; script-src 'self'/);
      assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
    }
    const js = await app.request('/console/assets/app-ABC123.js');
    assert.equal(js.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(await js.text(), 'export {};');
    const css = await app.request('/console/assets/app-ABC123.css');
    assert.equal(css.headers.get('content-type'), 'text/css; charset=utf-8');
  });

  test('an unknown file or API path is 404, and an unbuilt console 503 CONSOLE_NOT_BUILT', async () => {
    const host = createApiApp({ health: { pubkey: () => 'ab'.repeat(32), criticalFlags: () => ({}) }, metrics: new Metrics(), logger });
    host.route('/', consoleStaticRoutes(loadConsoleAssets(dir), logger));
    assert.equal((await host.request('/console/assets/nope.js')).status, 404);
    assert.equal((await host.request('/console/api/nope')).status, 404);
    const unbuilt = createApiApp({ health: { pubkey: () => 'ab'.repeat(32), criticalFlags: () => ({}) }, metrics: new Metrics(), logger });
    unbuilt.route('/', consoleStaticRoutes(loadConsoleAssets(join(dir, 'missing')), logger));
    const response = await unbuilt.request('/console');
    assert.equal(response.status, 503);
    assert.equal(await code(response), 'CONSOLE_NOT_BUILT');
  });
});
