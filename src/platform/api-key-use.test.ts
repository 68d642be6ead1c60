/**
 * The last use of API keys through the API's key check (`api/auth.ts` with `api-key-use.ts`) on
 * each store adapter, with a manual clock: an accepted request records its key's use, at most one
 * store write per key per minute per process; a refused request records nothing; a failed write is
 * tried again on the next use.
 */
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { Hono } from 'hono';
import { requireAppKey, type AppKeyEnv } from '../api/auth.ts';
import { HttpError } from '../api/errors.ts';
import { createLogger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import type { StorePort } from '../store/port.ts';
import { ManualClock } from '../util/clock.ts';
import { describeOnEachStore } from '../../test/support/each-store.ts';
import { eventually } from '../../test/support/service-process.ts';
import { createApiKey, type IssuedApiKey } from './api-keys.ts';
import { ApiKeyUseRecorder, KEY_USE_WRITE_INTERVAL_MS } from './api-key-use.ts';

const START_MS = Date.UTC(2026, 11, 6, 12);
const WAIT_MS = 10_000;

describeOnEachStore('API key last use', (open) => {
  let clock: ManualClock;
  let store: StorePort;
  let writes: Array<[string, number]>;
  let failNext: boolean;
  let app: Hono<AppKeyEnv>;
  let sendKey: IssuedApiKey;

  beforeEach(async () => {
    clock = new ManualClock(START_MS);
    store = await open(clock);
    writes = [];
    failNext = false;
    // The real store, with its writes seen (and one made to fail on demand).
    const watched = new Proxy(store, {
      get(target, property, receiver): unknown {
        if (property !== 'touchApiKeyUse') return Reflect.get(target, property, receiver);
        return (id: string, atMs: number) => {
          writes.push([id, atMs]);
          if (failNext) {
            failNext = false;
            return Promise.reject(new Error('store unreachable'));
          }
          return target.touchApiKeyUse(id, atMs);
        };
      },
    });
    const logger = createLogger({ level: 'silent' });
    const keyUse = new ApiKeyUseRecorder(watched, logger);
    app = new Hono<AppKeyEnv>();
    app.onError((err, c) => {
      if (err instanceof HttpError) return c.json(err.toJSON(), err.status as 401);
      throw err;
    });
    app.get('/send', requireAppKey({ store, apps: ['default'], logger, metrics: new Metrics(), keyUse }, ['send', 'admin']), (c) =>
      c.text('ok'),
    );
    app.get('/admin', requireAppKey({ store, apps: ['default'], logger, metrics: new Metrics(), keyUse }, ['admin']), (c) => c.text('ok'));
    sendKey = await createApiKey(store, 'default', 'send');
  });
  afterEach(() => store.close());

  const request = (path: string, key: string) => app.request(path, { headers: { authorization: `Bearer ${key}` } });
  const lastUsed = async (id: string) => (await store.listApiKeys('default')).find((k) => k.id === id)?.lastUsedAtMs;
  const settled = (id: string, atMs: number) =>
    eventually(async () => ((await lastUsed(id)) === atMs ? true : undefined), WAIT_MS, `last use ${atMs}`);

  test('an accepted request records the use; more within a minute write nothing; the next minute writes again', async () => {
    assert.equal(await lastUsed(sendKey.record.id), null);
    assert.equal((await request('/send', sendKey.key)).status, 200);
    await settled(sendKey.record.id, START_MS);
    clock.advance(KEY_USE_WRITE_INTERVAL_MS - 1);
    for (let i = 0; i < 5; i++) assert.equal((await request('/send', sendKey.key)).status, 200);
    assert.equal(writes.length, 1, 'one write within the minute');
    assert.equal(await lastUsed(sendKey.record.id), START_MS);
    clock.advance(1);
    assert.equal((await request('/send', sendKey.key)).status, 200);
    await settled(sendKey.record.id, START_MS + KEY_USE_WRITE_INTERVAL_MS);
    assert.equal(writes.length, 2);
  });

  test('each key has its own minute; a refused request (wrong role, unknown key) records nothing', async () => {
    const admin = await createApiKey(store, 'default', 'admin');
    assert.equal((await request('/admin', sendKey.key)).status, 403);
    assert.equal((await request('/admin', 'npk_unknown')).status, 401);
    assert.equal(writes.length, 0);
    assert.equal((await request('/send', sendKey.key)).status, 200);
    assert.equal((await request('/admin', admin.key)).status, 200);
    await settled(admin.record.id, START_MS);
    await settled(sendKey.record.id, START_MS);
    assert.deepEqual(writes.map(([id]) => id).sort(), [admin.record.id, sendKey.record.id].sort());
  });

  test('a failed write does not fail the request and is tried again on the next use', async () => {
    failNext = true;
    assert.equal((await request('/send', sendKey.key)).status, 200);
    await eventually(() => (writes.length === 1 ? true : undefined), WAIT_MS, 'the failed write');
    // The failure is handled on a later turn; the next use after it writes again.
    await eventually(
      async () => {
        assert.equal((await request('/send', sendKey.key)).status, 200);
        return writes.length >= 2 ? true : undefined;
      },
      WAIT_MS,
      'the write tried again',
    );
    await settled(sendKey.record.id, START_MS);
  });
});
