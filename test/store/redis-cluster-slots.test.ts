/**
 * Every Lua script's declared KEYS share one hash slot in the cluster key layout (issue 18): the
 * whole store contract runs on a private single Redis in the `cluster` layout with a recorder on
 * every script call, then each recorded call's keys are put through Redis Cluster's own slot
 * function (CRC16-XMODEM of the hash tag, mod 16,384), written here from the specification rather
 * than taken from the library the adapter uses, and every script the adapter has must have been
 * called at least once (except the few only the divine layout calls, which the cluster layout must not).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { DIVINE_LAYOUT_ONLY_SCRIPTS, SCRIPT_NAMES, type ScriptName } from '../../src/store/redis/scripts.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { runStoreContract } from './contract.ts';

/** CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0, as the Redis Cluster specification gives it. */
function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** The specification's HASH_SLOT: the first `{…}` with something inside is what is hashed. */
function hashSlot(key: string): number {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) key = key.slice(open + 1, close);
  }
  return crc16(Buffer.from(key, 'utf8')) % 16_384;
}

describe('Redis Cluster slot function', () => {
  test('matches the specification’s vector and its hash-tag examples', () => {
    assert.equal(crc16(Buffer.from('123456789')), 0x31c3, 'the CRC16 check value in the Redis Cluster specification');
    assert.equal(hashSlot('{user1000}.following'), hashSlot('{user1000}.followers'), 'same tag, same slot');
    assert.equal(hashSlot('foo{}{bar}'), crc16(Buffer.from('foo{}{bar}')) % 16_384, 'an empty first tag: the whole key is hashed');
    assert.equal(hashSlot('foo{{bar}}zap'), hashSlot('{bar'), 'the tag is `{bar`');
    assert.equal(hashSlot('foo{bar}{zap}'), hashSlot('bar'), 'only the first tag counts');
  });
});

const calls = new Map<ScriptName, Array<readonly string[]>>();
let redis: PrivateRedisServer | undefined;

before(async () => {
  redis = await startRedisServer();
});

after(async () => {
  await redis?.stop();
});

runStoreContract({
  name: 'RedisStore in the cluster key layout on one Redis, every script call recorded',
  make: (clock) => {
    if (!redis) throw new Error('the private redis-server did not start');
    return openRedisStore({
      url: redis.url,
      clock,
      layout: 'cluster',
      keyPrefix: `t-${randomUUID()}:`,
      scriptObserver: (name, keys) => {
        const list = calls.get(name) ?? [];
        if (list.length < 200) list.push([...keys]);
        calls.set(name, list);
      },
    });
  },
});

describe('cluster key layout', () => {
  test('every script was called by the contract, and every call’s declared KEYS hash to one slot', () => {
    const uncalled = SCRIPT_NAMES.filter((name) => !calls.has(name) && !DIVINE_LAYOUT_ONLY_SCRIPTS.includes(name));
    assert.deepEqual(uncalled, [], 'scripts the contract never called (add a contract test that does)');
    const divineOnlyCalled = DIVINE_LAYOUT_ONLY_SCRIPTS.filter((name) => calls.has(name));
    assert.deepEqual(divineOnlyCalled, [], 'divine-only scripts the cluster layout called');
    const crossSlot: string[] = [];
    for (const [name, list] of calls) {
      for (const keys of list) {
        const slots = new Set(keys.map(hashSlot));
        if (slots.size > 1) {
          crossSlot.push(`${name}: ${keys.join(' ')}`);
          break;
        }
      }
    }
    assert.deepEqual(crossSlot, [], 'scripts whose declared keys span slots');
  });
});
