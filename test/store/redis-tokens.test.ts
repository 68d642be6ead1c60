/**
 * The device-token steps of the Redis adapter (src/store/redis/tokens.ts) stopped between steps,
 * as a crash would leave them, and interleaved as two processes could: readers never list another
 * user's device, a retry completes the work once, and the index heals where it is read. Runs both
 * key layouts on one private redis-server (the cluster layout's sharded names work on one server),
 * each with a key prefix of its own.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import type { DeviceRegistration } from '../../src/store/port.ts';
import type { RedisContext } from '../../src/store/redis/context.ts';
import { openRedisStore, type RedisStore } from '../../src/store/redis/index.ts';
import { createRedisKeys, KEY_LAYOUTS } from '../../src/store/redis/keys.ts';
import { RedisScripts } from '../../src/store/redis/scripts.ts';
import { ReplicaWaiter } from '../../src/store/redis/replication.ts';
import { forgetTokens } from '../../src/store/redis/tokens.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';

const ALICE = 'a1'.repeat(32);
const BOB = 'b2'.repeat(32);
const CAROL = 'c3'.repeat(32);
const PHONE: DeviceRegistration = { token: 'fcm-phone-1', transport: 'fcm', timezoneOffsetMinutes: 60 };
const TABLET: DeviceRegistration = { token: 'fcm-tablet-1', transport: 'fcm' };

let server: PrivateRedisServer;

before(async () => {
  server = await startRedisServer();
});

after(async () => {
  await server.stop();
});

for (const layout of KEY_LAYOUTS) {
  describe(`device-token steps, ${layout} layout`, () => {
    let prefix: string;
    let raw: Redis;
    let clock: ManualClock;
    let store: RedisStore;
    let ctx: RedisContext;

    beforeEach(async () => {
      prefix = `t-${randomUUID()}:`;
      clock = new ManualClock();
      store = await openRedisStore({ url: server.url, clock, keyPrefix: prefix, layout });
      raw = new Redis(server.url, { keyPrefix: prefix });
      // The steps one by one, on the same keys the store uses.
      ctx = {
        redis: raw,
        cluster: null,
        keys: createRedisKeys(layout),
        scripts: new RedisScripts(raw),
        replication: ReplicaWaiter.off(raw),
        clock,
        logger: createLogger({ level: 'silent' }),
      };
      await ctx.scripts.loadAll();
    });

    afterEach(async () => {
      await store.close();
      await raw.quit();
    });

    const keys = (): ReturnType<typeof createRedisKeys> => createRedisKeys(layout);
    const shardKeys = (token: string): string[] => {
      const shard = keys().tokenShardKeys(keys().tokenShardOf(token));
      return [shard.owners, shard.activity, shard.offsets, shard.devices];
    };
    /** Registration step 1 alone: the token record, as a process that crashed right after it left it. */
    const writeRecordOnly = async (pubkey: string, device: DeviceRegistration): Promise<unknown> =>
      ctx.scripts.run('registerTokenRecord', shardKeys(device.token), [device.token, pubkey, clock.nowMs() / 1000, '', '']);
    const members = (pubkey: string): Promise<string[]> => raw.smembers(keys().userTokensKey(pubkey));
    const intents = (pubkey: string): Promise<Record<string, string>> => raw.hgetall(keys().userTokensForgettingKey(pubkey));

    test('a transfer stopped after its token record: the old owner never lists the device, and the retry completes it once', async () => {
      await store.registerToken(ALICE, PHONE);
      assert.equal(await writeRecordOnly(BOB, PHONE), ALICE, 'step 1 reports the previous owner');

      assert.deepEqual(await store.listDevices(ALICE), [], "the record names BOB: ALICE's stale member is not listed");
      assert.deepEqual(await members(ALICE), [], "ALICE's read forgot the stale member");
      assert.deepEqual(await store.listDevices(BOB), [], 'not listed for BOB before the retry (never acknowledged)');

      assert.deepEqual(await store.registerToken(BOB, PHONE), { previousOwner: null }, 'the retry finds BOB as owner');
      assert.deepEqual(await store.listDevices(BOB), [PHONE], 'one device after the retry');
      assert.deepEqual(await members(BOB), [PHONE.token]);
      assert.deepEqual(await intents(ALICE), {}, 'no intent left behind');
    });

    test('a removal of a member stopped half-way hides nothing: the intent is listed, then settled back', async () => {
      await store.registerToken(ALICE, PHONE);
      // Step a of a forget (member moved to the intent hash), then the process died.
      const moved = await ctx.scripts.run(
        'forgetUserTokens',
        [keys().userTokensKey(ALICE), keys().userTokensForgettingKey(ALICE)],
        ['dead-attempt', PHONE.token],
      );
      assert.deepEqual(moved, [PHONE.token]);
      assert.deepEqual(await members(ALICE), []);

      assert.deepEqual(await store.listDevices(ALICE), [PHONE], 'the intent token is still ALICE’s by its record');
      assert.deepEqual(await members(ALICE), [PHONE.token], 'the read put it back');
      assert.deepEqual(await intents(ALICE), {}, 'and settled the intent');
    });

    test('readRecipients (one script in the divine layout) keeps and forgets candidates as listDevices does', async () => {
      await store.registerToken(ALICE, PHONE);
      await writeRecordOnly(BOB, PHONE);
      await store.registerToken(CAROL, TABLET);
      await ctx.scripts.run(
        'forgetUserTokens',
        [keys().userTokensKey(CAROL), keys().userTokensForgettingKey(CAROL)],
        ['dead-attempt', TABLET.token],
      );
      await store.setPreferences(CAROL, { kinds: [7], campaignsEnabled: false });

      const states = await store.readRecipients([ALICE, CAROL, BOB, CAROL]);
      assert.deepEqual(
        states.map((state) => state.devices),
        [[], [TABLET], [], [TABLET]],
        "ALICE's stale member is not listed, CAROL's intent is, BOB's record alone is not; a repeated user answered twice",
      );
      assert.deepEqual(
        states.map((state) => state.preferenceKinds),
        [null, [7], null, [7]],
      );
      assert.deepEqual(await members(ALICE), [], "ALICE's stale member was forgotten");
      assert.deepEqual(await members(CAROL), [TABLET.token], "CAROL's intent was settled back");
      assert.deepEqual(await intents(CAROL), {});
    });

    test('a removal stopped half-way for a token that moved on is settled without putting it back', async () => {
      await store.registerToken(ALICE, PHONE);
      await writeRecordOnly(BOB, PHONE);
      await ctx.scripts.run(
        'forgetUserTokens',
        [keys().userTokensKey(ALICE), keys().userTokensForgettingKey(ALICE)],
        ['dead-attempt', PHONE.token],
      );
      assert.deepEqual(await store.listDevices(ALICE), []);
      assert.deepEqual(await members(ALICE), []);
      assert.deepEqual(await intents(ALICE), {});
    });

    test('a forget that read an older owner cannot undo a registration that came after its first step', async () => {
      await store.registerToken(BOB, PHONE);
      // ALICE still lists the token from an earlier time: a reader starts forgetting it ...
      await raw.sadd(keys().userTokensKey(ALICE), PHONE.token);
      await ctx.scripts.run(
        'forgetUserTokens',
        [keys().userTokensKey(ALICE), keys().userTokensForgettingKey(ALICE)],
        ['slow-reader', PHONE.token],
      );
      // ... having read BOB as owner; ALICE now registers the token (steps 1 and 2) ...
      assert.deepEqual(await store.registerToken(ALICE, PHONE), { previousOwner: BOB });
      // ... and the slow reader settles with what it read: not ALICE's.
      await ctx.scripts.run(
        'settleForgottenTokens',
        [keys().userTokensKey(ALICE), keys().userTokensForgettingKey(ALICE)],
        [PHONE.token, 'slow-reader', 0],
      );
      assert.deepEqual(await store.listDevices(ALICE), [PHONE], 'the registration’s SADD came after the removal');
      assert.deepEqual(await store.listDevices(BOB), []);
      assert.equal(await store.tokenOwner(PHONE.token), ALICE);
    });

    test('two registrations of one token racing (B then A): the last record wins and each listing follows it', async () => {
      await store.registerToken(ALICE, PHONE);
      // B's step 1, then A's whole registration, then B's steps 2 and 3 (late).
      assert.equal(await writeRecordOnly(BOB, PHONE), ALICE);
      assert.deepEqual(await store.registerToken(ALICE, PHONE), { previousOwner: BOB });
      await raw.sadd(keys().userTokensKey(BOB), PHONE.token);
      await forgetTokens(ctx, ALICE, [PHONE.token]);

      assert.deepEqual(await store.listDevices(ALICE), [PHONE], "B's late forget read A's record and kept the token");
      assert.deepEqual(await store.listDevices(BOB), [], "B's late SADD is never listed (the record names A)");
      assert.deepEqual(await members(BOB), [], "and B's read forgot it");
    });

    test('a deregistration or a sweep stopped after the record leaves a member no one lists, forgotten by the next read', async () => {
      await store.registerToken(ALICE, PHONE);
      await store.registerToken(ALICE, { token: 'fcm-tablet-1', transport: 'fcm' });
      assert.equal(await ctx.scripts.run('removeTokenRecord', shardKeys(PHONE.token), [PHONE.token, ALICE]), 1);
      clock.advance(90 * 86_400_000);
      const shard = keys().tokenShardKeys(keys().tokenShardOf('fcm-tablet-1'));
      const swept = await ctx.scripts.run(
        'sweepStaleTokens',
        [shard.owners, shard.activity, shard.offsets, shard.devices],
        [clock.nowMs() / 1000, 10],
      );
      assert.deepEqual(swept, ['fcm-tablet-1', ALICE], 'the sweep step returns the owner it read');

      assert.deepEqual(await store.listDevices(ALICE), []);
      assert.deepEqual(await members(ALICE), []);
      assert.equal(await store.removeToken(ALICE, PHONE.token), false, 'a retried removal finds no record');
      assert.deepEqual(await raw.keys(`${prefix}*`), [], 'nothing left: no intent, no empty key');
    });
  });
}
