/**
 * The real binary (roles api, pusher, janitor) and a fake distributor that behaves like the ntfy
 * Android app: every message published reaches it exactly once, in order, byte for byte, across
 * a crash (SIGKILL) and restart of the server, on each store. Messages published while the
 * distributor is still backing off are replayed by `since=<last id>` when it reconnects.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FakeDistributor } from '../support/ntfy-distributor.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { freePort, ntfyServiceEnv, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { publish } from './client.ts';

const TOPICS = ['upRestartAAAAA', 'upRestartBBBBB'];
/** Short stand-ins for the app's 5…120 s schedule. */
const TEST_BACKOFF_MS = [50, 100, 200, 400];
const BEFORE_CRASH = 10;
const AFTER_RESTART = 10;

// The WebSocket transport over both WebSocket servers (ntfy.websocket), on the same store.
for (const [adapter, transport, websocket] of [
  ['sqlite', 'json', 'builtin'],
  ['redis', 'ws', 'builtin'],
  ['redis', 'ws', 'ws'],
] as const) {
  describe(`fake ntfy distributor across a server restart (${adapter}, ${transport}, ntfy.websocket: ${websocket})`, () => {
    let redis: PrivateRedisServer | undefined;
    let dataDir: string;
    let env: Record<string, string>;
    let baseUrl: string;
    let service: ServiceProcess | undefined;

    before(async () => {
      dataDir = mkdtempSync(join(tmpdir(), `np-ntfy-${adapter}-`));
      if (adapter === 'redis') redis = await startRedisServer();
      const port = await freePort();
      baseUrl = `http://127.0.0.1:${port}`;
      // Both runs on one port: the distributor knows one base URL, as the app does.
      env = { ...ntfyServiceEnv({ dataDir, port, redisUrl: redis?.url }), NOSTR_PUSH__NTFY__WEBSOCKET: websocket };
    });

    after(async () => {
      await service?.kill();
      await redis?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    test('every message arrives exactly once, in order, byte for byte', async () => {
      service = await startServiceProcess({ env });
      const distributor = new FakeDistributor({ baseUrl, topics: TOPICS, transport, backoffMs: TEST_BACKOFF_MS });
      const published: { id: string; bytes: Buffer }[] = [];
      const send = async (i: number) => {
        // Every third body is binary, as aes128gcm ciphertext is.
        const bytes = i % 3 === 0 ? Buffer.from([0xff, i, 0x00, 0x80, i + 1]) : Buffer.from(`push ${i} ✓`, 'utf8');
        const answer = await publish(baseUrl, `/${TOPICS[i % 2]}?up=1`, bytes);
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        published.push({ id: String(answer.body.id), bytes });
      };
      try {
        distributor.start();
        await distributor.waitForConnects(1);
        for (let i = 0; i < BEFORE_CRASH; i++) await send(i);
        await distributor.waitForPushes(BEFORE_CRASH);

        await service.kill();
        service = await startServiceProcess({ env });
        // Published at once: the distributor is still backing off and must catch up by since=.
        for (let i = BEFORE_CRASH; i < BEFORE_CRASH + AFTER_RESTART; i++) await send(i);
        await distributor.waitForPushes(BEFORE_CRASH + AFTER_RESTART);
        assert.ok(distributor.connects >= 2, 'it reconnected');
        assert.ok(distributor.failures >= 1, 'it saw the crash');

        // The hourly poll finds nothing new: everything was delivered already.
        assert.equal(await distributor.pollAll(), 0);
        assert.deepEqual(
          distributor.received.map((p) => p.id),
          published.map((p) => p.id),
          'the published ids, in order, once each',
        );
        distributor.received.forEach((push, i) => assert.deepEqual(push.bytes, published[i]?.bytes, `push ${i} byte for byte`));
        assert.equal(distributor.duplicatesDropped, 0, 'the server never sent a message twice');
      } finally {
        distributor.stop();
      }
    });
  });
}
