/**
 * End to end for direct APNs: the real binary, a real relay and the loopback APNs fake (HTTP/2,
 * checking the ES256 provider token like Apple), on each store adapter. An `apns` device gets a
 * like with the exact `aps` block; a 410 Unregistered prunes the token unless it was registered
 * again after Apple's timestamp; a sandbox device is pushed through the sandbox host.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { METADATA, REACTION, REGISTER_TOKEN, VIDEO } from '../../src/nostr/kinds.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import { npubEncode } from '../../src/nostr/nip19.ts';
import * as nip44 from 'nostr-tools/nip44';
import type { StorePort } from '../../src/store/port.ts';
import { controlEvent, makeUser, type TestUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { startApnsFake, type ApnsFake, type ApnsReceived } from '../support/apns-fake.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { baseServiceEnv, makeE2eStore, type E2eStore } from '../support/e2e-stack.ts';

const now = () => Math.floor(Date.now() / 1000);
const deviceToken = (label: string): string => Buffer.from(label.padEnd(32, '.')).toString('hex').slice(0, 64);

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`direct APNs end to end (${adapter})`, () => {
    let relay: TestRelay;
    let apns: ApnsFake;
    let store: E2eStore;
    let reader: StorePort;
    let service: ServiceProcess;
    const serviceKey = makeUser();
    const alice = makeUser();
    const bob = makeUser();
    const carol = makeUser();
    const dave = makeUser();
    const videoId = 'ab'.repeat(32);
    const video = `${VIDEO}:${alice.pubkey}:my-vine`;

    const pushesTo = (token: string, eventId?: string): ApnsReceived[] =>
      apns.messages.filter((m) => m.token === token && (eventId === undefined || m.payload.eventId === eventId));
    const sign = (user: TestUser, kind: number, tags: string[][], content = '') =>
      signEvent({ kind, created_at: now(), tags, content }, user.secret);
    const register = async (user: TestUser, payload: Record<string, unknown>) => {
      const token = payload.token as string;
      await publish(relay.url, controlEvent(user, REGISTER_TOKEN, { transport: 'apns', ...payload }, serviceKey.pubkey));
      await eventually(async () => ((await reader.tokenOwner(token)) === user.pubkey ? true : undefined), 15_000, `${token} registered`);
    };
    const likeOf = (from: TestUser, to: TestUser, target = videoId) =>
      sign(
        from,
        REACTION,
        [
          ['e', target],
          ['p', to.pubkey],
        ],
        '+',
      );

    before(async () => {
      relay = await startTestRelay();
      apns = await startApnsFake({ bundleId: 'co.openvine.app' });
      store = await makeE2eStore(adapter, 'apns');
      service = await startServiceProcess({
        env: {
          ...baseServiceEnv({ serviceKey, relays: [relay.url], store }),
          ...apns.serviceEnv(store.dataDir),
        },
      });
      reader = await store.openReader();
      await service.waitForLog((l) => l.msg === 'live subscriptions open' && l.relay === relay.url, 15_000, 'relay live');
      await publish(relay.url, sign(bob, METADATA, [], JSON.stringify({ name: 'bob', display_name: 'Bob' })));
    });

    after(async () => {
      await service.stop();
      await reader.close();
      await Promise.all([relay.stop(), apns.stop()]);
      await store.remove();
    });

    test('an apns device receives a like straight from APNs with the exact aps block and headers', async () => {
      const token = deviceToken('alice-iphone');
      await register(alice, { token });
      const like = sign(
        bob,
        REACTION,
        [
          ['e', videoId],
          ['a', video],
          ['p', alice.pubkey],
          ['k', String(VIDEO)],
        ],
        '+',
      );
      await publish(relay.url, like);
      const push = await eventually(() => pushesTo(token, like.id)[0], 15_000, 'the like on APNs');
      assert.equal(push.environment, 'production');
      assert.equal(push.headers[':path'], `/3/device/${token}`);
      assert.equal(push.headers['apns-topic'], 'co.openvine.app');
      assert.equal(push.headers['apns-push-type'], 'alert');
      assert.equal(push.headers['apns-priority'], '10');
      assert.match(push.headers['apns-collapse-id'] ?? '', /^[0-9a-f]{32}$/, 'the coalescing collapse key');
      const expiration = Number(push.headers['apns-expiration']);
      assert.ok(Math.abs(expiration - (now() + 86_400)) < 120, `apns-expiration ${expiration} is a day ahead`);
      // The inbox counted the like first, so the push carries the badge of one new notification.
      assert.deepEqual(push.payload.aps, { alert: { title: 'New like', body: 'Bob liked your post' }, 'mutable-content': 1, badge: 1 });
      assert.equal(push.payload.type, 'like');
      assert.equal(push.payload.senderPubkey, bob.pubkey);
      assert.equal(push.payload.referencedAddress, video);
      assert.equal(push.payload.title, undefined, 'title lives in aps.alert only');
      assert.equal(apns.stats.providerTokensSeen, 1);
    });

    test('410 Unregistered after the registration removes the token; one from before a re-registration keeps it', async () => {
      const gone = deviceToken('carol-old-phone');
      const reregistered = deviceToken('dave-phone');
      await register(carol, { token: gone });
      await register(dave, { token: reregistered });
      apns.unregister(gone, Date.now() + 1_000);
      // Apple's timestamp is older than the registration: the app registered the token again since.
      apns.unregister(reregistered, Date.now() - 3_600_000);
      const toCarol = likeOf(bob, carol);
      const toDave = likeOf(bob, dave, 'cd'.repeat(32));
      await publish(relay.url, toCarol, toDave);
      await eventually(async () => ((await reader.tokenOwner(gone)) === null ? true : undefined), 15_000, 'the unregistered token pruned');
      await service.waitForLog(
        (l) => typeof l.msg === 'string' && l.msg.includes('registered again since'),
        15_000,
        'the re-registered token kept',
      );
      assert.equal(await reader.tokenOwner(reregistered), dave.pubkey);
      assert.deepEqual(await reader.listDevices(carol.pubkey), []);
    });

    test('an encryptTo device gets a payload that nostr-tools decrypts with the device key to the full data map', async () => {
      const erin = makeUser();
      const deviceKey = makeUser();
      const token = deviceToken('erin-sealed');
      await register(erin, { token, encryptTo: deviceKey.pubkey });
      const like = likeOf(bob, erin, '12'.repeat(32));
      await publish(relay.url, like);
      const push = await eventually(() => pushesTo(token, like.id)[0], 15_000, 'the sealed like');
      const { aps, encrypted, ...clear } = push.payload;
      assert.deepEqual(clear, { type: 'like', eventId: like.id }, 'only type and eventId in clear');
      assert.deepEqual(aps, { alert: { title: 'New like' }, 'mutable-content': 1 }, 'a placeholder banner for the extension');
      assert.equal(typeof encrypted, 'string');
      const conversationKey = nip44.getConversationKey(new Uint8Array(Buffer.from(deviceKey.secret, 'hex')), serviceKey.pubkey);
      const data = JSON.parse(nip44.decrypt(encrypted as string, conversationKey)) as Record<string, string>;
      assert.deepEqual(data, {
        type: 'like',
        eventId: like.id,
        title: 'New like',
        body: 'Bob liked your post',
        senderPubkey: bob.pubkey,
        senderName: 'Bob',
        receiverPubkey: erin.pubkey,
        receiverNpub: npubEncode(erin.pubkey),
        eventKind: '7',
        timestamp: String(like.created_at),
        referencedEventId: '12'.repeat(32),
        badge: '1',
      });
    });

    test('a device registered with "sandbox": true is pushed through the sandbox host', async () => {
      const token = deviceToken('bob-dev-build');
      await register(bob, { token, sandbox: true });
      assert.deepEqual(await reader.listDevices(bob.pubkey), [{ token, transport: 'apns', sandbox: true }]);
      const like = likeOf(carol, bob, 'ef'.repeat(32));
      await publish(relay.url, like);
      const push = await eventually(() => pushesTo(token, like.id)[0], 15_000, 'the like on the sandbox');
      assert.equal(push.environment, 'sandbox');
    });
  });
}
