/**
 * Route tests of the console for every app (issue 38, item 5) on each store adapter, with a
 * manual clock: the app switcher's scoping (`?app=`, validated), the API keys page (list with the
 * last use, create shown once, revoke, refusals) and the test send through the send API's code.
 * The overview's transports and relay history and the user page's push rows are in
 * `api.test.ts` with the routes they belong to.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { TEST_SEND_TITLE } from '../../src/console/test-send.ts';
import { CSRF_HEADER } from '../../src/console/session.ts';
import { npubEncode } from '../../src/nostr/nip19.ts';
import { createApiKey, hashApiKey } from '../../src/platform/api-keys.ts';
import {
  ALICE,
  call,
  CLIPS,
  closeFixture,
  code,
  deadLetter,
  FCM_TOKEN,
  fixture,
  LEASE,
  login,
  session,
  startConsoleTestRedis,
  stopConsoleTestRedis,
  type Fixture,
  type LogSink,
  type Session,
} from './support.ts';

before(startConsoleTestRedis);
after(stopConsoleTestRedis);

for (const adapter of ['sqlite', 'redis'] as const)
  describe(`console API for every app (${adapter})`, () => {
    let f: Fixture;
    beforeEach(async () => {
      f = await fixture(adapter);
    });
    afterEach(async () => {
      await closeFixture(f);
    });

    describe('API keys', () => {
      type KeyView = { id: string; prefix: string; role: string; createdAt: string; lastUsedAt: string | null; revokedAt: string | null };
      const keysOf = async (s: Session, app = 'default') =>
        ((await (await call(f, s, `keys?app=${app}`)).json()) as { keys: KeyView[] }).keys;
      const post = (s: Session, path: string, body: unknown, init: { csrf?: string | null; type?: string } = {}) => {
        const headers: Record<string, string> = { cookie: s.cookie, 'content-type': init.type ?? 'application/json' };
        const csrf = init.csrf === undefined ? s.csrf : init.csrf;
        if (csrf) headers[CSRF_HEADER] = csrf;
        return f.app.request(`/console/api/${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
      };

      test('lists the app’s keys with prefix, role, created and last used (the session’s own use recorded), never a hash', async () => {
        const sendKey = await createApiKey(f.store, CLIPS, 'send');
        f.clock.advance(1000);
        const s = await session(f);
        const response = await call(f, s, 'keys');
        assert.equal(response.status, 200);
        const text = await response.text();
        const [admin] = (JSON.parse(text) as { keys: KeyView[] }).keys;
        assert.ok(admin);
        assert.equal(admin.role, 'admin');
        assert.ok(f.adminKey.startsWith(admin.prefix));
        assert.equal(admin.revokedAt, null);
        assert.equal(admin.lastUsedAt, new Date(f.clock.nowMs()).toISOString(), 'the login is a use of the key');
        assert.ok(!text.includes(f.adminKey), 'no key');
        for (const k of await f.store.listApiKeys(null)) assert.ok(!text.includes(k.hash), 'no hash');
        const clipsKeys = await keysOf(s, CLIPS);
        assert.deepEqual(
          clipsKeys.map((k) => [k.id, k.prefix, k.role, k.createdAt, k.lastUsedAt]),
          [[sendKey.record.id, sendKey.record.prefix, 'send', new Date(f.clock.nowMs() - 1000).toISOString(), null]],
        );
      });

      test('creates a key of the app with a role: shown once in the answer, stored as a hash, and it works', async () => {
        const s = await session(f);
        const response = await post(s, `keys?app=${CLIPS}`, { role: 'send' });
        assert.equal(response.status, 201);
        const created = (await response.json()) as KeyView & { key: string };
        assert.match(created.key, /^npk_[A-Za-z0-9_-]{43}$/);
        assert.equal(created.role, 'send');
        assert.ok(created.key.startsWith(created.prefix));
        const found = await f.store.findApiKeyByHash(hashApiKey(created.key));
        assert.equal(found?.appId, CLIPS);
        assert.equal(found.id, created.id);
        const listed = await keysOf(s, CLIPS);
        assert.deepEqual(
          listed.map((k) => k.id),
          [created.id],
        );
        assert.ok(!JSON.stringify(listed).includes(created.key), 'never shown again');
        const admin = (await (await post(s, 'keys', { role: 'admin' })).json()) as KeyView & { key: string };
        assert.equal((await f.store.findApiKeyByHash(hashApiKey(admin.key)))?.role, 'admin');
        assert.equal((await login(f, admin.key)).status, 200, 'a new admin key of default opens the console');
      });

      test('revokes a live key of the app; an unknown id, another app’s key or a revoked one is 404', async () => {
        const victim = await createApiKey(f.store, CLIPS, 'send');
        const s = await session(f);
        assert.equal((await call(f, s, `keys/${victim.record.id}`, { method: 'DELETE' })).status, 404, 'not a key of default');
        const revoked = await call(f, s, `keys/${victim.record.id}?app=${CLIPS}`, { method: 'DELETE' });
        assert.equal(revoked.status, 204);
        assert.equal(await f.store.findApiKeyByHash(victim.record.hash), null);
        assert.notEqual((await keysOf(s, CLIPS))[0]?.revokedAt, null);
        for (const path of [`keys/${victim.record.id}?app=${CLIPS}`, 'keys/key_nope', `keys/${'x'.repeat(65)}`]) {
          const response = await call(f, s, path, { method: 'DELETE' });
          assert.equal(response.status, path.includes('xxx') ? 400 : 404, path);
        }
      });

      test('revoking the session’s own key ends the session', async () => {
        const s = await session(f);
        const [own] = await keysOf(s);
        assert.ok(own);
        assert.equal((await call(f, s, `keys/${own.id}`, { method: 'DELETE' })).status, 204);
        assert.equal((await call(f, s, 'keys')).status, 401);
      });

      test('bad input: a role that is none, a body that is not JSON, no CSRF token; nothing is created', async () => {
        const s = await session(f);
        for (const body of [{ role: 'root' }, {}, { role: ['admin'] }]) {
          const response = await post(s, 'keys', body);
          assert.equal(response.status, 422, JSON.stringify(body));
          assert.equal(await code(response), 'VALIDATION_FAILED');
        }
        const notJson = await post(s, 'keys', { role: 'send' }, { type: 'text/plain' });
        assert.equal(notJson.status, 415);
        for (const csrf of [null, 'wrong']) {
          const response = await post(s, 'keys', { role: 'admin' }, { csrf });
          assert.equal(response.status, 403);
          assert.equal(await code(response), 'CONSOLE_CSRF_INVALID');
        }
        const [own] = await keysOf(s);
        assert.ok(own);
        const noCsrf = await call(f, s, `keys/${own.id}`, { method: 'DELETE', csrf: null });
        assert.equal(noCsrf.status, 403);
        assert.equal((await f.store.listApiKeys(null)).length, 1, 'only the fixture’s admin key');
        assert.equal((await post(s, 'keys?app=nope', { role: 'send' })).status, 400);
      });
    });

    describe('test send', () => {
      const send = (s: Session, path: string, body: unknown, csrf: string | null = s.csrf) =>
        f.app.request(`/console/api/${path}`, {
          method: 'POST',
          headers: { cookie: s.cookie, 'content-type': 'application/json', ...(csrf ? { [CSRF_HEADER]: csrf } : {}) },
          body: JSON.stringify(body),
        });

      test('an npub and a text make a send of the selected app through the send API: stored for the scheduler, which is woken', async () => {
        const s = await session(f);
        const response = await send(s, `test-send?app=${CLIPS}`, { pubkey: npubEncode(ALICE), text: 'hello from the console' });
        assert.equal(response.status, 202);
        const body = (await response.json()) as { id: string; recipient: string; type: string };
        assert.equal(body.recipient, ALICE);
        assert.equal(body.type, 'payout', 'the app’s first type by default');
        const stored = await f.clips.getSend(CLIPS, body.id);
        assert.ok(stored, 'in the app’s own store view');
        assert.deepEqual(stored.request, {
          recipients: [ALICE],
          type: 'payout',
          title: TEST_SEND_TITLE,
          body: 'hello from the console',
          priority: 'normal',
        });
        assert.equal(stored.state, 'scheduled');
        assert.equal(await f.store.getSend(CLIPS, body.id), null, 'not in another app’s view');
        assert.equal(f.sendsCreated, 1);
        const typed = await send(s, 'test-send', { pubkey: ALICE.toUpperCase(), text: 'x', type: 'note' });
        assert.equal(typed.status, 202);
        const note = (await typed.json()) as { id: string };
        assert.equal((await f.store.getSend('default', note.id))?.request.type, 'note');
      });

      test('bad input is refused and nothing is sent: pubkey, empty text, unknown type, no CSRF token, unknown app', async () => {
        const s = await session(f);
        for (const [body, status, expected] of [
          [{ pubkey: 'npub1bad', text: 'x' }, 400, 'INVALID_PUBKEY'],
          [{ text: 'x' }, 400, 'INVALID_PUBKEY'],
          [{ pubkey: ALICE, text: '  ' }, 422, 'VALIDATION_FAILED'],
          [{ pubkey: ALICE }, 422, 'VALIDATION_FAILED'],
          [{ pubkey: ALICE, text: 'x'.repeat(2049) }, 422, 'VALIDATION_FAILED'],
          [{ pubkey: ALICE, text: 'x', type: 'nope' }, 422, 'UNKNOWN_TYPE'],
          [{ pubkey: ALICE, text: 'x', type: 7 }, 422, 'VALIDATION_FAILED'],
        ] as const) {
          const response = await send(s, 'test-send', body);
          assert.equal(response.status, status, JSON.stringify(body));
          assert.equal(await code(response), expected, JSON.stringify(body));
        }
        const noCsrf = await send(s, 'test-send', { pubkey: ALICE, text: 'x' }, null);
        assert.equal(noCsrf.status, 403);
        assert.equal((await send(s, 'test-send?app=nope', { pubkey: ALICE, text: 'x' })).status, 400);
        assert.equal(f.sendsCreated, 0);
      });
    });

    describe('apps', () => {
      test('the apps route lists every app the service hosts, the default first', async () => {
        const s = await session(f);
        const response = await call(f, s, 'apps');
        assert.equal(response.status, 200);
        assert.deepEqual(await response.json(), {
          apps: [
            { id: 'default', sendTypes: ['payout', 'note'] },
            { id: CLIPS, sendTypes: ['payout', 'note'] },
          ],
        });
      });

      test('?app= scopes the overview (queues, devices), users and dead letters to that app’s store view; the fleet stays global', async () => {
        await f.store.registerToken(ALICE, { token: FCM_TOKEN, transport: 'fcm' });
        await f.clips.registerToken(ALICE, { token: 'clips-apns-token-0123456789', transport: 'apns' });
        await f.clips.registerToken('b'.repeat(64), { token: 'clips-webpush-token-0123456789', transport: 'webpush' });
        await deadLetter(f, 'outbound', 'default-dead');
        await f.clips.enqueue('outbound', { id: 'clip-dead', payload: { id: 'clip-dead' } });
        const [item] = await f.clips.lease('outbound', LEASE);
        assert.ok(item);
        assert.equal(await f.clips.deadLetter('outbound', 'clip-dead', item.leaseToken, 'poison clip'), true);
        await f.clips.enqueue('outbound', { id: 'clip-waiting', payload: {}, lane: 'critical' });
        await f.clips.appendDeliveryLog([
          { appId: CLIPS, notificationId: 'c1', recipient: ALICE, type: 'like', status: 'sent', transport: 'apns' },
        ]);
        await f.store.writeHeartbeat(
          { processId: 'p', host: 'h', pid: 1, roles: ['api'], version: 't', startedAtMs: 0, tasks: [], relays: [], ntfySubscribers: {} },
          15_000,
        );
        const s = await session(f);
        type Overview = { app: string; processes: unknown[]; tokens: Record<string, number>; queues: Record<string, { ready: number }> };
        const clips = (await (await call(f, s, `overview?app=${CLIPS}`)).json()) as Overview;
        assert.equal(clips.app, CLIPS);
        assert.deepEqual(clips.tokens, { fcm: 0, apns: 1, webpush: 1, unifiedpush: 0 });
        assert.equal(clips.queues.outbound?.ready, 1);
        assert.equal(clips.processes.length, 1, 'the fleet is global');
        const byDefault = (await (await call(f, s, 'overview')).json()) as Overview;
        assert.equal(byDefault.app, 'default');
        assert.deepEqual(byDefault.tokens, { fcm: 1, apns: 0, webpush: 0, unifiedpush: 0 });
        assert.equal(byDefault.queues.outbound?.ready, 0);
        assert.equal(byDefault.processes.length, 1);

        type User = { app: string; devices: Array<{ transport: string }>; deliveries: Array<{ notificationId: string }> };
        const user = (await (await call(f, s, `users/${ALICE}?app=${CLIPS}`)).json()) as User;
        assert.equal(user.app, CLIPS);
        assert.deepEqual(
          user.devices.map((d) => d.transport),
          ['apns'],
        );
        assert.deepEqual(
          user.deliveries.map((d) => d.notificationId),
          ['c1'],
        );
        const defaultUser = (await (await call(f, s, `users/${ALICE}`)).json()) as User;
        assert.deepEqual(
          defaultUser.devices.map((d) => d.transport),
          ['fcm'],
        );
        assert.deepEqual(defaultUser.deliveries, []);

        type Page = { items: Array<{ id: string }> };
        const clipsDead = (await (await call(f, s, `v1/admin/dlq?queue=outbound&app=${CLIPS}`)).json()) as Page;
        assert.deepEqual(
          clipsDead.items.map((i) => i.id),
          ['clip-dead'],
        );
        const defaultDead = (await (await call(f, s, 'v1/admin/dlq?queue=outbound')).json()) as Page;
        assert.deepEqual(
          defaultDead.items.map((i) => i.id),
          ['default-dead'],
        );
        // Another app's dead letter is not found through the default app.
        assert.equal((await call(f, s, 'v1/admin/dlq/clip-dead/replay', { method: 'POST' })).status, 404);
        const replayed = await call(f, s, `v1/admin/dlq/clip-dead/replay?app=${CLIPS}`, { method: 'POST' });
        assert.equal(replayed.status, 200);
        assert.equal(await f.clips.getDead('outbound', 'clip-dead'), null);
        assert.notEqual(await f.store.getDead('outbound', 'default-dead'), null);
      });

      test('an app the service does not host is 400 INVALID_QUERY on every per-app route, with a warn line', async () => {
        const logs: LogSink = [];
        const logged = await fixture(adapter, { logs });
        try {
          const s = await session(logged);
          for (const [method, path] of [
            ['GET', 'overview?app=nope'],
            ['GET', `users/${ALICE}?app=nope`],
            ['GET', 'v1/admin/dlq?queue=outbound&app=nope'],
            ['POST', 'v1/admin/dlq/replay?queue=outbound&app=nope'],
            ['GET', 'overview?app='],
          ] as const) {
            const response = await call(logged, s, path, { method });
            assert.equal(response.status, 400, `${method} ${path}`);
            assert.equal(await code(response), 'INVALID_QUERY');
          }
          await new Promise((resolve) => setImmediate(resolve));
          assert.equal(logs.filter((l) => l.msg === 'console request for an unknown app').length, 5);
        } finally {
          await closeFixture(logged);
        }
      });
    });
  });
