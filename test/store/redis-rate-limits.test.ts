/**
 * Rate-limit counters shared by the processes of a fleet on one Redis (port-rate-limits.ts): two
 * stores on one Redis stand for two replicas. The single-process behaviour is the contract's.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { RateLimitWindow } from '../../src/store/port-rate-limits.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { eventually } from '../support/service-process.ts';

const HOUR_SECS = 3600;
const OWNER = 'ab'.repeat(32);

describe('rate-limit counters across replicas (Redis)', () => {
  let redis: PrivateRedisServer;
  let replicaA: StorePort;
  let replicaB: StorePort;
  before(async () => {
    redis = await startRedisServer();
    const keyPrefix = `t-${randomUUID()}:`;
    replicaA = await openRedisStore({ url: redis.url, keyPrefix });
    replicaB = await openRedisStore({ url: redis.url, keyPrefix });
  });
  after(async () => {
    await replicaA.close();
    await replicaB.close();
    await redis.stop();
  });

  test('a counter that waits for the shared count refuses the replica past the fleet-wide points', async () => {
    const window: RateLimitWindow = { name: 'fleet-awaited', points: 3, windowSecs: HOUR_SECS };
    for (let i = 0; i < 3; i++) assert.equal((await replicaA.rateLimitCounter(window).take(OWNER)).allowed, true);
    const onB = await replicaB.rateLimitCounter(window).take(OWNER);
    assert.equal(onB.allowed, false, 'the other replica is refused at once');
  });

  test('a counter that decides locally learns from the shared count: the other replica refuses the key once its answer is in', async () => {
    const window: RateLimitWindow = { name: 'fleet-local', points: 3, windowSecs: HOUR_SECS, decideLocally: true };
    const onA = replicaA.rateLimitCounter(window);
    const onB = replicaB.rateLimitCounter(window);
    for (let i = 0; i < 3; i++) assert.equal((await onA.take(OWNER)).allowed, true);
    // B's own count is 0: it allows, and its background count finds the fleet over the points.
    assert.equal((await onB.take(OWNER)).allowed, true, 'decided from the replica’s own count, without waiting');
    const refusal = await eventually(
      async () => {
        const decision = await onB.take(OWNER);
        return decision.allowed ? undefined : decision;
      },
      10_000,
      'the shared count reaching replica B',
    );
    assert.equal(refusal.firstRefusal, true, 'the first refusal of the block says so');
    assert.ok(refusal.retryAfterMs > HOUR_SECS * 1000 - 60_000 && refusal.retryAfterMs <= HOUR_SECS * 1000, `${refusal.retryAfterMs} ms`);
    const next = await onB.take(OWNER);
    assert.ok(!next.allowed && !next.firstRefusal, 'refused on until the window ends, said once');
    assert.equal((await onB.take('cd'.repeat(32))).allowed, true, 'another key is not blocked');
  });
});
