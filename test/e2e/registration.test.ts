/**
 * End to end: the real binary, a real relay (@nostr-relay/*), a nostr-tools client. A device
 * registration travels client → relay → listener → inbound queue → engine → store, on each
 * store adapter.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEREGISTER_TOKEN, PREFERENCES, REGISTER_TOKEN } from '../../src/nostr/kinds.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { controlEvent, makeUser, type TestUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';

const DAY = 86_400;

async function metric(service: ServiceProcess, pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${service.baseUrl}/metrics`)).text();
  const match = pattern.exec(text);
  return match ? Number(match[1]) : 0;
}

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`registration end to end (${adapter})`, () => {
    let relay: TestRelay;
    let redis: PrivateRedisServer | undefined;
    let dataDir: string;
    let storeUrl: string;
    let reader: StorePort;
    let service: ServiceProcess;
    const serviceKey = makeUser();
    const env = () => ({
      NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: serviceKey.secret,
      NOSTR_PUSH__NOSTR__RELAYS: relay.url,
      NOSTR_PUSH__STORE__URL: storeUrl,
      NOSTR_PUSH__DATA_DIR: dataDir,
      NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
    });
    const register = (user: TestUser, token: string, createdAt?: number) =>
      controlEvent(user, REGISTER_TOKEN, { token }, serviceKey.pubkey, createdAt === undefined ? {} : { createdAt });
    const ownerOf = (token: string, owner: string | null) =>
      eventually(async () => ((await reader.tokenOwner(token)) === owner ? true : undefined), 15_000, `${token} owned by ${owner}`);

    before(async () => {
      relay = await startTestRelay();
      dataDir = mkdtempSync(join(tmpdir(), `np-e2e-${adapter}-`));
      if (adapter === 'redis') {
        redis = await startRedisServer();
        storeUrl = redis.url;
        reader = await openRedisStore({ url: storeUrl });
      } else {
        storeUrl = `sqlite:${join(dataDir, 'nostr-push.sqlite')}`;
      }
      service = await startServiceProcess({ env: env() });
      if (adapter === 'sqlite') reader = await openSqliteStore({ path: join(dataDir, 'nostr-push.sqlite') });
      await service.waitForLog((l) => l.msg === 'live subscriptions open', 15_000, 'the live subscriptions');
    });

    after(async () => {
      /* eslint-disable @typescript-eslint/no-unnecessary-condition -- before() can fail before it assigns these. */
      await service?.stop();
      await reader?.close();
      await relay?.stop();
      await redis?.stop();
      rmSync(dataDir, { recursive: true, force: true });
      /* eslint-enable @typescript-eslint/no-unnecessary-condition */
    });

    test('/health answers ok with the service pubkey and the npub is printed', async () => {
      const res = await fetch(`${service.baseUrl}/health`);
      assert.equal(res.status, 200);
      const body = (await res.json()) as { status: string; pubkey: string; tasks: Record<string, boolean> };
      assert.equal(body.status, 'ok');
      assert.equal(body.pubkey, serviceKey.pubkey);
      assert.equal(body.tasks.nostr_listener, true);
      assert.equal(body.tasks.event_handler, true);
      assert.match(service.stderr.join(''), /nostr-push service npub: npub1[0-9a-z]{58}/);
    });

    test("an encrypted 3079 stores the token; a 3080 from someone else does not remove it; the owner's does", async () => {
      const alice = makeUser();
      const mallory = makeUser();
      await publish(relay.url, register(alice, `fcm-${adapter}-alice`));
      await ownerOf(`fcm-${adapter}-alice`, alice.pubkey);

      const refusedBefore = await metric(service, /push_control_events_total\{kind="3080",outcome="deregistration_refused"\} (\d+)/);
      await publish(relay.url, controlEvent(mallory, DEREGISTER_TOKEN, { token: `fcm-${adapter}-alice` }, serviceKey.pubkey));
      await eventually(async () =>
        (await metric(service, /push_control_events_total\{kind="3080",outcome="deregistration_refused"\} (\d+)/)) > refusedBefore
          ? true
          : undefined,
      );
      assert.equal(await reader.tokenOwner(`fcm-${adapter}-alice`), alice.pubkey);

      await publish(relay.url, controlEvent(alice, DEREGISTER_TOKEN, { token: `fcm-${adapter}-alice` }, serviceKey.pubkey));
      await ownerOf(`fcm-${adapter}-alice`, null);
    });

    test('preferences from a 3083 are stored', async () => {
      const carol = makeUser();
      await publish(relay.url, controlEvent(carol, PREFERENCES, { kinds: [7], campaignsEnabled: true }, serviceKey.pubkey));
      await eventually(async () => ((await reader.getPreferences(carol.pubkey))?.kinds[0] === 7 ? true : undefined));
      assert.deepEqual(await reader.getPreferences(carol.pubkey), { kinds: [7], campaignsEnabled: true });
    });

    test('a plaintext 3079 and one older than the horizon are not stored', async () => {
      const dave = makeUser();
      const plain = controlEvent(dave, REGISTER_TOKEN, { token: `fcm-${adapter}-plain` }, serviceKey.pubkey, { plaintext: true });
      const old = register(dave, `fcm-${adapter}-old`, Math.floor(Date.now() / 1000) - 8 * DAY);
      // The marker comes last on the same connection: once it is stored, the two before it were handled.
      await publish(relay.url, plain, old, register(dave, `fcm-${adapter}-marker`));
      await ownerOf(`fcm-${adapter}-marker`, dave.pubkey);
      assert.equal(await reader.tokenOwner(`fcm-${adapter}-plain`), null);
      assert.equal(await reader.tokenOwner(`fcm-${adapter}-old`), null);
      assert.ok((await metric(service, /push_control_events_total\{kind="3079",outcome="plaintext_rejected"\} (\d+)/)) >= 1);
    });

    test('a registration published while the service was down is picked up after restart', async () => {
      const erin = makeUser();
      assert.equal(await service.stop(), 0, 'a SIGTERM stop exits 0');
      await publish(relay.url, register(erin, `fcm-${adapter}-offline`));
      service = await startServiceProcess({ env: env() });
      await service.waitForLog((l) => l.msg === 'live subscriptions open', 15_000, 'the live subscriptions');
      await ownerOf(`fcm-${adapter}-offline`, erin.pubkey);
    });
  });
}
