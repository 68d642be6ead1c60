/**
 * Key names of coalescing groups, dispositions, budgets and the outbox: one section of `createRedisKeys` (`../keys.ts`), the only place keys are
 * built. The tables give each name in the divine and the cluster layout.
 */
import { shardOf, type KeyTags } from './tags.ts';

// ---- coalescing (port-coalesce.ts) ----------------------------------------------------------

/*
 * Coalescing (seed 000's key table; divine's names, types and value formats). `{gid}` is the
 * group id `{type}:{owner}:{target}:{bucket}`; every time is unix seconds unless it says ms.
 *
 * | key (divine)                         | key (cluster)                          | type   | value |
 * |--------------------------------------|----------------------------------------|--------|-------|
 * | `coalesce:g:{gid}`                   | `coalesce:g:{type}:{u:OWNER}:{target}:{bucket}` | HASH | `due`, `expires_at`, `owner`, `type`, `target`, `event_kind`, `immediate`, `pending`, `first_actor`, `first_event`, `last_at`, `ref_event_id`, `ref_address`, `ref_kind`, `ref_author`, `ref_dtag`, `lease`; TTL group_ttl + grace with buffered work, window + grace with immediates only |
 * | `coalesce:hll:{gid}`                 | `coalesce:hll:{type}:{u:OWNER}:{target}:{bucket}` | HLL | distinct buffered actors; same TTL as the group |
 * | `coalesce:disp:{eventId}:{recipient}`| `coalesce:disp:{eventId}:{u:RECIPIENT}` | STRING | `i:{gid}` (immediate) or `b:{gid}` (buffered); TTL window + grace |
 * | `coalesce:due`                       | `coalesce:due:{c:N}`, N < {@link CLUSTER_COALESCE_OUTBOX_SHARDS} | ZSET | gid → when it may be flushed |
 * | `coalesce:leases`                    | `coalesce:leases:{c:N}`, same N as its due set | ZSET | gid → lease expiry of the flush (or the reconciliation) holding it |
 * | `coalesce:throttle:{owner}`          | `coalesce:throttle:{u:OWNER}`          | HASH   | `tokens` (may be fractional), `ts` (ms of the last refill); TTL max(capacity·refill·2, window + grace) |
 * | `coalesce:emitted:{owner}`           | `coalesce:emitted:{u:OWNER}`           | ZSET   | emitted notification (event id of an immediate, gid of a summary) → send time; TTL daily window + grace |
 *
 * Slots in the cluster: a group, its actors, the dispositions and the budget of one recipient
 * share `{u:OWNER}` (the gid's owner field is the tag; a gid without one is tagged whole). The
 * outbox is split into shards (a gid's shard is {@link shardOf} its gid), each shard's due
 * and lease sets sharing `{c:N}`; the divine layout is the one shard with seed 000's names. The
 * steps between the two slots, and why they are safe, are in the header of `coalesce.ts`.
 */
/** Outbox shards in the cluster layout; changing it strands entries of the dropped shards. */
export const CLUSTER_COALESCE_OUTBOX_SHARDS = 8;

/** A gid with its owner field in the per-user tag: `like:{u:OWNER}:e:…:123` (the gid itself in divine). */
export function taggedGroupId(t: KeyTags, groupId: string): string {
  const first = groupId.indexOf(':');
  const second = first < 0 ? -1 : groupId.indexOf(':', first + 1);
  // Not a gid this service writes: tagged whole, so its group and actor keys still share a slot.
  if (second < 0) return t.user(groupId);
  return `${groupId.slice(0, first + 1)}${t.user(groupId.slice(first + 1, second))}${groupId.slice(second)}`;
}

export function coalesceKeys(t: KeyTags) {
  const outboxShards = t.layout === 'divine' ? 1 : CLUSTER_COALESCE_OUTBOX_SHARDS;
  const outboxKey = (set: 'due' | 'leases', shard: number): string =>
    t.layout === 'divine' ? `coalesce:${set}` : `coalesce:${set}:{c:${shard}}`;
  return {
    coalesceGroupKey: (groupId: string): string => `coalesce:g:${taggedGroupId(t, groupId)}`,
    coalesceHllKey: (groupId: string): string => `coalesce:hll:${taggedGroupId(t, groupId)}`,
    coalesceDispositionKey: (eventId: string, recipient: string): string => `coalesce:disp:${eventId}:${t.user(recipient)}`,
    /** How many outbox shards there are: 1 in divine, {@link CLUSTER_COALESCE_OUTBOX_SHARDS} in the cluster. */
    coalesceOutboxShards: outboxShards,
    /** The outbox shard of a group. */
    coalesceOutboxShardOf: (groupId: string): number => shardOf(groupId, outboxShards),
    coalesceDueKey: (shard: number): string => outboxKey('due', shard),
    coalesceLeasesKey: (shard: number): string => outboxKey('leases', shard),
    coalesceThrottleKey: (owner: string): string => `coalesce:throttle:${t.user(owner)}`,
    coalesceEmittedKey: (owner: string): string => `coalesce:emitted:${t.user(owner)}`,
  };
}
