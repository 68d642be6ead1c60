/**
 * Route tests of the app platform API on a real SQLite store (in memory) and a manual clock:
 * authentication (401/403/404 without leaking), validation codes, idempotency, scoping, cancel,
 * outcomes, opened, and the OpenAPI document covering every route.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { Hono } from 'hono';
import { createLogger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import { openSqliteStore, type SqliteStore } from '../store/sqlite/index.ts';
import { ManualClock } from '../util/clock.ts';
import { createApiApp } from './app.ts';
import { resolveApp } from './auth.ts';
import { createPlatformApi, OPENAPI_PATH, type PlatformApi } from './platform.ts';
import { createApiKey } from '../platform/api-keys.ts';
import { sendTypeCategories } from '../platform/apps.ts';
import { createHash } from 'node:crypto';
import { generateSecretKey, publicKeyOf, signEvent } from '../nostr/keys.ts';
import { HTTP_AUTH_KIND } from '../nostr/nip98.ts';

const ALICE = 'a'.repeat(64);
const BOB = 'b'.repeat(64);
const APPS = ['default', 'beta'];

interface Fixture {
  store: SqliteStore;
  clock: ManualClock;
  app: Hono;
  platform: PlatformApi;
  metrics: Metrics;
  keys: { send: string; admin: string; betaSend: string; betaAdmin: string };
  created: number;
}

async function fixture(apps: readonly string[] = APPS): Promise<Fixture> {
  const clock = new ManualClock();
  const store = await openSqliteStore({ path: ':memory:', clock });
  const metrics = new Metrics();
  const logger = createLogger({ level: 'silent' });
  const app = createApiApp({ health: { pubkey: () => 'ab'.repeat(32), criticalFlags: () => ({}) }, metrics, logger });
  const f = { created: 0 } as Fixture;
  const platform = createPlatformApi({
    store,
    apps,
    typeCategories: sendTypeCategories(['payout:1059', 'like:7']),
    maxRecipients: 3,
    idempotencyTtlSecs: 86_400,
    recordTtlSecs: 7 * 86_400,
    retentionDays: 7,
    onCreated: () => (f.created += 1),
    metrics,
    logger,
    version: 'test',
  });
  app.route('/', platform.app);
  const keys = {
    send: (await createApiKey(store, 'default', 'send')).key,
    admin: (await createApiKey(store, 'default', 'admin')).key,
    betaSend: (await createApiKey(store, 'beta', 'send')).key,
    betaAdmin: (await createApiKey(store, 'beta', 'admin')).key,
  };
  return Object.assign(f, { store, clock, app, platform, metrics, keys });
}

const sendBody = (overrides: Record<string, unknown> = {}) => ({
  recipients: [ALICE, BOB],
  type: 'payout',
  title: 'Payout sent',
  body: '21 sats are on their way',
  priority: 'critical',
  ...overrides,
});

function call(f: Fixture, method: string, path: string, options: { key?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  return f.app.request(path, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body) }),
  });
}

async function expectError(response: Response, status: number, code: string): Promise<Record<string, unknown>> {
  const body = (await response.json()) as Record<string, unknown>;
  assert.equal(response.status, status, JSON.stringify(body));
  assert.equal(body.code, code);
  return body;
}

describe('app platform API', () => {
  let f: Fixture;
  beforeEach(async () => {
    f = await fixture();
  });
  afterEach(async () => {
    await f.store.close();
  });

  describe('authentication', () => {
    test('no key, a malformed header and an unknown key are 401, saying nothing more', async () => {
      await expectError(await call(f, 'POST', '/v1/notifications', { body: sendBody() }), 401, 'UNAUTHORIZED');
      await expectError(
        await call(f, 'POST', '/v1/notifications', { body: sendBody(), headers: { authorization: `Basic ${f.keys.send}` } }),
        401,
        'UNAUTHORIZED',
      );
      await expectError(await call(f, 'GET', '/v1/notifications/x', { key: 'npk_notakey' }), 401, 'UNAUTHORIZED');
    });

    test('a revoked key is refused on the very next request', async () => {
      const issued = await createApiKey(f.store, 'default', 'send');
      assert.equal((await call(f, 'POST', '/v1/notifications', { key: issued.key, body: sendBody() })).status, 202);
      await f.store.revokeApiKey(issued.record.id);
      await expectError(await call(f, 'POST', '/v1/notifications', { key: issued.key, body: sendBody() }), 401, 'UNAUTHORIZED');
    });

    test('a send key on an admin route is 403; an admin key may send', async () => {
      await expectError(await call(f, 'GET', '/v1/admin/deliveries', { key: f.keys.send }), 403, 'FORBIDDEN');
      assert.equal((await call(f, 'GET', '/v1/admin/deliveries', { key: f.keys.betaAdmin })).status, 200);
      assert.equal((await call(f, 'POST', '/v1/notifications', { key: f.keys.betaAdmin, body: sendBody() })).status, 202);
    });

    test("app B's key cannot read, cancel or open app A's notification: 404, as for a missing id", async () => {
      const created = await call(f, 'POST', '/v1/notifications', { key: f.keys.send, body: sendBody({ sendAt: '2030-01-01T00:00:00Z' }) });
      const { id } = (await created.json()) as { id: string };
      await expectError(await call(f, 'GET', `/v1/notifications/${id}`, { key: f.keys.betaSend }), 404, 'NOT_FOUND');
      await expectError(await call(f, 'GET', `/v1/notifications/${id}`, { key: f.keys.betaAdmin }), 404, 'NOT_FOUND');
      await expectError(await call(f, 'DELETE', `/v1/notifications/${id}`, { key: f.keys.betaSend }), 404, 'NOT_FOUND');
      await expectError(
        await call(f, 'POST', `/v1/notifications/${id}/opened`, { key: f.keys.betaSend, body: { recipient: ALICE } }),
        404,
        'NOT_FOUND',
      );
      await expectError(
        await call(f, 'GET', `/v1/notifications/${id}`, { key: f.keys.betaSend, headers: { 'x-app': 'default' } }),
        404,
        'NOT_FOUND',
      );
      assert.equal((await call(f, 'GET', `/v1/notifications/${id}`, { key: f.keys.send })).status, 200);
      assert.equal((await call(f, 'GET', `/v1/notifications/${id}`, { key: f.keys.admin, headers: { 'x-app': 'default' } })).status, 200);
    });

    test('X-App: an unknown app is 404; the default admin must name an app once there are several', async () => {
      await expectError(
        await call(f, 'GET', '/v1/admin/deliveries', { key: f.keys.admin, headers: { 'x-app': 'nope' } }),
        404,
        'NOT_FOUND',
      );
      await expectError(await call(f, 'GET', '/v1/admin/deliveries', { key: f.keys.admin }), 400, 'APP_REQUIRED');
      assert.equal((await call(f, 'GET', '/v1/admin/deliveries', { key: f.keys.admin, headers: { 'x-app': 'beta' } })).status, 200);
      await expectError(
        await call(f, 'GET', '/v1/admin/deliveries', { key: f.keys.betaAdmin, headers: { 'x-app': 'default' } }),
        404,
        'NOT_FOUND',
      );
    });

    test('the app rule with one app: the default admin acts on it without X-App', () => {
      assert.deepEqual(resolveApp({ appId: 'default', role: 'admin' }, undefined, ['default']), { appId: 'default' });
      assert.deepEqual(resolveApp({ appId: 'default', role: 'admin' }, 'default', ['default']), { appId: 'default' });
      assert.deepEqual(resolveApp({ appId: 'default', role: 'admin' }, 'beta', ['default']), { error: 'NOT_FOUND' });
      assert.deepEqual(resolveApp({ appId: 'default', role: 'send' }, undefined, APPS), { appId: 'default' });
      assert.deepEqual(resolveApp({ appId: 'default', role: 'send' }, 'beta', APPS), { error: 'NOT_FOUND' });
    });

    test('refusals are counted and never log the key', async () => {
      await call(f, 'GET', '/v1/notifications/x', { key: 'npk_notakey' });
      const text = await f.metrics.registry.metrics();
      assert.match(text, /push_api_requests_total\{route="[^"]*",outcome="UNAUTHORIZED"\} 1/);
    });
  });

  describe('POST /v1/notifications', () => {
    test('202 {id, duplicate:false}; the same Idempotency-Key and body answers the same id, duplicate; another body is 409', async () => {
      const headers = { 'idempotency-key': 'order-42' };
      const first = await call(f, 'POST', '/v1/notifications', { key: f.keys.send, body: sendBody(), headers });
      assert.equal(first.status, 202);
      const accepted = (await first.json()) as { id: string; duplicate: boolean };
      assert.equal(accepted.duplicate, false);
      // The same request with its keys in another order is the same request.
      const reordered = {
        priority: 'critical',
        body: '21 sats are on their way',
        title: 'Payout sent',
        type: 'payout',
        recipients: [ALICE, BOB],
      };
      const again = await call(f, 'POST', '/v1/notifications', { key: f.keys.send, body: reordered, headers });
      assert.deepEqual([again.status, await again.json()], [202, { id: accepted.id, duplicate: true }]);
      await expectError(
        await call(f, 'POST', '/v1/notifications', { key: f.keys.send, body: sendBody({ title: 'Other' }), headers }),
        409,
        'IDEMPOTENCY_KEY_REUSED',
      );
      const otherApp = await call(f, 'POST', '/v1/notifications', { key: f.keys.betaSend, body: sendBody(), headers });
      assert.equal(((await otherApp.json()) as { duplicate: boolean }).duplicate, false, 'keys are per app');
      assert.equal(f.created, 2);
    });

    test('validation errors answer 422 with a stable code naming the field', async () => {
      const bad = async (body: unknown, code = 'VALIDATION_FAILED') =>
        expectError(await call(f, 'POST', '/v1/notifications', { key: f.keys.send, body }), 422, code);
      assert.match(String((await bad(sendBody({ recipients: ['npub1nothex'] }))).error), /^recipients\.0: /);
      assert.match(String((await bad(sendBody({ recipients: [ALICE, BOB, ALICE, BOB] }))).error), /^recipients: /);
      await bad(sendBody({ recipients: [] }));
      await bad(sendBody({ priority: 'urgent' }));
      await bad(sendBody({ sendAt: 'tomorrow' }));
      await bad(sendBody({ extra: 1 }));
      await bad(sendBody({ data: { n: 1 } }));
      await bad(sendBody({ type: 'unlisted' }), 'UNKNOWN_TYPE');
      await expectError(await call(f, 'POST', '/v1/notifications', { key: f.keys.send, body: '{nope' }), 400, 'INVALID_JSON');
      await expectError(
        await call(f, 'POST', '/v1/notifications', { key: f.keys.send, body: sendBody(), headers: { 'idempotency-key': 'has space' } }),
        422,
        'VALIDATION_FAILED',
      );
      assert.equal(f.created, 0);
    });

    test('a body over the limit is 413', async () => {
      const huge = JSON.stringify(sendBody({ body: 'x'.repeat(3 * 1024 * 1024) }));
      await expectError(await call(f, 'POST', '/v1/notifications', { key: f.keys.send, body: huge }), 413, 'BODY_TOO_LARGE');
    });
  });

  describe('GET, DELETE, opened', () => {
    test('a scheduled notification reads back pending, cancels (again: still cancelled); a started one is 409', async () => {
      const res = await call(f, 'POST', '/v1/notifications', { key: f.keys.send, body: sendBody({ sendAt: '2030-01-01T00:00:00Z' }) });
      const { id } = (await res.json()) as { id: string };
      const view = (await (await call(f, 'GET', `/v1/notifications/${id}`, { key: f.keys.send })).json()) as Record<string, unknown>;
      assert.equal(view.state, 'scheduled');
      assert.equal(view.sendAt, '2030-01-01T00:00:00.000Z');
      assert.deepEqual(view.recipients, [
        { pubkey: ALICE, status: 'pending', opened: false },
        { pubkey: BOB, status: 'pending', opened: false },
      ]);
      assert.equal((await call(f, 'DELETE', `/v1/notifications/${id}`, { key: f.keys.send })).status, 200);
      assert.equal((await call(f, 'DELETE', `/v1/notifications/${id}`, { key: f.keys.send })).status, 200);

      const now = (await (await call(f, 'POST', '/v1/notifications', { key: f.keys.send, body: sendBody() })).json()) as { id: string };
      assert.equal((await f.store.claimDueSend(60_000))?.send.id, now.id);
      await expectError(await call(f, 'DELETE', `/v1/notifications/${now.id}`, { key: f.keys.send }), 409, 'NOT_CANCELLABLE');
      await expectError(await call(f, 'DELETE', '/v1/notifications/unknown', { key: f.keys.send }), 404, 'NOT_FOUND');
    });

    test('outcomes come from the log: sent with the provider id, failed and suppressed with reasons, opened once', async () => {
      const { id } = (await (await call(f, 'POST', '/v1/notifications', { key: f.keys.send, body: sendBody() })).json()) as { id: string };
      await f.store.appendDeliveryLog([
        { appId: 'default', notificationId: id, recipient: ALICE, type: 'payout', status: 'queued' },
        { appId: 'default', notificationId: id, recipient: BOB, type: 'payout', status: 'suppressed', error: 'no_tokens' },
      ]);
      await f.store.appendDeliveryLog([
        { appId: 'default', notificationId: id, recipient: ALICE, type: 'payout', status: 'failed', error: 'unregistered' },
        {
          appId: 'default',
          notificationId: id,
          recipient: ALICE,
          type: 'payout',
          status: 'sent',
          providerMessageId: 'projects/p/messages/7',
        },
      ]);
      const opened = await call(f, 'POST', `/v1/notifications/${id}/opened`, { key: f.keys.send, body: { recipient: ALICE } });
      assert.deepEqual(await opened.json(), { recorded: true });
      const twice = await call(f, 'POST', `/v1/notifications/${id}/opened`, { key: f.keys.send, body: { recipient: ALICE } });
      assert.deepEqual(await twice.json(), { recorded: false });
      await expectError(
        await call(f, 'POST', `/v1/notifications/${id}/opened`, { key: f.keys.send, body: { recipient: 'c'.repeat(64) } }),
        404,
        'NOT_FOUND',
      );
      const view = (await (await call(f, 'GET', `/v1/notifications/${id}`, { key: f.keys.send })).json()) as Record<string, unknown>;
      assert.deepEqual(view.recipients, [
        { pubkey: ALICE, status: 'sent', providerMessageId: 'projects/p/messages/7', opened: true },
        { pubkey: BOB, status: 'suppressed', reason: 'no_tokens', opened: false },
      ]);
      assert.deepEqual(view.counts, { sent: 1, suppressed: 1, opened: 1 });

      const rates = await call(f, 'GET', '/v1/admin/deliveries/open-rates', { key: f.keys.admin, headers: { 'x-app': 'default' } });
      assert.deepEqual(((await rates.json()) as { types: unknown }).types, [{ type: 'payout', sent: 1, opened: 1, openRate: 1 }]);
      const log = await call(f, 'GET', `/v1/admin/deliveries?recipient=${BOB}`, { key: f.keys.admin, headers: { 'x-app': 'default' } });
      const entries = ((await log.json()) as { entries: Array<Record<string, unknown>> }).entries;
      assert.deepEqual(
        entries.map((e) => [e.status, e.error]),
        [['suppressed', 'no_tokens']],
      );
      await expectError(
        await call(f, 'GET', '/v1/admin/deliveries?since=yesterday', { key: f.keys.admin, headers: { 'x-app': 'default' } }),
        422,
        'VALIDATION_FAILED',
      );
    });
  });

  describe('opened by NIP-98', () => {
    const nip98 = (secret: string, url: string, body: string, createdAt: number) => {
      const event = signEvent(
        {
          kind: HTTP_AUTH_KIND,
          created_at: createdAt,
          content: '',
          tags: [
            ['u', url],
            ['method', 'POST'],
            ['payload', createHash('sha256').update(body).digest('hex')],
          ],
        },
        secret,
      );
      return `Nostr ${Buffer.from(JSON.stringify(event)).toString('base64')}`;
    };

    test('the recipient records its own open with a NIP-98 signature; a replay, a stranger and a forged recipient are refused', async () => {
      const secret = generateSecretKey();
      const recipient = publicKeyOf(secret);
      const created = await call(f, 'POST', '/v1/notifications', { key: f.keys.send, body: sendBody({ recipients: [recipient, BOB] }) });
      const { id } = (await created.json()) as { id: string };
      const url = `http://localhost/v1/notifications/${id}/opened`;
      const now = Math.floor(f.clock.nowMs() / 1000);
      const open = (authorization: string, body: string, headers: Record<string, string> = {}) =>
        f.app.request(url, { method: 'POST', headers: { authorization, 'content-type': 'application/json', ...headers }, body });

      const first = nip98(secret, url, '{}', now);
      const res = await open(first, '{}', { 'x-app': 'default' });
      assert.deepEqual([res.status, await res.json()], [200, { recorded: true }]);
      await expectError(await open(first, '{}'), 401, 'NIP98_UNAUTHORIZED');
      const again = await open(nip98(secret, url, '{}', now + 1), '{}');
      assert.deepEqual(await again.json(), { recorded: false }, 'once per recipient');

      const forged = JSON.stringify({ recipient: BOB });
      await expectError(await open(nip98(secret, url, forged, now + 2), forged), 403, 'FORBIDDEN');
      const stranger = generateSecretKey();
      await expectError(await open(nip98(stranger, url, '{}', now), '{}'), 404, 'NOT_FOUND');
      await expectError(await open(nip98(secret, url, '{"x":1}', now + 3), '{}'), 401, 'NIP98_UNAUTHORIZED');
      await expectError(await open(nip98(secret, url, '{}', now + 4), '{}', { 'x-app': 'nope' }), 404, 'NOT_FOUND');

      const view = (await (await call(f, 'GET', `/v1/notifications/${id}`, { key: f.keys.send })).json()) as {
        recipients: Array<{ opened: boolean }>;
      };
      assert.deepEqual(
        view.recipients.map((r) => r.opened),
        [true, false],
      );
    });
  });

  describe('OpenAPI', () => {
    test(`${OPENAPI_PATH} is OpenAPI 3.1 and describes every route of the platform app, with its method`, async () => {
      const res = await f.app.request(OPENAPI_PATH);
      assert.equal(res.status, 200);
      const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
      assert.equal(doc.openapi, '3.1.0');
      const routes = f.platform.app.routes.filter((r) => r.method !== 'ALL' && r.path !== OPENAPI_PATH);
      assert.ok(routes.length >= 6);
      for (const route of routes) {
        const path = route.path.replace(/:([A-Za-z]+)/g, '{$1}');
        assert.ok(doc.paths[path]?.[route.method.toLowerCase()], `${route.method} ${path} is in the document`);
      }
      const send = doc.paths['/v1/notifications']?.post as { requestBody: { content: Record<string, { schema: unknown }> } };
      assert.ok(JSON.stringify(send.requestBody.content['application/json']?.schema).includes('SendRequest'));
    });
  });
});
