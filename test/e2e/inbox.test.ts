/**
 * End to end for the user's inbox (issue 13): the real binary, two real relays, the FCM fake,
 * nostr-tools clients, on each store adapter. Likes and comments count once per (event,
 * recipient) and the next iOS push carries the total as `aps.badge`; marking viewed lowers the
 * next badge; an alert word in a video's title counts and, when enabled, pushes once.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { COMMENT, METADATA, PREFERENCES, REACTION, REGISTER_TOKEN, VIDEO } from '../../src/nostr/kinds.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import type { StorePort } from '../../src/store/port.ts';
import { ANNOUNCEMENT_PREFERENCE_CATEGORY, KEYWORD_PREFERENCE_CATEGORY } from '../../src/engine/content.ts';
import { createApiKey } from '../../src/platform/api-keys.ts';
import { DEFAULT_PREFERENCE_KINDS } from '../../src/config/defaults.ts';
import { controlEvent, makeUser, type TestUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { startFcmFake, type FcmFake, type ReceivedMessage } from '../support/fcm-fake.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { openHintSocket, userApi } from '../support/user-api.ts';
import { baseServiceEnv, makeE2eStore, type E2eStore } from '../support/e2e-stack.ts';

const now = () => Math.floor(Date.now() / 1000);
const WAIT_MS = 20_000;

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`the user's inbox end to end (${adapter})`, () => {
    let relayA: TestRelay;
    let relayB: TestRelay;
    let fcm: FcmFake;
    let store: E2eStore;
    let reader: StorePort;
    let service: ServiceProcess;
    const serviceKey = makeUser();
    const alice = makeUser();
    const [bob, carol, dave, erin, frank] = [makeUser(), makeUser(), makeUser(), makeUser(), makeUser()];
    const video = `${VIDEO}:${alice.pubkey}:inbox-vine`;
    const videoId = 'ac'.repeat(32);

    const messagesFor = (token: string, eventId?: string): ReceivedMessage[] =>
      fcm.messages.filter((m) => m.token === token && (eventId === undefined || m.body.message.data.eventId === eventId));
    const onePush = (token: string, eventId: string) =>
      eventually(() => messagesFor(token, eventId)[0], WAIT_MS, `a push to ${token} for ${eventId}`);
    const sign = (user: TestUser, kind: number, tags: string[][], content = '') =>
      signEvent({ kind, created_at: now(), tags, content }, user.secret);
    const likeOfVideo = (user: TestUser, target = video, targetId = videoId) =>
      sign(
        user,
        REACTION,
        [
          ['e', targetId],
          ['a', target],
          ['p', alice.pubkey],
          ['k', String(VIDEO)],
        ],
        '+',
      );
    const counts = (pubkey: string) => reader.readInboxCounts(pubkey);
    const countReaches = (pubkey: string, type: 'like' | 'comment' | 'keyword', total: number) =>
      eventually(async () => ((await counts(pubkey)).types[type].total >= total ? true : undefined), WAIT_MS, `${type} total ${total}`);
    /** Every inbound event received so far is handled (the queue is empty). */
    const drained = (queue: 'inbound' | 'outbound') =>
      eventually(
        async () => {
          const stats = await reader.queueStats(queue);
          return stats.ready === 0 && stats.leased === 0 ? true : undefined;
        },
        WAIT_MS,
        `the ${queue} queue drained`,
      );
    const inboundDrained = () => drained('inbound');
    const register = async (user: TestUser, token: string) => {
      await publish(relayA.url, controlEvent(user, REGISTER_TOKEN, { token }, serviceKey.pubkey));
      await eventually(async () => ((await reader.tokenOwner(token)) === user.pubkey ? true : undefined), WAIT_MS, `${token} registered`);
    };

    before(async () => {
      [relayA, relayB] = await Promise.all([startTestRelay(), startTestRelay()]);
      fcm = await startFcmFake();
      store = await makeE2eStore(adapter, 'inbox');
      service = await startServiceProcess({
        env: {
          ...baseServiceEnv({ serviceKey, relays: [relayA.url, relayB.url], store }),
          // Every event asks the word index: a word set is matched at once, no window to wait out.
          NOSTR_PUSH__INBOX__ALERT_WORD_REFRESH_MILLIS: '0',
          ...fcm.serviceEnv(store.dataDir),
        },
      });
      reader = await store.openReader();
      await Promise.all([
        service.waitForLog((l) => l.msg === 'live subscriptions open' && l.relay === relayA.url, WAIT_MS, 'relay A live'),
        service.waitForLog((l) => l.msg === 'live subscriptions open' && l.relay === relayB.url, WAIT_MS, 'relay B live'),
      ]);
      await publish(relayA.url, sign(bob, METADATA, [], JSON.stringify({ name: 'bob', display_name: 'Bob' })));
      await register(alice, 'alice-iphone');
      await register(carol, 'carol-phone');
    });

    // A failed before() leaves some of these unassigned: stop whatever was started.
    /* eslint-disable @typescript-eslint/no-unnecessary-condition */
    after(async () => {
      await service?.stop();
      await reader?.close();
      await Promise.all([relayA?.stop(), relayB?.stop(), fcm?.stop()]);
      await store?.remove();
    });
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */

    test('three likes and a comment count 3 and 1, and the next iOS push carries a badge of 4', async () => {
      for (const liker of [bob, carol, dave]) await publish(relayA.url, likeOfVideo(liker));
      await countReaches(alice.pubkey, 'like', 3);
      const comment = sign(
        bob,
        COMMENT,
        [
          ['A', video],
          ['K', String(VIDEO)],
          ['P', alice.pubkey],
          ['a', video],
          ['k', String(VIDEO)],
          ['p', alice.pubkey],
        ],
        'Lovely light',
      );
      await publish(relayA.url, comment);
      const push = (await onePush('alice-iphone', comment.id)).body.message;
      assert.equal(push.data.type, 'comment');
      assert.equal(push.data.badge, '4');
      assert.equal((push.apns?.payload.aps as { badge?: unknown }).badge, 4);
      const after = await counts(alice.pubkey);
      assert.deepEqual(after.types.like, { total: 3, viewed: 0, new: 3 });
      assert.deepEqual(after.types.comment, { total: 1, viewed: 0, new: 1 });
      assert.equal(after.totalNew, 4);
      // Carol liked but is not tagged by anyone: nothing counted for her; Bob is not known at all.
      assert.equal((await counts(carol.pubkey)).totalNew, 0);
      assert.equal((await counts(bob.pubkey)).totalNew, 0);
    });

    test('the same like on two relays counts once; past the immediate limit it is coalesced and still one like', async () => {
      const like = likeOfVideo(erin);
      await Promise.all([publish(relayA.url, like), publish(relayB.url, like)]);
      await countReaches(alice.pubkey, 'like', 4);
      // A later event on relay B, counted, then an empty inbound queue: relay B's copy of the like
      // came before it on the same connection and has been handled (or dropped) by now.
      const sentinel = sign(frank, COMMENT, [
        ['A', video],
        ['P', alice.pubkey],
        ['p', alice.pubkey],
      ]);
      await publish(relayB.url, sentinel);
      await countReaches(alice.pubkey, 'comment', 2);
      await inboundDrained();
      assert.equal((await counts(alice.pubkey)).types.like.total, 4);
      // The fourth like on the video was past the immediate limit (3): buffered, no push of its own.
      assert.equal(messagesFor('alice-iphone', like.id).length, 0);
    });

    test('mark viewed through the user API, then one more like: the push carries a badge of 1', async () => {
      const before = await userApi(service.baseUrl, alice, 'GET', '/v1/inbox/counts');
      assert.equal(before.status, 200);
      assert.deepEqual((before.json as { types: Record<string, unknown> }).types.like, { total: 4, viewed: 0, new: 4 });
      assert.equal((before.json as { totalNew: number }).totalNew, 6);
      const viewed = await userApi(service.baseUrl, alice, 'POST', '/v1/inbox/viewed', { types: ['like', 'comment'] });
      assert.equal(viewed.status, 200);
      assert.equal((viewed.json as { totalNew: number }).totalNew, 0);
      const hints = await openHintSocket(service.baseUrl, alice);
      const otherVideo = `${VIDEO}:${alice.pubkey}:second-vine`;
      const like = likeOfVideo(bob, otherVideo, 'ad'.repeat(32));
      await publish(relayA.url, like);
      const push = (await onePush('alice-iphone', like.id)).body.message;
      assert.equal(push.data.badge, '1');
      assert.equal((push.apns?.payload.aps as { badge?: unknown }).badge, 1);
      // The same change reached the hint socket.
      await eventually(() => (hints.frames.length > 0 ? true : undefined), WAIT_MS, 'a hint');
      assert.deepEqual(hints.frames, [{ type: 'like', totalNew: 1 }]);
      hints.close();
    });

    test('an alert word in a video title counts for every watcher and pushes once to the one who enabled it', async () => {
      const alertPreferences = (user: TestUser, kinds: number[]) =>
        publish(relayA.url, controlEvent(user, PREFERENCES, { kinds, alertWords: ['Sunset', 'harbour'] }, serviceKey.pubkey));
      await alertPreferences(alice, [...DEFAULT_PREFERENCE_KINDS, KEYWORD_PREFERENCE_CATEGORY]);
      await alertPreferences(carol, [...DEFAULT_PREFERENCE_KINDS]);
      for (const user of [alice, carol])
        await eventually(
          async () => ((await reader.readAlertWords(user.pubkey)).length === 2 ? true : undefined),
          WAIT_MS,
          'alert words set',
        );

      const videoOfDave = sign(
        dave,
        VIDEO,
        [
          ['d', 'golden-hour'],
          ['title', 'SUNSET over the harbour!'],
          ['url', 'https://example.com/v.mp4'],
        ],
        'No tags for anyone here',
      );
      await Promise.all([publish(relayA.url, videoOfDave), publish(relayB.url, videoOfDave)]);
      const push = (await onePush('alice-iphone', videoOfDave.id)).body.message;
      assert.equal(push.data.type, 'keyword');
      assert.equal(push.apns?.payload.aps.alert?.body, `${push.data.senderName ?? ''} mentioned “sunset”`);
      await countReaches(carol.pubkey, 'keyword', 2);
      await inboundDrained();
      // Two words in the title: two hits each, counted once although the video came from two relays.
      assert.equal((await counts(alice.pubkey)).types.keyword.total, 2);
      assert.equal((await counts(carol.pubkey)).types.keyword.total, 2);
      assert.equal(messagesFor('alice-iphone', videoOfDave.id).length, 1, 'one push, not one per word or per relay');
      await drained('outbound');
      assert.equal(messagesFor('carol-phone', videoOfDave.id).length, 0, 'keyword pushes are off by default');
    });

    test('an announcement with push reaches each device of the users who enabled announcements once, and nobody else', async () => {
      const adminKey = (await createApiKey(reader, 'default', 'admin')).key;
      const later = now() + 5; // newer than any preferences published above, whatever second this runs in
      await publish(
        relayA.url,
        controlEvent(alice, PREFERENCES, { kinds: [...DEFAULT_PREFERENCE_KINDS, ANNOUNCEMENT_PREFERENCE_CATEGORY] }, serviceKey.pubkey, {
          createdAt: later,
        }),
      );
      await publish(
        relayA.url,
        controlEvent(carol, PREFERENCES, { kinds: [...DEFAULT_PREFERENCE_KINDS] }, serviceKey.pubkey, { createdAt: later }),
      );
      await eventually(
        async () => ((await reader.getPreferences(alice.pubkey))?.kinds.includes(ANNOUNCEMENT_PREFERENCE_CATEGORY) ? true : undefined),
        WAIT_MS,
        "alice's preferences enable announcements",
      );
      await inboundDrained();

      const published = await fetch(`${service.baseUrl}/v1/admin/announcements`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'Maintenance tonight at 22:00 UTC', expiresAt: now() + 3600, push: true }),
      });
      assert.equal(published.status, 201, await published.clone().text());
      const answer = (await published.json()) as { id: number; push: { campaignId: string } };
      const announcementPushes = (token: string) =>
        fcm.messages.filter((m) => m.token === token && m.body.message.data.type === 'announcement');
      const push = await eventually(() => announcementPushes('alice-iphone')[0], WAIT_MS, 'the announcement pushed to alice');
      assert.equal(push.body.message.data.body, 'Maintenance tonight at 22:00 UTC');
      assert.equal(push.body.message.data.title, 'Announcement', 'the default title');
      assert.equal(push.body.message.data.announcementId, String(answer.id));
      await eventually(
        async () => ((await reader.getCampaign('default', answer.push.campaignId))?.state === 'done' ? true : undefined),
        WAIT_MS,
        'the announcement campaign expanded',
      );
      await drained('outbound');
      assert.equal(announcementPushes('alice-iphone').length, 1, 'once to alice');
      assert.equal(announcementPushes('carol-phone').length, 0, 'carol did not enable announcements');
      const campaign = await reader.getCampaign('default', answer.push.campaignId);
      assert.equal(campaign?.counts.sent, 1, 'one device sent');
    });
  });
}
