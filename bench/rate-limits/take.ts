/**
 * bench/rate-limits: what one rate-limit check costs a request (issue 35), apart from everything
 * else a request does, so the cost can be read on a host too busy for end-to-end pairs to tell 5 %
 * apart. Times `RateLimits.callbackOwner.take` (the NIP-9a receiver's per-owner check; every limit
 * takes the same path) over `--owners` keys in turn, `--concurrency` at a time, on the SQLite
 * adapter's counters (process memory) and the Redis adapter's (a private redis-server), and
 * prints this process's CPU and redis-server's CPU per check, with the host speed probe.
 *
 *   node --import tsx bench/rate-limits/take.ts [--checks 200000] [--owners 10000] [--concurrency 64]
 */
import { parseArgs } from 'node:util';
import { createClientAddressPolicy } from '../../src/api/client-address.ts';
import { createRateLimits } from '../../src/api/rate-limits.ts';
import { defaultConfig } from '../../src/config/defaults.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { IN_MEMORY_PATH, openSqliteStore } from '../../src/store/sqlite/index.ts';
import { startRedisServer } from '../../test/support/redis-server.ts';
import { hostSpeedProbeMs } from '../support/host-speed.ts';
import { processCpuMs } from '../support/proc-stats.ts';

const { values } = parseArgs({
  options: {
    checks: { type: 'string', default: '200000' },
    owners: { type: 'string', default: '10000' },
    concurrency: { type: 'string', default: '64' },
  },
});
const CHECKS = Number(values.checks);
const OWNERS = Number(values.owners);
const CONCURRENCY = Number(values.concurrency);

async function measure(label: string, store: StorePort, redisPid?: number): Promise<void> {
  const limits = createRateLimits({
    config: defaultConfig(),
    store,
    policy: createClientAddressPolicy([]),
    metrics: new Metrics(),
    logger: createLogger({ level: 'silent' }),
  });
  const owners = Array.from({ length: OWNERS }, (_, i) => i.toString(16).padStart(64, '0'));
  let next = 0;
  let refused = 0;
  const worker = async (): Promise<void> => {
    while (next < CHECKS) {
      const owner = owners[next++ % OWNERS] as string;
      if (await limits.callbackOwner.take(owner)) refused++;
    }
  };
  const probeBefore = hostSpeedProbeMs();
  const cpu0 = processCpuMs(process.pid);
  const redis0 = redisPid ? processCpuMs(redisPid) : 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const wallMs = performance.now() - started;
  const cpuUs = ((processCpuMs(process.pid) - cpu0) * 1000) / CHECKS;
  const redisUs = redisPid ? ((processCpuMs(redisPid) - redis0) * 1000) / CHECKS : 0;
  console.log(
    `${label}: ${CHECKS} checks over ${OWNERS} owners, ${CONCURRENCY} at a time: ${((CHECKS / wallMs) * 1000).toFixed(0)} checks/s, ` +
      `this process ${cpuUs.toFixed(1)} µs CPU per check${redisPid ? `, redis-server ${redisUs.toFixed(1)} µs` : ''}, ${refused} refused; ` +
      `host speed probe ${probeBefore.toFixed(0)} ms before, ${hostSpeedProbeMs().toFixed(0)} ms after`,
  );
}

const sqlite = await openSqliteStore({ path: IN_MEMORY_PATH, logger: createLogger({ level: 'warn' }) });
await measure('SQLite (process memory)', sqlite);
await sqlite.close();
const redisServer = await startRedisServer();
try {
  const redis = await openRedisStore({ url: redisServer.url, logger: createLogger({ level: 'warn' }) });
  await measure('Redis', redis, redisServer.pid);
  await redis.close();
} finally {
  await redisServer.stop();
}
