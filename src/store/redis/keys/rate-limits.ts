/**
 * Key names of the per-client rate limits (port-rate-limits.ts): one section of
 * `createRedisKeys` (`../keys.ts`), the only place keys are built.
 */
import { shardCount, shardOf, type KeyTags } from './tags.ts';

// ---- request counters (port-rate-limits.ts) --------------------------------------------------

/*
 * | key                          | layout  | type   | value                                                       |
 * |------------------------------|---------|--------|-------------------------------------------------------------|
 * | `ratelimit:NAME:KEY`         | divine  | STRING | requests of KEY (a client address, a pubkey, an API key id) counted in its window; `EX` the window, by `rateLimitIncrMany-n.lua` |
 * | `ratelimit:{rl:NAME:S}:KEY`  | cluster | STRING | the same; S = {@link shardOf}(KEY, {@link CLUSTER_RATE_LIMIT_SHARDS}) |
 *
 * A turn's checks of one counter are counted by one script call (`../rate-limits.ts`): in the
 * cluster layout one per shard, so the keys of a call share the shard's slot and a counter's
 * keys spread over {@link CLUSTER_RATE_LIMIT_SHARDS} slots. NAME and KEY never hold `{`: names
 * are the service's own, keys are addresses, hex pubkeys and ids.
 */

/**
 * Shards of a counter's keys in the cluster layout: how many script calls a turn's checks of one
 * counter may take at most, and how many slots (so masters) a counter's keys spread over.
 */
export const CLUSTER_RATE_LIMIT_SHARDS = 16;

export function rateLimitKeys(t: KeyTags) {
  const shards = shardCount(t, CLUSTER_RATE_LIMIT_SHARDS);
  return {
    /** The shard of `key`'s counter keys (0 in the divine layout): keys of one shard go in one script call. */
    rateLimitShardOf: (key: string): number => shardOf(key, shards),
    /** The window key of `key` in counter `name`. */
    rateLimitKey: (name: string, key: string): string =>
      t.layout === 'cluster' ? `ratelimit:{rl:${name}:${shardOf(key, shards)}}:${key}` : `ratelimit:${name}:${key}`,
  };
}
