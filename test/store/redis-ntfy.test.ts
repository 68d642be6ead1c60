/**
 * Redis-only behaviour of the ntfy topics (src/store/redis/ntfy.ts) that the adapter-neutral
 * contract cannot see: the key layout, ids across writers whose clocks disagree, the janitor's
 * index, the wake-up channel and its key prefix, and damaged entries.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { openRedisStore, type RedisStore } from '../../src/store/redis/index.ts';
import { decodeNtfyId } from '../../src/store/ntfy-ids.ts';
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
    assert.deepEqual(await raw.xrange(`ntfy:topic:${TOPIC}`, '-', '+'), [[entryId, ['m', '{"message":"hello","title":"T"}', 'x', String(clock.nowMs() + TTL_MS)]]]);
    assert.equal(await raw.zscore('ntfy:expiry', TOPIC), String(clock.nowMs() + TTL_MS));
    assert.equal(await raw.hget('ntfy:ids', entryId), TOPIC);
    assert.deepEqual(decodeNtfyId(message.id), { ms: clock.nowMs(), seq: 0 });
  });

  test('ids rise in commit order even when two writers\' clocks are ten seconds apart', async () => {
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
    assert.deepEqual(read.messages.map((m) => m.id), ids);
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
    assert.deepEqual(read.messages.map((m) => m.id), [good.id]);
  });

  test('wake-ups reach other instances with the same key prefix, once each, and never another prefix', async () => {
    const clock = new ManualClock();
    const writer = await open(clock, 'p1:');
    const sameStore = await open(clock, 'p1:');
    const otherPrefix = await open(clock, 'p2:');
    const heardByWriter: string[] = [];
    const heardBySame: string[] = [];
    const heardByOther: string[] = [];
    writer.onNtfyAppend((t) => heardByWriter.push(t));
    sameStore.onNtfyAppend((t) => heardBySame.push(t));
    otherPrefix.onNtfyAppend((t) => heardByOther.push(t));
    // Subscribing happens in the background: wait until Redis counts both p1 subscribers.
    await until(async () => {
      const [, count] = (await raw.pubsub('NUMSUB', 'p1:ntfy:wake')) as [string, number];
      return Number(count) === 2;
    }, 'both subscriptions');
    await writer.appendNtfyMessage(TOPIC, { message: 'one' }, TTL_MS);
    await writer.appendNtfyMessage('second', { message: 'two' }, TTL_MS);
    await until(() => heardBySame.length === 2, 'the wake-ups over pub/sub');
    assert.deepEqual(heardBySame, [TOPIC, 'second']);
    assert.deepEqual(heardByWriter, [TOPIC, 'second'], 'the writer hears its own appends once, locally');
    assert.deepEqual(heardByOther, []);
    assert.equal(await raw.exists('p1:ntfy:head'), 1);
  });
});
