/**
 * The two key layouts and the helpers every key builder goes through: the hash tags of the
 * cluster layout, the shard of a value in a sharded index. (The key tables are in `../keys.ts`
 * and beside each section's builders.)
 */
import calculateKeySlot from 'cluster-key-slot';

/**
 * How key names are laid out: `divine` is seed 000's layout exactly (one Redis; a divine Redis is
 * a drop-in); `cluster` wraps the part of a name that says whose data it is in a Redis Cluster
 * hash tag (`user_tokens:{u:PUBKEY}`, `queue:{q:outbound}:ready`, `ntfy:topic:{t:TOPIC}`), so the keys one operation touches
 * hash to one slot and the data spreads over the masters by user, topic and queue.
 */
export type KeyLayout = 'divine' | 'cluster';
export const KEY_LAYOUTS: readonly KeyLayout[] = ['divine', 'cluster'];

/** The hash-tag helpers every builder below goes through; identities in the divine layout. */
export interface KeyTags {
  readonly layout: KeyLayout;
  /** The per-user group: a pubkey (a subscriber, recipient, owner or creator); `{u:PUBKEY}` in the cluster. */
  user(pubkey: string): string;
  /** A durable queue (or one of its shards); `{q:NAME}` in the cluster. */
  queue(name: string): string;
  /** An ntfy topic; `{t:TOPIC}` in the cluster. */
  topic(topic: string): string;
}

export function keyTags(layout: KeyLayout): KeyTags {
  if (layout === 'divine') return { layout, user: (pubkey) => pubkey, queue: (name) => name, topic: (topic) => topic };
  return { layout, user: (pubkey) => `{u:${pubkey}}`, queue: (name) => `{q:${name}}`, topic: (topic) => `{t:${topic}}` };
}

/**
 * The shard (0 … `shardCount` − 1) a value belongs to: its CRC16 (Redis Cluster's key hash), so
 * every process of a fleet agrees without coordination. Always 0 for one shard (the divine layout).
 */
export function shardOf(value: string, shardCount: number): number {
  return shardCount <= 1 ? 0 : calculateKeySlot(value) % shardCount;
}

/** Every shard index of a sharded index, in order (what a sweeper walks). */
export const shardIndexes = (shardCount: number): number[] => Array.from({ length: shardCount }, (_, i) => i);

/**
 * `{TAG}` in the cluster layout, nothing in the divine one: for a group of small operator keys
 * that one script touches together (API keys, metric samples), kept in one slot by name.
 */
export const groupTag = (t: KeyTags, group: string): string => (t.layout === 'cluster' ? `:{${group}}` : '');

/** Shards of an index that grows with traffic: 1 in the divine layout (its one key), `clusterShards` in the cluster. */
export const shardCount = (t: KeyTags, clusterShards: number): number => (t.layout === 'cluster' ? clusterShards : 1);
