/**
 * The stores a benchmark runs on (`--store sqlite|redis|both`): a fresh data directory for each, a
 * private redis-server for Redis, both removed afterwards whatever happens.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../src/observability/logger.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { startRedisServer } from '../../test/support/redis-server.ts';

/** One store to run on: its label, the service's `store.url`, a way to open it from the benchmark, its data directory. */
export type BenchStoreRun = (label: string, storeUrl: string, openStore: () => Promise<StorePort>, dir: string) => Promise<void>;

export async function forEachBenchStore(store: string | undefined, dirPrefix: string, run: BenchStoreRun): Promise<void> {
  const kinds = store === 'both' ? ['sqlite', 'redis'] : [store];
  for (const kind of kinds) {
    const dir = mkdtempSync(join(tmpdir(), `${dirPrefix}-${kind}-`));
    try {
      if (kind === 'redis') {
        const redis = await startRedisServer();
        try {
          await run('redis', redis.url, () => openRedisStore({ url: redis.url, logger: createLogger({ level: 'warn' }) }), dir);
        } finally {
          await redis.stop();
        }
      } else {
        const path = join(dir, 'nostr-push.sqlite');
        await run('sqlite', `sqlite:${path}`, () => openSqliteStore({ path, logger: createLogger({ level: 'warn' }) }), dir);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
