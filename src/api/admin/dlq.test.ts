import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Hono } from 'hono';
import { openStore } from '../../store/open.ts';
import type { Lane, QueueName, StorePort } from '../../store/port.ts';
import { createLogger } from '../../observability/logger.ts';
import { Metrics } from '../../observability/metrics.ts';
import { ManualClock } from '../../util/clock.ts';
import { startRedisServer, type PrivateRedisServer } from '../../../test/support/redis-server.ts';
import { createApiApp } from '../app.ts';
import { requireAppKey } from '../auth.ts';
import { createApiKey } from '../../platform/api-keys.ts';
import { dlqRoutes } from './dlq.ts';

const START_MS = Date.UTC(2026, 11, 4, 6, 0, 0);

let redis: PrivateRedisServer | undefined;
before(async () => {
  redis = await startRedisServer();
});
after(async () => {
  await redis?.stop();
});

/** Enqueue, lease and dead-letter `id` in `queue` with `reason`. */
async function kill(store: StorePort, queue: QueueName, id: string, reason = 'poison', lane?: Lane): Promise<void> {
  await store.enqueue(queue, { id, payload: { id }, ...(lane ? { lane } : {}) });
  const items = await store.lease(queue, { max: 50, leaseMs: 60_000, maxAttempts: 5 });
  for (const item of items) {
    if (item.id === id) await store.deadLetter(queue, id, item.leaseToken, reason);
    else await store.retry(queue, item.id, item.leaseToken, store.clock.nowMs(), 'not this one');
  }
}

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`admin dead-letter routes (${adapter})`, () => {
    /** The default app's store view (where API keys live) and app b's, over one store. */
    let store: StorePort;
    let storeB: StorePort;
    let clock: ManualClock;
    let metrics: Metrics;
    const keys = { defaultAdmin: '', defaultSend: '', bAdmin: '' };
    /** The default app's admin key naming the default app (several apps exist, so it must name one). */
    let AUTH: Record<string, string> = {};

    const app = (): Hono => {
      const logger = createLogger({ level: 'silent' });
      const api = createApiApp({ health: { pubkey: () => null, criticalFlags: () => ({}) }, metrics, logger });
      const views = new Map([
        ['default', store],
        ['b', storeB],
      ]);
      const auth = requireAppKey({ store, apps: ['default', 'b'], storeOf: (appId) => views.get(appId) ?? store, logger, metrics }, [
        'admin',
      ]);
      api.route('/', dlqRoutes({ auth, logger, metrics }));
      return api;
    };
    const call = async (method: string, path: string, headers: Record<string, string> = AUTH, a = app()) => {
      const res = await a.request(path, { method, headers });
      const text = await res.text();
      return { status: res.status, body: text === '' ? null : (JSON.parse(text) as Record<string, unknown>) };
    };

    beforeEach(async () => {
      clock = new ManualClock(START_MS);
      metrics = new Metrics();
      if (!redis) throw new Error('redis-server did not start');
      const location =
        adapter === 'sqlite' ? ({ kind: 'sqlite', path: ':memory:' } as const) : ({ kind: 'redis', url: redis.url } as const);
      const redisKeyPrefix = `t-${randomUUID()}:`;
      store = await openStore(location, { clock, redisKeyPrefix });
      storeB = await openStore(location, { clock, redisKeyPrefix, app: 'b' });
      keys.defaultAdmin = (await createApiKey(store, 'default', 'admin')).key;
      keys.defaultSend = (await createApiKey(store, 'default', 'send')).key;
      keys.bAdmin = (await createApiKey(store, 'b', 'admin')).key;
      AUTH = { authorization: `Bearer ${keys.defaultAdmin}`, 'x-app': 'default' };
    });
    afterEach(async () => {
      await store.close();
      await storeB.close();
    });

    test('every route needs an admin key: 401 without or with an unknown one, 403 with a send key', async () => {
      await kill(store, 'outbound', 'x');
      const routes: Array<[string, string]> = [
        ['GET', '/v1/admin/dlq?queue=outbound'],
        ['POST', '/v1/admin/dlq/x/replay'],
        ['POST', '/v1/admin/dlq/replay?queue=outbound'],
        ['DELETE', '/v1/admin/dlq/x'],
      ];
      for (const [method, path] of routes) {
        assert.equal((await call(method, path, {})).status, 401, `${method} ${path} without a key`);
        const wrong = await call(method, path, { authorization: 'Bearer npk_nope' });
        assert.deepEqual([wrong.status, wrong.body?.code], [401, 'UNAUTHORIZED']);
        const send = await call(method, path, { authorization: `Bearer ${keys.defaultSend}` });
        assert.deepEqual([send.status, send.body?.code], [403, 'FORBIDDEN'], `${method} ${path} with a send key`);
      }
      assert.equal((await store.queueStats('outbound')).dead, 1, 'nothing was replayed or deleted');
    });

    test('scoped per app: another app’s dead letter is 404; the default admin names an app with X-App or is refused', async () => {
      await kill(store, 'outbound', 'a-item', 'poison in default');
      await kill(storeB, 'outbound', 'b-item', 'poison in b');
      const asB = { authorization: `Bearer ${keys.bAdmin}` };
      const listB = await call('GET', '/v1/admin/dlq?queue=outbound', asB);
      assert.deepEqual(
        (listB.body?.items as Array<Record<string, unknown>>).map((i) => i.id),
        ['b-item'],
      );
      for (const [method, path] of [
        ['POST', '/v1/admin/dlq/a-item/replay'],
        ['DELETE', '/v1/admin/dlq/a-item'],
      ] as const) {
        const res = await call(method, path, asB);
        assert.deepEqual([res.status, res.body?.code], [404, 'DEAD_LETTER_NOT_FOUND'], `${method} ${path} as b`);
      }
      const namedByB = await call('GET', '/v1/admin/dlq?queue=outbound', { ...asB, 'x-app': 'default' });
      assert.deepEqual([namedByB.status, namedByB.body?.code], [404, 'NOT_FOUND'], 'b may not name the default app');
      const defaultAsB = await call('GET', '/v1/admin/dlq?queue=outbound', { authorization: `Bearer ${keys.defaultAdmin}`, 'x-app': 'b' });
      assert.deepEqual(
        (defaultAsB.body?.items as Array<Record<string, unknown>>).map((i) => i.id),
        ['b-item'],
      );
      const unnamed = await call('GET', '/v1/admin/dlq?queue=outbound', { authorization: `Bearer ${keys.defaultAdmin}` });
      assert.deepEqual([unnamed.status, unnamed.body?.code], [400, 'APP_REQUIRED']);
      assert.deepEqual((await call('POST', '/v1/admin/dlq/b-item/replay', asB)).status, 200);
      assert.equal((await storeB.queueStats('outbound')).dead, 0);
      assert.equal((await store.queueStats('outbound')).dead, 1, 'the default app’s dead letter stays');
    });

    test('list pages through dead letters with reason, attempts, lane and first and last failure', async () => {
      await kill(store, 'outbound', 'a', 'poison a', 'critical');
      for (const id of ['b', 'c', 'd', 'e']) {
        clock.advance(1000);
        await kill(store, 'outbound', id, `poison ${id}`);
      }
      await kill(store, 'inbound', 'not-outbound');
      const first = await call('GET', '/v1/admin/dlq?queue=outbound&limit=2');
      assert.equal(first.status, 200);
      const items = first.body?.items as Array<Record<string, unknown>>;
      assert.deepEqual(items[0], {
        id: 'a',
        queue: 'outbound',
        lane: 'critical',
        item: { id: 'a' },
        reason: 'poison a',
        attempts: 1,
        lastError: null,
        firstFailedAt: new Date(START_MS).toISOString(),
        lastFailedAt: new Date(START_MS).toISOString(),
        deadAt: new Date(START_MS).toISOString(),
      });
      const ids = items.map((item) => item.id);
      let cursor = first.body?.nextCursor as string | null;
      while (cursor !== null) {
        const page = await call('GET', `/v1/admin/dlq?queue=outbound&limit=2&cursor=${encodeURIComponent(cursor)}`);
        assert.equal(page.status, 200);
        ids.push(...(page.body?.items as Array<Record<string, unknown>>).map((item) => item.id));
        cursor = page.body?.nextCursor as string | null;
      }
      assert.deepEqual(ids, ['a', 'b', 'c', 'd', 'e']);
      const all = await call('GET', '/v1/admin/dlq?queue=outbound');
      assert.equal((all.body?.items as unknown[]).length, 5, 'the default limit covers them');
      assert.equal(all.body?.nextCursor, null);
    });

    test('bad input is a 4xx with a stable code, a warn line and a metric', async () => {
      const cases: Array<[string, string, number, string]> = [
        ['GET', '/v1/admin/dlq', 400, 'INVALID_QUERY'],
        ['GET', '/v1/admin/dlq?queue=elsewhere', 400, 'INVALID_QUERY'],
        ['GET', '/v1/admin/dlq?queue=outbound&limit=0', 400, 'INVALID_QUERY'],
        ['GET', '/v1/admin/dlq?queue=outbound&limit=abc', 400, 'INVALID_QUERY'],
        ['GET', '/v1/admin/dlq?queue=outbound&limit=501', 400, 'INVALID_QUERY'],
        ['GET', '/v1/admin/dlq?queue=outbound&cursor=%21%21', 400, 'INVALID_CURSOR'],
        ['POST', '/v1/admin/dlq/replay', 400, 'INVALID_QUERY'],
        ['POST', '/v1/admin/dlq/missing/replay', 404, 'DEAD_LETTER_NOT_FOUND'],
        ['POST', '/v1/admin/dlq/missing/replay?queue=sideways', 400, 'INVALID_QUERY'],
        ['DELETE', '/v1/admin/dlq/missing', 404, 'DEAD_LETTER_NOT_FOUND'],
      ];
      for (const [method, path, status, code] of cases) {
        const res = await call(method, path);
        assert.deepEqual([res.status, res.body?.code], [status, code], `${method} ${path}`);
        assert.equal(typeof res.body?.error, 'string');
      }
      assert.match(await metrics.render(), /push_dead_letter_operations_total\{operation="list",queue="none",outcome="invalid_query"\} 5/);
      assert.match(
        await metrics.render(),
        /push_dead_letter_operations_total\{operation="delete",queue="none",outcome="dead_letter_not_found"\} 1/,
      );
    });

    test('an id dead in both queues needs ?queue=', async () => {
      await kill(store, 'inbound', 'twin');
      await kill(store, 'outbound', 'twin');
      const res = await call('POST', '/v1/admin/dlq/twin/replay');
      assert.deepEqual([res.status, res.body?.code], [409, 'DEAD_LETTER_AMBIGUOUS']);
      const named = await call('POST', '/v1/admin/dlq/twin/replay?queue=inbound');
      assert.deepEqual([named.status, named.body], [200, { id: 'twin', queue: 'inbound', replayed: true }]);
      assert.equal((await store.queueStats('outbound')).dead, 1);
    });

    test('replay one puts it back in its lane; replay all empties a queue; delete forgets', async () => {
      await kill(store, 'outbound', 'one', 'poison', 'low');
      const replayed = await call('POST', '/v1/admin/dlq/one/replay');
      assert.deepEqual([replayed.status, replayed.body], [200, { id: 'one', queue: 'outbound', replayed: true }]);
      assert.deepEqual((await store.queueStats('outbound')).lanes.low, { ready: 1, leased: 0 });
      assert.equal((await call('POST', '/v1/admin/dlq/one/replay')).status, 404, 'no longer dead');

      for (const id of ['p', 'q', 'r']) await kill(store, 'inbound', id);
      const all = await call('POST', '/v1/admin/dlq/replay?queue=inbound');
      assert.deepEqual([all.status, all.body], [200, { queue: 'inbound', replayed: 3 }]);
      assert.equal((await store.queueStats('inbound')).dead, 0);

      await kill(store, 'inbound', 'gone');
      const deleted = await call('DELETE', '/v1/admin/dlq/gone');
      assert.deepEqual([deleted.status, deleted.body], [204, null]);
      assert.equal(await store.getDead('inbound', 'gone'), null);
      assert.equal(await store.enqueue('inbound', { id: 'gone', payload: 1 }), true, 'its id is free again');
    });
  });
}
