/**
 * End to end for new-post bells: the real binary, a real relay, the FCM fake, nostr-tools clients,
 * on each store adapter. Subscribers bell a creator with NIP-51 notify lists; the creator's videos
 * reach each of them once (the mentioned one as a mention), edits re-announce nothing, the rate
 * window holds, an unbell is honoured, a fresh store is rebuilt from the relay's lists, and a
 * process killed with SIGKILL in the middle of a 5,000-watcher fan-out loses no watcher.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { PEOPLE_LIST, REGISTER_TOKEN, VIDEO } from '../../src/nostr/kinds.ts';
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
import { DELIVERY_WINDOW } from '../../src/roles/roles.ts';
import { eventually, startServiceProcess, type LogLine, type ServiceProcess } from '../support/service-process.ts';

const now = () => Math.floor(Date.now() / 1000);
/** Watchers of the crash test, and its fan-out shape: 50 pages of 100 (the concurrency key is no longer used). */
const CRASH_WATCHERS = 5_000;
const PAGE_SIZE = 100;
const CONCURRENCY = 10;
/** Short, so a killed worker's page (and its in-flight claims, half as long) return within seconds. */
const LEASE_SECS = 4;
/** FCM latency while the crash test's fan-out runs, so the kill lands mid fan-out. */
const SLOW_FCM_MS = 30;

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`new-post bells end to end (${adapter})`, () => {
    let relay: TestRelay;
    let fcm: FcmFake;
    let redis: PrivateRedisServer | undefined;
    let dataDir: string;
    let storeUrl: string;
    let env: Record<string, string>;
    let reader: StorePort;
    let service: ServiceProcess;
    let messagesBeforeWipe = 0;
    const serviceKey = makeUser();
    const alice = makeUser();
    const bob = makeUser();
    const carol = makeUser();
    const dave = makeUser();
    const erin = makeUser();

    const messagesFor = (token: string, eventId?: string): ReceivedMessage[] =>
      fcm.messages.filter((m) => m.token === token && (eventId === undefined || m.body.message.data.eventId === eventId));
    const typesFor = (token: string, eventId: string): string[] => messagesFor(token, eventId).map((m) => m.body.message.data.type ?? '');
    const sign = (user: TestUser, kind: number, tags: string[][], createdAt = now()) =>
      signEvent({ kind, created_at: createdAt, tags, content: '' }, user.secret);
    const notifyList = (user: TestUser, creators: string[], createdAt: number) =>
      sign(user, PEOPLE_LIST, [['d', 'notify'], ['title', 'Notify'], ...creators.map((c) => ['p', c])], createdAt);
    const video = (user: TestUser, d: string, tags: string[][] = [], createdAt = now()) =>
      sign(user, VIDEO, [['d', d], ['title', d], ...tags], createdAt);
    const tokenOf = (user: TestUser) => `${user.pubkey.slice(0, 12)}-phone`;
    const openReader = () =>
      adapter === 'redis' ? openRedisStore({ url: storeUrl }) : openSqliteStore({ path: join(dataDir, 'nostr-push.sqlite') });
    const start = async () => {
      service = await startServiceProcess({ env });
      await service.waitForLog((l) => l.msg === 'live subscriptions open' && l.relay === relay.url, 15_000, 'the relay live');
    };
    const register = async (user: TestUser) => {
      await publish(relay.url, controlEvent(user, REGISTER_TOKEN, { token: tokenOf(user) }, serviceKey.pubkey));
      await eventually(
        async () => ((await reader.tokenOwner(tokenOf(user))) === user.pubkey ? true : undefined),
        15_000,
        `${tokenOf(user)} registered`,
      );
    };
    const watching = (creator: TestUser, subscriber: TestUser, expected: boolean) =>
      eventually(
        async () => ((await reader.isNotifyWatcher(creator.pubkey, subscriber.pubkey)) === expected ? true : undefined),
        15_000,
        `watcher ${expected}`,
      );
    /** The fan-out of `event` walked its last page (the service says so at debug level). */
    const fanoutDone = (event: NostrEvent, timeoutMs = 15_000): Promise<LogLine> =>
      service.waitForLog(
        (l) => l.msg === 'fan-out page completed' && l.eventId === event.id && l.next === '0',
        timeoutMs,
        `the fan-out of ${event.id}`,
      );

    /** Bells are queued by the fan-out and sent by the delivery stage: wait until the outbound queue holds nothing. */
    const outboundSettled = (): Promise<true> =>
      eventually(
        async () => {
          const stats = await reader.queueStats('outbound');
          return stats.ready + stats.leased === 0 ? true : undefined;
        },
        15_000,
        'the outbound queue drained',
      );

    before(async () => {
      relay = await startTestRelay();
      fcm = await startFcmFake();
      dataDir = mkdtempSync(join(tmpdir(), `np-bells-${adapter}-`));
      storeUrl = `sqlite:${join(dataDir, 'nostr-push.sqlite')}`;
      if (adapter === 'redis') {
        redis = await startRedisServer();
        storeUrl = redis.url;
      }
      env = {
        NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: serviceKey.secret,
        NOSTR_PUSH__NOSTR__RELAYS: relay.url,
        NOSTR_PUSH__NOSTR__QUERY_TIMEOUT_SECS: '1',
        NOSTR_PUSH__STORE__URL: storeUrl,
        NOSTR_PUSH__DATA_DIR: dataDir,
        NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
        NOSTR_PUSH__SERVICE__NEW_POST_FANOUT_POLL_MILLIS: '20',
        NOSTR_PUSH__SERVICE__NEW_POST_FANOUT_PAGE_SIZE: String(PAGE_SIZE),
        NOSTR_PUSH__SERVICE__NEW_POST_DELIVERY_CONCURRENCY: String(CONCURRENCY),
        NOSTR_PUSH__SERVICE__NEW_POST_FANOUT_LEASE_SECS: String(LEASE_SECS),
        // The killed process's leased outbound items (its delivery window) return as quickly.
        NOSTR_PUSH__QUEUE__LEASE_SECS: String(LEASE_SECS),
        NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: fcm.writeCredentials(dataDir),
        NOSTR_PUSH__FIREBASE__PROJECT_ID: 'fake-project',
        NOSTR_PUSH__FIREBASE__API_BASE_URL: fcm.baseUrl,
      };
      await start();
      reader = await openReader();
      for (const user of [bob, carol, dave]) await register(user);
    });

    after(async () => {
      /* eslint-disable @typescript-eslint/no-unnecessary-condition -- before() can fail before it assigns these. */
      await service?.stop();
      await reader?.close();
      await Promise.all([relay?.stop(), fcm?.stop()]);
      await redis?.stop();
      rmSync(dataDir, { recursive: true, force: true });
      /* eslint-enable @typescript-eslint/no-unnecessary-condition */
    });

    test('/health reports the new_post_fanout task', async () => {
      const health = (await (await fetch(`${service.baseUrl}/health`)).json()) as { tasks: Record<string, boolean> };
      assert.equal(health.tasks.new_post_fanout, true);
    });

    test('three subscribers bell a creator; the mentioned one gets one mention, the others one bell each', async () => {
      const listsAt = now() - 60;
      await publish(relay.url, ...[bob, carol, dave].map((user) => notifyList(user, [alice.pubkey], listsAt)));
      for (const user of [bob, carol, dave]) await watching(alice, user, true);

      const first = video(alice, 'first-vine', [['p', bob.pubkey]]);
      await publish(relay.url, first);
      await fanoutDone(first);
      for (const user of [bob, carol, dave])
        await eventually(() => (messagesFor(tokenOf(user), first.id).length > 0 ? true : undefined), 15_000, 'the mention and the bells');
      await outboundSettled();
      assert.deepEqual(typesFor(tokenOf(bob), first.id), ['mention']);
      assert.deepEqual(typesFor(tokenOf(carol), first.id), ['newPost']);
      assert.deepEqual(typesFor(tokenOf(dave), first.id), ['newPost']);
      const bellData = messagesFor(tokenOf(carol), first.id)[0]?.body.message.data;
      assert.equal(bellData?.title, 'New vine');
      assert.match(bellData.body ?? '', / posted a new vine$/);
      assert.equal(bellData.referencedAddress, `${VIDEO}:${alice.pubkey}:first-vine`);

      // An edit of the same video (same d tag, a new event) is not a new post for anyone. The
      // records are written once each send is answered, a moment after the fake saw the push.
      const delivered = (user: TestUser, type: string) => ({ type, owner: alice.pubkey, dTag: 'first-vine', recipient: user.pubkey });
      for (const [user, type] of [
        [bob, 'mention'],
        [bob, 'newPost'],
        [carol, 'newPost'],
        [dave, 'newPost'],
      ] as const) {
        await eventually(
          async () => ((await reader.hasVideoRecord(delivered(user, type))) ? true : undefined),
          15_000,
          `the ${type} record`,
        );
      }
      // A later created_at: a relay keeps only the newest version of an addressable event.
      const edit = video(
        alice,
        'first-vine',
        [
          ['p', bob.pubkey],
          ['summary', 'edited'],
        ],
        first.created_at + 1,
      );
      assert.notEqual(edit.id, first.id);
      await publish(relay.url, edit);
      await fanoutDone(edit);
      await outboundSettled();
      for (const user of [bob, carol, dave]) assert.deepEqual(typesFor(tokenOf(user), edit.id), [], 'the edit re-announces nothing');
    });

    test('a second video within the hour is rate-limited for those already belled; a mention opened no bell window', async () => {
      const second = video(alice, 'second-vine');
      await publish(relay.url, second);
      await fanoutDone(second);
      await eventually(() => (messagesFor(tokenOf(bob), second.id).length > 0 ? true : undefined), 15_000, 'bob’s bell');
      await outboundSettled();
      assert.deepEqual(typesFor(tokenOf(bob), second.id), ['newPost']);
      assert.equal(messagesFor(tokenOf(carol), second.id).length, 0);
      assert.equal(messagesFor(tokenOf(dave), second.id).length, 0);
    });

    test('a subscriber who unbells gets nothing for the next video', async () => {
      await publish(relay.url, notifyList(carol, [], now()));
      await watching(alice, carol, false);
      await register(erin);
      await publish(relay.url, notifyList(erin, [alice.pubkey], now() - 30));
      await watching(alice, erin, true);

      const third = video(alice, 'third-vine');
      await publish(relay.url, third);
      await fanoutDone(third);
      await eventually(() => (messagesFor(tokenOf(erin), third.id).length > 0 ? true : undefined), 15_000, 'erin’s bell');
      await outboundSettled();
      assert.deepEqual(typesFor(tokenOf(erin), third.id), ['newPost']);
      assert.equal(messagesFor(tokenOf(carol), third.id).length, 0, 'unbelled');
    });

    test('a fresh store is rebuilt from the relay’s notify lists by the historical replay', async () => {
      await service.stop();
      // A total loss forgets every claim, and the live subscription looks back an hour: the
      // videos above are announced again after the wipe, which the last test allows for.
      messagesBeforeWipe = fcm.messages.length;
      await reader.close();
      if (redis) {
        const raw = new Redis(storeUrl);
        await raw.flushall();
        await raw.quit();
      } else {
        for (const suffix of ['', '-wal', '-shm']) rmSync(join(dataDir, `nostr-push.sqlite${suffix}`), { force: true });
      }
      await start();
      reader = await openReader();
      // The rebuild is the replay's work: wait for the service to say the replay is done and for
      // what it queued to be handled, with bounds only a hang reaches (a loaded machine is slow).
      await service.waitForLog((l) => l.msg === 'historical replay done' && l.relay === relay.url, 60_000, 'the historical replay');
      await eventually(
        async () => {
          const inbound = await reader.queueStats('inbound');
          return inbound.ready + inbound.leased === 0 ? true : undefined;
        },
        60_000,
        'the replayed events handled',
      );
      for (const user of [bob, dave, erin]) await watching(alice, user, true);
      assert.equal(await reader.isNotifyWatcher(alice.pubkey, carol.pubkey), false, 'her newest list is the empty one');
      assert.deepEqual((await reader.notifySubscriptions(bob.pubkey)).sort(), [alice.pubkey]);
    });

    test(`SIGKILL in the middle of a ${CRASH_WATCHERS}-watcher fan-out: after a restart every watcher has one push, at most two for the bells the killed process held`, async (t) => {
      const frank = makeUser();
      const watchers = Array.from({ length: CRASH_WATCHERS }, (_, i) => `${i.toString(16).padStart(8, '0')}${'d'.repeat(56)}`);
      const listId = 'ab'.repeat(32);
      // Written straight into the store while the service is stopped: cheaper than 5,000
      // registrations and lists through the relay, and no second writer on a SQLite file.
      await service.stop();
      for (const watcher of watchers) {
        await reader.registerToken(watcher, { token: `crash-${watcher.slice(0, 8)}`, transport: 'fcm' });
        await reader.replaceNotifySubscriptions({ subscriber: watcher, creators: [frank.pubkey], createdAt: now(), eventId: listId });
      }
      await start();
      fcm.setLatency(SLOW_FCM_MS);
      const crashVideo = video(frank, 'big-vine');
      const pushesFor = () => fcm.messages.filter((m) => m.body.message.data.eventId === crashVideo.id);
      const baseline = fcm.messages.length;
      await publish(relay.url, crashVideo);
      await fcm.waitForMessages(baseline + CRASH_WATCHERS / 5, 60_000);
      await service.kill();
      const beforeCrash = pushesFor().length;
      assert.ok(beforeCrash < CRASH_WATCHERS, `killed mid fan-out (${beforeCrash} pushed)`);

      fcm.setLatency(0);
      await start();
      await fanoutDone(crashVideo, 90_000);
      // The pages only queue bells: the delivery stage sends them, the killed process's leased ones after their lease.
      await eventually(
        async () => {
          const stats = await reader.queueStats('outbound');
          return stats.ready + stats.leased === 0 ? true : undefined;
        },
        90_000,
        'every queued bell settled',
      );
      const counts = new Map<string, number>();
      for (const m of pushesFor()) counts.set(m.token, (counts.get(m.token) ?? 0) + 1);
      const missing = watchers.filter((w) => !counts.has(`crash-${w.slice(0, 8)}`));
      assert.deepEqual(missing, [], 'no watcher lost');
      const twice = [...counts.values()].filter((n) => n === 2).length;
      assert.ok(
        [...counts.values()].every((n) => n <= 2),
        'nobody pushed more than twice',
      );
      // At-least-once: only bells the killed delivery stage held (sent, not yet acknowledged) can go out twice.
      assert.ok(twice <= DELIVERY_WINDOW, `only bells the killed delivery stage held went out twice (${twice})`);
      assert.equal(counts.size, CRASH_WATCHERS);
      t.diagnostic(`killed after ${beforeCrash} pushes; ${twice} watchers pushed twice`);
    });

    test('exactly one message per (event, token) for the small cast, before the store was wiped and after', () => {
      for (const messages of [fcm.messages.slice(0, messagesBeforeWipe), fcm.messages.slice(messagesBeforeWipe)]) {
        const counts = new Map<string, number>();
        for (const m of messages) {
          if (m.token.startsWith('crash-')) continue;
          const key = `${m.body.message.data.eventId}:${m.token}`;
          counts.set(key, (counts.get(key) ?? 0) + 1);
        }
        assert.deepEqual(
          [...counts].filter(([, n]) => n > 1),
          [],
        );
      }
    });
  });
}
