/**
 * `nostr-push store migrate-layout --from divine --to cluster` (issue 18) on a store filled by the
 * end-to-end scenario: the real binary on one Redis in the divine layout takes registrations, a
 * like, a burst of likes (left buffered in its coalescing group), a bell fan-out and an ntfy
 * message; the port adds what the scenario does not reach (API keys, a scheduled send, alert
 * words, an announcement, quiet hours with a held digest, filters, a NIP-9a callback, a dead
 * letter, the delivery log, another app's view). With the fleet stopped, the command copies it
 * into a real three-master Redis Cluster; the port then gives the same answers from the cluster
 * as from the single Redis, a second run copies nothing, and the sequences continue.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REACTION, REGISTER_TOKEN, VIDEO } from '../../src/nostr/kinds.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import type { NostrEvent } from '../../src/nostr/event.ts';
import type { StorePort } from '../../src/store/port.ts';
import { dmPushWindowKey } from '../../src/engine/events/gift-wraps.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { coalesceBucket, coalesceGroupId } from '../../src/store/port-coalesce.ts';
import { controlEvent, makeUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { startRedisCluster, type PrivateRedisCluster } from '../support/redis-cluster.ts';
import { startFcmFake, type FcmFake } from '../support/fcm-fake.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { queuesDrained } from '../support/queues.ts';

const BIN = fileURLToPath(new URL('../../bin/nostr-push.js', import.meta.url));
/** Upper bounds only a hang reaches. */
const WAIT_MS = 60_000;
const WATCHERS = 300;
const WINDOW_SECS = 600;
const IMMEDIATE_LIMIT = 2;
const OTHER_APP_PREFIX = 'app:clips:';
const nowSecs = () => Math.floor(Date.now() / 1000);

function run(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

const sorted = <T>(values: T[], keyOf: (value: T) => string = (v) => JSON.stringify(v)): T[] =>
  [...values].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));

describe('store migrate-layout: a divine store filled end to end, copied into a Redis Cluster', () => {
  let source: PrivateRedisServer;
  let cluster: PrivateRedisCluster;
  let relay: TestRelay;
  let fcm: FcmFake;
  let service: ServiceProcess | undefined;
  let root: string;
  const serviceKey = makeUser();
  const alice = makeUser();
  const bob = makeUser();
  const frank = makeUser();
  const watchers = Array.from({ length: WATCHERS }, (_, i) => `${i.toString(16).padStart(8, '0')}${'e'.repeat(56)}`);
  const likers = Array.from({ length: 6 }, () => makeUser());
  const topic = `mig${'T'.repeat(13)}`;
  const burstGroupIn = (nowSecsThen: number): string =>
    coalesceGroupId('like', alice.pubkey, `a:${VIDEO}:${alice.pubkey}:popular`, coalesceBucket(nowSecsThen, WINDOW_SECS));
  // The service buckets by its own clock, so the burst may land in the window after the one open when it was
  // published; the group is whichever of the two holds it (read before and after the move by the same id).
  let burstGroup = '';
  const users = [alice.pubkey, bob.pubkey, frank.pubkey, ...watchers.slice(0, 10), ...likers.map((l) => l.pubkey)];
  const tokens = ['alice-phone', 'bob-phone', ...watchers.slice(0, 10).map((w) => `w-${w.slice(0, 10)}`)];

  const likeOn = (liker: { secret: string }, videoId: string, dTag: string): NostrEvent =>
    signEvent(
      {
        kind: REACTION,
        created_at: nowSecs(),
        tags: [
          ['e', videoId],
          ['a', `${VIDEO}:${alice.pubkey}:${dTag}`],
          ['p', alice.pubkey],
          ['k', String(VIDEO)],
        ],
        content: '+',
      },
      liker.secret,
    );

  /** What the port answers about everything the scenario wrote, in a form to compare. */
  async function answers(store: StorePort, other: StorePort): Promise<Record<string, unknown>> {
    const watcherPages: string[] = [];
    let cursor = '0';
    do {
      const page = await store.notifyWatchersPage(frank.pubkey, cursor, 100);
      watcherPages.push(...page.watchers);
      cursor = page.nextCursor;
    } while (cursor !== '0');
    return {
      devices: await Promise.all(users.map(async (u) => sorted(await store.listDevices(u), (d) => d.token))),
      owners: await Promise.all(tokens.map((t) => store.tokenOwner(t))),
      activity: await Promise.all(tokens.map((t) => store.tokenActivityMs(t))),
      byTransport: await store.countTokensByTransport(),
      recipients: await store.readRecipients(users),
      preferences: await Promise.all(users.map((u) => store.getPreferences(u))),
      subscriptions: await Promise.all(users.map(async (u) => sorted(await store.notifySubscriptions(u)))),
      watchers: sorted([...new Set(watcherPages)]),
      inbox: await Promise.all(users.map((u) => store.readInboxCounts(u))),
      badges: await store.readInboxBadges(users),
      alertWords: await Promise.all(users.map(async (u) => sorted(await store.readAlertWords(u)))),
      alertWatchers: [...(await store.alertWordWatchers(['bitcoin', 'nostr']))].map(([w, ws]) => [w, sorted(ws)]),
      announcements: await store.activeAnnouncements(),
      quietHours: await store.readQuietHours(users),
      filters: await store.getSocialFilters(users),
      coalesceGroup: await store.readCoalesceGroup(burstGroup),
      relayCursor: await store.getRelayCursor(relay.url),
      ntfy: await store.readNtfyMessages([topic], null, 100),
      ntfyHead: await store.ntfyHeadId(),
      queues: await Promise.all((['inbound', 'outbound', 'nip9a'] as const).map((q) => store.queueStats(q))),
      dead: await store.listDeadPage('outbound', { limit: 50 }),
      fanoutJobs: await store.fanoutJobStats(),
      apiKeys: await store.listApiKeys(null),
      send: await store.getSend('default', 'later-1'),
      log: await store.readDeliveryLog('default', { limit: 100 }),
      logOfBob: await store.readDeliveryLog('default', { recipient: bob.pubkey, limit: 100 }),
      callbacks: await store.listNip9aCallbacks(alice.pubkey),
      otherAppDevices: await other.listDevices(alice.pubkey),
    };
  }

  before(async () => {
    [source, cluster, relay, fcm] = await Promise.all([
      startRedisServer(),
      startRedisCluster({ masters: 3 }),
      startTestRelay(),
      startFcmFake(),
    ]);
    root = mkdtempSync(join(tmpdir(), 'np-migrate-e2e-'));
    service = await startServiceProcess({
      env: {
        ...fcm.serviceEnv(root),
        NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: serviceKey.secret,
        NOSTR_PUSH__NOSTR__RELAYS: relay.url,
        NOSTR_PUSH__NOSTR__QUERY_TIMEOUT_SECS: '1',
        NOSTR_PUSH__STORE__URL: source.url,
        NOSTR_PUSH__DATA_DIR: root,
        NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
        NOSTR_PUSH__SERVICE__COALESCE_WINDOW_SECS: String(WINDOW_SECS),
        NOSTR_PUSH__SERVICE__COALESCE_IMMEDIATE_LIMIT: String(IMMEDIATE_LIMIT),
        NOSTR_PUSH__SERVICE__NEW_POST_FANOUT_POLL_MILLIS: '20',
        NOSTR_PUSH__SERVICE__RECIPIENT_THROTTLE_CAPACITY: '100000',
        NOSTR_PUSH__NTFY__VISITOR_EXEMPT_HOSTS: '127.0.0.1,::1',
      },
    });
    await service.waitForLog((l) => l.msg === 'live subscriptions open' && l.relay === relay.url, WAIT_MS, 'the listener live');
  });

  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- before() can fail before it assigns these. */
  after(async () => {
    await service?.stop();
    await Promise.all([relay?.stop(), fcm?.stop(), source?.stop(), cluster?.stop()]);
    if (root) rmSync(root, { recursive: true, force: true });
  });
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */

  test('the same answers from the port before and after, a second run copies nothing, sequences continue', async () => {
    const divine = await openRedisStore({ url: source.url });
    const divineOther = await openRedisStore({ url: source.url, keyPrefix: OTHER_APP_PREFIX });
    try {
      // The end-to-end scenario, through the relay and the binary.
      const registrations: NostrEvent[] = [];
      for (const [user, token] of [
        [alice, 'alice-phone'],
        [bob, 'bob-phone'],
      ] as const) {
        const registration = controlEvent(user, REGISTER_TOKEN, { token }, serviceKey.pubkey);
        registrations.push(registration);
        await publish(relay.url, registration);
        await eventually(async () => ((await divine.tokenOwner(token)) === user.pubkey ? true : undefined), WAIT_MS, `${token} registered`);
      }
      await publish(relay.url, likeOn(bob, 'aa'.repeat(32), 'first-vine'));
      await eventually(() => (fcm.messages.length >= 1 ? true : undefined), WAIT_MS, 'the like pushed');
      const burstPublishedAt = nowSecs();
      await publish(relay.url, ...likers.map((liker) => likeOn(liker, 'cc'.repeat(32), 'popular')));
      burstGroup = await eventually(
        async () => {
          for (const candidate of new Set([burstGroupIn(burstPublishedAt), burstGroupIn(nowSecs())])) {
            if ((await divine.readCoalesceGroup(candidate))?.pending === likers.length - IMMEDIATE_LIMIT) return candidate;
          }
          return undefined;
        },
        WAIT_MS,
        'the rest of the burst buffered',
      );
      for (const watcher of watchers) {
        await divine.registerToken(watcher, { token: `w-${watcher.slice(0, 10)}`, transport: 'fcm' });
        await divine.replaceNotifySubscriptions({
          subscriber: watcher,
          creators: [frank.pubkey],
          createdAt: nowSecs(),
          eventId: 'ee'.repeat(32),
        });
      }
      const posted = signEvent(
        {
          kind: VIDEO,
          created_at: nowSecs(),
          tags: [
            ['d', 'big-vine'],
            ['title', 'big-vine'],
          ],
          content: '',
        },
        frank.secret,
      );
      await publish(relay.url, posted);
      await eventually(
        () =>
          new Set(fcm.messages.filter((m) => m.body.message.data.eventId === posted.id).map((m) => m.token)).size === WATCHERS
            ? true
            : undefined,
        WAIT_MS,
        'every watcher belled',
      );
      const published = await fetch(`${(service as ServiceProcess).baseUrl}/${topic}`, { method: 'POST', body: 'before the move' });
      assert.equal(published.status, 200, await published.clone().text());
      await queuesDrained(divine, WAIT_MS);
      await (service as ServiceProcess).stop();
      service = undefined;

      // What the scenario does not reach, through the port.
      await divine.createApiKey({ id: 'key-1', appId: 'default', role: 'send', hash: 'ab'.repeat(32), prefix: 'np_live_ab' });
      await divine.createSend(
        {
          appId: 'default',
          id: 'later-1',
          request: { recipients: [bob.pubkey], type: 'payout', title: 'Later', body: '21 sats', data: {}, priority: 'normal' },
          sendAtMs: divine.clock.nowMs() + 3_600_000,
        },
        86_400,
        null,
      );
      // An owned event claim on an id ending in a pubkey (the gift-wrap push window, issue 42):
      // its value ("1:" and the owner) must still tell the copy it is an event claim.
      await divine.claimEvent(dmPushWindowKey(bob.pubkey), 600, 'work-owner-1');
      await divine.replaceAlertWords(bob.pubkey, ['bitcoin', 'nostr']);
      await divine.replaceAlertWords(alice.pubkey, ['nostr']);
      await divine.publishAnnouncement('maintenance tonight', divine.clock.nowMs() + 86_400_000);
      await divine.setQuietHours(bob.pubkey, { startMinute: 1320, endMinute: 420, urgentTypes: ['directMessage'] });
      await divine.holdForDigest(bob.pubkey, 'like', divine.clock.nowMs() + 3_600_000);
      await divine.setSocialFilters(alice.pubkey, { mutedPubkeys: [bob.pubkey], onlyFollowing: null });
      await divine.createNip9aCallback({
        id: 'cb-1',
        secretHash: 'cd'.repeat(32),
        secretHint: 'cdcd',
        owner: alice.pubkey,
        relay: 'wss://community.example/',
        createdAtMs: divine.clock.nowMs(),
      });
      await divine.appendDeliveryLog([
        {
          appId: 'default',
          notificationId: 'n-1',
          recipient: bob.pubkey,
          type: 'payout',
          status: 'sent',
          transport: 'fcm',
          tokenPrefix: 'bob-ph',
          latencyMs: 12,
        },
        { appId: 'default', notificationId: 'n-1', recipient: alice.pubkey, type: 'payout', status: 'failed', error: 'unregistered' },
      ]);
      await divine.enqueue('outbound', { id: 'poison-1', payload: { id: 'poison-1' } });
      const [leased] = await divine.lease('outbound', { max: 1, leaseMs: 60_000, maxAttempts: 5 });
      assert.ok(leased, 'the poison item leased');
      await divine.deadLetter('outbound', leased.id, leased.leaseToken, 'poison');
      await divineOther.registerToken(alice.pubkey, { token: 'alice-clips', transport: 'fcm' });

      const before = await answers(divine, divineOther);
      assert.equal((before.watchers as string[]).length, WATCHERS, 'the fan-out watchers are in the source');
      assert.notEqual(before.coalesceGroup, null, 'a coalescing group is in flight');

      const env = { NOSTR_PUSH__STORE__URL: cluster.url, NOSTR_PUSH__DATA_DIR: root, LOG_LEVEL: 'warn' };
      const args = ['store', 'migrate-layout', '--from', 'divine', '--to', 'cluster', '--source', source.url];
      const first = await run(args, env);
      assert.equal(first.status, 0, `the first run verifies: ${first.stdout}${first.stderr}`);
      assert.match(first.stdout, /migration done and verified/);
      assert.match(first.stdout, /default user_tokens: \d+ keys/, 'families are reported');
      assert.match(first.stdout, /app:clips: user_tokens: 1 keys/, "the other app's view is copied");

      const clustered = await openRedisStore({ url: cluster.url });
      const clusteredOther = await openRedisStore({ url: cluster.url, keyPrefix: OTHER_APP_PREFIX });
      try {
        assert.deepEqual(await answers(clustered, clusteredOther), before, 'the port answers the same from the cluster');

        const second = await run(args, env);
        assert.equal(second.status, 0, `the second run verifies: ${second.stdout}${second.stderr}`);
        assert.match(second.stdout, /default queues: done by an earlier run/, 'a finished family is skipped');
        assert.deepEqual(await answers(clustered, clusteredOther), before, 'a second run changes nothing');

        // Sequences and claims carry over: new ids go on from the old ones, taken claims stay taken.
        const announced = await clustered.publishAnnouncement('after the move', clustered.clock.nowMs() + 86_400_000);
        const oldIds = (before.announcements as Array<{ id: number }>).map((a) => a.id);
        assert.ok(announced.id > Math.max(...oldIds), `a new announcement id (${announced.id}) follows the old (${oldIds.join(',')})`);
        assert.equal(
          await clustered.claimRecipientDelivery(posted.id, watchers[0] as string, 600),
          null,
          "a watcher's bell claim is still taken",
        );
        assert.equal(
          await clustered.claimEvent((registrations[0] as NostrEvent).id, 600),
          false,
          "a registration's event claim is still taken",
        );
        assert.equal(
          await clustered.claimEvent(dmPushWindowKey(bob.pubkey), 600, 'work-owner-1'),
          true,
          'an owned event claim keeps its owner',
        );
        assert.equal(await clustered.claimEvent(dmPushWindowKey(bob.pubkey), 600, 'work-owner-2'), false, 'and is refused to another');
      } finally {
        await Promise.all([clustered.close(), clusteredOther.close()]);
      }
    } finally {
      await Promise.all([divine.close(), divineOther.close()]);
    }
  });

  test('a target with foreign data is refused, and usage mistakes exit 2', async () => {
    const env = { NOSTR_PUSH__STORE__URL: 'sqlite::memory:', NOSTR_PUSH__DATA_DIR: root, LOG_LEVEL: 'warn' };
    const foreign = await startRedisServer();
    try {
      const writer = await openRedisStore({ url: foreign.url, layout: 'cluster' });
      await writer.registerToken(alice.pubkey, { token: 'someone-else', transport: 'fcm' });
      await writer.close();
      const refused = await run(
        ['store', 'migrate-layout', '--from', 'divine', '--to', 'cluster', '--source', source.url, '--target', foreign.url],
        env,
      );
      assert.equal(refused.status, 1, refused.stdout + refused.stderr);
      assert.match(refused.stderr, /holds \d+ keys and no progress of an earlier migration/);
    } finally {
      await foreign.stop();
    }
    const wrongWay = await run(['store', 'migrate-layout', '--from', 'cluster', '--to', 'divine', '--source', source.url], env);
    assert.equal(wrongWay.status, 2, wrongWay.stderr);
    assert.match(wrongWay.stderr, /only --from divine --to cluster/);
    const noTarget = await run(['store', 'migrate-layout', '--from', 'divine', '--to', 'cluster', '--source', source.url], env);
    assert.equal(noTarget.status, 2, noTarget.stderr);
    assert.match(noTarget.stderr, /the configured store is SQLite/);
  });
});
