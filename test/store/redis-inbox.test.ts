/**
 * Redis-only behaviour of the inbox, which the adapter-neutral contract cannot see: Twitarr's key
 * names in the divine layout, the cluster layout's slots (a user's keys together, a word's watcher
 * set with its index shard, the announcements together), and the steps of replaceAlertWords after
 * a crash between them (shown by running the first steps alone).
 *
 * Runs on database 5 of a private redis-server with no key prefix, flushed before each test.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import calculateKeySlot from 'cluster-key-slot';
import { openRedisStore, type RedisStore } from '../../src/store/redis/index.ts';
import { CLUSTER_ALERT_WORD_SHARDS, createRedisKeys, shardOf } from '../../src/store/redis/keys.ts';
import { RedisScripts } from '../../src/store/redis/scripts.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';

const DB = 5;
const ALICE = 'a1'.repeat(32);
const BOB = 'b2'.repeat(32);
const START_MS = 1_767_225_600_000;
const DAY_MS = 86_400_000;
const TTL_SECS = 3600;

let server: PrivateRedisServer;
let url: string;
let raw: Redis;
let clock: ManualClock;

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
  clock = new ManualClock(START_MS);
});

describe('the divine layout keeps Twitarr’s inbox keys', () => {
  let store: RedisStore;
  beforeEach(async () => {
    store = await openRedisStore({ url, clock });
  });
  afterEach(async () => {
    await store.close();
  });

  test('counters, alert words and announcements under their seed names, the index scored by watchers', async () => {
    await store.rememberInboxUser(ALICE);
    await store.countInboxNotifications([{ countKey: 'e1', recipient: ALICE, type: 'like' }], TTL_SECS);
    await store.replaceAlertWords(ALICE, ['pizza', 'sunset']);
    await store.replaceAlertWords(BOB, ['pizza']);
    const announcement = await store.publishAnnouncement('hello', START_MS + DAY_MS);
    assert.deepEqual(
      (await raw.keys('*')).sort(),
      [
        `inbox:${ALICE}`,
        `inbox:${BOB}`,
        // The janitor's index of users by their last active day (issue 35, idle expiry).
        'inbox_active',
        `inbox_counted:e1:${ALICE}`,
        'alertwords',
        'alertwordUsers:pizza',
        'alertwordUsers:sunset',
        `user_alertwords:${ALICE}`,
        `user_alertwords:${BOB}`,
        'announcements',
        'announcements:active',
        'announcements:seq',
      ].sort(),
    );
    assert.deepEqual(await raw.zrange('alertwords', 0, -1, 'WITHSCORES'), ['sunset', '1', 'pizza', '2'], 'score = watchers');
    assert.deepEqual((await raw.smembers('alertwordUsers:pizza')).sort(), [ALICE, BOB].sort());
    assert.equal(await raw.hget(`inbox:${ALICE}`, 'like'), '1');
    assert.equal(await raw.get('announcements:seq'), String(announcement.id));
  });
});

describe('the cluster layout', () => {
  const keys = createRedisKeys('cluster');
  let store: RedisStore;
  let scripts: RedisScripts;
  const widenKeys = (pubkey: string): string[] => [
    keys.userAlertWordsKey(pubkey),
    keys.inboxKey(pubkey),
    keys.userAlertWordsLockKey(pubkey),
  ];
  beforeEach(async () => {
    store = await openRedisStore({ url, clock, layout: 'cluster' });
    scripts = new RedisScripts(raw);
  });
  afterEach(async () => {
    await store.close();
  });

  test("a user's inbox keys share the user's slot; a word's watchers share its index shard's; announcements share one", () => {
    const userKeys = [keys.inboxKey(ALICE), keys.inboxCountedKey('e1', ALICE), keys.userAlertWordsKey(ALICE), keys.userTokensKey(ALICE)];
    assert.equal(new Set(userKeys.map((key) => calculateKeySlot(key))).size, 1, userKeys.join(' '));
    for (const word of ['pizza', 'café', '猫咪', 'a{b}c']) {
      const pair = [keys.alertWordIndexKey(word), keys.alertWordUsersKey(word)];
      assert.equal(calculateKeySlot(pair[0] as string), calculateKeySlot(pair[1] as string), pair.join(' '));
      assert.equal(pair[0], `alertwords:{a:${shardOf(word, CLUSTER_ALERT_WORD_SHARDS)}}`);
    }
    const announcementKeys = [keys.announcementsKey, keys.activeAnnouncementsKey, keys.announcementSeqKey];
    assert.equal(new Set(announcementKeys.map((key) => calculateKeySlot(key))).size, 1, announcementKeys.join(' '));
    assert.equal(keys.alertWordIndexKeys.length, CLUSTER_ALERT_WORD_SHARDS);
  });

  test('the badge of a count and of a read include the active announcements, read from their own slot', async () => {
    await store.rememberInboxUser(ALICE);
    await store.publishAnnouncement('hello', START_MS + DAY_MS);
    assert.deepEqual(await store.countInboxNotifications([{ countKey: 'e1', recipient: ALICE, type: 'like' }], TTL_SECS), [2]);
    assert.deepEqual(await store.readInboxBadges([ALICE, BOB]), [2, 1], 'a user who never looked has the announcement new');
    assert.equal((await store.markInboxViewed(ALICE, ['announcement'])).totalNew, 1);
  });

  test('a replace that stopped after widening leaves a superset of words, and the next replace settles it', async () => {
    await store.replaceAlertWords(ALICE, ['pizza', 'sunset']);
    // A replace to ['tea'] that stopped after step 1 and half of step 2.
    const before = await scripts.run('widenAlertWords', widenKeys(ALICE), ['crashed', 10_000, 'tea', 'cake']);
    assert.deepEqual((before as string[]).sort(), ['pizza', 'sunset'], 'step 1 answers the words held before');
    await scripts.run('watchAlertWord', [keys.alertWordIndexKey('tea'), keys.alertWordUsersKey('tea')], ['tea', ALICE, 1]);
    assert.deepEqual(await store.readAlertWords(ALICE), ['cake', 'pizza', 'sunset', 'tea'], 'the user’s set is a superset meanwhile');
    assert.equal(await raw.get(keys.userAlertWordsLockKey(ALICE)), 'crashed', 'the crashed replace holds the lock');
    await raw.del(keys.userAlertWordsLockKey(ALICE)); // its expiry, without waiting 10 s for it
    assert.deepEqual([...(await store.alertWordWatchers(['pizza', 'tea', 'cake']))].sort(), [
      ['pizza', [ALICE]],
      ['tea', [ALICE]],
    ]);

    await store.replaceAlertWords(ALICE, ['tea']);
    assert.deepEqual(await store.readAlertWords(ALICE), ['tea']);
    assert.deepEqual([...(await store.alertWordWatchers(['pizza', 'sunset', 'tea', 'cake']))], [['tea', [ALICE]]]);
    assert.equal(await store.alertWordCount(), 1, 'only tea is in the index');
    const indexed = await Promise.all(keys.alertWordIndexKeys.map((key) => raw.zrange(key, 0, -1, 'WITHSCORES')));
    assert.deepEqual(indexed.flat(), ['tea', '1'], 'scored by its watchers, counted once');
  });

  test('a replace retried after it stopped between its steps ends as one replace would', async () => {
    await store.replaceAlertWords(BOB, ['pizza']);
    await store.replaceAlertWords(ALICE, ['pizza', 'sunset']);
    // A replace to ['pizza', 'tea'] that stopped after step 3 (before narrowing), then its retry.
    await scripts.run('widenAlertWords', widenKeys(ALICE), ['crashed', 10_000, 'pizza', 'tea']);
    await scripts.run('watchAlertWord', [keys.alertWordIndexKey('tea'), keys.alertWordUsersKey('tea')], ['tea', ALICE, 1]);
    await scripts.run('watchAlertWord', [keys.alertWordIndexKey('sunset'), keys.alertWordUsersKey('sunset')], ['sunset', ALICE, 0]);
    await raw.del(keys.userAlertWordsLockKey(ALICE)); // the crashed replace's lock expired
    await store.replaceAlertWords(ALICE, ['pizza', 'tea']);
    assert.deepEqual(await store.readAlertWords(ALICE), ['pizza', 'tea']);
    assert.deepEqual([...(await store.alertWordWatchers(['pizza', 'sunset', 'tea']))].sort(), [
      ['pizza', [ALICE, BOB].sort()],
      ['tea', [ALICE]],
    ]);
    assert.equal(await raw.zscore(keys.alertWordIndexKey('pizza'), 'pizza'), '2', 'pizza is watched by two, not counted again');
  });

  test('replaces of one user at once take turns: the watchers end exactly the words of the last one', async () => {
    const lists = [['pizza', 'tea'], ['tea', 'cake'], ['sunset'], ['cake', 'pizza', 'sunset'], []];
    for (let round = 0; round < 5; round++) {
      await Promise.all(lists.map((list) => store.replaceAlertWords(ALICE, list)));
      const words = await store.readAlertWords(ALICE);
      assert.ok(
        lists.some((list) => JSON.stringify([...list].sort()) === JSON.stringify(words)),
        `the set is one replace's words: ${words.join(' ')}`,
      );
      const watched = await store.alertWordWatchers(['pizza', 'tea', 'cake', 'sunset']);
      assert.deepEqual([...watched.keys()].sort(), words, 'watched exactly the words in the set');
      assert.equal(await store.alertWordCount(), words.length, 'the index holds those words only');
      assert.equal(await raw.exists(keys.userAlertWordsLockKey(ALICE)), 0, 'the lock is released');
    }
  });

  test('a replace waits for the one holding the user’s lock, then works from the words it left', async () => {
    await store.replaceAlertWords(ALICE, ['pizza']);
    // Replace A, step by step: widen to ['tea'] under its lock and watch it.
    assert.deepEqual(await scripts.run('widenAlertWords', widenKeys(ALICE), ['replace-a', 10_000, 'tea']), ['pizza']);
    let secondDone = false;
    const second = store.replaceAlertWords(ALICE, ['cake']).then(() => {
      secondDone = true;
    });
    await scripts.run('watchAlertWord', [keys.alertWordIndexKey('tea'), keys.alertWordUsersKey('tea')], ['tea', ALICE, 1]);
    await scripts.run('watchAlertWord', [keys.alertWordIndexKey('pizza'), keys.alertWordUsersKey('pizza')], ['pizza', ALICE, 0]);
    assert.deepEqual(await store.readAlertWords(ALICE), ['pizza', 'tea'], 'the second replace has not widened: it waits');
    assert.equal(secondDone, false);
    await raw.srem(keys.userAlertWordsKey(ALICE), 'pizza');
    assert.equal(await scripts.run('releaseClaim', [keys.userAlertWordsLockKey(ALICE)], ['replace-a']), 1, 'A releases its lock');
    await second;
    assert.deepEqual(await store.readAlertWords(ALICE), ['cake']);
    assert.deepEqual([...(await store.alertWordWatchers(['pizza', 'tea', 'cake']))], [['cake', [ALICE]]], 'tea, from A, is unwatched by B');
  });
});
