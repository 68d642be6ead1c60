/**
 * End to end for the outbound queue's lanes and dead letters: the real binary (roles api and
 * delivery) and the FCM fake, on each store adapter. The test writes outbound items straight into
 * the store the binary uses, as the engine would.
 *
 * - A critical item overtakes a 10,000-item low backlog: it is pushed while most of the backlog
 *   still waits, after at most about two delivery windows of low pushes.
 * - An item whose sends fail `queue.max_attempts` times is dead-lettered; the admin replay route
 *   delivers it exactly once.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDirectMessagePayload } from '../../src/engine/payload.ts';
import { DELIVERY_WINDOW } from '../../src/roles/roles.ts';
import type { Lane, StorePort } from '../../src/store/port.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { createApiKey } from '../../src/platform/api-keys.ts';
import { fcmErrors, startFcmFake, type FcmFake } from '../support/fcm-fake.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import type { OutboundNotification } from '../../src/notification/types.ts';

const BACKLOG = 10_000;
const MAX_ATTEMPTS = 2;
const hex = (n: number): string => n.toString(16).padStart(64, '0');

function outboundItem(n: number, token: string, lane: Lane): { id: string; payload: OutboundNotification; lane: Lane } {
  const eventId = hex(n);
  const recipient = hex(1_000_000 + n);
  return {
    id: `${eventId}:${recipient}`,
    lane,
    payload: {
      eventId,
      recipient,
      type: 'directMessage',
      message: buildDirectMessagePayload(eventId, recipient),
      claim: null,
      eventCreatedAt: Math.floor(Date.now() / 1000),
      devices: [{ token, transport: 'fcm' }],
    },
  };
}

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`outbound lanes and dead letters end to end (${adapter})`, () => {
    let fcm: FcmFake;
    let redis: PrivateRedisServer | undefined;
    let dataDir: string;
    let writer: StorePort;
    let service: ServiceProcess | undefined;
    /** An admin API key of the default app: the dead-letter routes' authentication. */
    let adminKey = '';

    const baseUrl = (): string => {
      assert.ok(service, 'the service started');
      return service.baseUrl;
    };
    const pushesTo = (prefix: string): number => fcm.messages.filter((m) => m.token.startsWith(prefix)).length;

    before(async () => {
      // Slow enough answers that the backlog takes a while to drain at the delivery stage's concurrency.
      fcm = await startFcmFake({ latencyMs: 40 });
      dataDir = mkdtempSync(join(tmpdir(), `np-lanes-${adapter}-`));
      let storeUrl = `sqlite:${join(dataDir, 'nostr-push.sqlite')}`;
      if (adapter === 'redis') {
        redis = await startRedisServer();
        storeUrl = redis.url;
      }
      writer =
        adapter === 'redis' ? await openRedisStore({ url: storeUrl }) : await openSqliteStore({ path: join(dataDir, 'nostr-push.sqlite') });
      adminKey = (await createApiKey(writer, 'default', 'admin')).key;
      const backlog = Array.from({ length: BACKLOG }, (_, i) => outboundItem(i, `low-${i}`, 'low'));
      for (let i = 0; i < backlog.length; i += 1000) await writer.enqueueMany('outbound', backlog.slice(i, i + 1000));
      service = await startServiceProcess({
        env: {
          NOSTR_PUSH__ROLES: 'api,delivery',
          NOSTR_PUSH__STORE__URL: storeUrl,
          NOSTR_PUSH__DATA_DIR: dataDir,
          NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
          NOSTR_PUSH__QUEUE__MAX_ATTEMPTS: String(MAX_ATTEMPTS),
          NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: fcm.writeCredentials(dataDir),
          NOSTR_PUSH__FIREBASE__PROJECT_ID: 'fake-project',
          NOSTR_PUSH__FIREBASE__API_BASE_URL: fcm.baseUrl,
        },
      });
    });

    after(async () => {
      // Each started in order in before(): stop what exists.
      await service?.stop();
      await writer.close();
      await fcm.stop();
      await redis?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    test(`a critical push overtakes a ${BACKLOG}-item low backlog`, async () => {
      await eventually(() => (pushesTo('low-') >= 1000 ? true : undefined), 60_000, 'the backlog draining');
      const lowBefore = pushesTo('low-');
      const critical = outboundItem(BACKLOG + 1, 'urgent', 'critical');
      assert.equal(await writer.enqueue('outbound', critical), true);
      await eventually(() => (pushesTo('urgent') > 0 ? true : undefined), 60_000, 'the critical push');
      const lowAtCritical = fcm.messages
        .slice(
          0,
          fcm.messages.findIndex((m) => m.token === 'urgent'),
        )
        .filter((m) => m.token.startsWith('low-')).length;
      assert.ok(
        lowAtCritical - lowBefore <= 2 * DELIVERY_WINDOW,
        `at most two delivery windows of low pushes went first (${lowAtCritical - lowBefore})`,
      );
      assert.ok(
        lowAtCritical < BACKLOG - DELIVERY_WINDOW,
        `most of the backlog was still waiting (${BACKLOG - lowAtCritical} of ${BACKLOG})`,
      );
      await eventually(() => (pushesTo('low-') === BACKLOG ? true : undefined), 120_000, 'the backlog drained');
      assert.equal(new Set(fcm.messages.filter((m) => m.token.startsWith('low-')).map((m) => m.token)).size, BACKLOG, 'each low item once');
      assert.equal(pushesTo('urgent'), 1);
    });

    test(`a push that fails ${MAX_ATTEMPTS} times is dead-lettered, and a replay delivers it once`, async () => {
      fcm.script({ token: 'doomed', ...fcmErrors.unavailable(1), times: MAX_ATTEMPTS });
      const doomed = outboundItem(BACKLOG + 2, 'doomed', 'normal');
      // A retry reads the recipient's devices afresh: the device must be registered.
      await writer.registerToken(doomed.payload.recipient, { token: 'doomed', transport: 'fcm' });
      await writer.enqueue('outbound', doomed);
      const dead = await eventually(async () => (await writer.getDead('outbound', doomed.id)) ?? undefined, 60_000, 'the dead letter');
      assert.equal(dead.reason, 'max attempts exceeded');
      assert.equal(dead.attempts, MAX_ATTEMPTS);
      assert.match(dead.lastError ?? '', /retryably/);
      assert.ok(dead.firstFailedAtMs < dead.lastFailedAtMs && dead.lastFailedAtMs <= dead.deadAtMs);
      assert.equal(pushesTo('doomed'), 0);

      const listed = await fetch(`${baseUrl()}/v1/admin/dlq?queue=outbound`, { headers: { authorization: `Bearer ${adminKey}` } });
      assert.equal(listed.status, 200);
      const body = (await listed.json()) as { items: Array<{ id: string; attempts: number }> };
      assert.deepEqual(
        body.items.map((item) => [item.id, item.attempts]),
        [[doomed.id, MAX_ATTEMPTS]],
      );

      const replay = await fetch(`${baseUrl()}/v1/admin/dlq/${encodeURIComponent(doomed.id)}/replay`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminKey}` },
      });
      assert.equal(replay.status, 200);
      await eventually(() => (pushesTo('doomed') > 0 ? true : undefined), 60_000, 'the replayed push');
      await eventually(
        async () => {
          const stats = await writer.queueStats('outbound');
          return stats.ready + stats.leased + stats.dead === 0 ? true : undefined;
        },
        60_000,
        'the queue settled',
      );
      assert.equal(pushesTo('doomed'), 1, 'delivered once');
    });
  });
}
