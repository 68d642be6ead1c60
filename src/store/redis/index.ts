export { openRedisStore, RedisStore, type RedisStoreOptions } from './store.ts';
export { RedisServerClock, SERVER_CLOCK_SYNC_INTERVAL_MS } from './server-clock.ts';
