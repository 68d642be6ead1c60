import { basename, dirname, join } from 'node:path';
import type { Clock, StorePort } from './port.ts';
import type { StoreLocation } from '../config/load.ts';
import type { Logger } from '../observability/logger.ts';
import { DEFAULT_APP_ID } from '../config/apps.ts';
import { appKeyPrefix } from './redis/keys.ts';
import { replicaRefusalFromEnv } from './redis/replication.ts';
import { describeRedisTarget, isClusterUrl, parseRedisTarget } from './redis/target.ts';

export interface OpenStoreOptions {
  clock?: Clock;
  logger?: Logger;
  /**
   * The app whose store view to open (default: the default app). Every app's devices,
   * preferences, claims, counters and queues are its own: on Redis, under the app's key prefix
   * (`redis/keys.ts` {@link appKeyPrefix}); on SQLite, in a database file of its own beside the
   * default's ({@link appSqlitePath}).
   */
  app?: string;
  /** A Redis key prefix in front of the app's (test isolation only; a deployment has none). */
  redisKeyPrefix?: string;
}

/**
 * The SQLite file of app `appId`: the default's path itself, or `{name}.app-{id}.sqlite` beside
 * it (`data/nostr-push.sqlite` → `data/nostr-push.app-clips.sqlite`). An in-memory store stays in
 * memory (a private database per app).
 */
export function appSqlitePath(path: string, appId: string): string {
  if (appId === DEFAULT_APP_ID || path === ':memory:') return path;
  const name = basename(path);
  const stem = name.endsWith('.sqlite') ? name.slice(0, -'.sqlite'.length) : name;
  return join(dirname(path), `${stem}.app-${appId}.sqlite`);
}

/**
 * Open the adapter a store location names, as the view of one app (`options.app`). Adapters are
 * imported on demand, so a SQLite deployment never loads the Redis client and the other way round.
 */
export async function openStore(location: StoreLocation, options: OpenStoreOptions = {}): Promise<StorePort> {
  const app = options.app ?? DEFAULT_APP_ID;
  if (location.kind === 'redis') {
    const { openRedisStore } = await import('./redis/index.ts');
    const keyPrefix = `${options.redisKeyPrefix ?? ''}${appKeyPrefix(app)}`;
    const refuseAcknowledgement = replicaRefusalFromEnv();
    return openRedisStore({
      url: location.url,
      ...(location.clusterNodes ? { clusterNodes: location.clusterNodes } : {}),
      ...(location.layout ? { layout: location.layout } : {}),
      ...(location.queueShards !== undefined ? { queueShards: location.queueShards } : {}),
      ...(location.waitReplicas !== undefined ? { waitReplicas: location.waitReplicas } : {}),
      ...(location.waitTimeoutMs !== undefined ? { waitTimeoutMs: location.waitTimeoutMs } : {}),
      ...(refuseAcknowledgement ? { refuseAcknowledgement } : {}),
      clock: options.clock,
      logger: options.logger,
      ...(keyPrefix === '' ? {} : { keyPrefix }),
    });
  }
  const { openSqliteStore } = await import('./sqlite/index.ts');
  return openSqliteStore({ path: appSqlitePath(location.path, app), clock: options.clock, logger: options.logger });
}

/** A store location for logs: the Redis URL loses its password, SQLite keeps its path. */
export function describeStoreLocation(location: StoreLocation): string {
  if (location.kind === 'sqlite') return `sqlite:${location.path}`;
  if (isClusterUrl(location.url)) {
    try {
      return describeRedisTarget(parseRedisTarget(location.url, location.clusterNodes));
    } catch {
      return 'redis+cluster (unparseable URL)';
    }
  }
  try {
    const url = new URL(location.url);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return 'redis (unparseable URL)';
  }
}
