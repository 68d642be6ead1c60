/**
 * End to end for registration over HTTP (issue 36 item 2): the real binary, a real relay, the FCM
 * fake and nostr-tools' NIP-98 tokens, on each store adapter. `PUT /v1/devices/{token}` does what a
 * 3079 does and `DELETE` what a 3080 does, and the two paths undo each other.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEREGISTER_TOKEN, REACTION, REGISTER_TOKEN, VIDEO } from '../../src/nostr/kinds.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { controlEvent, makeUser, type TestUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { startFcmFake, type FcmFake } from '../support/fcm-fake.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { nip98Authorization, userApi } from '../support/user-api.ts';
import { queuesDrained } from '../support/queues.ts';

const now = () => Math.floor(Date.now() / 1000);
const WAIT_MS = 20_000;

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`registration over HTTP end to end (${adapter})`, () => {
    let relay: TestRelay;
    let fcm: FcmFake;
    let redis: PrivateRedisServer | undefined;
    let dataDir: string;
    let reader: StorePort;
    let service: ServiceProcess;
    const serviceKey = makeUser();
    const [alice, bob, carol] = [makeUser(), makeUser(), makeUser()];
    let videoNumber = 0;

    /** A like of one of `owner`'s videos by `liker`: the engine pushes the owner for it. */
    const likeOfVideoBy = (liker: TestUser, owner: TestUser) => {
      const id = (++videoNumber).toString(16).padStart(64, '0');
      return signEvent(
        {
          kind: REACTION,
          created_at: now(),
          content: '+',
          tags: [
            ['e', id],
            ['a', `${VIDEO}:${owner.pubkey}:http-reg-${videoNumber}`],
            ['p', owner.pubkey],
            ['k', String(VIDEO)],
          ],
        },
        liker.secret,
      );
    };
    const pushesTo = (token: string, eventId?: string) =>
      fcm.messages.filter((m) => m.token === token && (eventId === undefined || m.body.message.data.eventId === eventId));
    before(async () => {
      relay = await startTestRelay();
      fcm = await startFcmFake();
      dataDir = mkdtempSync(join(tmpdir(), `np-http-reg-${adapter}-`));
      let storeUrl = `sqlite:${join(dataDir, 'nostr-push.sqlite')}`;
      if (adapter === 'redis') {
        redis = await startRedisServer();
        storeUrl = redis.url;
      }
      service = await startServiceProcess({
        env: {
          NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: serviceKey.secret,
          NOSTR_PUSH__NOSTR__RELAYS: relay.url,
          NOSTR_PUSH__NOSTR__QUERY_TIMEOUT_SECS: '2',
          NOSTR_PUSH__STORE__URL: storeUrl,
          NOSTR_PUSH__DATA_DIR: dataDir,
          NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
          NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: fcm.writeCredentials(dataDir),
          NOSTR_PUSH__FIREBASE__PROJECT_ID: 'fake-project',
          NOSTR_PUSH__FIREBASE__API_BASE_URL: fcm.baseUrl,
        },
      });
      reader =
        adapter === 'redis' ? await openRedisStore({ url: storeUrl }) : await openSqliteStore({ path: join(dataDir, 'nostr-push.sqlite') });
      await service.waitForLog((l) => l.msg === 'live subscriptions open', WAIT_MS, 'the live subscriptions');
    });

    // A failed before() leaves some of these unassigned: stop whatever was started.
    /* eslint-disable @typescript-eslint/no-unnecessary-condition */
    after(async () => {
      await service?.stop();
      await reader?.close();
      await Promise.all([relay?.stop(), fcm?.stop()]);
      await redis?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */

    test('PUT /v1/devices/{token} then a like pushes the device; DELETE then a like pushes nothing', async () => {
      const put = await userApi(service.baseUrl, alice, 'PUT', '/v1/devices/alice-http-phone', { timezoneOffsetMinutes: 60 });
      assert.equal(put.status, 201);
      assert.equal(await reader.tokenOwner('alice-http-phone'), alice.pubkey);
      const like = likeOfVideoBy(bob, alice);
      await publish(relay.url, like);
      const pushed = await eventually(() => pushesTo('alice-http-phone', like.id)[0], WAIT_MS, 'the like pushed');
      assert.equal(pushed.body.message.data.type, 'like');

      assert.equal((await userApi(service.baseUrl, alice, 'DELETE', '/v1/devices/alice-http-phone')).status, 204);
      assert.equal(await reader.tokenOwner('alice-http-phone'), null);
      const unheard = likeOfVideoBy(carol, alice);
      await publish(relay.url, unheard);
      // Carol's device hears a like in the same stream: once it is pushed and the queues are
      // empty, the like of Alice's video has been handled too.
      assert.equal((await userApi(service.baseUrl, carol, 'PUT', '/v1/devices/carol-http-phone', {})).status, 201);
      const sentinel = likeOfVideoBy(bob, carol);
      await publish(relay.url, sentinel);
      await eventually(() => pushesTo('carol-http-phone', sentinel.id)[0], WAIT_MS, 'the sentinel pushed');
      await queuesDrained(reader, WAIT_MS);
      assert.deepEqual(pushesTo('alice-http-phone', unheard.id), []);
    });

    test('a 3080 removes a device registered over HTTP, and DELETE one registered by a 3079', async () => {
      assert.equal((await userApi(service.baseUrl, alice, 'PUT', '/v1/devices/alice-http-tablet', { locale: 'de' })).status, 201);
      await publish(relay.url, controlEvent(alice, DEREGISTER_TOKEN, { token: 'alice-http-tablet' }, serviceKey.pubkey));
      await eventually(async () => ((await reader.tokenOwner('alice-http-tablet')) === null ? true : undefined), WAIT_MS, 'tablet removed');

      await publish(relay.url, controlEvent(alice, REGISTER_TOKEN, { token: 'alice-event-watch' }, serviceKey.pubkey));
      await eventually(async () => ((await reader.tokenOwner('alice-event-watch')) === alice.pubkey ? true : undefined), WAIT_MS, 'watch');
      assert.equal((await userApi(service.baseUrl, alice, 'DELETE', '/v1/devices/alice-event-watch')).status, 204);
      assert.equal(await reader.tokenOwner('alice-event-watch'), null);
    });

    test('bad fields are 400 with a stable code; NIP-98 refusals are 401; nothing is stored', async () => {
      const bad = await userApi(service.baseUrl, bob, 'PUT', '/v1/devices/bob-bad', { transport: 'carrier-pigeon' });
      assert.deepEqual([bad.status, (bad.json as { code: string }).code], [400, 'INVALID_DEVICE']);
      const mismatch = await userApi(service.baseUrl, bob, 'PUT', '/v1/devices/bob-bad', { token: 'other' });
      assert.deepEqual([mismatch.status, (mismatch.json as { code: string }).code], [400, 'DEVICE_TOKEN_MISMATCH']);
      const prefs = await userApi(service.baseUrl, bob, 'PUT', '/v1/preferences', { kinds: 'everything' });
      assert.deepEqual([prefs.status, (prefs.json as { code: string }).code], [400, 'INVALID_PREFERENCES']);

      const url = `${service.baseUrl}/v1/devices/bob-unsigned`;
      const body = JSON.stringify({});
      const unsigned = await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/json' }, body });
      assert.equal(unsigned.status, 401);
      // Signed for another route: the `u` tag does not match.
      const elsewhere = await nip98Authorization(bob, `${service.baseUrl}/v1/devices/bob-other`, 'PUT', {});
      const wrongUrl = await fetch(url, { method: 'PUT', headers: { authorization: elsewhere, 'content-type': 'application/json' }, body });
      assert.deepEqual([wrongUrl.status, ((await wrongUrl.json()) as { code: string }).code], [401, 'NIP98_UNAUTHORIZED']);
      assert.equal(await reader.tokenOwner('bob-bad'), null);
      assert.equal(await reader.tokenOwner('bob-unsigned'), null);
    });

    test('PUT /v1/preferences without kind 7 silences likes for the user', async () => {
      assert.equal((await userApi(service.baseUrl, bob, 'PUT', '/v1/devices/bob-http-phone', {})).status, 201);
      const prefs = await userApi(service.baseUrl, bob, 'PUT', '/v1/preferences', { kinds: [1111] });
      assert.equal(prefs.status, 200);
      assert.deepEqual((prefs.json as { preferences: { kinds: number[] } }).preferences.kinds, [1111]);
      const like = likeOfVideoBy(carol, bob);
      await publish(relay.url, like);
      const sentinel = likeOfVideoBy(bob, carol);
      await publish(relay.url, sentinel);
      await eventually(() => pushesTo('carol-http-phone', sentinel.id)[0], WAIT_MS, 'the sentinel pushed');
      await queuesDrained(reader, WAIT_MS);
      assert.deepEqual(pushesTo('bob-http-phone', like.id), []);
    });
  });
}
