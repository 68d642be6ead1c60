/**
 * Redis-only behaviour of bells that the adapter-neutral contract cannot see: divine's exact key
 * layout and value formats, a legacy bare-integer list version, a list write that dies midway,
 * the key prefix reaching the reverse-index keys of every creator, divine-written and
 * damaged fan-out jobs, and a failed queue write that must not consume the enqueue marker.
 *
 * Runs on database 4 of a private redis-server with no key prefix (the seed's key names must
 * appear exactly), flushed before each test.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { WATCHER_WALK_START, type FanoutJob } from '../../src/store/port-bells.ts';
import { openRedisStore, type RedisStore } from '../../src/store/redis/index.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';

const DB = 4;
const SUBSCRIBER = 'a1'.repeat(32);
const KEPT = 'c1'.repeat(32);
const POISONED = 'c2'.repeat(32);
const CREATOR = 'c3'.repeat(32);
const LOW_ID = '10'.repeat(32);
const LOWER_ID = '01'.repeat(32);
const HIGH_ID = 'f0'.repeat(32);
const MARKER_TTL_SECS = 604_800;
const LEASE_MS = 1_200_000;

let server: PrivateRedisServer;
let url: string;
let raw: Redis;
let clock: ManualClock;
let store: RedisStore;
const extraStores: RedisStore[] = [];

before(async () => {
  server = await startRedisServer();
  url = `${server.url}/${DB}`;
  raw = new Redis(url);
});

after(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- before() can fail before it assigns these. */
  await raw?.quit();
  await server?.stop();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

beforeEach(async () => {
  await raw.flushdb();
  clock = new ManualClock();
  store = await openRedisStore({ url, clock });
});

afterEach(async () => {
  await store.close();
  for (const extra of extraStores.splice(0)) await extra.close();
});

function job(overrides: Partial<FanoutJob> = {}): FanoutJob {
  return { eventJson: '{"kind":34236}', cursor: WATCHER_WALK_START, senderName: null, attempt: 0, expiresAt: 1_800_000_000, ...overrides };
}

describe('notify lists on Redis', () => {
  test("divine's keys and formats: notify_subs, notify_subs_ts as created_at:id, notify_watchers", async () => {
    await store.replaceNotifySubscriptions({ subscriber: SUBSCRIBER, creators: [KEPT, CREATOR], createdAt: 1000, eventId: LOW_ID });
    assert.deepEqual((await raw.smembers(`notify_subs:${SUBSCRIBER}`)).sort(), [KEPT, CREATOR].sort());
    assert.equal(await raw.get(`notify_subs_ts:${SUBSCRIBER}`), `1000:${LOW_ID}`);
    assert.deepEqual(await raw.smembers(`notify_watchers:${KEPT}`), [SUBSCRIBER]);
    assert.deepEqual(await raw.smembers(`notify_watchers:${CREATOR}`), [SUBSCRIBER]);
    assert.equal(await raw.ttl(`notify_subs:${SUBSCRIBER}`), -1, 'subscriptions carry no TTL');
    assert.equal(await raw.ttl(`notify_watchers:${KEPT}`), -1);
  });

  test('a legacy bare-integer version: a tie is rejected, a later list applies and rewrites it, then a lower-id tie applies', async () => {
    await raw.set(`notify_subs_ts:${SUBSCRIBER}`, '2000');
    assert.equal(
      await store.replaceNotifySubscriptions({ subscriber: SUBSCRIBER, creators: [KEPT], createdAt: 2000, eventId: LOWER_ID }),
      'stale',
    );
    assert.equal(await raw.exists(`notify_subs:${SUBSCRIBER}`), 0);
    assert.equal(
      await store.replaceNotifySubscriptions({ subscriber: SUBSCRIBER, creators: [KEPT], createdAt: 1999, eventId: LOWER_ID }),
      'stale',
    );

    assert.equal(
      await store.replaceNotifySubscriptions({ subscriber: SUBSCRIBER, creators: [KEPT], createdAt: 2001, eventId: LOW_ID }),
      'applied',
    );
    assert.equal(await raw.get(`notify_subs_ts:${SUBSCRIBER}`), `2001:${LOW_ID}`);
    assert.equal(
      await store.replaceNotifySubscriptions({ subscriber: SUBSCRIBER, creators: [CREATOR], createdAt: 2001, eventId: LOWER_ID }),
      'applied',
    );
    assert.equal(await raw.get(`notify_subs_ts:${SUBSCRIBER}`), `2001:${LOWER_ID}`);
    assert.deepEqual(await store.notifySubscriptions(SUBSCRIBER), [CREATOR]);
  });

  test('an unparseable stored version counts as absent, so the subscriber is never wedged', async () => {
    await raw.set(`notify_subs_ts:${SUBSCRIBER}`, 'not-a-version');
    assert.equal(
      await store.replaceNotifySubscriptions({ subscriber: SUBSCRIBER, creators: [KEPT], createdAt: 5, eventId: HIGH_ID }),
      'applied',
    );
    assert.equal(await raw.get(`notify_subs_ts:${SUBSCRIBER}`), `5:${HIGH_ID}`);
  });

  test('a list that dies midway (WRONGTYPE on a watcher key) leaves the forward index a superset a later list reconciles', async () => {
    await store.replaceNotifySubscriptions({ subscriber: SUBSCRIBER, creators: [KEPT], createdAt: 100, eventId: LOW_ID });
    await raw.set(`notify_watchers:${POISONED}`, 'not a set');
    await assert.rejects(
      store.replaceNotifySubscriptions({ subscriber: SUBSCRIBER, creators: [POISONED, KEPT], createdAt: 101, eventId: LOW_ID }),
      /WRONGTYPE/,
    );
    const forward = await raw.smembers(`notify_subs:${SUBSCRIBER}`);
    assert.ok(forward.includes(KEPT), 'the forward index still holds kept');
    assert.ok(forward.includes(POISONED), 'and the creator whose reverse write failed: a superset');
    assert.equal(await raw.get(`notify_subs_ts:${SUBSCRIBER}`), `100:${LOW_ID}`, 'the version was not advanced');

    await raw.del(`notify_watchers:${POISONED}`);
    assert.equal(
      await store.replaceNotifySubscriptions({ subscriber: SUBSCRIBER, creators: [], createdAt: 102, eventId: LOW_ID }),
      'applied',
    );
    assert.deepEqual(await raw.smembers(`notify_subs:${SUBSCRIBER}`), []);
    assert.deepEqual(await raw.smembers(`notify_watchers:${KEPT}`), [], 'the later empty list removed kept');
  });

  test('a key prefix reaches the reverse-index key of every creator the replacement touches', async () => {
    const prefixed = await openRedisStore({ url, clock, keyPrefix: 'tenant:' });
    extraStores.push(prefixed);
    await prefixed.replaceNotifySubscriptions({ subscriber: SUBSCRIBER, creators: [KEPT], createdAt: 1, eventId: LOW_ID });
    assert.deepEqual(await raw.smembers(`tenant:notify_watchers:${KEPT}`), [SUBSCRIBER]);
    assert.equal(await raw.exists(`notify_watchers:${KEPT}`), 0, 'nothing written outside the prefix');
    await prefixed.replaceNotifySubscriptions({ subscriber: SUBSCRIBER, creators: [], createdAt: 2, eventId: LOW_ID });
    assert.equal(await raw.exists(`tenant:notify_watchers:${KEPT}`), 0, 'removal goes through the prefix too');
    assert.deepEqual((await raw.keys('*')).sort(), [`tenant:notify_subs_ts:${SUBSCRIBER}`]);
  });

  test('a watcher page skips members that are not hex pubkeys', async () => {
    await raw.sadd(`notify_watchers:${CREATOR}`, SUBSCRIBER, 'garbage', 'B1'.repeat(32));
    const page = await store.notifyWatchersPage(CREATOR, WATCHER_WALK_START, 100);
    assert.deepEqual(page, { watchers: [SUBSCRIBER], nextCursor: WATCHER_WALK_START });
  });

  test('the bell rate window is notify_rate:{subscriber}:{creator} = "1" with the TTL', async () => {
    await store.openNewPostRateWindow(SUBSCRIBER, CREATOR, 3600);
    assert.equal(await raw.get(`notify_rate:${SUBSCRIBER}:${CREATOR}`), '1');
    const ttl = await raw.ttl(`notify_rate:${SUBSCRIBER}:${CREATOR}`);
    assert.ok(ttl > 3590 && ttl <= 3600, `TTL ${ttl}`);
  });
});

describe('bell claims on Redis', () => {
  test('extending a claim sets the TTL of dedup:{event}:{recipient} and keeps the owner', async () => {
    const claim = await store.claimRecipientDelivery('e9'.repeat(32), SUBSCRIBER, 10);
    assert.ok(claim);
    assert.equal(await store.extendRecipientDelivery(claim, 604_800), true);
    const key = `dedup:${'e9'.repeat(32)}:${SUBSCRIBER}`;
    assert.equal(await raw.get(key), claim.owner);
    const ttl = await raw.ttl(key);
    assert.ok(ttl > 604_790 && ttl <= 604_800, `TTL ${ttl}`);
  });
});

describe('bell pages on Redis', () => {
  test('a page larger than one script chunk reads and records every watcher, in order, across the chunk boundary', async () => {
    // BELL_SCRIPT_CHUNK is 500: the 501st watcher is the first of the second call.
    const watchers = Array.from({ length: 501 }, (_, i) => i.toString(16).padStart(64, '0'));
    const last = watchers[500] as string;
    const first = watchers[0] as string;
    await store.registerToken(last, { token: 'tok-last', transport: 'fcm' });
    await store.openNewPostRateWindow(first, CREATOR, 60);
    await raw.set(`dedup:34236:newPost:${CREATOR}:vine:${last}`, '1');
    const states = await store.readBellWatchers({ owner: CREATOR, dTag: 'vine' }, watchers);
    assert.deepEqual(
      states.map((s) => s.watcher),
      watchers,
    );
    assert.deepEqual([states[0]?.rateLimited, states[0]?.alreadyNotified, states[0]?.devices.length], [true, false, 0]);
    assert.deepEqual(
      [states[500]?.rateLimited, states[500]?.alreadyNotified, states[500]?.devices.map((d) => d.token)],
      [false, true, ['tok-last']],
    );
    assert.ok(states.slice(1, 500).every((s) => !s.rateLimited && !s.alreadyNotified && s.devices.length === 0));

    const claims = (await store.claimRecipientDeliveries('e6'.repeat(32), watchers, 60)).filter((c) => c !== null);
    assert.equal(claims.length, watchers.length);
    const [releasedFirst, releasedLast] = claims.slice(499);
    assert.ok(releasedFirst && releasedLast);
    await store.recordBellBatch({
      video: { owner: CREATOR, dTag: 'vine' },
      delivered: claims.slice(0, 499).map((claim) => ({ claim, tokens: [] })),
      failed: [],
      // The chunk boundary falls between these two.
      released: [releasedFirst, releasedLast],
      rateLimited: [],
      claimTtlSecs: 600,
      rateLimitSecs: 60,
      videoRecordTtlSecs: 60,
    });
    assert.equal(await raw.get(`notify_rate:${watchers[498]}:${CREATOR}`), '1', 'a delivered bell opens its window');
    assert.equal(await raw.exists(`notify_rate:${watchers[499]}:${CREATOR}`), 0, 'a released one does not');
    assert.equal(await raw.exists(`dedup:${'e6'.repeat(32)}:${watchers[499]}`), 0, 'released in the first chunk');
    assert.equal(await raw.exists(`dedup:${'e6'.repeat(32)}:${last}`), 0, 'released in the second chunk');
    const deliveredTtl = await raw.ttl(`dedup:${'e6'.repeat(32)}:${watchers[0]}`);
    assert.ok(deliveredTtl > 0 && deliveredTtl <= 60, `a delivered claim stays as taken, not extended to 600 s (TTL ${deliveredTtl})`);
  });

  test("readBellWatchers counts divine's legacy type-less video record", async () => {
    await raw.set(`dedup:34236:${CREATOR}:vine:${SUBSCRIBER}`, '1');
    const [state] = await store.readBellWatchers({ owner: CREATOR, dTag: 'vine' }, [SUBSCRIBER]);
    assert.equal(state?.alreadyNotified, true);
  });

  test('a key prefix reaches the per-watcher keys the page scripts get as arguments', async () => {
    const prefixed = await openRedisStore({ url, clock, keyPrefix: 'tenant:' });
    extraStores.push(prefixed);
    await prefixed.registerToken(SUBSCRIBER, { token: 'tok', transport: 'fcm' });
    await prefixed.openNewPostRateWindow(SUBSCRIBER, KEPT, 60);
    const [state] = await prefixed.readBellWatchers({ owner: KEPT, dTag: 'vine' }, [SUBSCRIBER]);
    assert.deepEqual([state?.devices.map((d) => d.token), state?.rateLimited], [['tok'], true]);
    const [claim] = await prefixed.claimRecipientDeliveries('e7'.repeat(32), [SUBSCRIBER], 60);
    assert.ok(claim);
    await prefixed.recordBellBatch({
      video: { owner: CREATOR, dTag: 'vine' },
      delivered: [{ claim, tokens: ['tok'] }],
      failed: [],
      released: [],
      rateLimited: [],
      claimTtlSecs: 600,
      rateLimitSecs: 60,
      videoRecordTtlSecs: 60,
    });
    const keys = await raw.keys('*');
    assert.ok(keys.length > 0 && keys.every((key) => key.startsWith('tenant:')), keys.join(' '));
    assert.equal(await raw.get(`tenant:dedup:34236:newPost:${CREATOR}:vine:${SUBSCRIBER}`), '1');
    assert.equal(await raw.get(`tenant:notify_rate:${SUBSCRIBER}:${CREATOR}`), '1');
    const claimTtl = await raw.ttl(`tenant:dedup:${'e7'.repeat(32)}:${SUBSCRIBER}`);
    assert.ok(claimTtl > 0 && claimTtl <= 60, `the delivered claim stays as taken (TTL ${claimTtl})`);
  });
});

describe('fan-out jobs on Redis', () => {
  test("a job is divine's JSON member of new_post_fanout_jobs scored in ms; the marker has the TTL", async () => {
    const now = clock.nowMs();
    await store.enqueueFanoutJob('e1'.repeat(32), job({ senderName: 'Alice' }), MARKER_TTL_SECS);
    const [member, score] = await raw.zrange('new_post_fanout_jobs', 0, -1, 'WITHSCORES');
    assert.equal(member, '{"event_json":"{\\"kind\\":34236}","cursor":0,"sender_name":"Alice","attempt":0,"expires_at":1800000000}');
    assert.equal(Number(score), now);
    assert.equal(await raw.get(`fanout:enqueued:${'e1'.repeat(32)}`), '1');
    const ttl = await raw.ttl(`fanout:enqueued:${'e1'.repeat(32)}`);
    assert.ok(ttl > MARKER_TTL_SECS - 10 && ttl <= MARKER_TTL_SECS);

    const claimed = await store.claimFanoutJob(LEASE_MS);
    assert.equal(claimed?.member, member);
    assert.equal(Number(await raw.zscore('new_post_fanout_jobs', member)), now + LEASE_MS, 'the lease is a score in ms');
  });

  test('a job written by divine is claimed and continued; a damaged member is handed out undecoded', async () => {
    const divineJob = '{"event_json":"{}","cursor":1234567,"sender_name":null,"attempt":3,"expires_at":1800000000}';
    await raw.zadd('new_post_fanout_jobs', clock.nowMs() - 10, divineJob, clock.nowMs() - 5, 'not json');
    const first = await store.claimFanoutJob(LEASE_MS);
    assert.deepEqual(first, {
      member: divineJob,
      job: { eventJson: '{}', cursor: '1234567', senderName: null, attempt: 3, expiresAt: 1_800_000_000 },
    });
    const damaged = await store.claimFanoutJob(LEASE_MS);
    assert.deepEqual(damaged, { member: 'not json', job: null });
    await store.completeFanoutJob(damaged, null);
    assert.equal(await raw.zscore('new_post_fanout_jobs', 'not json'), null);
  });

  test('a queue write that fails (WRONGTYPE) does not consume the marker', async () => {
    await raw.set('new_post_fanout_jobs', 'not a zset');
    await assert.rejects(store.enqueueFanoutJob('e2'.repeat(32), job(), MARKER_TTL_SECS), /WRONGTYPE/);
    assert.equal(await raw.exists(`fanout:enqueued:${'e2'.repeat(32)}`), 0);
    await raw.del('new_post_fanout_jobs');
    assert.equal(await store.enqueueFanoutJob('e2'.repeat(32), job(), MARKER_TTL_SECS), true);
    assert.equal(await store.enqueueFanoutJob('e2'.repeat(32), job(), MARKER_TTL_SECS), false, 'a replay does not queue it again');
  });

  test('completing keeps an already queued successor at its score (ZADD NX)', async () => {
    await store.enqueueFanoutJob('e3'.repeat(32), job(), MARKER_TTL_SECS);
    const claimed = await store.claimFanoutJob(LEASE_MS);
    assert.ok(claimed);
    const successor = job({ cursor: '99' });
    await store.completeFanoutJob(claimed, successor);
    const successorMember = (await raw.zrange('new_post_fanout_jobs', 0, -1))[0] ?? '';
    await raw.zadd('new_post_fanout_jobs', clock.nowMs() + 60_000, successorMember);
    await store.completeFanoutJob(claimed, successor);
    assert.equal(Number(await raw.zscore('new_post_fanout_jobs', successorMember)), clock.nowMs() + 60_000);
    assert.equal(await raw.zcard('new_post_fanout_jobs'), 1);
  });
});
