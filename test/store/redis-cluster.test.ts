/**
 * The store contract against the Redis adapter on a real Redis Cluster of three masters (started
 * by the test, `test/support/redis-cluster.ts`), in the cluster key layout. Every test gets its own
 * key prefix, so tests share the cluster but never a key.
 */
import { randomUUID } from 'node:crypto';
import { after, before } from 'node:test';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { startRedisCluster, type PrivateRedisCluster } from '../support/redis-cluster.ts';
import { runStoreContract } from './contract.ts';

let cluster: PrivateRedisCluster | undefined;

before(async () => {
  cluster = await startRedisCluster({ masters: 3 });
});

after(async () => {
  await cluster?.stop();
});

runStoreContract({
  name: 'RedisStore on a Redis Cluster',
  make: (clock) => {
    if (!cluster) throw new Error('the private Redis Cluster did not start');
    return openRedisStore({ url: cluster.url, clock, keyPrefix: `t-${randomUUID()}:` });
  },
});
