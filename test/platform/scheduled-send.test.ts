/**
 * The send API through the whole service in one process, on a manual clock (the store's clock
 * decides when a send is due), on both stores, with the FCM fake: a scheduled send fires no
 * earlier than `sendAt`, a cancelled one never, and each push reaches the device once with the
 * request's title, body, data and the delivery log's outcome.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { generateSecretKey } from '../../src/nostr/keys.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createApiKey } from '../../src/platform/api-keys.ts';
import { startService, type RunningService } from '../../src/service.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { startFcmFake, type FcmFake } from '../support/fcm-fake.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { eventually } from '../support/service-process.ts';

const ALICE = 'a1'.repeat(32);
const MINUTE_MS = 60_000;

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`scheduled sends on an injected clock (${adapter})`, () => {
    let fcm: FcmFake;
    let dir: string;
    let service: RunningService;
    let baseUrl: string;
    let key: string;
    const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
    /** What `before` started, stopped in reverse order by `after` (whatever `before` got to). */
    const cleanup: Array<() => Promise<unknown>> = [];

    const post = async (body: Record<string, unknown>) => {
      const res = await fetch(`${baseUrl}/v1/notifications`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ recipients: [ALICE], type: 'payout', body: 'b', priority: 'normal', ...body }),
      });
      assert.equal(res.status, 202, await res.clone().text());
      return ((await res.json()) as { id: string }).id;
    };
    const pushesOf = (id: string) => fcm.messages.filter((m) => m.body.message.data.notificationId === id);
    const pushed = (id: string) => eventually(() => (pushesOf(id).length > 0 ? pushesOf(id) : undefined), 20_000, `a push of ${id}`);

    before(async () => {
      fcm = await startFcmFake();
      cleanup.push(() => fcm.stop());
      dir = mkdtempSync(join(tmpdir(), `np-sched-${adapter}-`));
      cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
      let redis: PrivateRedisServer | undefined;
      if (adapter === 'redis') {
        const server = await startRedisServer();
        cleanup.push(() => server.stop());
        redis = server;
      }
      const { config } = loadConfig({
        env: {
          NOSTR_PUSH__STORE__URL: redis ? redis.url : `sqlite:${join(dir, 'np.sqlite')}`,
          NOSTR_PUSH__DATA_DIR: dir,
          NOSTR_PUSH__ROLES: 'api,scheduler,delivery',
          NOSTR_PUSH__SERVER__LISTEN_ADDR: '127.0.0.1:0',
          NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: generateSecretKey(),
          NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: fcm.writeCredentials(dir),
          NOSTR_PUSH__FIREBASE__PROJECT_ID: 'fake-project',
          NOSTR_PUSH__FIREBASE__API_BASE_URL: fcm.baseUrl,
          NOSTR_PUSH__SEND_API__TYPES: 'payout:1059',
          NOSTR_PUSH__SEND_API__POLL_MILLIS: '20',
          NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
        },
      });
      service = await startService(config, { clock, logger: createLogger({ level: 'silent' }) });
      cleanup.push(() => service.stop());
      baseUrl = `http://127.0.0.1:${service.httpAddress?.port}`;
      key = (await createApiKey(service.store, 'default', 'send')).key;
      await service.store.registerToken(ALICE, { token: 'alice-phone', transport: 'fcm' });
    });

    after(async () => {
      for (const stop of cleanup.reverse()) await stop();
    });

    test('a scheduled send fires no earlier than sendAt; a cancelled one due before it never fires', async () => {
      const t0 = clock.nowMs();
      const cancelled = await post({ title: 'cancelled', sendAt: new Date(t0 + 5 * MINUTE_MS).toISOString() });
      const scheduled = await post({ title: 'scheduled', sendAt: new Date(t0 + 10 * MINUTE_MS).toISOString(), data: { order: '42' } });
      const cancel = await fetch(`${baseUrl}/v1/notifications/${cancelled}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${key}` },
      });
      assert.equal(cancel.status, 200);

      // One ms before sendAt: a send due now goes out, which proves the scheduler looked at the
      // schedule after the clock moved, and the scheduled one stays put.
      clock.set(t0 + 10 * MINUTE_MS - 1);
      const probe = await post({ title: 'probe' });
      await pushed(probe);
      assert.equal(pushesOf(scheduled).length, 0, 'not before sendAt');

      clock.set(t0 + 10 * MINUTE_MS);
      const push = (await pushed(scheduled))[0];
      assert.ok(push);
      assert.equal(push.token, 'alice-phone');
      assert.deepEqual(push.body.message.apns?.payload.aps.alert, { title: 'scheduled', body: 'b' });
      assert.equal(push.body.message.data.order, '42');
      assert.equal(push.body.message.data.type, 'payout');
      assert.equal(pushesOf(cancelled).length, 0, 'the cancelled send, due earlier, never fired');

      const view = await eventually(
        async () => {
          const res = await fetch(`${baseUrl}/v1/notifications/${scheduled}`, { headers: { authorization: `Bearer ${key}` } });
          const body = (await res.json()) as { state: string; recipients: Array<{ status: string; providerMessageId?: string }> };
          return body.recipients[0]?.status === 'sent' ? body : undefined;
        },
        20_000,
        'the sent outcome in the log',
      );
      assert.equal(view.state, 'done');
      assert.match(view.recipients[0]?.providerMessageId ?? '', /^projects\/fake-project\/messages\/\d+$/);
      const cancelledView = await fetch(`${baseUrl}/v1/notifications/${cancelled}`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(((await cancelledView.json()) as { state: string }).state, 'cancelled');
      assert.equal(pushesOf(scheduled).length, 1, 'pushed once');
    });
  });
}
