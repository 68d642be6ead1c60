/**
 * End to end for quiet hours (issue 15 item 2): the real binary, a real relay, the FCM fake,
 * nostr-tools clients and the service's test clock, on each store adapter.
 *
 * Quinn's phone registered an offset that makes the test clock's present 23:00 local, and her
 * kind 3083 sets `quietHours` 22:00–07:00 with comments urgent. Two likes on two of her videos are
 * held (no push); a comment is pushed at once (urgent); when the clock reaches 07:01 local, one
 * digest push says "While you were away: 2 likes". Nothing waits out a window: the clock moves.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMMENT, PREFERENCES, REACTION, REGISTER_TOKEN, TEXT_NOTE, VIDEO } from '../../src/nostr/kinds.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import type { NostrEvent } from '../../src/nostr/event.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { DIGEST_PUSH_TYPE } from '../../src/platform/digest-worker.ts';
import { controlEvent, makeUser, type TestUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { startFcmFake, type FcmFake, type ReceivedMessage } from '../support/fcm-fake.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { TestClockFile } from '../support/test-clock.ts';
import { queuesDrained } from '../support/queues.ts';

const WAIT_MS = 20_000;
const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MINUTES = 24 * 60;

/** The registered offset (−840…840 minutes) that makes `nowMs` 23:00 local, to the minute. */
function offsetForElevenPm(nowMs: number): number {
  const utcMinute = Math.floor((nowMs % (DAY_MINUTES * MINUTE_MS)) / MINUTE_MS);
  const offset = (((23 * 60 - utcMinute) % DAY_MINUTES) + DAY_MINUTES) % DAY_MINUTES;
  return offset > 840 ? offset - DAY_MINUTES : offset;
}

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`quiet hours end to end (${adapter})`, () => {
    let relay: TestRelay;
    let fcm: FcmFake;
    let redis: PrivateRedisServer | undefined;
    let dataDir: string;
    let reader: StorePort;
    let service: ServiceProcess;
    let clock: TestClockFile;
    const serviceKey = makeUser();
    const [quinn, liker1, liker2, commenter] = [makeUser(), makeUser(), makeUser(), makeUser()];

    const messagesTo = (token: string): ReceivedMessage[] => fcm.messages.filter((m) => m.token === token);
    const likeOf = (liker: TestUser, dTag: string): NostrEvent =>
      signEvent(
        {
          kind: REACTION,
          created_at: Math.floor(Date.now() / 1000),
          tags: [
            ['e', randomUUID().replaceAll('-', '').repeat(2)],
            ['a', `${VIDEO}:${quinn.pubkey}:${dTag}`],
            ['p', quinn.pubkey],
            ['k', String(VIDEO)],
          ],
          content: '+',
        },
        liker.secret,
      );
    const outboundDrained = () => queuesDrained(reader, WAIT_MS);

    before(async () => {
      relay = await startTestRelay();
      fcm = await startFcmFake();
      dataDir = mkdtempSync(join(tmpdir(), `np-quiet-${adapter}-`));
      // Frozen at the real time (the live subscription asks for events since then), on a whole minute.
      clock = new TestClockFile(Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS);
      let storeUrl = `sqlite:${join(dataDir, 'nostr-push.sqlite')}`;
      if (adapter === 'redis') {
        redis = await startRedisServer();
        storeUrl = redis.url;
      }
      service = await startServiceProcess({
        env: {
          ...clock.env(),
          NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: serviceKey.secret,
          NOSTR_PUSH__NOSTR__RELAYS: relay.url,
          NOSTR_PUSH__NOSTR__QUERY_TIMEOUT_SECS: '2',
          NOSTR_PUSH__STORE__URL: storeUrl,
          NOSTR_PUSH__DATA_DIR: dataDir,
          NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
          ...fcm.serviceEnv(dataDir),
        },
      });
      const readerClock = { nowMs: () => clock.nowMs() };
      reader =
        adapter === 'redis'
          ? await openRedisStore({ url: storeUrl, clock: readerClock })
          : await openSqliteStore({ path: join(dataDir, 'nostr-push.sqlite'), clock: readerClock });
      await service.waitForLog((l) => l.msg === 'live subscriptions open' && l.relay === relay.url, WAIT_MS, 'relay live');
      const timezoneOffsetMinutes = offsetForElevenPm(clock.nowMs());
      await publish(relay.url, controlEvent(quinn, REGISTER_TOKEN, { token: 'quinn-phone', timezoneOffsetMinutes }, serviceKey.pubkey));
      await eventually(async () => ((await reader.tokenOwner('quinn-phone')) === quinn.pubkey ? true : undefined), WAIT_MS, 'registered');
      await publish(
        relay.url,
        controlEvent(
          quinn,
          PREFERENCES,
          { kinds: [1, 7, 16, 1111, 30023, 34236], quietHours: { start: '22:00', end: '07:00' }, urgentTypes: ['comment'] },
          serviceKey.pubkey,
        ),
      );
      await eventually(async () => ((await reader.readQuietHours([quinn.pubkey]))[0] ? true : undefined), WAIT_MS, 'quiet hours stored');
    });

    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- before() can fail before it assigns these. */
    after(async () => {
      await service?.stop();
      await reader?.close();
      await Promise.all([relay?.stop(), fcm?.stop()]);
      await redis?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */

    test('at 23:00 local two likes are held and an urgent comment is pushed; at 07:01 one digest counts the likes', async () => {
      const likes = [likeOf(liker1, 'vine-1'), likeOf(liker2, 'vine-2')];
      const note = signEvent({ kind: TEXT_NOTE, created_at: Math.floor(Date.now() / 1000), tags: [], content: 'my note' }, quinn.secret);
      const comment = signEvent(
        {
          kind: COMMENT,
          created_at: Math.floor(Date.now() / 1000),
          tags: [
            ['E', note.id],
            ['K', '1'],
            ['P', quinn.pubkey],
            ['e', note.id],
            ['k', '1'],
            ['p', quinn.pubkey],
          ],
          content: 'night owl',
        },
        commenter.secret,
      );
      await publish(relay.url, ...likes, note, comment);
      const pushed = await eventually(
        () => messagesTo('quinn-phone').find((m) => m.body.message.data.eventId === comment.id),
        WAIT_MS,
        'the urgent comment pushed during quiet hours',
      );
      assert.equal(pushed.body.message.data.type, 'comment');
      await outboundDrained();
      for (const like of likes) {
        await eventually(
          async () => ((await reader.readInboxCounts(quinn.pubkey)).types.like.total >= 2 ? true : undefined),
          WAIT_MS,
          'both likes counted',
        );
        assert.deepEqual(
          messagesTo('quinn-phone').filter((m) => m.body.message.data.eventId === like.id),
          [],
          'a like during quiet hours is held, not pushed',
        );
      }
      assert.equal(
        messagesTo('quinn-phone').filter((m) => m.body.message.data.type === DIGEST_PUSH_TYPE).length,
        0,
        'no digest before 07:00',
      );

      // 23:00 → 06:59 local: still quiet.
      await clock.advance(7 * HOUR_MS + 59 * MINUTE_MS, [service]);
      await outboundDrained();
      assert.equal(messagesTo('quinn-phone').filter((m) => m.body.message.data.type === DIGEST_PUSH_TYPE).length, 0, 'no digest at 06:59');

      // 07:01 local: the window is over.
      await clock.advance(2 * MINUTE_MS, [service]);
      const digest = await eventually(
        () => messagesTo('quinn-phone').find((m) => m.body.message.data.type === DIGEST_PUSH_TYPE),
        WAIT_MS,
        'the digest at the end of quiet hours',
      );
      assert.equal(digest.body.message.data.body, 'While you were away: 2 likes');
      assert.equal(digest.body.message.data.count_like, '2');
      await outboundDrained();
      assert.equal(messagesTo('quinn-phone').filter((m) => m.body.message.data.type === DIGEST_PUSH_TYPE).length, 1, 'one digest');
      assert.equal(
        messagesTo('quinn-phone').filter((m) => likes.some((like) => like.id === m.body.message.data.eventId)).length,
        0,
        'the held likes themselves are never pushed',
      );
    });
  });
}
