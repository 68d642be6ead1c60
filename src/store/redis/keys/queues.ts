/**
 * Key names of the durable queues, one table per shard: one section of `createRedisKeys` (`../keys.ts`), the only place keys are
 * built. The tables give each name in the divine and the cluster layout.
 */
import type { Lane, QueueName } from '../../port.ts';
import { shardOf, type KeyLayout, type KeyTags } from './tags.ts';

/** The ready and leased sets of one lane of a durable queue. */
export interface LaneKeys {
  ready: string;
  leased: string;
}

/**
 * The keys of one durable queue: `ready` and `leased` per lane, the dead-letter list, payloads
 * and metadata shared by the lanes (so an id is unique across them). The normal lane keeps the
 * names the queue had before lanes (`queue:{name}:ready`, `queue:{name}:leased`), so items
 * queued by an older version are normal items.
 */
export interface QueueKeys {
  lanes: Record<Lane, LaneKeys>;
  dead: string;
  items: string;
  meta: string;
  /** Deliveries staged by claimAndEnqueue and not yet committed (`deliveries.ts`). */
  pending: string;
  /** The per-lane ready sets in KEYS order (critical, normal, low). */
  readyKeys: [string, string, string];
  /** The per-lane leased sets in KEYS order (critical, normal, low). */
  leasedKeys: [string, string, string];
}

/** Shards per durable queue in the cluster layout when `redis.queue_shards` is not set. */
export const DEFAULT_CLUSTER_QUEUE_SHARDS = 8;
/** The most shards a queue may have: a lease reads every shard, so more only costs. */
export const MAX_QUEUE_SHARDS = 256;

/**
 * The shard of a queue item: {@link shardOf} its id (CRC16, as every sharded index here).
 * Stable across processes and versions, so every process finds an id in the same shard. (Only the
 * shard count may change it: see `redis.queue_shards` in docs/queues.md.)
 */
export function queueShardOf(id: string, shards: number): number {
  return shardOf(id, shards);
}

/** The number of queue shards of a layout: always 1 in divine; the setting (or the default) in the cluster. */
export function queueShardCount(layout: KeyLayout, configured: number | undefined): number {
  if (layout === 'divine') {
    if (configured !== undefined && configured !== 1)
      throw new RangeError(`redis.queue_shards: the divine key layout has exactly one shard per queue, got ${configured}`);
    return 1;
  }
  const shards = configured ?? DEFAULT_CLUSTER_QUEUE_SHARDS;
  if (!Number.isSafeInteger(shards) || shards < 1 || shards > MAX_QUEUE_SHARDS)
    throw new RangeError(`redis.queue_shards must be an integer from 1 to ${MAX_QUEUE_SHARDS}, got ${shards}`);
  return shards;
}

export function queueKeysOf(t: KeyTags, queue: QueueName, shard: number): QueueKeys {
  // Divine: the one shard keeps the names of before the shards. Cluster: one hash tag per shard.
  const base = t.layout === 'divine' ? `queue:${queue}` : `queue:${t.queue(`${queue}:${shard}`)}`;
  const lanes: Record<Lane, LaneKeys> = {
    critical: { ready: `${base}:critical:ready`, leased: `${base}:critical:leased` },
    normal: { ready: `${base}:ready`, leased: `${base}:leased` },
    low: { ready: `${base}:low:ready`, leased: `${base}:low:leased` },
  };
  return {
    lanes,
    dead: `${base}:dead`,
    items: `${base}:items`,
    meta: `${base}:meta`,
    pending: `${base}:pending`,
    readyKeys: [lanes.critical.ready, lanes.normal.ready, lanes.low.ready],
    leasedKeys: [lanes.critical.leased, lanes.normal.leased, lanes.low.leased],
  };
}
