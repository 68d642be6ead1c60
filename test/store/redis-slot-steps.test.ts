/**
 * The per-slot steps of the cluster layout, run one at a time to stand for a crash between two of
 * them: notify-list replacement (bells.ts), the sharded fan-out queue (bells.ts) and the ntfy id
 * sequencer (ntfy-cluster.ts). Each test stops an operation after a step, then shows that the
 * retry (or the next operation) completes it without doubling anything.
 *
 * Runs the cluster layout on a private single redis-server (the steps are the same on a cluster;
 * the cluster contract covers the slots), through the adapter's own modules.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { WATCHER_WALK_START, type FanoutJob, type NotifyListReplacement } from '../../src/store/port-bells.ts';
import type { NtfyAppendEvent } from '../../src/store/port-ntfy.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { ManualClock } from '../../src/util/clock.ts';
import * as bells from '../../src/store/redis/bells.ts';
import type { RedisContext } from '../../src/store/redis/context.ts';
import { createRedisKeys, ntfyWakeChannel } from '../../src/store/redis/keys.ts';
import { NTFY_PENDING_LEASE_MS } from '../../src/store/redis/ntfy-cluster.ts';
import { parseAppendEvent, RedisNtfyTopics } from '../../src/store/redis/ntfy.ts';
import { RedisScripts } from '../../src/store/redis/scripts.ts';
import { ReplicaWaiter } from '../../src/store/redis/replication.ts';
import { NTFY_MAX_SEQ } from '../../src/store/ntfy-ids.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';

const DB = 6;
const SUBSCRIBER = 'a1'.repeat(32);
const [CREATOR_A, CREATOR_B, CREATOR_C] = ['c1', 'c2', 'c3'].map((pair) => pair.repeat(32)) as [string, string, string];
const LOW_ID = '10'.repeat(32);
const TTL_MS = 60_000;
const LEASE_MS = 60_000;

let server: PrivateRedisServer;
let url: string;
let raw: Redis;
let client: Redis;
let clock: ManualClock;
let ctx: RedisContext;

before(async () => {
  server = await startRedisServer();
  url = `${server.url}/${DB}`;
  raw = new Redis(url);
  client = new Redis(url);
});

after(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- before() can fail before it assigns these. */
  await raw?.quit();
  await client?.quit();
  await server?.stop();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

beforeEach(async () => {
  await raw.flushdb();
  clock = new ManualClock();
  const scripts = new RedisScripts(client);
  await scripts.loadAll();
  ctx = {
    redis: client,
    cluster: null,
    keys: createRedisKeys('cluster'),
    scripts,
    replication: ReplicaWaiter.off(client),
    clock,
    logger: createLogger({ level: 'silent' }),
  };
});

const list = (creators: string[], createdAt: number, eventId = LOW_ID): NotifyListReplacement => ({
  subscriber: SUBSCRIBER,
  creators,
  createdAt,
  eventId,
});

async function watchers(creator: string): Promise<string[]> {
  return (await raw.smembers(ctx.keys.notifyWatchersKey(creator))).sort();
}

async function forward(): Promise<string[]> {
  return (await raw.smembers(ctx.keys.notifySubsKey(SUBSCRIBER))).sort();
}

describe('notify-list replacement, step by step', () => {
  beforeEach(async () => {
    assert.equal(await bells.replaceNotifySubscriptions(ctx, list([CREATOR_A, CREATOR_B], 100)), 'applied');
  });

  test('a crash after step 1 leaves the forward index a superset; the retry finishes the list exactly once', async () => {
    const next = list([CREATOR_B, CREATOR_C], 101);
    const begun = await bells.beginNotifyListReplacement(ctx, next);
    assert.deepEqual(begun, { outcome: 'go', dropped: [CREATOR_A] });
    assert.deepEqual(await forward(), [CREATOR_A, CREATOR_B, CREATOR_C], 'the forward index holds old and new: a superset');
    assert.deepEqual(await watchers(CREATOR_C), [], 'no reverse entry yet');
    assert.equal(await raw.get(ctx.keys.notifySubsTsKey(SUBSCRIBER)), `100:${LOW_ID}`, 'the version moves only at the end');

    assert.equal(await bells.replaceNotifySubscriptions(ctx, next), 'applied', 'the retry takes its own lease again');
    assert.deepEqual(await forward(), [CREATOR_B, CREATOR_C]);
    assert.deepEqual(await watchers(CREATOR_A), [], 'the dropped creator lost the watcher');
    assert.deepEqual(await watchers(CREATOR_B), [SUBSCRIBER]);
    assert.deepEqual(await watchers(CREATOR_C), [SUBSCRIBER], 'added once');
    assert.equal(await raw.get(ctx.keys.notifySubsTsKey(SUBSCRIBER)), `101:${LOW_ID}`);
    assert.equal(await raw.exists(ctx.keys.notifySubsLeaseKey(SUBSCRIBER)), 0, 'the lease was given back');
  });

  test('a crash after the watcher writes: the retry finds the same dropped creators and finishes', async () => {
    const next = list([CREATOR_C], 101);
    const begun = await bells.beginNotifyListReplacement(ctx, next);
    if (begun.outcome !== 'go') throw new Error(`step 1 answered ${begun.outcome}`);
    await bells.updateNotifyWatchers(ctx, SUBSCRIBER, next.creators, begun.dropped);
    assert.deepEqual(await forward(), [CREATOR_A, CREATOR_B, CREATOR_C], 'every creator whose set may name the subscriber');

    const again = await bells.beginNotifyListReplacement(ctx, next);
    if (again.outcome !== 'go') throw new Error(`the retry's step 1 answered ${again.outcome}`);
    assert.deepEqual(again.dropped.sort(), [CREATOR_A, CREATOR_B], 'the same dropped creators, from the superset');
    assert.equal(await bells.replaceNotifySubscriptions(ctx, next), 'applied');
    assert.deepEqual(await forward(), [CREATOR_C]);
    for (const creator of [CREATOR_A, CREATOR_B]) assert.deepEqual(await watchers(creator), [], `${creator.slice(0, 4)} dropped`);
    assert.deepEqual(await watchers(CREATOR_C), [SUBSCRIBER]);
  });

  test('another list meets the lease of one in flight and is refused until it ends; a stale one is still stale', async () => {
    await bells.beginNotifyListReplacement(ctx, list([CREATOR_C], 101));
    await assert.rejects(bells.replaceNotifySubscriptions(ctx, list([CREATOR_A], 102)), bells.NotifyListBusyError);
    assert.equal(await bells.replaceNotifySubscriptions(ctx, list([CREATOR_A], 99)), 'stale', 'the version check comes first');
    assert.deepEqual(await forward(), [CREATOR_A, CREATOR_B, CREATOR_C], 'the refused list wrote nothing');

    // The crashed list's lease runs out (Redis' own expiry): the next list reconciles everything.
    await raw.del(ctx.keys.notifySubsLeaseKey(SUBSCRIBER));
    assert.equal(await bells.replaceNotifySubscriptions(ctx, list([CREATOR_A], 102)), 'applied');
    assert.deepEqual(await forward(), [CREATOR_A]);
    assert.deepEqual(await watchers(CREATOR_A), [SUBSCRIBER]);
    for (const creator of [CREATOR_B, CREATOR_C]) assert.deepEqual(await watchers(creator), [], `${creator.slice(0, 4)} reconciled`);
  });
});

function job(eventJson: string, overrides: Partial<FanoutJob> = {}): FanoutJob {
  return { eventJson, cursor: WATCHER_WALK_START, senderName: null, attempt: 0, expiresAt: 1_800_000_000, ...overrides };
}

/** Video JSONs of two different fan-out shards. */
function videosInTwoShards(): [string, string] {
  const first = '{"id":"video-0"}';
  for (let i = 1; i < 1000; i++) {
    const other = `{"id":"video-${i}"}`;
    if (ctx.keys.fanoutShardOf(other) !== ctx.keys.fanoutShardOf(first)) return [first, other];
  }
  throw new Error('no second shard found');
}

describe('the sharded fan-out queue', () => {
  test("a video's jobs and marker share its shard; claims take the job due longest across shards", async () => {
    const [older, newer] = videosInTwoShards();
    assert.equal(await bells.enqueueFanoutJob(ctx, 'e-older', job(older), 3600), true);
    clock.advance(1000);
    assert.equal(await bells.enqueueFanoutJob(ctx, 'e-newer', job(newer), 3600), true);
    const olderShard = ctx.keys.fanoutShardOf(older);
    assert.equal(await raw.exists(ctx.keys.fanoutEnqueuedKey(olderShard, 'e-older')), 1, 'the marker sits in the job shard');
    assert.equal(await raw.zcard(ctx.keys.newPostFanoutJobsKey(olderShard)), 1);

    const claimed = await bells.claimFanoutJob(ctx, LEASE_MS);
    assert.equal(claimed?.job?.eventJson, older, 'the job due longest, whatever its shard');
    assert.ok(claimed);
    await bells.completeFanoutJob(ctx, claimed, job(older, { cursor: '7' }));
    assert.equal(await raw.zcard(ctx.keys.newPostFanoutJobsKey(olderShard)), 1, 'the successor replaced the page in the same shard');
    assert.deepEqual(await bells.fanoutJobStats(ctx), { due: 2, waiting: 0 });
    assert.equal(await bells.enqueueFanoutJob(ctx, 'e-older', job(older), 3600), false, 'the marker still refuses a second fan-out');
  });
});

describe('the ntfy sequencer, step by step', () => {
  let topics: RedisNtfyTopics;
  const channel = ntfyWakeChannel('');

  beforeEach(() => {
    topics = new RedisNtfyTopics(ctx);
  });
  afterEach(async () => {
    await topics.close();
  });

  /** Step 1 alone: what an appender that dies right after it leaves behind. */
  async function allocateOnly(): Promise<[number, number, string, string]> {
    return (await ctx.scripts.run(
      'allocateNtfyId',
      [ctx.keys.ntfyHeadKey, ctx.keys.ntfyPendingKey, ctx.keys.ntfyHeldKey],
      [clock.nowMs(), NTFY_MAX_SEQ, NTFY_PENDING_LEASE_MS, channel],
    )) as [number, number, string, string];
  }

  test('readers never pass an id still pending; its lease ending lets them on', async () => {
    const before = await topics.append('t1', { message: 'before' }, TTL_MS);
    await allocateOnly();
    const after = await topics.append('t2', { message: 'after' }, TTL_MS);
    const read = await topics.read(['t1', 't2'], null, 10);
    assert.deepEqual(
      read.messages.map((m) => m.message),
      ['before'],
      'the message committed after a pending id waits for it',
    );
    assert.equal(read.position, before.id, 'the position stops below the pending id');
    assert.equal(await topics.head(), before.id);

    clock.advance(NTFY_PENDING_LEASE_MS);
    const later = await topics.read(['t1', 't2'], read.position, 10);
    assert.deepEqual(
      later.messages.map((m) => m.id),
      [after.id],
      'past the lease the reader goes on, exactly once',
    );
    assert.equal(later.position, after.id);
    assert.equal(await raw.zcard(ctx.keys.ntfyPendingKey), 0, 'the abandoned id was dropped');
  });

  test('append events are published in id order even when the later append completes first', async () => {
    const subscriber = new Redis(url);
    const heard: NtfyAppendEvent[] = [];
    subscriber.on('message', (_channel: string, payload: string) => {
      const event = parseAppendEvent(payload);
      if (event) heard.push(event);
    });
    await subscriber.subscribe(channel);
    try {
      const [ms1, seq1, previous1, first] = await allocateOnly();
      const [ms2, seq2, , second] = await allocateOnly();
      const event = (ms: number, seq: number, previous: string, text: string) =>
        `1 ${previous} ${ms}-${seq} ${ms + TTL_MS} 1 t{"message":"${text}"}`;
      const complete = (member: string, payload: string) =>
        ctx.scripts.run('completeNtfyAppend', [ctx.keys.ntfyPendingKey, ctx.keys.ntfyHeldKey], [member, payload, clock.nowMs(), channel]);
      assert.equal(await complete(second, event(ms2, seq2, `${ms1}-${seq1}`, 'second')), 1);
      assert.equal(await raw.hlen(ctx.keys.ntfyHeldKey), 1, 'held behind the first, still pending');
      assert.equal(await complete(first, event(ms1, seq1, previous1, 'first')), 1);
      assert.equal(await raw.hlen(ctx.keys.ntfyHeldKey), 0);
      const deadline = Date.now() + 5_000;
      while (heard.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.deepEqual(
        heard.map((e) => e.message.message),
        ['first', 'second'],
        'id order on the channel',
      );
      assert.equal(heard[1]?.previousId, heard[0]?.message.id, 'an unbroken chain');
    } finally {
      await subscriber.quit();
    }
  });

  test('a commit the topic refuses gives its id up: nothing stays pending and the store reads on', async () => {
    const kept = await topics.append('t1', { message: 'kept' }, TTL_MS);
    // A later entry than any id the sequencer will give out soon: every commit to t1 is refused.
    await raw.xadd(ctx.keys.ntfyTopicKey('t1'), `${clock.nowMs() + 3_600_000}-0`, 'm', '{"message":"future"}', 'x', '1');
    await assert.rejects(topics.append('t1', { message: 'refused' }, TTL_MS), /equal or smaller/);
    assert.equal(await raw.zcard(ctx.keys.ntfyPendingKey), 0, 'every allocation was completed without an event');
    const other = await topics.append('t2', { message: 'other' }, TTL_MS);
    const read = await topics.read(['t2'], kept.id, 10);
    assert.deepEqual(
      read.messages.map((m) => m.id),
      [other.id],
    );
    assert.equal(read.position, other.id, 'the given-up ids hold nobody back');
  });
});
