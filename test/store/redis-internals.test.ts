import { createHash } from 'node:crypto';
/**
 * Redis-only behaviour of the Redis adapter, which the adapter-neutral contract cannot see: the
 * exact divine-push-service key layout, TTLs, Redis command semantics, reading a Redis written by
 * divine, damaged values, the script loader, and two store instances sharing one Redis.
 *
 * Everything runs on database 3 of a private redis-server with no key prefix (the seed's key
 * names must appear exactly), flushed before each test.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import type { DeviceRegistration } from '../../src/store/port.ts';
import { openRedisStore, RedisServerClock, type RedisStore } from '../../src/store/redis/index.ts';
import { CORRUPT_PAYLOAD_REASON } from '../../src/store/redis/queues.ts';
import {
  LUA_DIR,
  RedisScripts,
  SCRIPT_NAMES,
  ScriptLoaderError,
  findHeaderProblems,
  loadScriptDefinitions,
  parseScriptFileName,
} from '../../src/store/redis/scripts.ts';
import { SWEEP_BATCH_SIZE } from '../../src/store/redis/tokens.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';

const DB = 3;
const SECOND_MS = 1000;
const DAY_MS = 86_400 * SECOND_MS;
const ALICE = 'a1'.repeat(32);
const BOB = 'b2'.repeat(32);
const CAROL = 'c3'.repeat(32);
const EVENT_ID = 'e1'.repeat(32);
const CLAIM_TTL_SECS = 3600;
const LEASE = { max: 10, leaseMs: 30 * SECOND_MS, maxAttempts: 5 };

const FCM: DeviceRegistration = { token: 'fcm-token-1', transport: 'fcm', timezoneOffsetMinutes: 600 };
const WEBPUSH: DeviceRegistration = {
  token: 'https://push.example.com/sub/1',
  transport: 'webpush',
  endpoint: 'https://push.example.com/sub/1',
  p256dh: 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM',
  auth: 'tBHItJI5svbpez7KI4CCXg',
};

let server: PrivateRedisServer;
let url: string;
let raw: Redis;
let clock: ManualClock;
let store: RedisStore;
const extraStores: RedisStore[] = [];

async function openExtraStore(options: { clock?: ManualClock; keyPrefix?: string } = {}): Promise<RedisStore> {
  const opened = await openRedisStore({ url, ...options });
  extraStores.push(opened);
  return opened;
}

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

describe('seed 000 key layout', () => {
  test('register, claim, preferences and profile write exactly the seed keys and values', async () => {
    await store.registerToken(ALICE, FCM);
    assert.equal(await store.claimEvent(EVENT_ID, CLAIM_TTL_SECS), true);
    const claim = await store.claimRecipientDelivery(EVENT_ID, BOB, CLAIM_TTL_SECS);
    assert.ok(claim);
    await store.setPreferences(ALICE, { kinds: [1, 7, 16], campaignsEnabled: true });
    await store.cacheProfile({ pubkey: ALICE, name: 'alice' }, CLAIM_TTL_SECS);

    assert.deepEqual((await raw.keys('*')).sort(), [
      `campaign_consent:${ALICE}`,
      `dedup:${EVENT_ID}`,
      `dedup:${EVENT_ID}:${BOB}`,
      `profile_cache:${ALICE}`,
      'stale_tokens',
      'token_timezone_offsets',
      'token_to_pubkey',
      `user_preferences:${ALICE}`,
      `user_tokens:${ALICE}`,
    ]);
    assert.deepEqual(await raw.smembers(`user_tokens:${ALICE}`), [FCM.token]);
    assert.deepEqual(await raw.hgetall('token_to_pubkey'), { [FCM.token]: ALICE });
    assert.deepEqual(await raw.hgetall('token_timezone_offsets'), { [FCM.token]: '600' });
    assert.equal(await raw.zscore('stale_tokens', FCM.token), String(clock.nowMs() / 1000), 'unix seconds');
    assert.equal(await raw.get(`dedup:${EVENT_ID}`), '1');
    assert.equal(await raw.get(`dedup:${EVENT_ID}:${BOB}`), claim.owner);
    assert.match(claim.owner, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(await raw.get(`user_preferences:${ALICE}`), '{"kinds":[1,7,16]}');
    assert.equal(await raw.get(`campaign_consent:${ALICE}`), '1');
    assert.deepEqual(JSON.parse((await raw.get(`profile_cache:${ALICE}`)) ?? ''), { pubkey: ALICE, name: 'alice', display_name: null });

    await store.setPreferences(ALICE, { kinds: [7], campaignsEnabled: false });
    assert.equal(await raw.exists(`campaign_consent:${ALICE}`), 0, 'consent is deleted when campaigns are off');
  });

  test('nostr-push additions: token_devices only for non-plain-FCM devices, relay_cursors, queue keys', async () => {
    await store.registerToken(ALICE, WEBPUSH);
    await store.advanceRelayCursor('wss://relay.example.com', 1_767_225_600);
    await store.enqueue('inbound', { id: 'job', payload: { n: 1 } });
    assert.deepEqual(JSON.parse((await raw.hget('token_devices', WEBPUSH.token)) ?? ''), {
      transport: 'webpush',
      endpoint: WEBPUSH.endpoint,
      p256dh: WEBPUSH.p256dh,
      auth: WEBPUSH.auth,
    });
    assert.equal(await raw.hget('relay_cursors', 'wss://relay.example.com'), '1767225600');
    assert.equal(await raw.zscore('queue:inbound:ready', 'job'), String(clock.nowMs()));
    assert.equal(await raw.hget('queue:inbound:items', 'job'), '{"n":1}');
    assert.deepEqual(JSON.parse((await raw.hget('queue:inbound:meta', 'job')) ?? ''), { attempts: 0 });

    await store.registerToken(ALICE, { token: WEBPUSH.token, transport: 'fcm' });
    assert.equal(await raw.exists('token_devices'), 0, 'a plain FCM re-registration clears the device record');
  });
});

describe('claims and TTLs', () => {
  test('claims and the profile cache carry a TTL in (0, ttl]', async () => {
    await store.claimEvent(EVENT_ID, 60);
    await store.claimRecipientDelivery(EVENT_ID, BOB, 120);
    await store.cacheProfile({ pubkey: ALICE, name: 'alice' }, 300);
    for (const [key, ttlSecs] of [
      [`dedup:${EVENT_ID}`, 60],
      [`dedup:${EVENT_ID}:${BOB}`, 120],
      [`profile_cache:${ALICE}`, 300],
    ] as const) {
      const pttl = await raw.pttl(key);
      assert.ok(pttl > 0 && pttl <= ttlSecs * SECOND_MS, `${key} PTTL ${pttl}`);
    }
  });

  test('a fractional TTL is rounded up; a zero or negative TTL is refused', async () => {
    assert.equal(await store.claimEvent(EVENT_ID, 0.2), true);
    assert.ok((await raw.pttl(`dedup:${EVENT_ID}`)) > 0);
    await assert.rejects(store.claimEvent('other', 0), RangeError);
    await assert.rejects(store.claimRecipientDelivery(EVENT_ID, BOB, -1), RangeError);
  });

  test('SET NX: an existing claim is neither overwritten nor re-timed', async () => {
    await raw.set(`dedup:${EVENT_ID}`, 'divine', 'EX', 50);
    await raw.set(`dedup:${EVENT_ID}:${BOB}`, 'divine-owner', 'EX', 50);
    assert.equal(await store.claimEvent(EVENT_ID, CLAIM_TTL_SECS), false);
    assert.equal(await store.claimRecipientDelivery(EVENT_ID, BOB, CLAIM_TTL_SECS), null);
    assert.equal(await raw.get(`dedup:${EVENT_ID}`), 'divine');
    assert.equal(await raw.get(`dedup:${EVENT_ID}:${BOB}`), 'divine-owner');
    assert.ok((await raw.pttl(`dedup:${EVENT_ID}`)) <= 50 * SECOND_MS);
    assert.equal(await store.releaseRecipientDelivery({ eventId: EVENT_ID, recipient: BOB, owner: 'someone-else' }), false);
    assert.equal(await raw.get(`dedup:${EVENT_ID}:${BOB}`), 'divine-owner', 'compare-and-delete kept it');
  });

  test('a claim expired by Redis can be taken again', async () => {
    const subscriber = new Redis(url);
    try {
      await subscriber.config('SET', 'notify-keyspace-events', 'Ex');
      const expired = new Promise<string>((resolve) => subscriber.on('message', (_channel: string, key: string) => resolve(key)));
      await subscriber.subscribe(`__keyevent@${DB}__:expired`);
      assert.equal(await store.claimEvent(EVENT_ID, CLAIM_TTL_SECS), true);
      assert.equal(await store.claimEvent(EVENT_ID, CLAIM_TTL_SECS), false);
      await raw.pexpire(`dedup:${EVENT_ID}`, 1);
      assert.equal(await expired, `dedup:${EVENT_ID}`);
      assert.equal(await store.claimEvent(EVENT_ID, CLAIM_TTL_SECS), true);
    } finally {
      await raw.config('SET', 'notify-keyspace-events', '');
      subscriber.disconnect();
    }
  });
});

describe('tokens on Redis', () => {
  test('refresh is ZADD XX GT: never creates a member, never lowers a score', async () => {
    await store.registerToken(ALICE, FCM);
    const future = clock.nowMs() / 1000 + 3600;
    await raw.zadd('stale_tokens', future, FCM.token);
    clock.advance(60 * SECOND_MS);
    assert.equal(await store.refreshTokenActivity([FCM.token, 'unknown-token']), 0);
    assert.equal(await raw.zscore('stale_tokens', FCM.token), String(future), 'GT kept the higher score');
    assert.equal(await raw.zscore('stale_tokens', 'unknown-token'), null, 'XX created nothing');
    assert.equal(await raw.zcard('stale_tokens'), 1);
  });

  test('a Redis written by divine-push-service reads as FCM devices and is managed as usual', async () => {
    const now = clock.nowMs() / 1000;
    await raw
      .multi()
      .sadd(`user_tokens:${ALICE}`, 'divine-1', 'divine-2')
      .hset('token_to_pubkey', 'divine-1', ALICE, 'divine-2', ALICE)
      .hset('token_timezone_offsets', 'divine-1', '-300')
      .zadd('stale_tokens', now, 'divine-1', now - 90 * 86_400, 'divine-2')
      .exec();
    const devices = (await store.listDevices(ALICE)).sort((a, b) => a.token.localeCompare(b.token));
    assert.deepEqual(devices, [
      { token: 'divine-1', transport: 'fcm', timezoneOffsetMinutes: -300 },
      { token: 'divine-2', transport: 'fcm' },
    ]);
    assert.equal(await store.tokenOwner('divine-2'), ALICE);
    assert.equal(await store.tokenActivityMs('divine-1'), clock.nowMs());
    assert.equal(await store.sweepStaleTokens(60 * DAY_MS), 1);
    assert.deepEqual(await raw.smembers(`user_tokens:${ALICE}`), ['divine-1']);
    assert.equal(await store.removeToken(ALICE, 'divine-1'), true);
    assert.deepEqual((await raw.keys('*')).sort(), []);
  });

  test('registration re-reads an owner that changed under it (owner compare-and-set)', async () => {
    // An owner mapping with no user_tokens entry, as a concurrent writer could leave mid-way.
    await raw.hset('token_to_pubkey', FCM.token, CAROL);
    assert.deepEqual(await store.registerToken(BOB, FCM), { previousOwner: CAROL });
    assert.equal(await store.tokenOwner(FCM.token), BOB);
    assert.deepEqual(await raw.smembers(`user_tokens:${BOB}`), [FCM.token]);
  });

  test('the sweep removes ownerless stale tokens and works in batches', async () => {
    const count = SWEEP_BATCH_SIZE * 2 + 7;
    const pipeline = raw.pipeline();
    for (let i = 0; i < count; i++) {
      pipeline.sadd(`user_tokens:${ALICE}`, `t${i}`).hset('token_to_pubkey', `t${i}`, ALICE).zadd('stale_tokens', 1000, `t${i}`);
    }
    pipeline.zadd('stale_tokens', 1000, 'orphan');
    await pipeline.exec();
    assert.equal(await store.sweepStaleTokens(DAY_MS), count + 1);
    assert.equal(await raw.exists('stale_tokens', 'token_to_pubkey', `user_tokens:${ALICE}`), 0);
  });

  test('a damaged token_devices entry or timezone offset does not break listDevices', async () => {
    await store.registerToken(ALICE, FCM);
    await store.registerToken(ALICE, WEBPUSH);
    await raw.hset('token_devices', WEBPUSH.token, '{not json');
    await raw.hset('token_timezone_offsets', FCM.token, 'ten');
    assert.deepEqual(await store.listDevices(ALICE), [{ token: FCM.token, transport: 'fcm' }]);
  });
});

describe('damaged records read as absent', () => {
  for (const [label, value] of [
    ['not JSON', '{"kinds": [1,'],
    ['kinds not an array', '{"kinds":"1,7"}'],
    ['a bare array', '[1,7]'],
    ['a non-integer kind', '{"kinds":[1,"7"]}'],
  ] as const) {
    test(`user_preferences that is ${label} → getPreferences null`, async () => {
      await raw.set(`user_preferences:${ALICE}`, value);
      await raw.set(`campaign_consent:${ALICE}`, '1');
      assert.equal(await store.getPreferences(ALICE), null);
    });
  }

  test('preferences written by divine (no consent key) read with campaigns off', async () => {
    await raw.set(`user_preferences:${ALICE}`, '{"kinds":[1,7,16]}');
    assert.deepEqual(await store.getPreferences(ALICE), { kinds: [1, 7, 16], campaignsEnabled: false });
  });

  test('a damaged profile cache entry or relay cursor is a miss', async () => {
    await raw.set(`profile_cache:${ALICE}`, 'nope');
    await raw.hset('relay_cursors', 'wss://r.example', 'soon');
    assert.equal(await store.getCachedProfile(ALICE), null);
    assert.equal(await store.getRelayCursor('wss://r.example'), null);
    await store.advanceRelayCursor('wss://r.example', 5);
    assert.equal(await store.getRelayCursor('wss://r.example'), 5, 'a damaged cursor is replaced, not wedged');
  });

  test('a queue item whose payload no longer parses is dead-lettered on lease', async () => {
    await store.enqueue('outbound', { id: 'bad', payload: 1 });
    await store.enqueue('outbound', { id: 'good', payload: 2, availableAtMs: clock.nowMs() + 1 });
    await raw.hset('queue:outbound:items', 'bad', '{broken');
    clock.advance(1);
    const leased = await store.lease('outbound', LEASE);
    assert.deepEqual(
      leased.map((item) => item.id),
      ['good'],
    );
    const [dead] = await store.listDead('outbound', 10);
    assert.equal(dead?.id, 'bad');
    assert.equal(dead.reason, CORRUPT_PAYLOAD_REASON);
  });
});

describe('script loader', () => {
  test('every .lua file has a header documenting its KEYS, ARGV and Output', () => {
    const files = readdirSync(LUA_DIR).filter((file) => file.endsWith('.lua'));
    assert.ok(files.length >= SCRIPT_NAMES.length);
    for (const file of files) {
      const parsed = parseScriptFileName(file);
      assert.ok(parsed, `${file} is named <camelCaseName>-<numberOfKeys>.lua`);
      const source = readFileSync(join(LUA_DIR, file), 'utf8');
      assert.match(source, /^--\[\[/, `${file} opens with a --[[ ]] header`);
      assert.match(source, parsed.numberOfKeys > 0 ? /^\s*KEYS\[1\]/m : /^\s*KEYS: none/m, `${file} documents KEYS`);
      assert.match(source, /^\s*(ARGV\[1\]|ARGV: none)/m, `${file} documents ARGV`);
      assert.match(source, /^\s*Output:/m, `${file} documents its Output`);
      assert.match(source, /^local rcall = redis\.call$/m, `${file} aliases redis.call`);
      assert.deepEqual(findHeaderProblems(source, parsed.numberOfKeys, parsed.variadicKeys), [], file);
    }
  });

  test('key counts come from the file names and scripts are named by the SHA1 of their inlined body', () => {
    assert.deepEqual(parseScriptFileName('registerToken-6.lua'), { name: 'registerToken', numberOfKeys: 6, variadicKeys: false });
    assert.deepEqual(
      parseScriptFileName('appendShard-n.lua'),
      { name: 'appendShard', numberOfKeys: 1, variadicKeys: true },
      'a -n.lua script takes one key or more',
    );
    assert.equal(parseScriptFileName('register_token.lua'), null);
    assert.equal(parseScriptFileName('registerToken-x.lua'), null, 'only a number or n counts the keys');
    const definitions = loadScriptDefinitions();
    assert.deepEqual(definitions.map((d) => d.name).sort(), [...SCRIPT_NAMES].sort());
    for (const definition of definitions) {
      assert.equal(definition.file, `${definition.name}-${definition.variadicKeys ? 'n' : definition.numberOfKeys}.lua`);
      assert.equal(definition.sha, createHash('sha1').update(definition.lua).digest('hex'));
      assert.doesNotMatch(definition.lua, /@include/, `${definition.file} has its includes inlined`);
    }
  });

  test('scripts run by EVALSHA, survive a flushed script cache, and refuse a wrong key count', async () => {
    const client = new Redis(url);
    try {
      const scripts = new RedisScripts(client);
      await scripts.loadAll();
      const sha = scripts.sha('releaseClaim');
      assert.deepEqual(await raw.script('EXISTS', sha), [1], 'loaded at open');
      await raw.set('claim', 'me');
      assert.equal(await scripts.run('releaseClaim', ['claim'], ['me']), 1);
      await raw.script('FLUSH');
      await raw.set('claim', 'me');
      assert.equal(await scripts.run('releaseClaim', ['claim'], ['me']), 1, 'NOSCRIPT is answered by sending the body');
      assert.deepEqual(await raw.script('EXISTS', sha), [1], 'and the server has it again');
      assert.throws(() => scripts.run('releaseClaim', ['a', 'b'], ['me']), ScriptLoaderError);
    } finally {
      client.disconnect();
    }
  });

  test('a -n.lua script takes as many keys as a call declares, one at least, and sees every one in KEYS', async () => {
    const client = new Redis(url);
    try {
      const scripts = new RedisScripts(client);
      await scripts.loadAll();
      const keys = ['dl-a', 'dl-a:recipient:r1', 'dl-a:notification:n1', 'dl-a', 'dl-a:recipient:r2', 'dl-a:notification:n2'];
      keys.push('dl-stats', 'dl-days');
      assert.equal(await scripts.run('appendDeliveryLogShard', keys, [1000, 2, 7, 'm1', 'm2', 'sent:like', 2, 'opened:like', 0]), 2);
      assert.deepEqual(await raw.zrange('dl-a', 0, -1), ['m1', 'm2'], 'both entries in the app view');
      assert.deepEqual(await raw.zrange('dl-a:notification:n2', 0, -1), ['m2'], 'the second entry in its own notification view');
      assert.deepEqual(await raw.hgetall('dl-stats'), { 'sent:like': '2' }, 'a count of 0 is not written');
      assert.deepEqual(await raw.zrange('dl-days', 0, -1), ['7'], 'the day indexed');
      assert.throws(() => scripts.run('appendDeliveryLogShard', [], [1000, 0, 7]), ScriptLoaderError, 'no keys at all is refused');
    } finally {
      client.disconnect();
    }
  });

  test('under auto-pipelining a script call sends its SHA, never its body', async () => {
    const client = new Redis(url, { enableAutoPipelining: true });
    try {
      const scripts = new RedisScripts(client);
      await scripts.loadAll();
      await raw.config('RESETSTAT');
      await Promise.all(Array.from({ length: 20 }, (_, i) => scripts.run('releaseClaim', [`claim-${i}`], ['me'])));
      const stats = await raw.info('commandstats');
      assert.match(stats, /cmdstat_evalsha:calls=20,/);
      assert.doesNotMatch(stats, /cmdstat_eval:/);
    } finally {
      client.disconnect();
    }
  });

  test('a script without a complete header or with a bad name fails the load', () => {
    const dir = mkdtempSync(join(tmpdir(), 'nostr-push-lua-'));
    try {
      writeFileSync(join(dir, 'noOutput-1.lua'), '--[[\n  KEYS[1] k\n  ARGV[1] a\n]]\nreturn 1\n');
      assert.throws(
        () => loadScriptDefinitions(dir),
        (error: unknown) => error instanceof ScriptLoaderError && /Output/.test(error.message),
      );
      rmSync(join(dir, 'noOutput-1.lua'));
      writeFileSync(join(dir, 'wrongKeys-2.lua'), '--[[\n  KEYS[1] k\n  ARGV: none\n  Output: 1\n]]\nreturn 1\n');
      assert.throws(() => loadScriptDefinitions(dir), /KEYS\[2\] is not documented/);
      rmSync(join(dir, 'wrongKeys-2.lua'));
      writeFileSync(join(dir, 'manyKeys-n.lua'), '--[[\n  KEYS[1] k\n  ARGV: none\n  Output: 1\n]]\nreturn 1\n');
      assert.throws(() => loadScriptDefinitions(dir), /symbolic index/, 'a -n.lua script documents its further keys');
      rmSync(join(dir, 'manyKeys-n.lua'));
      writeFileSync(join(dir, 'no_count.lua'), 'return 1\n');
      assert.throws(() => loadScriptDefinitions(dir), /<camelCaseName>-<numberOfKeys>/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('two store instances on one Redis', () => {
  test('a lease held by a crashed instance is recovered by another after it expires', async () => {
    const shared = new ManualClock();
    const first = await openExtraStore({ clock: shared, keyPrefix: 'replicas:' });
    const second = await openExtraStore({ clock: shared, keyPrefix: 'replicas:' });
    await first.enqueue('inbound', { id: 'event', payload: { kind: 1 } });
    const [held] = await first.lease('inbound', LEASE);
    assert.ok(held);
    await first.close(); // crashes: never acks

    assert.deepEqual(await second.lease('inbound', LEASE), [], 'still leased by the crashed instance');
    shared.advance(LEASE.leaseMs);
    const [recovered] = await second.lease('inbound', LEASE);
    assert.equal(recovered?.id, 'event');
    assert.equal(recovered.attempts, 2);
    assert.deepEqual(recovered.payload, { kind: 1 });
    assert.notEqual(recovered.leaseToken, held.leaseToken);
    assert.equal(await second.ack('inbound', 'event', held.leaseToken), false, "the crashed instance's token is void");
    assert.equal(await second.ack('inbound', 'event', recovered.leaseToken), true);
  });
});

describe('closing a store', () => {
  /** Pub/sub connections the server holds now (CLIENT LIST TYPE pubsub, one line each). */
  const pubsubConnections = async (): Promise<number> =>
    String(await raw.call('CLIENT', 'LIST', 'TYPE', 'pubsub'))
      .split('\n')
      .filter((line) => line.trim() !== '').length;

  test('closes the inbox-hint subscriptions a caller left open (else they reconnect forever)', async () => {
    const opened = await openExtraStore({ clock });
    const before = await pubsubConnections();
    await opened.subscribeInboxHints(() => undefined);
    const unsubscribe = await opened.subscribeInboxHints(() => undefined);
    await unsubscribe();
    assert.equal(await pubsubConnections(), before + 1, 'one subscription left open');
    await opened.close();
    const deadline = Date.now() + 5_000;
    while ((await pubsubConnections()) > before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(await pubsubConnections(), before, 'close() ended it');
    await unsubscribe();
  });
});

describe('RedisServerClock', () => {
  test('without an injected clock the store follows the Redis server clock', async () => {
    const serverTimed = await openExtraStore();
    assert.ok(serverTimed.clock instanceof RedisServerClock);
    assert.ok(serverTimed.clock.running, 'the re-sync timer runs');
    const [seconds] = await raw.time();
    assert.ok(Math.abs(serverTimed.clock.nowMs() - Number(seconds) * 1000) < 2 * SECOND_MS);
    await serverTimed.close();
    assert.equal(serverTimed.clock.running, false, 'close() stops the timer');
  });

  test('nowMs is process time plus the measured offset, and never goes backwards', async () => {
    let processMs = 1_000;
    let serverTime: [string, string] = ['5', '250000'];
    const serverClock = new RedisServerClock({ time: async () => serverTime }, undefined, () => processMs);
    await serverClock.sync();
    assert.equal(serverClock.offset, 4_250);
    assert.equal(serverClock.nowMs(), 5_250);
    processMs += 100;
    assert.equal(serverClock.nowMs(), 5_350);
    serverTime = ['4', '0'];
    await serverClock.sync();
    assert.equal(serverClock.nowMs(), 5_350, 'a lower offset holds the clock still');
  });
});

describe('video coordinate records in Redis', () => {
  test('written under the seed key per type, with the TTL; the legacy type-less key suppresses too', async () => {
    const owner = 'a0'.repeat(32);
    await store.writeVideoRecords({ owner, dTag: 'video:d-tag', recipient: ALICE }, ['mention', 'newPost'], CLAIM_TTL_SECS);
    assert.equal(await raw.get(`dedup:34236:mention:${owner}:video:d-tag:${ALICE}`), '1');
    assert.equal(await raw.get(`dedup:34236:newPost:${owner}:video:d-tag:${ALICE}`), '1');
    const ttl = await raw.ttl(`dedup:34236:mention:${owner}:video:d-tag:${ALICE}`);
    assert.ok(ttl > 0 && ttl <= CLAIM_TTL_SECS, `ttl ${ttl}`);

    assert.equal(await store.hasVideoRecord({ type: 'mention', owner, dTag: 'legacy', recipient: BOB }), false);
    await raw.set(`dedup:34236:${owner}:legacy:${BOB}`, '1');
    assert.equal(await store.hasVideoRecord({ type: 'mention', owner, dTag: 'legacy', recipient: BOB }), true);
  });

  test('releaseEvent deletes dedup:{eventId}', async () => {
    await store.claimEvent(EVENT_ID, CLAIM_TTL_SECS);
    assert.equal(await raw.exists(`dedup:${EVENT_ID}`), 1);
    await store.releaseEvent(EVENT_ID);
    assert.equal(await raw.exists(`dedup:${EVENT_ID}`), 0);
  });
});
