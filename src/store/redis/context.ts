import type { Cluster, Redis } from 'ioredis';
import type { Clock } from '../port.ts';
import type { Logger } from '../../observability/logger.ts';
import type { RedisScripts } from './scripts.ts';
import type { RedisKeys } from './keys.ts';
import type { ReplicaWaiter } from './replication.ts';

/** What every operation module of the Redis adapter works with. */
export interface RedisContext {
  /** The command client; a cluster client under the same type (see `client.ts`). */
  readonly redis: Redis;
  /** The cluster client when the store runs on a Redis Cluster, for what only a cluster has. */
  readonly cluster: Cluster | null;
  /** Every key name, in the store's layout. */
  readonly keys: RedisKeys;
  readonly scripts: RedisScripts;
  /** The replica acknowledgement after steps a later step in another slot depends on (`replication.ts`). */
  readonly replication: ReplicaWaiter;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** A TTL in whole seconds for `EX`: Redis rejects zero, negative and fractional values. */
export function expirySeconds(operation: string, ttlSecs: number): number {
  if (!Number.isFinite(ttlSecs) || ttlSecs <= 0) throw new RangeError(`${operation}: ttlSecs must be a positive number, got ${ttlSecs}`);
  return Math.ceil(ttlSecs);
}

/** Parse JSON without throwing; undefined when it does not parse. */
export function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keys passed in ARGV get the client's key prefix here (ioredis adds it to KEYS only). */
export function prefixed(ctx: RedisContext): (key: string) => string {
  const prefix = ctx.redis.options.keyPrefix ?? '';
  return (key) => `${prefix}${key}`;
}
