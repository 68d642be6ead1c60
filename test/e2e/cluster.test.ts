/**
 * End to end on a Redis Cluster (issue 18): three masters with one replica each, started by the
 * test, and the real binary with its roles split over three processes on it:
 *
 * - `ingest`: listener, engine and pusher (it also serves ntfy subscriptions);
 * - `work`: scheduler, delivery and janitor (fan-out pages, coalescing flushes, every send);
 * - `edge`: api (ntfy publishes).
 *
 * Register, a like, coalesced likes, a bell fan-out to 5,000 watchers and an ntfy topic are each
 * delivered exactly once; then one master is killed with SIGKILL in the middle of a second fan-out,
 * the cluster promotes its replica, and every watcher still gets the bell (at most twice: only
 * sends in flight can repeat); comments published while the master is dead, before its replica
 * is promoted, are pushed too (issue 42).
 *
 * Time in the processes is the test clock they share (coalescing windows, and every lease and
 * retry delay): it moves only when the test moves it. After the failover the test moves it a
 * second at a time whenever no work is due, so the leases the dead master orphaned expire and the
 * fan-out page's retry comes due, as they would in a fleet whose clock runs.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { get, type ClientRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMMENT, REACTION, REGISTER_TOKEN, VIDEO } from '../../src/nostr/kinds.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import type { NostrEvent } from '../../src/nostr/event.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { coalesceBucket, coalesceGroupId } from '../../src/store/port-coalesce.ts';
import { controlEvent, makeUser, type TestUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { clusterNodeId, startRedisCluster, waitForFailover, type PrivateRedisCluster } from '../support/redis-cluster.ts';
import { Cluster } from 'ioredis';
import calculateKeySlot from 'cluster-key-slot';
import { createRedisKeys, DEFAULT_CLUSTER_QUEUE_SHARDS, shardIndexes } from '../../src/store/redis/keys.ts';
import { DELIVERY_WINDOW } from '../../src/roles/roles.ts';
import { startFcmFake, type FcmFake, type ReceivedMessage } from '../support/fcm-fake.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { TestClockFile } from '../support/test-clock.ts';
import { queuesDrained, workDrained } from '../support/queues.ts';

/** Upper bounds only a hang reaches. */
const WAIT_MS = 60_000;
const FANOUT_WAIT_MS = 180_000;
/** Coalescing: a bucket of 10 s that only moves when the test moves the clock; 3 immediate pushes. */
const WINDOW_SECS = 10;
const IMMEDIATE_LIMIT = 3;
const FANOUT_WATCHERS = 5_000;
/** Comments published while a master is dead, before its replica is promoted. */
const FAILOVER_COMMENTS = 5;
/** Short leases, so work a killed process held returns within seconds. */
const LEASE_SECS = 4;
/** Seeding writes in flight at once (auto-pipelined per node by the cluster client). */
const SEED_BATCH = 250;
/** FCM latency during the failover fan-out, so the kill lands while it runs. */
const SLOW_FCM_MS = 20;
/** Watchers per fan-out page (`service.new_post_fanout_page_size`). */
const PAGE_SIZE = 100;
/** How far the test clock moves at a time after the failover. */
const CLOCK_STEP_MS = 1_000;
/** The processes run the default queue shards. */
const QUEUE_SHARDS = DEFAULT_CLUSTER_QUEUE_SHARDS;
const clusterKeys = createRedisKeys('cluster');

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
        // Auto's value on a cluster, said outright: the failover case depends on each cross-slot
        // step's writes reaching the replica first.
        NOSTR_PUSH__REDIS__WAIT_REPLICAS: '1',
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
        NOSTR_PUSH__SERVICE__NEW_POST_FANOUT_PAGE_SIZE: String(PAGE_SIZE),
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
    const likes = likers.map((liker) => likeOn(liker, alice, videoId, 'popular'));
    await publish(relay.url, ...likes);
    const bucket = coalesceBucket(clock.nowSecs(), WINDOW_SECS);
    const groupId = coalesceGroupId('like', alice.pubkey, `a:${VIDEO}:${alice.pubkey}:popular`, bucket);
    await eventually(
      async () => ((await reader.readCoalesceGroup(groupId))?.pending === likers.length - IMMEDIATE_LIMIT ? true : undefined),
      WAIT_MS,
      'the rest of the likes buffered',
    );
    // The immediate pushes must be sent and settled before the clock jumps past their leases
    // (LEASE_SECS): a send still in flight then would be leased again and sent twice, as a
    // process's would be after a crash (CI saw 5 "immediate" pushes once under the full suite).
    await queuesDrained(reader, WAIT_MS);
    const bucketEndMs = (bucket + 1) * WINDOW_SECS * 1000;
    await clock.advance(bucketEndMs - clock.nowMs() + 1000, everyProcess());
    await eventually(() => (messagesTo('alice-phone').slice(before).some(isSummary) ? true : undefined), WAIT_MS, 'the summary');
    await queuesDrained(reader, WAIT_MS);
    const received = messagesTo('alice-phone').slice(before);
    // Said on failure: which pushes came, so an extra one can be traced (a repeat, another event, a split group).
    const told = received.map((m) => {
      const { eventId = '', type = '', body = '' } = m.body.message.data;
      const like = likes.findIndex((l) => l.id === eventId);
      return `${like >= 0 ? `like #${like}` : `other ${eventId.slice(0, 12)}`} ${type}: ${body}`;
    });
    assert.equal(received.filter((m) => !isSummary(m)).length, IMMEDIATE_LIMIT, `the immediate pushes:\n${told.join('\n')}`);
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

  test('SIGKILL of a master mid fan-out: its replica is promoted, no watcher is lost, only sends in flight repeat', async (t) => {
    const watchers = await seedWatchers(frank, 'f', FANOUT_WATCHERS);
    const timed = await openRedisStore({ url: cluster.url, clock: { nowMs: () => clock.nowMs() } });
    const raw = new Cluster(cluster.nodes.map((node) => ({ host: '127.0.0.1', port: node.port })));
    // The killed master's reconnect failures are expected here; unheard, ioredis prints each one.
    raw.on('error', () => undefined);
    try {
      /**
       * Work that can run now on the processes' clock: queue items due or under an expired lease,
       * fan-out pages due. When there is none, whatever is left waits on the clock (a lease the
       * failover orphaned, a page's retry backoff), which only the test moves.
       */
      const dueWork = async (): Promise<number> => {
        const now = clock.nowMs();
        const counts = await Promise.all(
          (['inbound', 'outbound'] as const).flatMap((queue) =>
            shardIndexes(QUEUE_SHARDS).flatMap((shard) => {
              const keys = clusterKeys.queueKeys(queue, shard);
              return [...keys.readyKeys, ...keys.leasedKeys].map((key) => raw.zcount(key, '-inf', now));
            }),
          ),
        );
        return counts.reduce((sum, n) => sum + n, 0) + (await timed.fanoutJobStats()).due;
      };
      const pushesFor = (eventId: string) => fcm.messages.filter((m) => m.body.message.data.eventId === eventId);

      fcm.setLatency(SLOW_FCM_MS);
      const posted = video(frank, 'failover-vine');
      await publish(relay.url, posted);
      await eventually(() => (pushesFor(posted.id).length >= FANOUT_WATCHERS / 5 ? true : undefined), FANOUT_WAIT_MS, 'a fifth pushed');
      // The master of the creator's watcher set: the walk's SSCAN cursor then has to survive the
      // failover too, beside the queue shards and claims that master holds.
      const [watcherSetMaster] = raw.slots[calculateKeySlot(clusterKeys.notifyWatchersKey(frank.pubkey))] ?? [];
      const victim = cluster.nodes.find((node) => `127.0.0.1:${node.port}` === watcherSetMaster);
      assert.ok(victim, `the master of the watcher set (${String(watcherSetMaster)}) is a node of the test cluster`);
      const victimId = await clusterNodeId(victim);
      await victim.kill();
      const pushedAtKill = pushesFor(posted.id).length;
      // Issue 42: events published while the master is dead and its replica not yet promoted
      // (commands for its slots fail, the listener asks again, then reconnects) are pushed too.
      const bobsVideo = video(bob, 'during-failover');
      const comments = Array.from({ length: FAILOVER_COMMENTS }, (_, i) =>
        signEvent(
          {
            kind: COMMENT,
            created_at: nowSecs(),
            tags: [
              ['A', `${VIDEO}:${bob.pubkey}:during-failover`],
              ['E', bobsVideo.id],
              ['K', String(VIDEO)],
              ['P', bob.pubkey],
              ['e', bobsVideo.id],
              ['k', String(VIDEO)],
              ['p', bob.pubkey],
            ],
            content: `said during the failover ${i}`,
          },
          makeUser().secret,
        ),
      );
      for (const comment of comments) await publish(relay.url, comment);
      const commentsPushed = () => comments.every((comment) => pushesFor(comment.id).length > 0);
      await waitForFailover(
        cluster.nodes.filter((node) => node !== victim),
        victimId,
      );
      fcm.setLatency(0);

      // The processes' store clock is the test clock: move it a second at a time, and only while
      // nothing is due, as time would pass for a fleet with nothing to do but wait.
      let advances = 0;
      await eventually(
        async () => {
          const drained = await workDrained(timed);
          if (drained && commentsPushed()) return true;
          if ((await dueWork()) === 0) {
            advances += 1;
            await clock.advance(CLOCK_STEP_MS, everyProcess());
          }
          return undefined;
        },
        FANOUT_WAIT_MS,
        'the fan-out and its deliveries finished after the failover',
      );

      const counts = new Map<string, number>();
      for (const m of pushesFor(posted.id)) counts.set(m.token, (counts.get(m.token) ?? 0) + 1);
      const lost = watchers.filter((watcher) => !counts.has(`w-${watcher.slice(0, 10)}`));
      // What the store holds for the first few lost watchers (which step lost them), in the
      // failure's message so a CI log shows it.
      const whereLost: string[] = [];
      if (lost.length > 0) {
        const outbound = await timed.queueStats('outbound');
        whereLost.push(
          `outbound queue after the failover: ${JSON.stringify({ ready: outbound.ready, leased: outbound.leased, dead: outbound.dead })}`,
        );
        for (const watcher of lost.slice(0, 10)) {
          const claim = await raw.get(clusterKeys.recipientClaimKey(posted.id, watcher));
          // Where its bell's queue item is: staged, in a lane, dead, or nowhere.
          const id = `${posted.id}:${watcher}`;
          const places: string[] = [];
          for (const shard of shardIndexes(QUEUE_SHARDS)) {
            const keys = clusterKeys.queueKeys('outbound', shard);
            if ((await raw.hexists(keys.items, id)) === 1) places.push(`item in shard ${shard}`);
            if ((await raw.zscore(keys.pending, id)) !== null) places.push('staged');
            for (const key of [...keys.readyKeys, ...keys.leasedKeys]) if ((await raw.zscore(key, id)) !== null) places.push(key);
            const meta = await raw.hget(keys.meta, id);
            if (meta !== null) places.push(`meta ${meta}`);
          }
          const dead = await timed.getDead('outbound', id);
          if (dead) places.push(`dead: ${dead.reason}, ${dead.attempts} attempts, last error ${dead.lastError ?? '-'}`);
          whereLost.push(
            `lost ${watcher.slice(0, 10)}: claim ${claim === null ? 'absent' : `held (${claim})`}; item ${places.join('; ') || 'nowhere'}`,
          );
        }
        whereLost.push(`the cluster's failover, as its nodes logged it:\n${cluster.failoverLog()}`);
      }
      assert.deepEqual(
        lost.map((watcher) => watcher.slice(0, 10)).slice(0, 20),
        [],
        `${lost.length} watchers lost\n${whereLost.join('\n')}`,
      );
      assert.equal(counts.size, FANOUT_WATCHERS, 'every watcher belled');
      const repeated = [...counts.values()].filter((n) => n > 1);
      assert.ok(
        repeated.every((n) => n === 2),
        `nobody pushed more than twice (${JSON.stringify(repeated.filter((n) => n > 2))})`,
      );
      // Only sends in flight may repeat: a bell the delivery process held (at most DELIVERY_WINDOW
      // leased items) whose acknowledgement died with the master, and the bells of the one page
      // being queued, whose claims the dead master may have taken without replicating them.
      assert.ok(repeated.length <= DELIVERY_WINDOW + PAGE_SIZE, `only sends in flight repeated (${repeated.length})`);
      t.diagnostic(`master killed after ${pushedAtKill} pushes; ${repeated.length} watchers pushed twice; clock moved ${advances} s`);
      for (const comment of comments) {
        const pushes = pushesFor(comment.id);
        assert.ok(
          pushes.length >= 1 && pushes.length <= 2,
          `a comment published during the failover pushed once or twice, got ${pushes.length}`,
        );
        assert.ok(
          pushes.every((m) => m.token === 'bob-phone'),
          'to its owner',
        );
      }
    } finally {
      raw.disconnect();
      await timed.close();
    }
  });
});
