/**
 * bench/cluster-footprint: Redis memory per user, for the fleet arithmetic in docs/scaling.md.
 * Writes `--users` users through the store port the way the service does (one FCM device with a
 * timezone offset, preferences, a notify list of `--bells` creators, an inbox record) into a
 * private redis-server, once per key layout (divine, and cluster on one server: the same keys a
 * cluster spreads over its masters), and prints `used_memory` grown per user and per device, with
 * a verdict that every user reads back.
 *
 *   node --import tsx bench/cluster-footprint/run.ts [--users 50000] [--bells 3]
 */
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { createLogger } from '../../src/observability/logger.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import type { KeyLayout } from '../../src/store/redis/keys.ts';
import { startRedisServer } from '../../test/support/redis-server.ts';

const { values } = parseArgs({ options: { users: { type: 'string', default: '50000' }, bells: { type: 'string', default: '3' } } });
const USERS = Number(values.users);
const BELLS = Number(values.bells);
/** Writes in flight at once (auto-pipelined by the client). */
const BATCH = 500;
const pubkeyOf = (i: number): string => i.toString(16).padStart(64, '0');
/** Creators are a small set (popular accounts), so watcher sets are large, as in a real fleet. */
const creatorOf = (i: number): string => `c${i.toString(16).padStart(63, '0')}`;

async function usedMemory(url: string): Promise<number> {
  const client = new Redis(url);
  try {
    await client.call('MEMORY', 'PURGE');
    const info = await client.info('memory');
    return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN);
  } finally {
    client.disconnect();
  }
}

async function measure(layout: KeyLayout): Promise<void> {
  const server = await startRedisServer();
  try {
    const store = await openRedisStore({ url: server.url, layout, logger: createLogger({ level: 'warn' }) });
    const before = await usedMemory(server.url);
    for (let start = 0; start < USERS; start += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, USERS - start) }, (_, k) => start + k);
      await Promise.all(
        batch.map(async (i) => {
          const pubkey = pubkeyOf(i);
          await store.registerToken(pubkey, {
            token: `fcm:${pubkey.slice(-20)}:${'x'.repeat(120)}`,
            transport: 'fcm',
            timezoneOffsetMinutes: 60,
          });
          await store.setPreferences(pubkey, { kinds: [1, 7, 16, 1059, 34236], campaignsEnabled: false });
          await store.replaceNotifySubscriptions({
            subscriber: pubkey,
            creators: Array.from({ length: BELLS }, (_, b) => creatorOf((i + b) % 100)),
            createdAt: 1_700_000_000,
            eventId: 'ee'.repeat(32),
          });
          await store.rememberInboxUser(pubkey);
        }),
      );
    }
    const after = await usedMemory(server.url);
    const sample = [0, Math.floor(USERS / 2), USERS - 1].map(pubkeyOf);
    const devices = await Promise.all(sample.map((pubkey) => store.listDevices(pubkey)));
    const ok = devices.every((list) => list.length === 1);
    const perUser = (after - before) / USERS;
    console.log(
      `${layout.padEnd(7)} users ${USERS}  used_memory +${((after - before) / 2 ** 20).toFixed(1)} MiB  ` +
        `${perUser.toFixed(0)} B per user (1 device, preferences, ${BELLS} bells, inbox)  verdict ${ok ? 'PASS' : 'FAIL'}`,
    );
    await store.close();
  } finally {
    await server.stop();
  }
}

for (const layout of ['divine', 'cluster'] as const) await measure(layout);
