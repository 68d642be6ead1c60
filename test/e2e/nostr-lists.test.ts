/**
 * End to end for the recipient's own Nostr lists (issue 16): the real binary, a real relay, the
 * APNs fake, nostr-tools-signed events, on each store adapter.
 *
 * - a sender muted in the recipient's kind 10000 (public `p`) or in kind 3083 `mutedPubkeys`
 *   gets no like, repost or comment through, while an unmuted sender's like is pushed;
 * - a muted word (in a comment's text), hashtag (a comment's `t` tag) and thread (a comment on,
 *   and a like of, the muted video) each withhold the push, and a comment muting none is pushed;
 * - a coalesced summary of 10 likes of which 3 are from muted actors says "… and 6 others";
 * - `onlyFollowing` lets a sender in the kind 3 contact list through and drops a stranger.
 *
 * A withheld push is observed through the service's own log line for that event and recipient,
 * never by waiting for something not to happen.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { COMMENT, CONTACTS, GENERIC_REPOST, MUTE_LIST, PREFERENCES, REACTION, REGISTER_TOKEN, VIDEO } from '../../src/nostr/kinds.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import type { NostrEvent } from '../../src/nostr/event.ts';
import type { StorePort } from '../../src/store/port.ts';
import { DEFAULT_PREFERENCE_KINDS } from '../../src/config/defaults.ts';
import { controlEvent, makeUser, type TestUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { startApnsFake, type ApnsFake, type ApnsReceived } from '../support/apns-fake.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { baseServiceEnv, makeE2eStore, type E2eStore } from '../support/e2e-stack.ts';

/** Coalescing bucket: a burst published just after a boundary has the whole window to be ingested. */
const WINDOW_SECS = 10;
const SUMMARY_TIMEOUT_MS = 30_000;
const now = () => Math.floor(Date.now() / 1000);
const deviceToken = (label: string): string => Buffer.from(label.padEnd(32, '.')).toString('hex').slice(0, 64);

/** Resolve just after the next bucket boundary, so a burst published now fits in one bucket. */
async function nextBucketStart(): Promise<void> {
  const windowMs = WINDOW_SECS * 1000;
  const intoBucket = Date.now() % windowMs;
  if (intoBucket < 300) return;
  await new Promise((resolve) => setTimeout(resolve, windowMs - intoBucket + 100));
}

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`mutes and onlyFollowing end to end (${adapter})`, () => {
    let relay: TestRelay;
    let apns: ApnsFake;
    let store: E2eStore;
    let reader: StorePort;
    let service: ServiceProcess;
    const serviceKey = makeUser();

    const pushesTo = (token: string, eventId?: string): ApnsReceived[] =>
      apns.messages.filter((m) => m.token === token && (eventId === undefined || m.payload.eventId === eventId));
    const sign = (user: TestUser, kind: number, tags: string[][], content = ''): NostrEvent =>
      signEvent({ kind, created_at: now(), tags, content }, user.secret);
    const register = async (user: TestUser, token: string) => {
      await publish(relay.url, controlEvent(user, REGISTER_TOKEN, { token, transport: 'apns' }, serviceKey.pubkey));
      await eventually(async () => ((await reader.tokenOwner(token)) === user.pubkey ? true : undefined), 15_000, `${token} registered`);
    };
    const setPreferences = async (user: TestUser, extra: Record<string, unknown>) => {
      await publish(relay.url, controlEvent(user, PREFERENCES, { kinds: DEFAULT_PREFERENCE_KINDS, ...extra }, serviceKey.pubkey));
      await eventually(async () => ((await reader.getSocialFilters([user.pubkey]))[0] ? true : undefined), 15_000, 'filters stored');
    };
    const withheld = (event: NostrEvent, recipient: TestUser, outcome: 'muted' | 'not_followed') =>
      service.waitForLog(
        (l) => l.msg === "push withheld by the recipient's own lists" && l.eventId === event.id && l.recipient === recipient.pubkey,
        15_000,
        `${outcome} withheld`,
      );
    // A stand-in video: its id a 64-hex value like a real event id (a mute list's `e` tag names one).
    const videoOf = (owner: TestUser, d: string) => ({
      id: createHash('sha256').update(`${owner.pubkey}:${d}`).digest('hex'),
      address: `${VIDEO}:${owner.pubkey}:${d}`,
    });
    const likeOn = (liker: TestUser, owner: TestUser, video: { id: string; address: string }) =>
      sign(
        liker,
        REACTION,
        [
          ['e', video.id],
          ['a', video.address],
          ['p', owner.pubkey],
          ['k', String(VIDEO)],
        ],
        '+',
      );

    before(async () => {
      relay = await startTestRelay();
      apns = await startApnsFake();
      store = await makeE2eStore(adapter, 'lists');
      service = await startServiceProcess({
        env: {
          ...baseServiceEnv({ serviceKey, relays: [relay.url], store }),
          ...apns.serviceEnv(store.dataDir),
          NOSTR_PUSH__SERVICE__COALESCE_WINDOW_SECS: String(WINDOW_SECS),
          NOSTR_PUSH__SERVICE__COALESCE_IMMEDIATE_LIMIT: '1',
          NOSTR_PUSH__SERVICE__COALESCE_POLL_MILLIS: '50',
          NOSTR_PUSH__SERVICE__COALESCE_FLUSH_TIMEOUT_SECS: '3',
          NOSTR_PUSH__SERVICE__COALESCE_LEASE_SECS: '7',
          NOSTR_PUSH__SERVICE__COALESCE_GROUP_TTL_SECS: '120',
          NOSTR_PUSH__SERVICE__RECIPIENT_THROTTLE_CAPACITY: '1000',
          NOSTR_PUSH__SERVICE__RECIPIENT_DAILY_CAP: '1000',
        },
      });
      reader = await store.openReader();
      await service.waitForLog((l) => l.msg === 'live subscriptions open' && l.relay === relay.url, 15_000, 'relay live');
    });

    after(async () => {
      await service.stop();
      await reader.close();
      await Promise.all([relay.stop(), apns.stop()]);
      await store.remove();
    });

    test("a muted sender's like, repost and comment push nothing; an unmuted sender's like is pushed", async () => {
      const erin = makeUser();
      const [publicMuted, privateMuted, friend] = [makeUser(), makeUser(), makeUser()];
      const token = deviceToken(`erin-${adapter}`);
      await register(erin, token);
      await publish(relay.url, sign(erin, MUTE_LIST, [['p', publicMuted.pubkey]]));
      await setPreferences(erin, { mutedPubkeys: [privateMuted.pubkey] });
      const video = videoOf(erin, 'erin-vine');
      const mutedEvents = [
        likeOn(publicMuted, erin, video),
        sign(publicMuted, GENERIC_REPOST, [
          ['e', video.id],
          ['p', erin.pubkey],
          ['k', String(VIDEO)],
        ]),
        sign(
          publicMuted,
          COMMENT,
          [
            ['E', video.id],
            ['K', String(VIDEO)],
            ['P', erin.pubkey],
            ['e', video.id],
            ['k', String(VIDEO)],
            ['p', erin.pubkey],
          ],
          'hello',
        ),
        likeOn(privateMuted, erin, videoOf(erin, 'other-vine')),
      ];
      const allowed = likeOn(friend, erin, videoOf(erin, 'third-vine'));
      await publish(relay.url, ...mutedEvents, allowed);
      for (const event of mutedEvents) await withheld(event, erin, 'muted');
      await eventually(() => pushesTo(token, allowed.id)[0], 15_000, "the friend's like");
      for (const event of mutedEvents) assert.equal(pushesTo(token, event.id).length, 0, `nothing for kind ${event.kind}`);
    });

    test('a muted word, hashtag and thread each withhold the push; an event muting none of them is pushed', async () => {
      const hana = makeUser();
      const commenter = makeUser();
      const token = deviceToken(`hana-${adapter}`);
      await register(hana, token);
      const mutedVideo = videoOf(hana, 'muted-thread');
      const openVideo = videoOf(hana, 'open-thread');
      await publish(
        relay.url,
        sign(hana, MUTE_LIST, [
          ['word', 'Spoiler'],
          ['t', 'Politics'],
          ['e', mutedVideo.id],
        ]),
      );
      const commentOn = (video: { id: string }, content: string, extra: string[][] = []) =>
        sign(
          commenter,
          COMMENT,
          [['E', video.id], ['K', String(VIDEO)], ['P', hana.pubkey], ['e', video.id], ['k', String(VIDEO)], ['p', hana.pubkey], ...extra],
          content,
        );
      const muted = {
        word: commentOn(openVideo, 'Huge SPOILER: the ending!'),
        hashtag: commentOn(openVideo, 'my thoughts', [['t', 'POLITICS']]),
        thread: commentOn(mutedVideo, 'nice one'),
        threadLike: likeOn(commenter, hana, mutedVideo),
      };
      // "spoilers" is not the whole word "spoiler"; #cats is not muted; the video's thread is open.
      const allowed = commentOn(openVideo, 'no spoilers here, promise', [['t', 'cats']]);
      await publish(relay.url, ...Object.values(muted), allowed);
      const expected: [NostrEvent, string][] = [
        [muted.word, 'word'],
        [muted.hashtag, 'hashtag'],
        [muted.thread, 'thread'],
        [muted.threadLike, 'thread'],
      ];
      for (const [event, mutedBy] of expected)
        await service.waitForLog(
          (l) =>
            l.msg === "push withheld by the recipient's own lists" &&
            l.eventId === event.id &&
            l.recipient === hana.pubkey &&
            l.mutedBy === mutedBy,
          15_000,
          `muted by ${mutedBy}`,
        );
      await eventually(() => pushesTo(token, allowed.id)[0], 15_000, 'the comment muting nothing');
      for (const [event, mutedBy] of expected) assert.equal(pushesTo(token, event.id).length, 0, `nothing for the ${mutedBy} mute`);
    });

    test('a coalesced summary of 10 likes of which 3 are muted says "… and 6 others"', async () => {
      const frank = makeUser();
      const token = deviceToken(`frank-${adapter}`);
      const muted = [makeUser(), makeUser(), makeUser()];
      const likers = Array.from({ length: 7 }, () => makeUser());
      const first = makeUser();
      await register(frank, token);
      await publish(
        relay.url,
        sign(
          frank,
          MUTE_LIST,
          [muted[0], muted[1]].map((u) => ['p', (u as TestUser).pubkey]),
        ),
      );
      await setPreferences(frank, { mutedPubkeys: [(muted[2] as TestUser).pubkey] });
      const video = videoOf(frank, 'popular');
      await nextBucketStart();
      // The group's one immediate push goes first, so every like of the burst is buffered.
      const opener = likeOn(first, frank, video);
      await publish(relay.url, opener);
      await eventually(() => pushesTo(token, opener.id)[0], 15_000, 'the immediate push');
      const burst = [...muted, ...likers].map((liker) => likeOn(liker, frank, video));
      await publish(relay.url, ...burst);
      const summary = await eventually(
        () => pushesTo(token).find((m) => (m.payload.aps as { alert?: { title?: string } }).alert?.title === 'New likes'),
        SUMMARY_TIMEOUT_MS,
        'the summary',
      );
      const alert = (summary.payload.aps as { alert: { body: string } }).alert;
      assert.match(alert.body, /^\S+ and 6 others liked your post$/);
      const mutedKeys = new Set(muted.map((u) => u.pubkey));
      assert.ok(!mutedKeys.has(summary.payload.senderPubkey as string), 'a muted actor is never the one named');
      assert.ok(likers.some((u) => u.pubkey === summary.payload.senderPubkey));
      assert.equal(summary.headers['apns-collapse-id'], pushesTo(token, opener.id)[0]?.headers['apns-collapse-id']);
      assert.equal(pushesTo(token).length, 2, 'the immediate push and the summary, nothing else');
    });

    test('onlyFollowing lets a followed sender through and drops a stranger', async () => {
      const grace = makeUser();
      const [followed, stranger] = [makeUser(), makeUser()];
      const token = deviceToken(`grace-${adapter}`);
      await register(grace, token);
      await publish(relay.url, sign(grace, CONTACTS, [['p', followed.pubkey]]));
      await setPreferences(grace, { onlyFollowing: true });
      const fromStranger = likeOn(stranger, grace, videoOf(grace, 'a'));
      const fromFollowed = likeOn(followed, grace, videoOf(grace, 'b'));
      await publish(relay.url, fromStranger, fromFollowed);
      await withheld(fromStranger, grace, 'not_followed');
      await eventually(() => pushesTo(token, fromFollowed.id)[0], 15_000, "the followed sender's like");
      assert.equal(pushesTo(token, fromStranger.id).length, 0);
    });
  });
}
