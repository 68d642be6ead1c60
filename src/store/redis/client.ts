/**
 * The ioredis client of the Redis adapter: one server (`redis://`, `rediss://`) or a Redis
 * Cluster (`redis+cluster://host1:port,host2:port,…`, `rediss+cluster://` for TLS, plus any seed
 * nodes in `redis.cluster_nodes`), through ioredis' cluster client, which follows MOVED and ASK
 * redirections, refreshes its slot map and reconnects by itself.
 */
import { Cluster, Redis } from 'ioredis';
import type { RedisTarget } from './target.ts';

export interface RedisClientHandle {
  /**
   * The command client. A {@link Cluster} is typed as a `Redis` here: ioredis gives both the same
   * command interface (its `Commander`), and the adapter's modules are written once against it.
   * What only a cluster has (its nodes, its slot map) goes through {@link cluster}.
   */
  redis: Redis;
  cluster: Cluster | null;
}

/** An unconnected client for the target (`lazyConnect`; the caller connects and handles errors). */
export function createRedisClient(target: RedisTarget, keyPrefix?: string): RedisClientHandle {
  const prefix = keyPrefix ? { keyPrefix } : {};
  if (target.kind === 'single') {
    return { redis: new Redis(target.url, { lazyConnect: true, enableAutoPipelining: true, ...prefix }), cluster: null };
  }
  const cluster = new Cluster(target.nodes, {
    lazyConnect: true,
    // Batches commands per node, the cluster counterpart of the single client's auto-pipelining.
    enableAutoPipelining: true,
    // Reads go to masters too: a replica may lag behind a lease or a claim just written.
    scaleReads: 'master',
    // ioredis' ready check waits for `cluster_state:ok` before any command: with one master down
    // and no replica, the client would never become ready and every command, those for the slots
    // still served included, would wait forever. Without it, commands for served slots work and
    // those for uncovered slots fail with CLUSTERDOWN after ioredis' bounded retries, and doctor
    // and /health can say what is wrong.
    enableReadyCheck: false,
    ...prefix,
    redisOptions: {
      ...(target.username ? { username: target.username } : {}),
      ...(target.password ? { password: target.password } : {}),
      ...(target.tls ? { tls: {} } : {}),
    },
  });
  // See RedisClientHandle.redis: the same command interface, so one type for the modules.
  return { redis: cluster as unknown as Redis, cluster };
}
