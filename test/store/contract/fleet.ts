import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ConsoleSession, ProcessHeartbeat } from '../../../src/store/port-fleet.ts';
import { MINUTE_MS, SECOND_MS, type ContractContext } from './context.ts';

const TTL_MS = 15 * SECOND_MS;
const HOUR_MS = 60 * MINUTE_MS;

const beat = (processId: string, over: Partial<ProcessHeartbeat> = {}): ProcessHeartbeat => ({
  processId,
  host: 'host-a',
  pid: 4242,
  roles: ['api', 'listener'],
  version: '0.1.0',
  startedAtMs: 1_000,
  tasks: [
    { name: 'nostr_listener', kind: 'critical', alive: true },
    { name: 'delivery', kind: 'critical', alive: false, error: 'exited before shutdown was requested' },
  ],
  relays: [
    {
      url: 'wss://relay.example',
      connected: true,
      authenticated: false,
      lastEventAtMs: 5_000,
      reconnects: 2,
      lastError: null,
    },
  ],
  ntfySubscribers: { upAbc: 2 },
  ...over,
});

const session = (idHash: string, nowMs: number, ttlMs: number): ConsoleSession => ({
  idHash,
  csrfToken: `csrf-${idHash}`,
  keyId: 'key_1',
  createdAtMs: nowMs,
  expiresAtMs: nowMs + ttlMs,
});

/** The contract of port-fleet.ts: heartbeats, metric samples, token and topic counts, console sessions. */
export function fleetContract(ctx: ContractContext): void {
  describe('fleet: heartbeats', () => {
    test('a heartbeat is listed as written, with the store time it was seen at', async () => {
      const store = ctx.store();
      await store.writeHeartbeat(beat('p1'), TTL_MS);
      assert.deepEqual(await store.listHeartbeats(), [{ ...beat('p1'), lastSeenAtMs: ctx.clock().nowMs() }]);
    });

    test('a newer heartbeat of the same process replaces the older; processes are listed by id', async () => {
      const store = ctx.store();
      await store.writeHeartbeat(beat('p2'), TTL_MS);
      await store.writeHeartbeat(beat('p1'), TTL_MS);
      ctx.clock().advance(5 * SECOND_MS);
      await store.writeHeartbeat(beat('p2', { roles: ['delivery'] }), TTL_MS);
      const listed = await store.listHeartbeats();
      assert.deepEqual(
        listed.map((b) => [b.processId, b.roles, b.lastSeenAtMs]),
        [
          ['p1', ['api', 'listener'], ctx.clock().nowMs() - 5 * SECOND_MS],
          ['p2', ['delivery'], ctx.clock().nowMs()],
        ],
      );
    });

    test('a process that stops beating drops out once its time to live has passed', async () => {
      const store = ctx.store();
      await store.writeHeartbeat(beat('gone'), TTL_MS);
      ctx.clock().advance(TTL_MS - 1);
      await store.writeHeartbeat(beat('alive'), TTL_MS);
      assert.deepEqual(
        (await store.listHeartbeats()).map((b) => b.processId),
        ['alive', 'gone'],
      );
      ctx.clock().advance(1);
      assert.deepEqual(
        (await store.listHeartbeats()).map((b) => b.processId),
        ['alive'],
      );
      assert.equal(await store.removeHeartbeat('gone'), false, 'an expired heartbeat is not there to remove');
    });

    test('a removed heartbeat is gone at once, and removes once', async () => {
      const store = ctx.store();
      await store.writeHeartbeat(beat('p1'), TTL_MS);
      assert.equal(await store.removeHeartbeat('p1'), true);
      assert.equal(await store.removeHeartbeat('p1'), false);
      assert.deepEqual(await store.listHeartbeats(), []);
    });
  });

  describe('fleet: metric samples', () => {
    test('samples of every process are read back oldest first, ties by process id, with the store time', async () => {
      const store = ctx.store();
      const t0 = ctx.clock().nowMs();
      await store.writeMetricSample('p2', { 'push:fcm:ok': 1 }, HOUR_MS);
      await store.writeMetricSample('p1', { 'push:fcm:ok': 5, 'queue:outbound:normal:ready': 3 }, HOUR_MS);
      ctx.clock().advance(10 * SECOND_MS);
      await store.writeMetricSample('p1', { 'push:fcm:ok': 7.5 }, HOUR_MS);
      assert.deepEqual(await store.readMetricSamples(t0), [
        { processId: 'p1', atMs: t0, values: { 'push:fcm:ok': 5, 'queue:outbound:normal:ready': 3 } },
        { processId: 'p2', atMs: t0, values: { 'push:fcm:ok': 1 } },
        { processId: 'p1', atMs: t0 + 10 * SECOND_MS, values: { 'push:fcm:ok': 7.5 } },
      ]);
      assert.deepEqual(
        (await store.readMetricSamples(t0 + 1)).map((s) => s.atMs),
        [t0 + 10 * SECOND_MS],
        'a read starts at sinceMs',
      );
    });

    test('a second sample of one process at the same millisecond replaces the first', async () => {
      const store = ctx.store();
      await store.writeMetricSample('p1', { a: 1 }, HOUR_MS);
      await store.writeMetricSample('p1', { a: 2 }, HOUR_MS);
      assert.deepEqual(
        (await store.readMetricSamples(0)).map((s) => s.values),
        [{ a: 2 }],
      );
    });

    test('samples older than the retention are dropped by later writes, of every process', async () => {
      const store = ctx.store();
      const t0 = ctx.clock().nowMs();
      await store.writeMetricSample('old', { a: 1 }, HOUR_MS);
      ctx.clock().advance(HOUR_MS);
      await store.writeMetricSample('new', { a: 2 }, HOUR_MS);
      assert.deepEqual(
        (await store.readMetricSamples(t0)).map((s) => s.processId),
        ['old', 'new'],
        'exactly the retention old is still kept',
      );
      ctx.clock().advance(1);
      await store.writeMetricSample('new', { a: 3 }, HOUR_MS);
      assert.deepEqual(
        (await store.readMetricSamples(t0)).map((s) => [s.processId, s.values.a]),
        [
          ['new', 2],
          ['new', 3],
        ],
      );
    });
  });

  describe('fleet: counts', () => {
    test('tokens are counted per transport, every transport listed', async () => {
      const store = ctx.store();
      assert.deepEqual(await store.countTokensByTransport(), { fcm: 0, apns: 0, webpush: 0, unifiedpush: 0 });
      await store.registerToken('a'.repeat(64), { token: 'fcm-1', transport: 'fcm' });
      await store.registerToken('a'.repeat(64), { token: 'fcm-2', transport: 'fcm' });
      await store.registerToken('b'.repeat(64), { token: 'apns-1', transport: 'apns', sandbox: true });
      await store.registerToken('b'.repeat(64), {
        token: 'https://push.example/w1',
        transport: 'webpush',
        endpoint: 'https://push.example/w1',
        p256dh: 'BPk',
        auth: 'au',
      });
      await store.removeToken('a'.repeat(64), 'fcm-2');
      assert.deepEqual(await store.countTokensByTransport(), { fcm: 1, apns: 1, webpush: 1, unifiedpush: 0 });
    });

    test('ntfy messages are counted per topic, in topic order, up to the limit', async () => {
      const store = ctx.store();
      assert.deepEqual(await store.countNtfyMessagesByTopic(10), []);
      for (const topic of ['zeta', 'alpha', 'zeta', 'mid', 'zeta']) await store.appendNtfyMessage(topic, { message: 'hi' }, HOUR_MS);
      assert.deepEqual(await store.countNtfyMessagesByTopic(10), [
        { topic: 'alpha', messages: 1 },
        { topic: 'mid', messages: 1 },
        { topic: 'zeta', messages: 3 },
      ]);
      assert.deepEqual(
        (await store.countNtfyMessagesByTopic(2)).map((c) => c.topic),
        ['alpha', 'mid'],
      );
    });
  });

  describe('fleet: console sessions', () => {
    test('a session is found by its id hash until it expires', async () => {
      const store = ctx.store();
      const created = session('h1', ctx.clock().nowMs(), HOUR_MS);
      assert.equal(await store.createConsoleSession(created), true);
      assert.deepEqual(await store.findConsoleSession('h1'), created);
      assert.equal(await store.findConsoleSession('h2'), null);
      ctx.clock().advance(HOUR_MS - 1);
      assert.deepEqual(await store.findConsoleSession('h1'), created);
      ctx.clock().advance(1);
      assert.equal(await store.findConsoleSession('h1'), null);
    });

    test('a second session with a live id hash is refused and changes nothing', async () => {
      const store = ctx.store();
      const first = session('h1', ctx.clock().nowMs(), HOUR_MS);
      assert.equal(await store.createConsoleSession(first), true);
      assert.equal(await store.createConsoleSession({ ...first, csrfToken: 'other' }), false);
      assert.equal((await store.findConsoleSession('h1'))?.csrfToken, first.csrfToken);
    });

    test('a deleted session is gone, and deletes once', async () => {
      const store = ctx.store();
      await store.createConsoleSession(session('h1', ctx.clock().nowMs(), HOUR_MS));
      assert.equal(await store.deleteConsoleSession('h1'), true);
      assert.equal(await store.deleteConsoleSession('h1'), false);
      assert.equal(await store.findConsoleSession('h1'), null);
    });
  });
}
