/**
 * One `describe` block per store adapter, for unit tests of a stage that reads or writes the store:
 * the block's tests open their stores with `open(clock)`, an in-memory SQLite database or a fresh
 * key prefix on the block's own private redis-server (started before its first test, stopped
 * after its last). The store contract (`test/store/contract.ts`) pins the adapters' agreement;
 * this runs a stage's own promises on both, so a stage that leans on one adapter's quirk fails.
 */
import { randomUUID } from 'node:crypto';
import { after, before, describe } from 'node:test';
import type { StorePort } from '../../src/store/port.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import type { ManualClock } from '../../src/util/clock.ts';
import { startRedisServer, type PrivateRedisServer } from './redis-server.ts';

export const STORE_ADAPTERS = ['sqlite', 'redis'] as const;
export type StoreAdapter = (typeof STORE_ADAPTERS)[number];

/** Opens a fresh, empty store of the block's adapter on `clock`; the test closes it. */
export type OpenStore = (clock: ManualClock) => Promise<StorePort>;

/** `describe(\`${name} (${adapter})\`)` for each adapter, handing `body` the adapter's opener. */
export function describeOnEachStore(name: string, body: (open: OpenStore, adapter: StoreAdapter) => void): void {
  for (const adapter of STORE_ADAPTERS) {
    describe(`${name} (${adapter})`, () => {
      let redis: PrivateRedisServer | undefined;
      if (adapter === 'redis') {
        before(async () => {
          redis = await startRedisServer();
        });
        after(async () => {
          await redis?.stop();
        });
      }
      const open: OpenStore = async (clock) => {
        if (adapter === 'sqlite') return openSqliteStore({ path: ':memory:', clock });
        if (!redis) throw new Error('the private redis-server did not start');
        return openRedisStore({ url: redis.url, clock, keyPrefix: `t-${randomUUID()}:` });
      };
      body(open, adapter);
    });
  }
}
