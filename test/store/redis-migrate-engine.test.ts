/**
 * The layout migration's engine (src/store/redis/migrate/engine.ts) on two private Redis servers:
 * whole keys keep their type, content and time to live under their new names, a split hash lands
 * field by field in the keys its route picks, a second run writes nothing new and skips finished
 * families, and a run that dies half way is finished by the next one from its saved cursor.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import {
  copyWholeKey,
  countExisting,
  migrateLayout,
  MIGRATE_PROGRESS_KEY,
  splitHash,
  unverifiedFamilies,
  type KeyFamily,
  type MigrationIo,
} from '../../src/store/redis/migrate/engine.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';

const USERS = 2_500;
const pubkeyOf = (i: number) => i.toString(16).padStart(64, '0');
const shardOf = (token: string) => `token_to_pubkey:{k:${token.charCodeAt(token.length - 1) % 4}}`;

function families(failAfter = Infinity): KeyFamily[] {
  let copied = 0;
  return [
    {
      name: 'user_tokens',
      match: 'user_tokens:*',
      copy: async (key, io) => {
        if (++copied > failAfter) throw new Error('the migration process died');
        const pubkey = /^user_tokens:([0-9a-f]{64})$/.exec(key)?.[1];
        return pubkey ? copyWholeKey(io, key, `user_tokens:{u:${pubkey}}`) : 0;
      },
      countTarget: (keys, io) =>
        countExisting(
          io,
          keys.map((key) => `user_tokens:{u:${key.slice('user_tokens:'.length)}}`),
        ),
    },
    {
      name: 'token_to_pubkey',
      match: 'token_to_pubkey',
      copy: (key, io) => splitHash(io, key, (token) => shardOf(token)),
      countTarget: async (_keys, io) => {
        const lengths = await Promise.all([0, 1, 2, 3].map((n) => io.target.hlen(`token_to_pubkey:{k:${n}}`)));
        return lengths.reduce((sum, n) => sum + n, 0);
      },
    },
  ];
}

describe('layout migration engine', () => {
  let sourceServer: PrivateRedisServer;
  let targetServer: PrivateRedisServer;
  let io: MigrationIo;

  before(async () => {
    [sourceServer, targetServer] = await Promise.all([startRedisServer(), startRedisServer()]);
    io = { source: new Redis(sourceServer.url, { keyPrefix: 'src:' }), target: new Redis(targetServer.url, { keyPrefix: 'dst:' }) };
    const writes: Array<Promise<unknown>> = [];
    for (let i = 0; i < USERS; i++) {
      writes.push(io.source.sadd(`user_tokens:${pubkeyOf(i)}`, `tok-${i}-a`, `tok-${i}-b`));
      writes.push(io.source.hset('token_to_pubkey', `tok-${i}-a`, pubkeyOf(i), `tok-${i}-b`, pubkeyOf(i)));
    }
    writes.push(io.source.pexpire(`user_tokens:${pubkeyOf(7)}`, 600_000));
    writes.push(io.source.set('unrelated', 'x'));
    await Promise.all(writes);
  });

  after(async () => {
    io.source.disconnect();
    io.target.disconnect();
    await Promise.all([sourceServer.stop(), targetServer.stop()]);
  });

  test('a run that dies half way is finished by the next from its saved cursor; then everything is there, verified', async () => {
    await assert.rejects(migrateLayout({ families: families(USERS / 2), io }), /the migration process died/);
    const saved = await io.target.hget(MIGRATE_PROGRESS_KEY, 'user_tokens');
    assert.ok(saved !== null && saved !== 'done', `a cursor was saved mid walk (${String(saved)})`);

    const reports = await migrateLayout({ families: families(), io });
    assert.deepEqual(unverifiedFamilies(reports), [], 'every family verified');
    const tokens = reports.find((report) => report.name === 'user_tokens');
    assert.ok(tokens && tokens.keys > 0 && tokens.keys <= USERS, `the rest of user_tokens copied (${tokens?.keys})`);
    assert.deepEqual(reports.find((report) => report.name === 'token_to_pubkey')?.copied, 2 * USERS, 'every token field');

    // Every source key is in the target under its new name, content and TTL kept.
    for (const i of [0, 7, USERS - 1]) {
      assert.deepEqual((await io.target.smembers(`user_tokens:{u:${pubkeyOf(i)}}`)).sort(), [`tok-${i}-a`, `tok-${i}-b`], `user ${i}`);
      assert.equal(await io.target.hget(shardOf(`tok-${i}-b`), `tok-${i}-b`), pubkeyOf(i), `token ${i} routed to its shard`);
    }
    const ttl = await io.target.pttl(`user_tokens:{u:${pubkeyOf(7)}}`);
    assert.ok(ttl > 0 && ttl <= 600_000, `the time to live carried over (${ttl})`);
    assert.equal(await io.target.pttl(`user_tokens:{u:${pubkeyOf(8)}}`), -1, 'no TTL stays none');
    assert.equal(await io.target.exists('unrelated'), 0, 'keys of no family are not copied');
    const copiedUsers = (await io.target.keys('dst:user_tokens:*')).length;
    assert.equal(copiedUsers, USERS, 'every user once');
  });

  test('a second run skips finished families; restart copies again to the same target without doubling', async () => {
    const skipped = await migrateLayout({ families: families(), io });
    assert.ok(
      skipped.every((report) => report.skipped),
      'finished families are skipped',
    );
    const again = await migrateLayout({ families: families(), io, restart: true });
    assert.deepEqual(unverifiedFamilies(again), [], 'verified again');
    assert.equal(again.find((report) => report.name === 'user_tokens')?.keys, USERS, 'every user walked again');
    const lengths = await Promise.all([0, 1, 2, 3].map((n) => io.target.hlen(`token_to_pubkey:{k:${n}}`)));
    assert.equal(
      lengths.reduce((sum, n) => sum + n, 0),
      2 * USERS,
      'no field doubled',
    );
  });
});
