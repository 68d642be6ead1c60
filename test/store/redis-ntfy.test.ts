/**
 * Redis-only behaviour of the ntfy topics (src/store/redis/ntfy.ts) that the adapter-neutral
 * contract cannot see: the key layout, ids across writers whose clocks disagree, the janitor's
 * index, the append-event channel and its key prefix, and damaged entries.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { openRedisStore, type RedisStore } from '../../src/store/redis/index.ts';
import { decodeNtfyId, encodeNtfyId } from '../../src/store/ntfy-ids.ts';
import { parseAppendEvent } from '../../src/store/redis/ntfy.ts';
import { NTFY_SCHEDULED_LEASE_MS } from '../../src/store/redis/ntfy-scheduled.ts';
import { readFileSync } from 'node:fs';

/** A Lua script of the adapter as it is on disk (these scripts include no helpers). */
const readLua = (name: string): string => readFileSync(new URL(`../../src/store/redis/lua/${name}`, import.meta.url), 'utf8');
import type { NtfyAppendEvent } from '../../src/store/port-ntfy.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';

const DB = 5;
const TTL_MS = 60_000;
const TOPIC = 'upAAAAAAAAAAAA';

let server: PrivateRedisServer;
let url: string;
let raw: Redis;
const stores: RedisStore[] = [];

async function open(clock: ManualClock, keyPrefix?: string): Promise<RedisStore> {
  const store = await openRedisStore({ url, clock, ...(keyPrefix ? { keyPrefix } : {}) });
  stores.push(store);
  return store;
}

/** Resolve once `check` holds (it is re-checked on a short tick until a deadline). */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

before(async () => {
  server = await startRedisServer();
  url = `${server.url}/${DB}`;
  raw = new Redis(url);
});
after(async () => {
  await raw.quit();
  await server.stop();
});
beforeEach(async () => {
  await raw.flushdb();
});
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

describe('Redis ntfy topics', () => {
  test('layout: a stream per topic, the head, the expiry index and the id index', async () => {
    const clock = new ManualClock();
    const store = await open(clock);
    const message = await store.appendNtfyMessage(TOPIC, { message: 'hello', title: 'T' }, TTL_MS);
    const entryId = `${clock.nowMs()}-0`;
    assert.equal(await raw.get('ntfy:head'), entryId);
    assert.equal(await raw.type(`ntfy:topic:${TOPIC}`), 'stream');
    assert.deepEqual(await raw.xrange(`ntfy:topic:${TOPIC}`, '-', '+'), [
      [entryId, ['m', '{"message":"hello","title":"T"}', 'x', String(clock.nowMs() + TTL_MS)]],
    ]);
    assert.equal(await raw.zscore('ntfy:expiry', TOPIC), String(clock.nowMs() + TTL_MS));
    assert.equal(await raw.hget('ntfy:ids', entryId), TOPIC);
    assert.deepEqual(decodeNtfyId(message.id), { ms: clock.nowMs(), seq: 0 });
  });

  test("ids rise in commit order even when two writers' clocks are ten seconds apart", async () => {
    const ahead = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 10));
    const behind = new ManualClock(Date.UTC(2026, 0, 1));
    const [a, b] = [await open(ahead), await open(behind)];
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      ids.push((await (i % 2 ? a : b).appendNtfyMessage(i % 3 ? TOPIC : 'other', { message: `m${i}` }, TTL_MS)).id);
      ahead.advance(1);
      behind.advance(1);
    }
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(new Set(ids).size, ids.length);
    const read = await a.readNtfyMessages([TOPIC, 'other'], null, 100);
    assert.deepEqual(
      read.messages.map((m) => m.id),
      ids,
    );
  });

  test('any number of reads, of any number of topics, is one script call on prefixed keys (60,000 topics too)', async () => {
    const clock = new ManualClock();
    const store = await open(clock, 'pfx:');
    const first = await store.appendNtfyMessage(TOPIC, { message: 'one' }, TTL_MS);
    const second = await store.appendNtfyMessage('other', { message: 'two' }, TTL_MS);
    const many = [...Array.from({ length: 60_000 }, (_, i) => `idle-${i}`), 'other'];
    await raw.config('RESETSTAT');
    const [a, b, c] = await store.readNtfyMessagesMany([
      { topics: [TOPIC], afterId: null, limit: 10 },
      { topics: many, afterId: first.id, limit: 10 },
      { topics: [TOPIC, 'other'], afterId: null, limit: 1 },
    ]);
    const stats = await raw.info('commandstats');
    assert.match(stats, /cmdstat_evalsha:calls=1,/);
    assert.doesNotMatch(stats, /cmdstat_(multi|exec):/, 'no MULTI');
    assert.deepEqual(
      a?.messages.map((m) => m.id),
      [first.id],
    );
    assert.deepEqual(b, { messages: [second], position: second.id, complete: true });
    assert.deepEqual(
      c?.messages.map((m) => m.id),
      [first.id],
    );
    assert.equal(c.complete, false);
  });

  test('the janitor trims a topic from its oldest entry, re-indexes it, and drops it when empty', async () => {
    const clock = new ManualClock();
    const store = await open(clock);
    await store.appendNtfyMessage(TOPIC, { message: 'short' }, 1_000);
    const kept = await store.appendNtfyMessage(TOPIC, { message: 'long' }, TTL_MS);
    await store.appendNtfyMessage('gone', { message: 'short' }, 1_000);
    clock.advance(1_000);
    assert.equal(await store.expireNtfyMessages(100), 2);
    assert.equal(await raw.xlen(`ntfy:topic:${TOPIC}`), 1);
    assert.equal(await raw.zscore('ntfy:expiry', TOPIC), String(kept.expiresMs), 'indexed by its new oldest entry');
    assert.equal(await raw.exists('ntfy:topic:gone'), 0, 'an emptied topic is deleted');
    assert.equal(await raw.zscore('ntfy:expiry', 'gone'), null);
    assert.equal(await raw.hlen('ntfy:ids'), 1);
    const later = await store.appendNtfyMessage('gone', { message: 'again' }, TTL_MS);
    assert.ok(later.id > kept.id, 'a recreated stream still gets rising ids');
  });

  test('a damaged entry is skipped and logged, never thrown', async () => {
    const store = await open(new ManualClock());
    const good = await store.appendNtfyMessage(TOPIC, { message: 'good' }, TTL_MS);
    await raw.xadd(`ntfy:topic:${TOPIC}`, '99999999999999-0', 'junk', '1');
    await raw.set('ntfy:head', '99999999999999-0');
    const read = await store.readNtfyMessages([TOPIC], null, 10);
    assert.deepEqual(
      read.messages.map((m) => m.id),
      [good.id],
    );
  });

  test('append events reach every instance with the same key prefix (the writer too), in commit order, and never another prefix', async () => {
    const clock = new ManualClock();
    const writer = await open(clock, 'p1:');
    const sameStore = await open(clock, 'p1:');
    const otherPrefix = await open(clock, 'p2:');
    const heardByWriter: NtfyAppendEvent[] = [];
    const heardBySame: NtfyAppendEvent[] = [];
    const heardByOther: NtfyAppendEvent[] = [];
    writer.onNtfyAppend((e) => heardByWriter.push(e));
    sameStore.onNtfyAppend((e) => heardBySame.push(e));
    otherPrefix.onNtfyAppend((e) => heardByOther.push(e));
    // Subscribing happens in the background: wait until Redis counts both p1 subscribers.
    await until(async () => {
      const [, count] = (await raw.pubsub('NUMSUB', 'p1:ntfy:wake')) as [string, number];
      return count === 2;
    }, 'both subscriptions');
    const one = await writer.appendNtfyMessage(TOPIC, { message: 'one', tags: ['a'] }, TTL_MS);
    const two = await sameStore.appendNtfyMessage('second topic', { message: 'two' }, TTL_MS);
    await until(() => heardBySame.length === 2 && heardByWriter.length === 2, 'the events over pub/sub');
    const expected: NtfyAppendEvent[] = [
      { message: one, previousId: null },
      { message: two, previousId: one.id },
    ];
    assert.deepEqual(heardBySame, expected);
    assert.deepEqual(heardByWriter, expected, "the writer hears its own appends over the channel, in order with everyone else's");
    assert.deepEqual(heardByOther, []);
    assert.equal(await raw.exists('p1:ntfy:head'), 1);
  });

  test('a payload of another format on the channel (an older version mid-deploy) is ignored, and the next event reveals the gap', async () => {
    const store = await open(new ManualClock(), 'p3:');
    const heard: NtfyAppendEvent[] = [];
    store.onNtfyAppend((e) => heard.push(e));
    await until(async () => {
      const [, count] = (await raw.pubsub('NUMSUB', 'p3:ntfy:wake')) as [string, number];
      return count === 1;
    }, 'the subscription');
    const first = await store.appendNtfyMessage(TOPIC, { message: 'first' }, TTL_MS);
    await raw.publish('p3:ntfy:wake', `f00dcafe ${TOPIC}`);
    await raw.publish('p3:ntfy:wake', '1 - 1-0 5 999 short');
    const second = await store.appendNtfyMessage(TOPIC, { message: 'second' }, TTL_MS);
    await until(() => heard.length === 2, 'both real events');
    assert.deepEqual(
      heard.map((e) => [e.message.id, e.previousId]),
      [
        [first.id, null],
        [second.id, first.id],
      ],
    );
    assert.equal(parseAppendEvent(`f00dcafe ${TOPIC}`), null);
    assert.equal(parseAppendEvent('1 - 1-0 5 3 ab'), null, 'topic longer than the payload');
    assert.equal(parseAppendEvent('1 - 1-0 5 2 ab{not json'), null);
    assert.deepEqual(parseAppendEvent('1 - 7-1 99 4 a bc{"message":"m"}'), {
      message: { id: encodeNtfyId({ ms: 7, seq: 1 }), topic: 'a bc', timeMs: 7, expiresMs: 99, message: 'm' },
      previousId: null,
    });
  });
});

describe('Redis scheduled ntfy messages', () => {
  test('layout: the entry in the topic hash, its member in the due index; gone from both once delivered', async () => {
    const clock = new ManualClock();
    const store = await open(clock);
    const scheduled = await store.scheduleNtfyMessage(TOPIC, { message: 'later' }, clock.nowMs() + 60_000, TTL_MS);
    const entry = await raw.hget(`ntfy:sched:${TOPIC}`, scheduled.id);
    assert.match(entry ?? '', new RegExp(`^${clock.nowMs() + 60_000} ${TTL_MS} \\{`));
    assert.equal(await raw.zscore('ntfy:due', `${scheduled.id} ${TOPIC}`), String(clock.nowMs() + 60_000));
    clock.advance(60_000);
    assert.equal((await store.releaseDueNtfyMessages(10)).length, 1);
    assert.equal(await raw.hlen(`ntfy:sched:${TOPIC}`), 0);
    assert.equal(await raw.zcard('ntfy:due'), 0);
  });

  test('a claim whose process died holds the message until its lease ends, then another process delivers it once', async () => {
    const clock = new ManualClock();
    const crashed = await open(clock);
    const survivor = await open(clock);
    const scheduled = await crashed.scheduleNtfyMessage(TOPIC, { message: 'claimed, then orphaned' }, clock.nowMs() + 10_000, TTL_MS);
    clock.advance(10_000);
    // The first step of a release, as a process that dies before the second would leave it.
    const members = (await raw.evalsha(
      (await raw.script('LOAD', readLua('claimNtfyDue-1.lua'))) as string,
      1,
      'ntfy:due',
      clock.nowMs(),
      clock.nowMs() + NTFY_SCHEDULED_LEASE_MS,
      10,
    )) as string[];
    assert.deepEqual(members, [`${scheduled.id} ${TOPIC}`]);
    assert.deepEqual(await survivor.releaseDueNtfyMessages(10), [], 'claimed: left alone');
    clock.advance(NTFY_SCHEDULED_LEASE_MS);
    const [delivered] = await survivor.releaseDueNtfyMessages(10);
    assert.equal(delivered?.sequenceId, scheduled.id);
    assert.deepEqual(await crashed.releaseDueNtfyMessages(10), [], 'never twice');
    assert.equal((await survivor.readNtfyMessages([TOPIC], null, 10)).messages.length, 1);
  });

  test('a due member whose entry is gone (delivered elsewhere, or a crash mid-schedule) is dropped', async () => {
    const clock = new ManualClock();
    const store = await open(clock);
    await raw.zadd('ntfy:due', clock.nowMs(), `AbCdEfGhIjKl ${TOPIC}`);
    assert.deepEqual(await store.releaseDueNtfyMessages(10), []);
    assert.equal(await raw.zcard('ntfy:due'), 0);
    assert.equal(await store.ntfyHeadId(), null, 'no id allocated');
  });
});
