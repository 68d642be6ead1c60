import type { Clock, StorePort } from './port.ts';
import type { StoreLocation } from '../config/load.ts';
import type { Logger } from '../observability/logger.ts';

/**
 * Open the adapter a store location names. Adapters are imported on demand, so a SQLite
 * deployment never loads the Redis client and the other way round.
 */
export async function openStore(location: StoreLocation, options: { clock?: Clock; logger?: Logger } = {}): Promise<StorePort> {
  if (location.kind === 'redis') {
    const { openRedisStore } = await import('./redis/index.ts');
    return openRedisStore({ url: location.url, clock: options.clock, logger: options.logger });
  }
  const { openSqliteStore } = await import('./sqlite/index.ts');
  return openSqliteStore({ path: location.path, clock: options.clock, logger: options.logger });
}

/** A store location for logs: the Redis URL loses its password, SQLite keeps its path. */
export function describeStoreLocation(location: StoreLocation): string {
  if (location.kind === 'sqlite') return `sqlite:${location.path}`;
  try {
    const url = new URL(location.url);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return 'redis (unparseable URL)';
  }
}
