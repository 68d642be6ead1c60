/**
 * End to end for tenancy: the real binary serving two apps from one configuration file (the top
 * level is app `default`, `apps:` adds `b`), each with its own service key and FCM project (two
 * FCM fakes, each accepting only its own project in the URL path), one relay and one store, on
 * each store adapter.
 *
 * - A registration addressed to A's key lands in A's store view only, B's in B's; one addressed
 *   to no configured app is ignored and counted once.
 * - A like is pushed within its app, through that app's FCM project only.
 * - The send API expands recipients from the target app's devices and pushes through its project.
 * - B's keys cannot read A's notification or dead letter (404, not 403); the default app's admin
 *   key reads B's with `X-App: b`, and without `X-App` is refused (400 APP_REQUIRED).
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REACTION, REGISTER_TOKEN, VIDEO } from '../../src/nostr/kinds.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openStore } from '../../src/store/open.ts';
import { createApiKey } from '../../src/platform/api-keys.ts';
import { controlEvent, makeUser, type TestUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { startRedisServer } from '../support/redis-server.ts';
import { fcmErrors, startFcmFake, type FcmFake } from '../support/fcm-fake.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';

const WAIT_MS = 30_000;
const MAX_ATTEMPTS = 2;

async function metric(service: ServiceProcess, pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${service.baseUrl}/metrics`)).text();
  const match = pattern.exec(text);
  return match ? Number(match[1]) : 0;
}

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`two apps on one service end to end (${adapter})`, () => {
    let relay: TestRelay;
    let fcmA: FcmFake;
    let fcmB: FcmFake;
    let service: ServiceProcess;
    /** The store views of the default app (A) and of app b, as the binary opens them. */
    let storeA: StorePort;
    let storeB: StorePort;
    const keys = { aSend: '', aAdmin: '', bSend: '', bAdmin: '' };
    const cleanup: Array<() => Promise<unknown>> = [];
    const serviceA = makeUser();
    const serviceB = makeUser();
    const alice = makeUser(); // a user of app A
    const bob = makeUser(); // a user of app B
    const fan = makeUser(); // likes videos in either app

    const register = (user: TestUser, token: string, servicePubkey: string) =>
      publish(relay.url, controlEvent(user, REGISTER_TOKEN, { token }, servicePubkey));
    const ownedBy = (store: StorePort, token: string, owner: string) =>
      eventually(async () => ((await store.tokenOwner(token)) === owner ? true : undefined), WAIT_MS, `${token} registered`);
    const pushesTo = (fcm: FcmFake, token: string) => fcm.messages.filter((m) => m.token === token);
    const request = (method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) =>
      fetch(`${service.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const send = async (key: string, recipients: string[]) => {
      const res = await request('POST', '/v1/notifications', key, {
        recipients,
        type: 'payout',
        title: 't',
        body: 'b',
        priority: 'normal',
      });
      assert.equal(res.status, 202, await res.clone().text());
      return ((await res.json()) as { id: string }).id;
    };
    const likeOfVideoBy = (owner: TestUser, d: string) =>
      signEvent(
        {
          kind: REACTION,
          created_at: Math.floor(Date.now() / 1000),
          tags: [
            ['e', 'ae'.repeat(32)],
            ['a', `${VIDEO}:${owner.pubkey}:${d}`],
            ['p', owner.pubkey],
            ['k', String(VIDEO)],
          ],
          content: '+',
        },
        fan.secret,
      );

    before(async () => {
      relay = await startTestRelay();
      cleanup.push(() => relay.stop());
      fcmA = await startFcmFake({ projectId: 'project-a' });
      cleanup.push(() => fcmA.stop());
      fcmB = await startFcmFake({ projectId: 'project-b' });
      cleanup.push(() => fcmB.stop());
      const dataDir = mkdtempSync(join(tmpdir(), `np-tenancy-${adapter}-`));
      cleanup.push(async () => rmSync(dataDir, { recursive: true, force: true }));
      for (const dir of ['a', 'b']) mkdirSync(join(dataDir, dir));
      let storeUrl = `sqlite:${join(dataDir, 'nostr-push.sqlite')}`;
      if (adapter === 'redis') {
        const redis = await startRedisServer();
        cleanup.push(() => redis.stop());
        storeUrl = redis.url;
      }
      const configFile = join(dataDir, 'nostr-push.yaml');
      writeFileSync(
        configFile,
        `service:
  private_key_hex: "${serviceA.secret}"
nostr:
  relays: ["${relay.url}"]
firebase:
  project_id: project-a
  credentials_path: "${fcmA.writeCredentials(join(dataDir, 'a'))}"
  api_base_url: "${fcmA.baseUrl}"
send_api:
  types: ["payout:1059"]
queue:
  max_attempts: ${MAX_ATTEMPTS}
apps:
  - id: b
    service:
      private_key_hex: "${serviceB.secret}"
    firebase:
      project_id: project-b
      credentials_path: "${fcmB.writeCredentials(join(dataDir, 'b'))}"
      api_base_url: "${fcmB.baseUrl}"
`,
      );
      service = await startServiceProcess({
        env: {
          NOSTR_PUSH__STORE__URL: storeUrl,
          NOSTR_PUSH__DATA_DIR: dataDir,
          NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
          NOSTR_PUSH__SEND_API__POLL_MILLIS: '20',
          NOSTR_PUSH__NOSTR__QUERY_TIMEOUT_SECS: '2',
        },
        args: ['--config', configFile],
      });
      cleanup.push(() => service.stop());
      await Promise.all([
        service.waitForLog((l) => l.msg === 'live subscriptions open' && l.app === undefined, WAIT_MS, 'app A live'),
        service.waitForLog((l) => l.msg === 'live subscriptions open' && l.app === 'b', WAIT_MS, 'app b live'),
      ]);
      const location =
        adapter === 'redis' ? ({ kind: 'redis', url: storeUrl } as const) : ({ kind: 'sqlite', path: storeUrl.slice(7) } as const);
      storeA = await openStore(location);
      cleanup.push(() => storeA.close());
      storeB = await openStore(location, { app: 'b' });
      cleanup.push(() => storeB.close());
      // API keys live in the default app's store, whatever app they name.
      keys.aSend = (await createApiKey(storeA, 'default', 'send')).key;
      keys.aAdmin = (await createApiKey(storeA, 'default', 'admin')).key;
      keys.bSend = (await createApiKey(storeA, 'b', 'send')).key;
      keys.bAdmin = (await createApiKey(storeA, 'b', 'admin')).key;

      await register(alice, 'alice-phone', serviceA.pubkey);
      await register(bob, 'bob-phone', serviceB.pubkey);
      await Promise.all([ownedBy(storeA, 'alice-phone', alice.pubkey), ownedBy(storeB, 'bob-phone', bob.pubkey)]);
    });

    after(async () => {
      for (const stop of cleanup.reverse()) await stop().catch(() => undefined);
    });

    test('a registration lands in the app its p tag names; one addressed to no app is ignored and counted once', async () => {
      assert.equal(await storeB.tokenOwner('alice-phone'), null, 'A’s registration is not B’s');
      assert.equal(await storeA.tokenOwner('bob-phone'), null, 'B’s registration is not A’s');
      const stranger = makeUser();
      const nobody = makeUser();
      await register(stranger, 'stranger-phone', nobody.pubkey);
      const unaddressed = /push_control_events_total\{kind="3079",outcome="not_addressed"\} (\d+)/;
      await eventually(async () => ((await metric(service, unaddressed)) >= 1 ? true : undefined), WAIT_MS, 'the ignored registration');
      // A later registration to A is handled after it (one relay, one order): then nothing more can come of the stranger's.
      await register(alice, 'alice-tablet', serviceA.pubkey);
      await ownedBy(storeA, 'alice-tablet', alice.pubkey);
      assert.equal(await metric(service, unaddressed), 1, 'counted once, not once per app');
      assert.equal(await storeA.tokenOwner('stranger-phone'), null);
      assert.equal(await storeB.tokenOwner('stranger-phone'), null);
    });

    test('a like is pushed within its app, through that app’s FCM project only', async () => {
      await publish(relay.url, likeOfVideoBy(alice, 'alice-vine'));
      await eventually(() => (pushesTo(fcmA, 'alice-phone').length > 0 ? true : undefined), WAIT_MS, 'alice’s like push');
      await publish(relay.url, likeOfVideoBy(bob, 'bob-vine'));
      await eventually(() => (pushesTo(fcmB, 'bob-phone').length > 0 ? true : undefined), WAIT_MS, 'bob’s like push');
      assert.deepEqual(
        fcmA.messages.map((m) => [m.projectId, m.token]).filter(([, token]) => token === 'alice-phone' || token === 'bob-phone'),
        [['project-a', 'alice-phone']],
      );
      assert.deepEqual(
        fcmB.messages.map((m) => [m.projectId, m.token]).filter(([, token]) => token === 'alice-phone' || token === 'bob-phone'),
        [['project-b', 'bob-phone']],
      );
    });

    test('the send API expands recipients from the target app’s devices and pushes through its project', async () => {
      const byId = (fcm: FcmFake, id: string) => fcm.messages.filter((m) => m.body.message.data.notificationId === id);
      const toBob = await send(keys.bSend, [bob.pubkey, alice.pubkey]);
      await eventually(() => (byId(fcmB, toBob).length > 0 ? true : undefined), WAIT_MS, 'B’s send');
      const toAlice = await send(keys.aSend, [alice.pubkey, bob.pubkey]);
      await eventually(() => (byId(fcmA, toAlice).length > 0 ? true : undefined), WAIT_MS, 'A’s send');
      const outcomes = async (key: string, id: string) =>
        eventually(
          async () => {
            const res = await request('GET', `/v1/notifications/${id}`, key);
            const body = (await res.json()) as { recipients: Array<{ pubkey: string; status: string }> };
            return body.recipients.every((r) => r.status !== 'pending' && r.status !== 'queued') ? body.recipients : undefined;
          },
          WAIT_MS,
          `the outcomes of ${id}`,
        );
      // Each app pushes its own user; the other app's user has no device there.
      assert.deepEqual(
        (await outcomes(keys.bSend, toBob)).map((r) => [r.pubkey === bob.pubkey ? 'bob' : 'alice', r.status]),
        [
          ['bob', 'sent'],
          ['alice', 'suppressed'],
        ],
      );
      assert.deepEqual(
        byId(fcmB, toBob).map((m) => [m.projectId, m.token]),
        [['project-b', 'bob-phone']],
      );
      assert.deepEqual(byId(fcmA, toBob), [], 'never through A’s project');
      const aPushes = byId(fcmA, toAlice);
      assert.ok(aPushes.length > 0);
      assert.ok(
        aPushes.every((m) => m.projectId === 'project-a' && m.token.startsWith('alice-')),
        `A’s send reached only A’s devices, through A’s project: ${JSON.stringify(aPushes.map((m) => m.token))}`,
      );
      assert.deepEqual(byId(fcmB, toAlice), [], 'never through B’s project');

      // B's keys cannot read A's notification: 404, as for a missing one, with or without naming A.
      for (const headers of [{}, { 'x-app': 'default' }] as Array<Record<string, string>>) {
        const res = await request('GET', `/v1/notifications/${toAlice}`, keys.bSend, undefined, headers);
        assert.deepEqual([res.status, ((await res.json()) as { code: string }).code], [404, 'NOT_FOUND']);
      }
      const adminB = await request('GET', `/v1/notifications/${toAlice}`, keys.bAdmin);
      assert.equal(adminB.status, 404);
      // The default app's admin key names B to read B's, and must name an app now that there are two.
      assert.equal((await request('GET', `/v1/notifications/${toBob}`, keys.aAdmin, undefined, { 'x-app': 'b' })).status, 200);
      const unnamed = await request('GET', `/v1/notifications/${toBob}`, keys.aAdmin);
      assert.deepEqual([unnamed.status, ((await unnamed.json()) as { code: string }).code], [400, 'APP_REQUIRED']);
    });

    test('another app’s dead letter is 404 to B; the default admin reads B’s with X-App and is refused without it', async () => {
      fcmA.script({ token: 'alice-doomed', ...fcmErrors.unavailable(1), times: MAX_ATTEMPTS });
      const doomedUser = makeUser();
      await register(doomedUser, 'alice-doomed', serviceA.pubkey);
      await ownedBy(storeA, 'alice-doomed', doomedUser.pubkey);
      await send(keys.aSend, [doomedUser.pubkey]);
      const dead = await eventually(
        async () => (await storeA.listDeadPage<unknown>('outbound', { limit: 10 })).items[0],
        WAIT_MS,
        'A’s dead letter',
      );
      const path = `/v1/admin/dlq/${encodeURIComponent(dead.id)}`;
      const listOf = async (key: string, headers: Record<string, string> = {}) => {
        const res = await request('GET', '/v1/admin/dlq?queue=outbound', key, undefined, headers);
        assert.equal(res.status, 200, await res.clone().text());
        return ((await res.json()) as { items: Array<{ id: string }> }).items.map((item) => item.id);
      };
      assert.deepEqual(await listOf(keys.bAdmin), [], 'B sees none of A’s');
      for (const [method, route] of [
        ['POST', `${path}/replay`],
        ['DELETE', path],
      ] as const) {
        const res = await request(method, route, keys.bAdmin);
        assert.deepEqual([res.status, ((await res.json()) as { code: string }).code], [404, 'DEAD_LETTER_NOT_FOUND'], `${method} as B`);
      }
      const namingA = await request('GET', '/v1/admin/dlq?queue=outbound', keys.bAdmin, undefined, { 'x-app': 'default' });
      assert.deepEqual([namingA.status, ((await namingA.json()) as { code: string }).code], [404, 'NOT_FOUND']);
      assert.equal((await request('GET', '/v1/admin/dlq?queue=outbound', keys.bSend)).status, 403, 'a send key is not an admin key');

      assert.deepEqual(await listOf(keys.aAdmin, { 'x-app': 'b' }), [], 'the default admin reads B’s (none)');
      assert.deepEqual(await listOf(keys.aAdmin, { 'x-app': 'default' }), [dead.id]);
      const unnamed = await request('GET', '/v1/admin/dlq?queue=outbound', keys.aAdmin);
      assert.deepEqual([unnamed.status, ((await unnamed.json()) as { code: string }).code], [400, 'APP_REQUIRED']);
      assert.equal((await storeA.listDeadPage('outbound', { limit: 10 })).items.length, 1, 'A’s dead letter is still there');
    });
  });
}
