/**
 * Route tests of campaigns and suppressions on a real SQLite store (in memory): validation,
 * idempotency answers, scoping by the key's app, the suppression lifecycle, and the OpenAPI
 * document naming the new routes.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { Hono } from 'hono';
import { createLogger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import { createApiKey } from '../platform/api-keys.ts';
import { openSqliteStore, type SqliteStore } from '../store/sqlite/index.ts';
import { ManualClock } from '../util/clock.ts';
import { createApiApp } from './app.ts';
import { createPlatformApi, OPENAPI_PATH } from './platform.ts';

const ALICE = 'a'.repeat(64);

describe('campaign and suppression routes', () => {
  let store: SqliteStore;
  let app: Hono;
  let created: number;
  const keys = { send: '', admin: '', betaAdmin: '' };

  beforeEach(async () => {
    store = await openSqliteStore({ path: ':memory:', clock: new ManualClock() });
    const metrics = new Metrics();
    const logger = createLogger({ level: 'silent' });
    app = createApiApp({ health: { pubkey: () => 'ab'.repeat(32), criticalFlags: () => ({}) }, metrics, logger });
    created = 0;
    const platform = createPlatformApi({
      store,
      apps: ['default', 'beta'],
      typeCategories: new Map(),
      maxRecipients: 3,
      idempotencyTtlSecs: 86_400,
      recordTtlSecs: 86_400,
      retentionDays: 7,
      onCreated: () => (created += 1),
      metrics,
      logger,
      version: 'test',
    });
    app.route('/', platform.app);
    keys.send = (await createApiKey(store, 'default', 'send')).key;
    keys.admin = (await createApiKey(store, 'default', 'admin')).key;
    keys.betaAdmin = (await createApiKey(store, 'beta', 'admin')).key;
  });
  afterEach(() => store.close());

  const call = (method: string, path: string, key: string, body?: unknown) =>
    app.request(path, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        // An admin key of the default app must name the app once several exist (docs/platform.md).
        ...(key === keys.admin ? { 'x-app': 'default' } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const campaign = (extra: Record<string, unknown> = {}) => ({
    idempotencyKey: 'k1',
    title: 'Hi',
    body: 'There',
    audience: 'all',
    ...extra,
  });

  test('a campaign is accepted once per idempotency key; another request with the key is 409; bad bodies are 422', async () => {
    const first = await call('POST', '/v1/campaigns', keys.send, campaign());
    assert.equal(first.status, 202);
    const { id } = (await first.json()) as { id: string };
    assert.equal(created, 1);
    assert.deepEqual(await (await call('POST', '/v1/campaigns', keys.send, campaign())).json(), { id, duplicate: true });
    assert.equal(created, 1, 'a duplicate wakes nobody');
    assert.equal((await call('POST', '/v1/campaigns', keys.send, campaign({ title: 'Other' }))).status, 409);
    for (const bad of [
      campaign({ idempotencyKey: '' }),
      campaign({ audience: 'some' }),
      campaign({ audience: { pubkeys: ['xyz'] } }),
      campaign({ extra: 1 }),
    ]) {
      const res = await call('POST', '/v1/campaigns', keys.send, bad);
      assert.equal(res.status, 422, JSON.stringify(bad));
    }
    const view = (await (await call('GET', `/v1/campaigns/${id}`, keys.send)).json()) as Record<string, unknown>;
    assert.deepEqual(
      { state: view.state, audience: view.audience, consenting: view.consenting, sent: view.sent },
      { state: 'running', audience: 'all', consenting: 0, sent: 0 },
    );
    assert.equal((await call('GET', `/v1/campaigns/${id}`, keys.betaAdmin)).status, 404, "another app's campaign");
    assert.equal((await call('POST', `/v1/campaigns/${id}/opened`, keys.send, {})).status, 422, 'an app key names the recipient');
  });

  test('suppressions: admin keys only, exactly one target, added once, listed with tokens redacted, lifted by value or id', async () => {
    assert.equal((await call('POST', '/v1/admin/suppressions', keys.send, { pubkey: ALICE })).status, 403);
    const both = await call('POST', '/v1/admin/suppressions', keys.admin, { pubkey: ALICE, token: 't' });
    assert.equal(both.status, 422, await both.clone().text());
    assert.equal((await call('POST', '/v1/admin/suppressions', keys.admin, {})).status, 422);
    assert.equal((await call('POST', '/v1/admin/suppressions', keys.admin, { pubkey: ALICE })).status, 201);
    assert.equal((await call('POST', '/v1/admin/suppressions', keys.admin, { pubkey: ALICE })).status, 200);
    const token = 'fcm-token-0123456789abcdefghijklmnopqrstuvwxyz';
    const added = (await (await call('POST', '/v1/admin/suppressions', keys.admin, { token })).json()) as { id: string; value: string };
    assert.notEqual(added.value, token, 'the token is not echoed whole');
    const list = (await (await call('GET', '/v1/admin/suppressions', keys.admin)).json()) as { suppressions: Array<{ kind: string }> };
    assert.deepEqual(
      list.suppressions.map((s) => s.kind),
      ['pubkey', 'token'],
    );
    assert.deepEqual(await (await call('GET', '/v1/admin/suppressions', keys.betaAdmin)).json(), { suppressions: [] });
    assert.equal((await call('DELETE', '/v1/admin/suppressions', keys.admin, { pubkey: ALICE })).status, 200);
    assert.equal((await call('DELETE', '/v1/admin/suppressions', keys.admin, { pubkey: ALICE })).status, 404);
    assert.equal((await call('DELETE', '/v1/admin/suppressions', keys.admin, { id: added.id })).status, 200);
    assert.deepEqual(await (await call('GET', '/v1/admin/suppressions', keys.admin)).json(), { suppressions: [] });
  });

  test('the OpenAPI document describes the campaign and suppression routes', async () => {
    const doc = (await (await app.request(OPENAPI_PATH)).json()) as { paths: Record<string, Record<string, unknown>> };
    assert.ok(doc.paths['/v1/campaigns']?.post);
    assert.ok(doc.paths['/v1/campaigns/{id}']?.get);
    assert.ok(doc.paths['/v1/campaigns/{id}/opened']?.post);
    assert.deepEqual(Object.keys(doc.paths['/v1/admin/suppressions'] ?? {}).sort(), ['delete', 'get', 'post']);
  });
});
