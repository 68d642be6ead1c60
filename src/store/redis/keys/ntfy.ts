/**
 * Key names of ntfy topics and the id sequencer: one section of `createRedisKeys` (`../keys.ts`), the only place keys are
 * built. The tables give each name in the divine and the cluster layout.
 */
import { shardIndexes, shardOf, type KeyTags } from './tags.ts';

// ---- ntfy topics (port-ntfy.ts) -------------------------------------------------------------

/*
 * ntfy topics (port-ntfy.ts; the design is described in full in `ntfy.ts` and, for the cluster
 * layout, `ntfy-cluster.ts`). `{S}` is an index shard, {@link NTFY_CLUSTER_INDEX_SHARDS} of them.
 *
 * | divine name          | cluster name                | type    | value                                        |
 * |----------------------|-----------------------------|---------|----------------------------------------------|
 * | `ntfy:head`          | `ntfy:head:{n:seq}`         | STRING  | `ms-seq` of the newest message id allocated (any topic) |
 * | `ntfy:topic:{topic}` | `ntfy:topic:{t:TOPIC}`      | STREAM  | entry id `ms-seq` (the message id) → `m` content JSON, `x` expiry ms |
 * | `ntfy:expiry`        | `ntfy:expiry:{n:S}`, S = shard of the topic    | ZSET | topic → expiry (ms) of the topic's oldest entry; the janitor's index |
 * | `ntfy:ids`           | `ntfy:ids:{n:S}`, S = shard of the entry id    | HASH | entry id `ms-seq` → topic, for every stored message (`since=<id>` of any topic) |
 * | (none)               | `ntfy:pending:{n:seq}`      | ZSET    | ids allocated and not yet committed: member `<ntfy id> <previous ntfy id or -> <lease deadline ms>`, score 0 (lexical order is id order) |
 * | (none)               | `ntfy:held:{n:seq}`         | HASH    | ntfy id → append event, committed while an earlier id was pending; published in id order |
 * | `ntfy:sched:{topic}` | `ntfy:sched:{t:TOPIC}`      | HASH    | scheduled message id → `<deliver at ms> <ttl ms> <content JSON>`, until delivered (`ntfy-scheduled.ts`) |
 * | `ntfy:due`           | `ntfy:due:{n:S}`, S = shard of the topic       | ZSET | `<scheduled id> <topic>` → when it is due (ms), or a claim's lease deadline |
 * | `ntfy:wake`          | `ntfy:wake`                 | channel | pub/sub, one append event per append (below); not a key, so the client's key prefix is added by hand |
 *
 * The id sequencer (head, pending, held) is one slot in the cluster: ids are globally ordered,
 * so one place allocates them; it holds three small keys whatever the number of topics.
 *
 * An append event is `1 <previous> <entry id> <expiry ms> <topic length> <topic><content JSON>`:
 * format version 1, the head before the append (`ms-seq`, or `-` for the first message ever),
 * the new entry id, its expiry, then the topic (length-prefixed, so any topic string is safe) and
 * the content JSON as stored. Payloads of another format (an older version mid-deploy published
 * `{instance} {topic}`) are ignored: listeners see the broken chain and read the store.
 */
/** Index shards of the ntfy expiry and id indexes in the cluster layout (one in divine). */
export const NTFY_CLUSTER_INDEX_SHARDS = 16;
export function ntfyKeys(t: KeyTags) {
  const cluster = t.layout === 'cluster';
  const shards = cluster ? NTFY_CLUSTER_INDEX_SHARDS : 1;
  const sequencer = (name: string): string => (cluster ? `ntfy:${name}:{n:seq}` : `ntfy:${name}`);
  const sharded = (name: string, shard: number): string => (cluster ? `ntfy:${name}:{n:${shard}}` : `ntfy:${name}`);
  return {
    ntfyIndexShards: shards,
    ntfyHeadKey: sequencer('head'),
    ntfyPendingKey: sequencer('pending'),
    ntfyHeldKey: sequencer('held'),
    /** Every shard of the expiry index (one key in divine: `ntfy:expiry`). */
    ntfyExpiryKeys: shardIndexes(shards).map((shard) => sharded('expiry', shard)),
    ntfyExpiryKeyOf: (topic: string): string => sharded('expiry', shardOf(topic, shards)),
    /** Every shard of the id index (one key in divine: `ntfy:ids`). */
    ntfyIdsKeys: shardIndexes(shards).map((shard) => sharded('ids', shard)),
    ntfyIdsKeyOf: (entryId: string): string => sharded('ids', shardOf(entryId, shards)),
    ntfyTopicKey: (topic: string): string => `ntfy:topic:${t.topic(topic)}`,
    /** A topic's scheduled messages: its stream's slot, so a delivery commits and forgets in one script. */
    ntfySchedKey: (topic: string): string => `ntfy:sched:${t.topic(topic)}`,
    /** Every shard of the due index (one key in divine: `ntfy:due`). */
    ntfyDueKeys: shardIndexes(shards).map((shard) => sharded('due', shard)),
    ntfyDueKeyOf: (topic: string): string => sharded('due', shardOf(topic, shards)),
  };
}
/** The append-event channel of a client with key prefix `keyPrefix` (ioredis does not prefix channels). */
export const ntfyWakeChannel = (keyPrefix: string): string => `${keyPrefix}ntfy:wake`;
