/**
 * End to end for social notifications: the real binary, two real relays, the FCM fake speaking
 * HTTP/2 and checking OAuth, nostr-tools clients. Likes, comments, mentions and reposts from other
 * keys reach the owner's phone exactly once per (event, recipient, token), on each store adapter.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { COMMENT, GENERIC_REPOST, LONG_FORM, METADATA, PREFERENCES, REACTION, VIDEO } from '../../src/nostr/kinds.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import type { StorePort } from '../../src/store/port.ts';
import { controlEvent, makeUser, type TestUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { fcmErrors, startFcmFake, type FcmFake, type ReceivedMessage } from '../support/fcm-fake.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { baseServiceEnv, makeE2eStore, registerDevice, relaysLive, type E2eStore } from '../support/e2e-stack.ts';

const now = () => Math.floor(Date.now() / 1000);

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`social notifications end to end (${adapter})`, () => {
    let relayA: TestRelay;
    let relayB: TestRelay;
    let fcm: FcmFake;
    let store: E2eStore;
    let reader: StorePort;
    let service: ServiceProcess;
    const serviceKey = makeUser();
    const alice = makeUser();
    const bob = makeUser();
    const carol = makeUser();
    const dave = makeUser();
    const video = `${VIDEO}:${alice.pubkey}:my-vine`;
    const videoId = 'ab'.repeat(32);

    const messagesFor = (token: string, eventId?: string): ReceivedMessage[] =>
      fcm.messages.filter((m) => m.token === token && (eventId === undefined || m.body.message.data.eventId === eventId));
    const oneMessage = (token: string, eventId: string) =>
      eventually(
        () => (messagesFor(token, eventId).length > 0 ? messagesFor(token, eventId)[0] : undefined),
        15_000,
        `a push to ${token} for ${eventId}`,
      );
    const sign = (user: TestUser, kind: number, tags: string[][], content = '') =>
      signEvent({ kind, created_at: now(), tags, content }, user.secret);
    const register = (user: TestUser, token: string) =>
      registerDevice({ relayUrl: relayA.url, reader, servicePubkey: serviceKey.pubkey }, user, token);

    before(async () => {
      [relayA, relayB] = await Promise.all([startTestRelay(), startTestRelay()]);
      fcm = await startFcmFake();
      store = await makeE2eStore(adapter, 'social');
      service = await startServiceProcess({
        env: { ...baseServiceEnv({ serviceKey, relays: [relayA.url, relayB.url], store }), ...fcm.serviceEnv(store.dataDir) },
      });
      reader = await store.openReader();
      await relaysLive(service, [relayA.url, relayB.url]);
      await publish(relayA.url, sign(bob, METADATA, [], JSON.stringify({ name: 'bob', display_name: 'Bob' })));
      await register(alice, 'alice-phone');
      await register(carol, 'carol-phone');
    });

    after(async () => {
      /* eslint-disable @typescript-eslint/no-unnecessary-condition -- before() can fail before it assigns these. */
      await service?.stop();
      await reader?.close();
      await Promise.all([relayA?.stop(), relayB?.stop(), fcm?.stop()]);
      await store?.remove();
      /* eslint-enable @typescript-eslint/no-unnecessary-condition */
    });

    test('a like on a video: one data-only push with the authoritative coordinate; the same like on two relays pushes once', async () => {
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
      await Promise.all([publish(relayA.url, like), publish(relayB.url, like)]);
      const message = await oneMessage('alice-phone', like.id);
      const m = message.body.message;
      assert.equal(message.headers.authorization?.startsWith('Bearer '), true);
      assert.equal((m as { notification?: unknown }).notification, undefined);
      // A like is coalesced: its immediate push carries the group's collapse key (32 hex) on both platforms.
      const collapseKey = m.android?.collapse_key ?? '';
      assert.match(collapseKey, /^[0-9a-f]{32}$/);
      assert.deepEqual(m.android, { priority: 'high', collapse_key: collapseKey });
      assert.equal(m.apns?.headers['apns-collapse-id'], collapseKey);
      assert.equal(m.apns.headers['apns-push-type'], 'alert');
      assert.equal(m.apns.headers['apns-priority'], '10');
      assert.equal((m.apns.payload.aps as Record<string, unknown>)['content-available'], undefined);
      assert.deepEqual(m.apns.payload.aps.alert, { title: 'New like', body: 'Bob liked your post' });
      assert.equal(m.data.type, 'like');
      assert.equal(m.data.senderName, 'Bob');
      assert.equal(m.data.referencedAddress, video);
      assert.equal(m.data.referencedAuthorPubkey, alice.pubkey);
      assert.equal(m.data.referencedDTag, 'my-vine');
      assert.equal(m.data.receiverPubkey, alice.pubkey);
      for (const value of Object.values(m.data)) assert.equal(typeof value, 'string');
    });

    test('a comment reply notifies the root author and the parent author, anchored to the root video', async () => {
      const parentComment = 'cd'.repeat(32);
      const reply = sign(
        bob,
        COMMENT,
        [
          ['A', video],
          ['E', videoId],
          ['K', String(VIDEO)],
          ['P', alice.pubkey],
          ['e', parentComment],
          ['k', String(COMMENT)],
          ['p', carol.pubkey],
        ],
        'great vine',
      );
      await publish(relayA.url, reply);
      const toAlice = await oneMessage('alice-phone', reply.id);
      const toCarol = await oneMessage('carol-phone', reply.id);
      for (const m of [toAlice, toCarol]) {
        assert.equal(m.body.message.data.type, 'comment');
        assert.equal(m.body.message.data.body, 'Bob: great vine');
        assert.equal(m.body.message.data.referencedEventId, videoId);
        assert.equal(m.body.message.data.referencedAddress, video);
      }
    });

    test('a long-form mention and a repost', async () => {
      const article = sign(
        bob,
        LONG_FORM,
        [
          ['d', 'post'],
          ['p', alice.pubkey],
        ],
        'thanks nostr:' + 'x',
      );
      const repost = sign(bob, GENERIC_REPOST, [
        ['e', 'ef'.repeat(32)],
        ['p', alice.pubkey],
        ['k', '1'],
      ]);
      await publish(relayA.url, article, repost);
      assert.equal((await oneMessage('alice-phone', article.id)).body.message.data.type, 'mention');
      const r = await oneMessage('alice-phone', repost.id);
      assert.equal(r.body.message.data.body, 'Bob reposted your post');
      assert.equal(r.body.message.data.referencedAddress, undefined, 'a repost of a plain note carries no video fields');
    });

    test('a self-like and a like on a user who disabled likes push nothing', async () => {
      await register(dave, 'dave-phone');
      await publish(relayA.url, controlEvent(dave, PREFERENCES, { kinds: [1] }, serviceKey.pubkey));
      await eventually(async () => ((await reader.getPreferences(dave.pubkey))?.kinds.length === 1 ? true : undefined));
      const selfLike = sign(
        alice,
        REACTION,
        [
          ['e', videoId],
          ['p', alice.pubkey],
        ],
        '+',
      );
      const muted = sign(
        bob,
        REACTION,
        [
          ['e', videoId],
          ['p', dave.pubkey],
        ],
        '+',
      );
      const marker = sign(
        carol,
        REACTION,
        [
          ['e', videoId],
          ['p', alice.pubkey],
        ],
        '+',
      );
      await publish(relayA.url, selfLike, muted, marker);
      await oneMessage('alice-phone', marker.id);
      assert.equal(messagesFor('alice-phone', selfLike.id).length, 0);
      assert.equal(messagesFor('dave-phone').length, 0);
    });

    test('an FCM 503 followed by success delivers once', async () => {
      const erin = makeUser();
      await register(erin, 'erin-phone');
      fcm.script({ token: 'erin-phone', ...fcmErrors.unavailable(1), times: 1 });
      const like = sign(
        bob,
        REACTION,
        [
          ['e', videoId],
          ['p', erin.pubkey],
        ],
        '+',
      );
      await publish(relayA.url, like);
      await oneMessage('erin-phone', like.id);
      assert.equal(messagesFor('erin-phone', like.id).length, 1);
    });

    test('UNREGISTERED removes the token', async () => {
      const frank = makeUser();
      await register(frank, 'frank-phone');
      fcm.script({ token: 'frank-phone', ...fcmErrors.unregistered(), times: Infinity });
      await publish(
        relayA.url,
        sign(
          bob,
          REACTION,
          [
            ['e', videoId],
            ['p', frank.pubkey],
          ],
          '+',
        ),
      );
      await eventually(async () => ((await reader.tokenOwner('frank-phone')) === null ? true : undefined), 15_000, 'the dead token pruned');
    });

    test('exactly one message per (event, recipient, token) over the whole run', () => {
      const counts = new Map<string, number>();
      for (const m of fcm.messages) {
        const key = `${m.body.message.data.eventId}:${m.token}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      const duplicates = [...counts].filter(([, n]) => n > 1);
      assert.deepEqual(duplicates, []);
      assert.ok(counts.size >= 6);
    });
  });
}
