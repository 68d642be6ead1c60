/**
 * End to end for the NIP-9a callback receiver: the real binary, a real relay it watches for
 * device registrations, a real "community" relay it does NOT watch, the relay side of NIP-9a
 * beside that relay (`test/support/nip9a-relay-side.ts`), the FCM fake, nostr-tools clients. What
 * reaches the phone can only have come through the callback URL, on each store adapter.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finalizeEvent } from 'nostr-tools/pure';
import { getToken } from 'nostr-tools/nip98';
import { hexToBytes } from 'nostr-tools/utils';
import { REACTION, REGISTER_TOKEN } from '../../src/nostr/kinds.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import type { NostrEvent } from '../../src/nostr/event.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { controlEvent, makeUser, type TestUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { startFcmFake, type FcmFake } from '../support/fcm-fake.ts';
import { eventually, freePort, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { RELAY_PUSH_REGISTRATION, startNip9aRelaySide, type Nip9aRelaySide } from '../support/nip9a-relay-side.ts';

const now = () => Math.floor(Date.now() / 1000);

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`NIP-9a callback receiver end to end (${adapter})`, () => {
    let controlRelay: TestRelay;
    let communityRelay: TestRelay;
    let fcm: FcmFake;
    let redis: PrivateRedisServer | undefined;
    let dataDir: string;
    let reader: StorePort;
    let service: ServiceProcess;
    let publicUrl: string;
    let relaySide: Nip9aRelaySide;
    let callbackId: string;
    let callbackUrl: string;
    const serviceKey = makeUser();
    const alice = makeUser();
    const bob = makeUser();
    const carol = makeUser();

    const pushesOf = (eventId: string) => fcm.messages.filter((m) => m.body.message.data.eventId === eventId);
    /** A like of a fresh post, so every like is a distinct event even within one second. */
    const like = (author: TestUser, target: TestUser): NostrEvent =>
      signEvent(
        {
          kind: REACTION,
          created_at: now(),
          content: '+',
          tags: [
            ['e', randomBytes(32).toString('hex')],
            ['p', target.pubkey],
          ],
        },
        author.secret,
      );
    /** A NIP-98 request as an app makes it with nostr-tools. */
    const authed = async (user: TestUser, method: string, path: string, body?: Record<string, unknown>) => {
      const url = `${publicUrl}${path}`;
      const token = await getToken(url, method, (e) => finalizeEvent(e, hexToBytes(user.secret)), true, body);
      return fetch(url, {
        method,
        headers: { authorization: token, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    };

    before(async () => {
      [controlRelay, communityRelay] = await Promise.all([startTestRelay(), startTestRelay()]);
      fcm = await startFcmFake();
      dataDir = mkdtempSync(join(tmpdir(), `np-nip9a-rx-${adapter}-`));
      let storeUrl = `sqlite:${join(dataDir, 'nostr-push.sqlite')}`;
      if (adapter === 'redis') {
        redis = await startRedisServer();
        storeUrl = redis.url;
      }
      const port = await freePort();
      publicUrl = `http://127.0.0.1:${port}`;
      service = await startServiceProcess({
        env: {
          NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: serviceKey.secret,
          // Only the control relay: the community relay reaches us through callbacks alone.
          NOSTR_PUSH__NOSTR__RELAYS: controlRelay.url,
          NOSTR_PUSH__NOSTR__QUERY_TIMEOUT_SECS: '2',
          NOSTR_PUSH__STORE__URL: storeUrl,
          NOSTR_PUSH__DATA_DIR: dataDir,
          NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
          NOSTR_PUSH__SERVER__LISTEN_ADDR: `127.0.0.1:${port}`,
          NOSTR_PUSH__SERVER__PUBLIC_URL: publicUrl,
          NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: fcm.writeCredentials(dataDir),
          NOSTR_PUSH__FIREBASE__PROJECT_ID: 'fake-project',
          NOSTR_PUSH__FIREBASE__API_BASE_URL: fcm.baseUrl,
        },
      });
      reader =
        adapter === 'redis' ? await openRedisStore({ url: storeUrl }) : await openSqliteStore({ path: join(dataDir, 'nostr-push.sqlite') });
      await service.waitForLog((l) => l.msg === 'live subscriptions open' && l.relay === controlRelay.url, 15_000, 'control relay live');
      await publish(controlRelay.url, controlEvent(alice, REGISTER_TOKEN, { token: 'alice-phone' }, serviceKey.pubkey));
      await publish(controlRelay.url, controlEvent(carol, REGISTER_TOKEN, { token: 'carol-phone' }, serviceKey.pubkey));
      for (const [user, token] of [
        [alice, 'alice-phone'],
        [carol, 'carol-phone'],
      ] as const)
        await eventually(async () => ((await reader.tokenOwner(token)) === user.pubkey ? true : undefined), 15_000, `${token} registered`);

      // Alice's app asks for a callback URL (NIP-98) and registers it at the community relay by kind 30390.
      const created = await authed(alice, 'POST', '/v1/nip9a/callbacks', { relay: communityRelay.url });
      assert.equal(created.status, 201, await created.clone().text());
      const { id, url } = (await created.json()) as { id: string; url: string };
      callbackId = id;
      callbackUrl = url;
      assert.ok(url.startsWith(`${publicUrl}/nip9a/cb/`));
      const registration = signEvent(
        {
          kind: RELAY_PUSH_REGISTRATION,
          created_at: now() - 1,
          content: '',
          tags: [
            ['d', 'community-inbox'],
            ['relay', communityRelay.url],
            ['filter', JSON.stringify({ kinds: [REACTION], '#p': [alice.pubkey] })],
            ['callback', url],
            ['include_event'],
          ],
        },
        alice.secret,
      );
      relaySide = await startNip9aRelaySide(registration);
    });

    after(async () => {
      relaySide.close();
      await service.stop();
      await reader.close();
      await Promise.all([controlRelay.stop(), communityRelay.stop(), fcm.stop()]);
      await redis?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    test('a like published on the community relay becomes exactly one FCM push to the callback owner, and to nobody else', async () => {
      // The like also tags carol, who has a phone but no callback: she must hear nothing of it.
      const liked = signEvent(
        {
          kind: REACTION,
          created_at: now(),
          content: '+',
          tags: [
            ['e', 'ab'.repeat(32)],
            ['p', alice.pubkey],
            ['p', carol.pubkey],
          ],
        },
        bob.secret,
      );
      await publish(communityRelay.url, liked);
      const push = await eventually(() => pushesOf(liked.id)[0], 15_000, 'the push of the like');
      assert.equal(push.token, 'alice-phone');
      assert.equal(push.body.message.data.type, 'like');
      assert.equal(push.body.message.data.receiverPubkey, alice.pubkey);
      assert.deepEqual(
        relaySide.attempts.filter((a) => a.eventId === liked.id).map((a) => a.status),
        [202],
      );

      // Carol's own like on the control relay (which the service watches) is her proof of life:
      // once it is pushed, the restricted like has long been handled.
      const marker = like(bob, carol);
      await publish(controlRelay.url, marker);
      await eventually(() => pushesOf(marker.id)[0], 15_000, 'the marker push');
      assert.deepEqual(
        pushesOf(liked.id).map((m) => m.token),
        ['alice-phone'],
      );
    });

    test('the same callback repeated is pushed once', async () => {
      const liked = like(bob, alice);
      const first = await relaySide.deliver(liked);
      assert.equal(first.status, 202);
      await eventually(() => pushesOf(liked.id)[0], 15_000, 'the push');
      const repeated = await relaySide.deliver(liked);
      assert.equal(repeated.status, 200);
      assert.deepEqual(repeated.body, { status: 'duplicate' });
      const marker = like(bob, alice);
      await relaySide.deliver(marker);
      await eventually(() => pushesOf(marker.id)[0], 15_000, 'the marker push');
      assert.equal(pushesOf(liked.id).length, 1);
    });

    test('a forged event (bad signature) is refused with 400 and pushes nothing', async () => {
      const genuine = like(bob, alice);
      const forged = { ...genuine, content: '-' };
      const attempt = await relaySide.deliver(forged);
      assert.equal(attempt.status, 400);
      assert.equal((attempt.body as { code: string }).code, 'NIP9A_INVALID_EVENT');
      const marker = like(bob, alice);
      await relaySide.deliver(marker);
      await eventually(() => pushesOf(marker.id)[0], 15_000, 'the marker push');
      assert.equal(pushesOf(genuine.id).length, 0);
    });

    test('an id-only callback becomes one generic relayEvent push for the app to fetch', async () => {
      const eventId = randomBytes(32).toString('hex');
      const response = await fetch(callbackUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: eventId, relay: communityRelay.url }),
      });
      assert.equal(response.status, 202);
      const push = await eventually(() => pushesOf(eventId)[0], 15_000, 'the relayEvent push');
      assert.equal(push.token, 'alice-phone');
      const data = push.body.message.data;
      assert.equal(data.type, 'relayEvent');
      assert.equal(data.relay, `${communityRelay.url}/`);
      assert.equal(data.title, 'New activity');
      assert.equal(data.receiverPubkey, alice.pubkey);
      assert.deepEqual(push.body.message.apns?.payload.aps.alert, { title: 'New activity', body: data.body });
    });

    test('a revoked callback answers 404, and the relay side deletes its registration', async () => {
      const revoked = await authed(alice, 'DELETE', `/v1/nip9a/callbacks/${callbackId}`);
      assert.equal(revoked.status, 204);
      const liked = like(bob, alice);
      await publish(communityRelay.url, liked);
      await eventually(() => (relaySide.deleted() ? true : undefined), 15_000, 'the relay side to see a 404');
      assert.deepEqual(
        relaySide.attempts.filter((a) => a.eventId === liked.id).map((a) => [a.status, (a.body as { code: string }).code]),
        [[404, 'NOT_FOUND']],
      );
      const listed = await authed(alice, 'GET', '/v1/nip9a/callbacks');
      assert.deepEqual(await listed.json(), { callbacks: [] });
      assert.equal(pushesOf(liked.id).length, 0);
    });
  });
}
