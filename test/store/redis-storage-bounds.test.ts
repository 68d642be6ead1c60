/**
 * Redis-only behaviour of issue 35's storage bounds, which the adapter-neutral contract cannot see:
 * an inbox user's activity reaches the sweep's index once a day (not once a request), a quota's key
 * expires with its window by Redis's own clock, and the cluster layout keeps each step in one slot.
 *
 * Runs on database 6 of a private redis-server with no key prefix, flushed before each test.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import calculateKeySlot from 'cluster-key-slot';
import { openRedisStore, type RedisStore } from '../../src/store/redis/index.ts';
import { createRedisKeys } from '../../src/store/redis/keys.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';

const DB = 6;
const ALICE = 'a1'.repeat(32);
const START_MS = Date.UTC(2026, 0, 1, 9);
const DAY_MS = 86_400_000;

let server: PrivateRedisServer;
let raw: Redis;
let clock: ManualClock;
let store: RedisStore;

before(async () => {
  server = await startRedisServer();
  raw = new Redis(`${server.url}/${DB}`);
});
after(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- before() can fail before it assigns these. */
  await raw?.quit();
  await server?.stop();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});
beforeEach(async () => {
  await raw.flushdb();
  clock = new ManualClock(START_MS);
  store = await openRedisStore({ url: `${server.url}/${DB}`, clock, layout: 'divine' });
});
afterEach(() => store.close());

describe('storage bounds on Redis', () => {
  test('a user’s requests raise the sweep’s index once a day: the same day again writes no index entry', async () => {
    await store.rememberInboxUser(ALICE);
    const day = Date.UTC(2026, 0, 1);
    assert.equal(await raw.zscore('inbox_active', ALICE), String(day));
    assert.equal(await raw.hget(`inbox:${ALICE}`, 'active'), String(day));
    // Take the entry away: a request later that day finds the hash at today and leaves the index alone.
    await raw.zrem('inbox_active', ALICE);
    clock.advance(6 * 3_600_000);
    await store.rememberInboxUser(ALICE);
    assert.equal(await raw.zscore('inbox_active', ALICE), null, 'no index write on a day already recorded');
    clock.advance(DAY_MS);
    await store.rememberInboxUser(ALICE);
    assert.equal(await raw.zscore('inbox_active', ALICE), String(day + DAY_MS), 'the next day writes it again');
  });

  test('a quota’s key holds its window’s members and expires by Redis’s clock shortly after the window ends', async () => {
    const result = await store.takeClientQuota({ scope: 'things', client: '2001:db8::1', member: 'one', limit: 3, windowMs: DAY_MS });
    const key = `client_quota:things:${Date.UTC(2026, 0, 1)}:2001:db8::1`;
    assert.deepEqual(await raw.smembers(key), ['one']);
    const ttl = await raw.pttl(key);
    assert.ok(ttl > result.retryAfterMs - 5_000 && ttl <= result.retryAfterMs + 60_000, `PTTL ${ttl} against ${result.retryAfterMs} left`);
  });

  test('the cluster layout keeps each storage-bound step in one slot', () => {
    const keys = createRedisKeys('cluster');
    const slot = (key: string) => calculateKeySlot(key);
    // forgetIdleInboxUser-4 and touchInboxUser-1 touch the user's keys only.
    const userKeys = [keys.inboxKey(ALICE), keys.userTokensKey(ALICE), keys.userAlertWordsKey(ALICE), keys.userAlertWordsLockKey(ALICE)];
    assert.equal(new Set(userKeys.map(slot)).size, 1);
    assert.equal(keys.inboxActivityKeys.length, 16);
    assert.match(keys.inboxActivityKey(ALICE), /^inbox_active:\{ia:\d+\}$/);
    assert.match(keys.nip9aCallbackActivityKey('cb-1'), /^nip9a:callbacks_received:\{cr:\d+\}$/);
  });
});
