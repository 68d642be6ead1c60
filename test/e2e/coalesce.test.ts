/**
 * End to end for like/repost coalescing (issue 4): the real binary, a real relay, the FCM fake,
 * nostr-tools clients, on each store adapter, with ten-second buckets.
 *
 * - 20 likes from 20 keys on one video, immediate limit 3: exactly 3 immediate pushes and one
 *   summary "… and 16 others liked your post", all four under one collapse key (on Redis the
 *   count is the group's HyperLogLog, which can read 16 actors for 17: the test takes the
 *   store's count, and checks it is 17 on SQLite and 16 or 17 on Redis);
 * - likes on two videos never share a summary or a collapse key;
 * - a process killed with SIGKILL while a summary is in flight (the fake holds its answer) and
 *   restarted still sends the summary: the lease returns the group.
 *
 * Time is the service's test clock (a file it reads, test/support/test-clock.ts): a burst is
 * published while time stands still, so it lands in one bucket however slow the machine, the test
 * waits until the service has buffered every like (the group's pending count, read from the store),
 * and only then moves time past the bucket's end to let the flush run. Nothing waits out a window.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REACTION, REGISTER_TOKEN, VIDEO } from '../../src/nostr/kinds.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import type { NostrEvent } from '../../src/nostr/event.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { controlEvent, makeUser, type TestUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { startFcmFake, type FcmFake, type ReceivedMessage } from '../support/fcm-fake.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { TestClockFile } from '../support/test-clock.ts';
import { coalesceBucket, coalesceGroupId } from '../../src/store/port-coalesce.ts';

/** Bucket length; time only moves when the test moves it, so its size is no bet on speed. */
const WINDOW_SECS = 10;
const IMMEDIATE_LIMIT = 3;
/**
 * How long the FCM fake holds its answer while the kill lands, and the flush's own timeout above
 * it: the service is certainly still waiting for FCM when it dies. Only a hang reaches either.
 */
const HELD_FCM_MS = 20_000;
const FLUSH_TIMEOUT_SECS = 30;
/**
 * Group lease of a flush (the service requires more than twice the flush timeout); the restarted
 * process takes the group again once the test moves time past it.
 */
const LEASE_SECS = 2 * FLUSH_TIMEOUT_SECS + 1;
const SUMMARY_TIMEOUT_MS = 60_000;

const now = () => Math.floor(Date.now() / 1000);

const collapseKeyOf = (m: ReceivedMessage): string | undefined => m.body.message.android?.collapse_key;
const isSummary = (m: ReceivedMessage): boolean => m.body.message.data.title === 'New likes';

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`like coalescing end to end (${adapter})`, () => {
    let relay: TestRelay;
    let fcm: FcmFake;
    let redis: PrivateRedisServer | undefined;
    let dataDir: string;
    let reader: StorePort;
    let service: ServiceProcess;
    let env: Record<string, string>;
    let clock: TestClockFile;
    const serviceKey = makeUser();

    /**
     * Resolves once the service has buffered `pending` likes of `owner` on `dTag` in the current
     * test bucket, with the group's distinct actor count as stored then.
     */
    const buffered = (owner: TestUser, dTag: string, pending: number): Promise<number> => {
      const bucket = coalesceBucket(clock.nowSecs(), WINDOW_SECS);
      const groupId = coalesceGroupId('like', owner.pubkey, `a:${VIDEO}:${owner.pubkey}:${dTag}`, bucket);
      return eventually(
        async () => {
          const group = await reader.readCoalesceGroup(groupId);
          return group?.pending === pending ? group.distinctActors : undefined;
        },
        SUMMARY_TIMEOUT_MS,
        `${pending} likes buffered in ${groupId}`,
      );
    };
    /** Move test time to just past the end of the current bucket, where its groups are due. */
    const pastBucketEnd = async () => {
      const bucketEndMs = (coalesceBucket(clock.nowSecs(), WINDOW_SECS) + 1) * WINDOW_SECS * 1000;
      await clock.advance(bucketEndMs - clock.nowMs() + 1000, [service]);
    };

    const messagesTo = (token: string): ReceivedMessage[] => fcm.messages.filter((m) => m.token === token);
    const likeOn = (liker: TestUser, owner: TestUser, videoId: string, dTag: string): NostrEvent =>
      signEvent(
        {
          kind: REACTION,
          created_at: now(),
          tags: [
            ['e', videoId],
            ['a', `${VIDEO}:${owner.pubkey}:${dTag}`],
            ['p', owner.pubkey],
            ['k', String(VIDEO)],
          ],
          content: '+',
        },
        liker.secret,
      );
    const register = async (user: TestUser, token: string) => {
      await publish(relay.url, controlEvent(user, REGISTER_TOKEN, { token }, serviceKey.pubkey));
      await eventually(async () => ((await reader.tokenOwner(token)) === user.pubkey ? true : undefined), 15_000, `${token} registered`);
    };
    const start = async () => {
      service = await startServiceProcess({ env });
      await service.waitForLog((l) => l.msg === 'live subscriptions open' && l.relay === relay.url, 15_000, 'relay live');
    };

    before(async () => {
      relay = await startTestRelay();
      fcm = await startFcmFake();
      dataDir = mkdtempSync(join(tmpdir(), `np-coalesce-${adapter}-`));
      // One second into a bucket, so "the current bucket" is unambiguous.
      clock = new TestClockFile(Math.floor(Date.now() / (WINDOW_SECS * 1000)) * WINDOW_SECS * 1000 + 1000);
      let storeUrl = `sqlite:${join(dataDir, 'nostr-push.sqlite')}`;
      if (adapter === 'redis') {
        redis = await startRedisServer();
        storeUrl = redis.url;
      }
      env = {
        ...clock.env(),
        NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: serviceKey.secret,
        NOSTR_PUSH__NOSTR__RELAYS: relay.url,
        NOSTR_PUSH__NOSTR__QUERY_TIMEOUT_SECS: '2',
        NOSTR_PUSH__STORE__URL: storeUrl,
        NOSTR_PUSH__DATA_DIR: dataDir,
        NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
        NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: fcm.writeCredentials(dataDir),
        NOSTR_PUSH__FIREBASE__PROJECT_ID: 'fake-project',
        NOSTR_PUSH__FIREBASE__API_BASE_URL: fcm.baseUrl,
        NOSTR_PUSH__SERVICE__COALESCE_WINDOW_SECS: String(WINDOW_SECS),
        NOSTR_PUSH__SERVICE__COALESCE_IMMEDIATE_LIMIT: String(IMMEDIATE_LIMIT),
        NOSTR_PUSH__SERVICE__COALESCE_POLL_MILLIS: '50',
        NOSTR_PUSH__SERVICE__COALESCE_FLUSH_TIMEOUT_SECS: String(FLUSH_TIMEOUT_SECS),
        NOSTR_PUSH__SERVICE__COALESCE_LEASE_SECS: String(LEASE_SECS),
        NOSTR_PUSH__SERVICE__COALESCE_GROUP_TTL_SECS: '120',
        // The recipient budget (capacity 20, cap 20 a day by default) is not what is tested here.
        NOSTR_PUSH__SERVICE__RECIPIENT_THROTTLE_CAPACITY: '1000',
        NOSTR_PUSH__SERVICE__RECIPIENT_DAILY_CAP: '1000',
      };
      await start();
      reader =
        adapter === 'redis' ? await openRedisStore({ url: storeUrl }) : await openSqliteStore({ path: join(dataDir, 'nostr-push.sqlite') });
    });

    after(async () => {
      /* eslint-disable @typescript-eslint/no-unnecessary-condition -- before() can fail before it assigns these. */
      await service?.stop();
      await reader?.close();
      await Promise.all([relay?.stop(), fcm?.stop()]);
      await redis?.stop();
      rmSync(dataDir, { recursive: true, force: true });
      clock.remove();
      /* eslint-enable @typescript-eslint/no-unnecessary-condition */
    });

    describe('one burst', () => {
      const alice = makeUser();
      const carol = makeUser();
      const aliceLikers = Array.from({ length: 20 }, () => makeUser());
      const carolLikers = Array.from({ length: 10 }, () => makeUser());
      const videoA = 'a1'.repeat(32);
      const videoB = 'b1'.repeat(32);
      const videoC = 'c1'.repeat(32);
      /** Distinct actors of alice's group as the store counted them before the flush. */
      let aliceActors = 0;

      before(async () => {
        await register(alice, 'alice-phone');
        await register(carol, 'carol-phone');
        const aliceLikes = aliceLikers.map((liker) => likeOn(liker, alice, videoA, 'popular'));
        const carolLikes = carolLikers.map((liker, i) =>
          i < 5 ? likeOn(liker, carol, videoB, 'first') : likeOn(liker, carol, videoC, 'second'),
        );
        await publish(relay.url, ...aliceLikes, ...carolLikes);
        [aliceActors] = await Promise.all([buffered(alice, 'popular', 17), buffered(carol, 'first', 2), buffered(carol, 'second', 2)]);
        await pastBucketEnd();
        await eventually(() => (messagesTo('alice-phone').some(isSummary) ? true : undefined), SUMMARY_TIMEOUT_MS, "alice's summary");
        await eventually(
          () => (messagesTo('carol-phone').filter(isSummary).length >= 2 ? true : undefined),
          SUMMARY_TIMEOUT_MS,
          "carol's two summaries",
        );
      });

      test('20 likes on one video: 3 immediate pushes and one summary of the other 17, all under one collapse key', () => {
        const received = messagesTo('alice-phone');
        const summaries = received.filter(isSummary);
        const immediates = received.filter((m) => !isSummary(m));
        assert.equal(immediates.length, IMMEDIATE_LIMIT);
        assert.equal(summaries.length, 1);
        for (const m of immediates) assert.match(m.body.message.data.body ?? '', /^\S+ liked your post$/);
        const summary = summaries[0] as ReceivedMessage;
        const data = summary.body.message.data;
        // The summary counts the group's distinct actors. SQLite counts them exactly. Redis keeps
        // them in a HyperLogLog, as seed 000 specifies: two of the 17 actors can hash to the same
        // register (about 1 group in 120 at this size), and then it counts 16.
        if (adapter === 'sqlite') assert.equal(aliceActors, 17, 'SQLite counts distinct actors exactly');
        else assert.ok(aliceActors === 17 || aliceActors === 16, `the HyperLogLog's count ${aliceActors} is 17 within its error`);
        assert.match(data.body ?? '', new RegExp(`^\\S+ and ${aliceActors - 1} others liked your post$`));
        assert.equal(data.type, 'like');
        assert.equal(data.receiverPubkey, alice.pubkey);
        assert.equal(data.referencedEventId, videoA);
        assert.equal(data.referencedAddress, `${VIDEO}:${alice.pubkey}:popular`);
        const likers = new Set(aliceLikers.map((u) => u.pubkey));
        const immediateSenders = new Set(immediates.map((m) => m.body.message.data.senderPubkey));
        assert.ok(likers.has(data.senderPubkey ?? ''), 'the named actor is one of the likers');
        assert.ok(!immediateSenders.has(data.senderPubkey), 'the named actor is the first buffered one, not an immediate');
        const keys = new Set(received.map(collapseKeyOf));
        assert.equal(keys.size, 1, 'one collapse key for the immediates and the summary');
        const [key] = keys;
        assert.match(key ?? '', /^[0-9a-f]{32}$/);
        for (const m of received) assert.equal(m.body.message.apns?.headers['apns-collapse-id'], key);
        assert.ok(summary.receivedAtMs > Math.max(...immediates.map((m) => m.receivedAtMs)));
      });

      test('likes on two different videos never share a summary or a collapse key', () => {
        const received = messagesTo('carol-phone');
        const summaries = received.filter(isSummary);
        assert.equal(summaries.length, 2);
        assert.equal(received.length, 2 * IMMEDIATE_LIMIT + 2);
        const byVideo = new Map<string, ReceivedMessage[]>();
        for (const m of received) {
          const video = m.body.message.data.referencedEventId ?? '';
          byVideo.set(video, [...(byVideo.get(video) ?? []), m]);
        }
        assert.deepEqual([...byVideo.keys()].sort(), [videoB, videoC].sort());
        const keys = [...byVideo.values()].map((messages) => {
          assert.equal(messages.length, IMMEDIATE_LIMIT + 1);
          assert.equal(messages.filter(isSummary).length, 1);
          assert.match(messages.find(isSummary)?.body.message.data.body ?? '', /^\S+ and 1 other liked your post$/);
          const own = new Set(messages.map(collapseKeyOf));
          assert.equal(own.size, 1, 'one collapse key per video');
          return [...own][0];
        });
        assert.notEqual(keys[0], keys[1]);
      });
    });

    test('a process killed with SIGKILL during a flush still sends the summary after a restart', async () => {
      const dave = makeUser();
      const likers = Array.from({ length: IMMEDIATE_LIMIT + 2 }, () => makeUser());
      await register(dave, 'dave-phone');
      await publish(relay.url, ...likers.map((liker) => likeOn(liker, dave, 'd1'.repeat(32), 'killed')));
      await eventually(() => (messagesTo('dave-phone').length >= IMMEDIATE_LIMIT ? true : undefined), SUMMARY_TIMEOUT_MS, 'the immediates');
      await buffered(dave, 'killed', 2);
      fcm.setLatency(HELD_FCM_MS);
      await pastBucketEnd();
      // The fake records a message when it arrives and answers only after the latency: the
      // service is inside the flush, waiting for FCM, when it dies.
      const inFlight = await eventually(() => messagesTo('dave-phone').find(isSummary), SUMMARY_TIMEOUT_MS, 'the summary in flight');
      await service.kill();
      assert.ok(Date.now() - inFlight.receivedAtMs < HELD_FCM_MS, 'killed before FCM answered');
      fcm.setLatency(0);

      await start();
      // The dead process's lease on the group runs out in test time; then the new one flushes it.
      await clock.advance((LEASE_SECS + 1) * 1000, [service]);
      const resent = await eventually(
        () => messagesTo('dave-phone').filter((m) => isSummary(m) && m.receivedAtMs > inFlight.receivedAtMs)[0],
        SUMMARY_TIMEOUT_MS,
        'the summary from the restarted process',
      );
      assert.equal(resent.body.message.data.body, inFlight.body.message.data.body);
      assert.match(resent.body.message.data.body ?? '', /^\S+ and 1 other liked your post$/);
      assert.equal(collapseKeyOf(resent), collapseKeyOf(inFlight));
      const health = (await (await fetch(`${service.baseUrl}/health`)).json()) as { tasks: Record<string, boolean> };
      assert.equal(health.tasks.coalesce_flush, true, '/health reports the flush task');
    });
  });
}
