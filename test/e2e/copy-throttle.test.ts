/**
 * End to end for copy in the user's language and the per-user throttle (issue 15): the real
 * binary, a real relay, the FCM fake, nostr-tools clients, on each store adapter.
 *
 * - Pedro registers a phone with `"locale": "pt-BR"` and an iPhone with `"locale": "ja"`; Emma a
 *   phone without a locale. One like each from Ana: Pedro's phone reads Portuguese (pt-BR falls
 *   back to pt), his iPhone Japanese, Emma's phone the English bytes of the wire contract.
 * - `throttle.per_user_per_hour: 2`: Tara gets four likes on four videos, five minutes apart
 *   (each one an immediate push as far as coalescing goes): two are pushed, two withheld; her
 *   inbox counts all four likes, `GET /v1/inbox/counts` says two were withheld this hour, and the
 *   delivery log records them as `suppressed: throttled`.
 *
 * Time is the service's test clock, frozen at the real time of the start (its live subscription
 * asks the relay for events since then); before Tara's likes the test moves it to the start of an
 * hour when too little of the current one is left, then five minutes between likes, so all four
 * fall in one clock hour. Nothing waits out a window.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finalizeEvent } from 'nostr-tools/pure';
import { METADATA, REACTION, REGISTER_TOKEN, VIDEO } from '../../src/nostr/kinds.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import type { NostrEvent } from '../../src/nostr/event.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { DEFAULT_APP_ID } from '../../src/platform/apps.ts';
import { notificationCopy } from '../../src/engine/copy.ts';
import { controlEvent, makeUser, type TestUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { startFcmFake, type FcmFake, type ReceivedMessage } from '../support/fcm-fake.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { TestClockFile } from '../support/test-clock.ts';
import { queuesDrained } from '../support/queues.ts';
import { THROTTLE_WINDOW_SECS } from '../../src/notification/types.ts';

const WAIT_MS = 20_000;
const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;
const THROTTLE = 2;

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`copy in the user's language and the per-user throttle end to end (${adapter})`, () => {
    let relay: TestRelay;
    let fcm: FcmFake;
    let redis: PrivateRedisServer | undefined;
    let dataDir: string;
    let reader: StorePort;
    let service: ServiceProcess;
    let clock: TestClockFile;
    const serviceKey = makeUser();
    const [ana, pedro, emma, tara] = [makeUser(), makeUser(), makeUser(), makeUser()];
    const taraLikers = [makeUser(), makeUser(), makeUser(), makeUser()];

    const messagesTo = (token: string): ReceivedMessage[] => fcm.messages.filter((m) => m.token === token);
    const pushFor = (token: string, eventId: string) =>
      eventually(() => messagesTo(token).find((m) => m.body.message.data.eventId === eventId), WAIT_MS, `a push to ${token}`);
    const likeOf = (liker: TestUser, owner: TestUser, dTag: string): NostrEvent =>
      signEvent(
        {
          kind: REACTION,
          created_at: Math.floor(Date.now() / 1000),
          tags: [
            ['e', randomUUID().replaceAll('-', '').repeat(2)],
            ['a', `${VIDEO}:${owner.pubkey}:${dTag}`],
            ['p', owner.pubkey],
            ['k', String(VIDEO)],
          ],
          content: '+',
        },
        liker.secret,
      );
    const register = async (user: TestUser, token: string, locale?: string) => {
      await publish(relay.url, controlEvent(user, REGISTER_TOKEN, { token, ...(locale ? { locale } : {}) }, serviceKey.pubkey));
      await eventually(async () => ((await reader.tokenOwner(token)) === user.pubkey ? true : undefined), WAIT_MS, `${token} registered`);
    };
    const outboundDrained = () => queuesDrained(reader, WAIT_MS);
    /** A user-API GET as `user`, with a NIP-98 event dated by the service's (test) clock. */
    const userGet = async (user: TestUser, path: string): Promise<Record<string, unknown>> => {
      const url = `${service.baseUrl}${path}`;
      const auth = finalizeEvent(
        {
          kind: 27235,
          created_at: clock.nowSecs(),
          tags: [
            ['u', url],
            ['method', 'GET'],
            ['nonce', randomUUID()],
          ],
          content: '',
        },
        Uint8Array.from(Buffer.from(user.secret, 'hex')),
      );
      const response = await fetch(url, { headers: { authorization: `Nostr ${Buffer.from(JSON.stringify(auth)).toString('base64')}` } });
      assert.equal(response.status, 200);
      return (await response.json()) as Record<string, unknown>;
    };

    before(async () => {
      relay = await startTestRelay();
      fcm = await startFcmFake();
      dataDir = mkdtempSync(join(tmpdir(), `np-copy-${adapter}-`));
      clock = new TestClockFile(Date.now());
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
          // The likes are dated by the real clock; the test clock may run up to 40 minutes ahead of it.
          NOSTR_PUSH__NOTIFICATION__MAX_EVENT_AGE_SECS: String(3 * 3600),
          NOSTR_PUSH__THROTTLE__PER_USER_PER_HOUR: String(THROTTLE),
          ...fcm.serviceEnv(dataDir),
        },
      });
      // The reader keeps the service's time: the throttle window it reads is the test clock's hour.
      const readerClock = { nowMs: () => clock.nowMs() };
      reader =
        adapter === 'redis'
          ? await openRedisStore({ url: storeUrl, clock: readerClock })
          : await openSqliteStore({ path: join(dataDir, 'nostr-push.sqlite'), clock: readerClock });
      await service.waitForLog((l) => l.msg === 'live subscriptions open' && l.relay === relay.url, WAIT_MS, 'relay live');
      await publish(
        relay.url,
        signEvent({ kind: METADATA, created_at: Math.floor(Date.now() / 1000), tags: [], content: '{"name":"Ana"}' }, ana.secret),
      );
      await register(pedro, 'pedro-phone', 'pt-BR');
      await register(pedro, 'pedro-iphone', 'ja');
      await register(emma, 'emma-phone');
      await register(tara, 'tara-phone');
    });

    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- before() can fail before it assigns these. */
    after(async () => {
      await service?.stop();
      await reader?.close();
      await Promise.all([relay?.stop(), fcm?.stop()]);
      await redis?.stop();
      rmSync(dataDir, { recursive: true, force: true });
      clock?.remove();
    });
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */

    test('the locale is stored with each device', async () => {
      const devices = await reader.listDevices(pedro.pubkey);
      assert.deepEqual(devices.map((d) => [d.token, d.locale]).sort(), [
        ['pedro-iphone', 'ja'],
        ['pedro-phone', 'pt-BR'],
      ]);
      assert.equal((await reader.listDevices(emma.pubkey))[0]?.locale, undefined);
      const listed = (await userGet(pedro, '/v1/devices')).devices as Array<{ locale?: string }>;
      assert.deepEqual(listed.map((d) => d.locale).sort(), ['ja', 'pt-BR']);
    });

    test("a like: Pedro's pt-BR phone reads Portuguese, his ja iPhone Japanese, Emma's phone the English bytes", async () => {
      const forPedro = likeOf(ana, pedro, 'pedro-vine');
      const forEmma = likeOf(ana, emma, 'emma-vine');
      await publish(relay.url, forPedro, forEmma);
      const [phone, iphone, english] = await Promise.all([
        pushFor('pedro-phone', forPedro.id),
        pushFor('pedro-iphone', forPedro.id),
        pushFor('emma-phone', forEmma.id),
      ]);
      assert.equal(phone.body.message.data.title, 'Nova curtida');
      assert.equal(phone.body.message.data.body, 'Ana curtiu sua publicação');
      assert.deepEqual(phone.body.message.apns?.payload.aps.alert, { title: 'Nova curtida', body: 'Ana curtiu sua publicação' });
      assert.equal(iphone.body.message.data.body, 'Anaがあなたの投稿にいいねしました');
      const expected = notificationCopy('like', 'Ana');
      assert.equal(english.body.message.data.title, expected.title);
      assert.equal(english.body.message.data.body, expected.body);
      assert.equal(english.body.message.data.body, 'Ana liked your post');
      // Everything but the copy is the same push.
      const { title: _t1, body: _b1, ...phoneRest } = phone.body.message.data;
      const { title: _t2, body: _b2, ...iphoneRest } = iphone.body.message.data;
      assert.deepEqual(phoneRest, iphoneRest);
      assert.deepEqual(Object.keys(phone.body.message.data), Object.keys(english.body.message.data));
    });

    test('throttle 2 an hour: of four likes five minutes apart, two are pushed; the inbox counts all four and shows two withheld', async () => {
      await outboundDrained();
      // Four likes five minutes apart need 15 minutes of one clock hour.
      if (clock.nowMs() % HOUR_MS > 40 * MINUTE_MS) await clock.advance(HOUR_MS - (clock.nowMs() % HOUR_MS) + MINUTE_MS, [service]);
      const likes: NostrEvent[] = [];
      for (const [i, liker] of taraLikers.entries()) {
        // Each like settled first: a jump of the clock must not expire the lease of one in flight.
        if (i > 0) {
          await outboundDrained();
          await clock.advance(5 * MINUTE_MS, [service]);
        }
        const like = likeOf(liker, tara, `tara-vine-${i}`);
        likes.push(like);
        await publish(relay.url, like);
        await eventually(
          async () => ((await reader.readInboxCounts(tara.pubkey)).types.like.total === i + 1 ? true : undefined),
          WAIT_MS,
          `like ${i + 1} counted`,
        );
      }
      await eventually(
        async () => ((await reader.readThrottleWindow(tara.pubkey, THROTTLE_WINDOW_SECS)).withheld === 2 ? true : undefined),
        WAIT_MS,
        'two likes withheld',
      );
      await eventually(() => (messagesTo('tara-phone').length >= THROTTLE ? true : undefined), WAIT_MS, 'two pushes');
      await outboundDrained();
      assert.deepEqual(
        messagesTo('tara-phone').map((m) => m.body.message.data.eventId),
        likes.slice(0, THROTTLE).map((l) => l.id),
      );

      const counts = await userGet(tara, '/v1/inbox/counts');
      assert.deepEqual((counts.types as Record<string, unknown>).like, { total: 4, viewed: 0, new: 4 });
      assert.equal(counts.totalNew, 4);
      const windowStart = Math.floor(clock.nowMs() / HOUR_MS) * HOUR_MS;
      assert.deepEqual(counts.throttled, {
        limit: THROTTLE,
        pushed: 2,
        withheld: 2,
        windowStart: new Date(windowStart).toISOString(),
        windowEnd: new Date(windowStart + HOUR_MS).toISOString(),
      });

      await eventually(
        async () => ((await reader.readDeliveryLog(DEFAULT_APP_ID, { recipient: tara.pubkey, limit: 20 })).length === 4 ? true : undefined),
        WAIT_MS,
        'four delivery log entries',
      );
      const log = await reader.readDeliveryLog(DEFAULT_APP_ID, { recipient: tara.pubkey, limit: 20 });
      assert.deepEqual(
        log.map((e) => [e.notificationId, e.status, e.error ?? null]),
        [
          [likes[0]?.id, 'sent', null],
          [likes[1]?.id, 'sent', null],
          [likes[2]?.id, 'suppressed', 'throttled'],
          [likes[3]?.id, 'suppressed', 'throttled'],
        ],
      );
    });
  });
}
