/**
 * The store contract against the Redis adapter, on a private redis-server. Every test gets its
 * own key prefix, so tests share the server but never a key.
 */
import { randomUUID } from 'node:crypto';
import { after, before } from 'node:test';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { runStoreContract } from './contract.ts';
import { tenancyContract } from './contract/tenancy.ts';
import { openStore } from '../../src/store/open.ts';

let server: PrivateRedisServer | undefined;

before(async () => {
  server = await startRedisServer();
});

after(async () => {
  await server?.stop();
});

runStoreContract({
  name: 'RedisStore',
  make: (clock) => {
    if (!server) throw new Error('the private redis-server did not start');
    return openRedisStore({ url: server.url, clock, keyPrefix: `t-${randomUUID()}:` });
  },
});

tenancyContract('RedisStore', (clock, apps) => {
  if (!server) throw new Error('the private redis-server did not start');
  const url = server.url;
  const redisKeyPrefix = `t-${randomUUID()}:`;
  return Promise.all(apps.map((app) => openStore({ kind: 'redis', url }, { clock, app, redisKeyPrefix })));
});
