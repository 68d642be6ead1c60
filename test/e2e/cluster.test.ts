/**
 * End to end on a Redis Cluster (issue 18): three masters with one replica each, started by the
 * test, and the real binary with its roles split over three processes on it:
 *
 * - `ingest`: listener, engine and pusher (it also serves ntfy subscriptions);
 * - `work`: scheduler, delivery and janitor (fan-out pages, coalescing flushes, every send);
 * - `edge`: api (ntfy publishes).
 *
 * Register, a like, coalesced likes, a bell fan-out to 5,000 watchers and an ntfy topic are each
 * delivered exactly once. Time for coalescing is the test clock the processes share. (The
 * failover case, a master killed mid fan-out, is in this file's history: it does not pass yet.)
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { get, type ClientRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REACTION, REGISTER_TOKEN, VIDEO } from '../../src/nostr/kinds.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import type { NostrEvent } from '../../src/nostr/event.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { coalesceBucket, coalesceGroupId } from '../../src/store/port-coalesce.ts';
import { controlEvent, makeUser, type TestUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { startRedisCluster, type PrivateRedisCluster } from '../support/redis-cluster.ts';
import { startFcmFake, type FcmFake, type ReceivedMessage } from '../support/fcm-fake.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { TestClockFile } from '../support/test-clock.ts';
import { queuesDrained } from '../support/queues.ts';

/** Upper bounds only a hang reaches. */
const WAIT_MS = 60_000;
const FANOUT_WAIT_MS = 180_000;
/** Coalescing: a bucket of 10 s that only moves when the test moves the clock; 3 immediate pushes. */
const WINDOW_SECS = 10;
const IMMEDIATE_LIMIT = 3;
const FANOUT_WATCHERS = 5_000;
/** Short leases, so work a killed process held returns within seconds. */
const LEASE_SECS = 4;
/** Seeding writes in flight at once (auto-pipelined per node by the cluster client). */
const SEED_BATCH = 250;

const nowSecs = () => Math.floor(Date.now() / 1000);

/** One `/{topic}/json` stream: the messages it received, parsed. */
function streamTopic(baseUrl: string, topic: string): { messages: Array<{ event: string; message?: string }>; close(): void } {
  const messages: Array<{ event: string; message?: string }> = [];
  let request: ClientRequest | undefined;
  request = get(`${baseUrl}/${topic}/json`, (res) => {
    let buffered = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffered += chunk;
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (line.trim() !== '') messages.push(JSON.parse(line) as { event: string; message?: string });
      }
    });
  });
  request.on('error', () => undefined);
  return {
    messages,
    close: () => {
      request?.destroy();
      request = undefined;
    },
  };
}

describe('a fleet on a Redis Cluster: three masters with replicas, roles split over three processes', () => {
  let cluster: PrivateRedisCluster;
  let relay: TestRelay;
  let fcm: FcmFake;
  let root: string;
  let clock: TestClockFile;
  let reader: StorePort;
  let ingest: ServiceProcess;
  let work: ServiceProcess;
  let edge: ServiceProcess;
  const serviceKey = makeUser();
  const alice = makeUser();
  const bob = makeUser();
  const frank = makeUser();

  const messagesTo = (token: string): ReceivedMessage[] => fcm.messages.filter((m) => m.token === token);
  const isSummary = (m: ReceivedMessage): boolean => m.body.message.data.title === 'New likes';
  const likeOn = (liker: TestUser, owner: TestUser, videoId: string, dTag: string): NostrEvent =>
    signEvent(
      {
        kind: REACTION,
        created_at: nowSecs(),
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
  const video = (creator: TestUser, d: string): NostrEvent =>
    signEvent(
      {
        kind: VIDEO,
        created_at: nowSecs(),
        tags: [
          ['d', d],
          ['title', d],
        ],
        content: '',
      },
      creator.secret,
    );
  const everyProcess = () => [ingest, work, edge];

  /** `count` watchers of `creator`, each with one FCM token, written straight into the store. */
  async function seedWatchers(creator: TestUser, prefix: string, count: number): Promise<string[]> {
    const watchers = Array.from({ length: count }, (_, i) => `${i.toString(16).padStart(8, '0')}${prefix.repeat(56 / prefix.length)}`);
    const listId = prefix.repeat(64 / prefix.length);
    for (let start = 0; start < watchers.length; start += SEED_BATCH) {
      await Promise.all(
        watchers.slice(start, start + SEED_BATCH).map(async (watcher) => {
          await reader.registerToken(watcher, { token: `w-${watcher.slice(0, 10)}`, transport: 'fcm' });
          await reader.replaceNotifySubscriptions({
            subscriber: watcher,
            creators: [creator.pubkey],
            createdAt: nowSecs(),
            eventId: listId,
          });
        }),
      );
    }
    return watchers;
  }

  before(async () => {
    [cluster, relay, fcm] = await Promise.all([startRedisCluster({ masters: 3, replicasPerMaster: 1 }), startTestRelay(), startFcmFake()]);
    root = mkdtempSync(join(tmpdir(), 'np-cluster-e2e-'));
    // One second into a bucket, so "the current bucket" is unambiguous.
    clock = new TestClockFile(Math.floor(Date.now() / (WINDOW_SECS * 1000)) * WINDOW_SECS * 1000 + 1000);
    const envOf = (name: string, roles: string): Record<string, string> => {
      const dataDir = join(root, name);
      mkdirSync(dataDir, { recursive: true });
      return {
        ...clock.env(),
        ...fcm.serviceEnv(dataDir),
        NOSTR_PUSH__ROLES: roles,
        NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: serviceKey.secret,
        NOSTR_PUSH__NOSTR__RELAYS: relay.url,
        NOSTR_PUSH__NOSTR__QUERY_TIMEOUT_SECS: '1',
        NOSTR_PUSH__STORE__URL: cluster.url,
        NOSTR_PUSH__DATA_DIR: dataDir,
        NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
        NOSTR_PUSH__QUEUE__LEASE_SECS: String(LEASE_SECS),
        NOSTR_PUSH__SERVICE__COALESCE_WINDOW_SECS: String(WINDOW_SECS),
        NOSTR_PUSH__SERVICE__COALESCE_IMMEDIATE_LIMIT: String(IMMEDIATE_LIMIT),
        NOSTR_PUSH__SERVICE__COALESCE_POLL_MILLIS: '50',
        NOSTR_PUSH__SERVICE__COALESCE_GROUP_TTL_SECS: '600',
        NOSTR_PUSH__SERVICE__RECIPIENT_THROTTLE_CAPACITY: '100000',
        NOSTR_PUSH__SERVICE__RECIPIENT_DAILY_CAP: '100000',
        NOSTR_PUSH__SERVICE__NEW_POST_FANOUT_POLL_MILLIS: '20',
        NOSTR_PUSH__SERVICE__NEW_POST_FANOUT_PAGE_SIZE: '100',
        NOSTR_PUSH__SERVICE__NEW_POST_DELIVERY_CONCURRENCY: '10',
        NOSTR_PUSH__SERVICE__NEW_POST_FANOUT_LEASE_SECS: String(LEASE_SECS),
        NOSTR_PUSH__NTFY__VISITOR_EXEMPT_HOSTS: '127.0.0.1,::1',
      };
    };
    [ingest, work, edge] = await Promise.all([
      startServiceProcess({ env: envOf('ingest', 'listener,engine,pusher') }),
      startServiceProcess({ env: envOf('work', 'scheduler,delivery,janitor'), waitForHttp: false }),
      startServiceProcess({ env: envOf('edge', 'api') }),
    ]);
    await ingest.waitForLog((l) => l.msg === 'live subscriptions open' && l.relay === relay.url, WAIT_MS, 'the listener live');
    reader = await openRedisStore({ url: cluster.url });
  });

  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- before() can fail before it assigns these. */
  after(async () => {
    await Promise.all([ingest?.stop(), work?.stop(), edge?.stop()]);
    await reader?.close();
    await Promise.all([relay?.stop(), fcm?.stop()]);
    await cluster?.stop();
    clock?.remove();
    if (root) rmSync(root, { recursive: true, force: true });
  });
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */

  test('a registration through the relay lands in the cluster', async () => {
    for (const [user, token] of [
      [alice, 'alice-phone'],
      [bob, 'bob-phone'],
    ] as const) {
      await publish(relay.url, controlEvent(user, REGISTER_TOKEN, { token }, serviceKey.pubkey));
      await eventually(async () => ((await reader.tokenOwner(token)) === user.pubkey ? true : undefined), WAIT_MS, `${token} registered`);
    }
    assert.deepEqual(
      (await reader.listDevices(alice.pubkey)).map((device) => device.token),
      ['alice-phone'],
      'alice owns her one device',
    );
  });

  test('a like reaches its owner exactly once', async () => {
    const like = likeOn(bob, alice, 'aa'.repeat(32), 'first-vine');
    await publish(relay.url, like);
    await eventually(() => (messagesTo('alice-phone').length > 0 ? true : undefined), WAIT_MS, 'the like pushed');
    await queuesDrained(reader, WAIT_MS);
    const pushes = messagesTo('alice-phone').filter((m) => m.body.message.data.eventId === like.id);
    assert.equal(pushes.length, 1, 'one push for the like');
    assert.equal(pushes[0]?.body.message.data.type, 'like');
  });

  test(`coalesced likes: ${IMMEDIATE_LIMIT} immediate pushes and one summary of the rest`, async () => {
    const likers = Array.from({ length: 10 }, () => makeUser());
    const videoId = 'cc'.repeat(32);
    const before = messagesTo('alice-phone').length;
    await publish(relay.url, ...likers.map((liker) => likeOn(liker, alice, videoId, 'popular')));
    const bucket = coalesceBucket(clock.nowSecs(), WINDOW_SECS);
    const groupId = coalesceGroupId('like', alice.pubkey, `a:${VIDEO}:${alice.pubkey}:popular`, bucket);
    await eventually(
      async () => ((await reader.readCoalesceGroup(groupId))?.pending === likers.length - IMMEDIATE_LIMIT ? true : undefined),
      WAIT_MS,
      'the rest of the likes buffered',
    );
    const bucketEndMs = (bucket + 1) * WINDOW_SECS * 1000;
    await clock.advance(bucketEndMs - clock.nowMs() + 1000, everyProcess());
    await eventually(() => (messagesTo('alice-phone').slice(before).some(isSummary) ? true : undefined), WAIT_MS, 'the summary');
    await queuesDrained(reader, WAIT_MS);
    const received = messagesTo('alice-phone').slice(before);
    assert.equal(received.filter((m) => !isSummary(m)).length, IMMEDIATE_LIMIT, 'the immediate pushes');
    const summaries = received.filter(isSummary);
    assert.equal(summaries.length, 1, 'one summary');
    assert.match(summaries[0]?.body.message.data.body ?? '', /^\S+ and 6 others liked your post$/);
  });

  test(`a bell fan-out reaches each of ${FANOUT_WATCHERS} watchers exactly once`, async () => {
    const watchers = await seedWatchers(frank, 'e', FANOUT_WATCHERS);
    const posted = video(frank, 'big-vine');
    await publish(relay.url, posted);
    await fcm.waitForMessages(fcm.messages.length + 1, WAIT_MS);
    await eventually(
      () =>
        new Set(fcm.messages.filter((m) => m.body.message.data.eventId === posted.id).map((m) => m.token)).size === watchers.length
          ? true
          : undefined,
      FANOUT_WAIT_MS,
      'every watcher belled',
    );
    await queuesDrained(reader, WAIT_MS);
    const counts = new Map<string, number>();
    for (const m of fcm.messages) if (m.body.message.data.eventId === posted.id) counts.set(m.token, (counts.get(m.token) ?? 0) + 1);
    assert.equal(counts.size, FANOUT_WATCHERS, 'every watcher');
    assert.deepEqual(
      [...counts].filter(([, n]) => n !== 1),
      [],
      'nobody twice',
    );
  });

  test('an ntfy message published on the api process reaches a subscriber on the pusher process exactly once', async () => {
    const topic = `up${'Q'.repeat(14)}`;
    const stream = streamTopic(ingest.baseUrl, topic);
    try {
      await eventually(() => (stream.messages.some((m) => m.event === 'open') ? true : undefined), WAIT_MS, 'the stream open');
      const published = await fetch(`${edge.baseUrl}/${topic}`, { method: 'POST', body: 'hello cluster' });
      assert.equal(published.status, 200, await published.clone().text());
      await eventually(() => (stream.messages.some((m) => m.event === 'message') ? true : undefined), WAIT_MS, 'the message streamed');
      const polled = (await (await fetch(`${edge.baseUrl}/${topic}/json?poll=1`)).text()).trim().split('\n');
      assert.equal(polled.length, 1, 'one stored message');
      assert.deepEqual(
        stream.messages.filter((m) => m.event === 'message').map((m) => m.message),
        ['hello cluster'],
        'streamed once',
      );
    } finally {
      stream.close();
    }
  });
});
