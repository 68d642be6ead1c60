/**
 * Every Redis key nostr-push reads or writes, built here and nowhere else.
 *
 * Keys shared with divine-push-service (seed 000, reference §3.1): the names, types and value
 * formats are kept exactly, so an existing divine Redis is taken over as it is.
 *
 * | key                              | type   | value                                                        |
 * |----------------------------------|--------|--------------------------------------------------------------|
 * | `user_tokens:{pubkey}`           | SET    | the pubkey's device tokens (see "device tokens" below)       |
 * | `token_to_pubkey`                | HASH   | token → owner pubkey                                         |
 * | `token_timezone_offsets`         | HASH   | token → UTC offset in minutes (east positive)                |
 * | `stale_tokens`                   | ZSET   | token → last activity, unix SECONDS (registration, delivery) |
 * | `dedup:{eventId}`                | STRING | "1", per-event control claim, `SET NX EX`                    |
 * | `dedup:{eventId}:{recipient}`    | STRING | owner uuid, per-recipient delivery claim, `SET NX EX`; `dedup:{eventId}:{u:RECIPIENT}` in the cluster layout (the recipient's slot) |
 * | `dedup:34236:{type}:{owner}:{d}:{recipient}` | STRING | "1", per-recipient video decision per notification type, `SETEX` |
 * | `dedup:34236:{owner}:{d}:{recipient}` | STRING | legacy type-less video decision; read, never written  |
 * | `user_preferences:{pubkey}`      | STRING | JSON `{"kinds":[…]}`                                         |
 * | `campaign_consent:{pubkey}`      | STRING | "1" when campaigns are enabled; absent means disabled        |
 * | `profile_cache:{pubkey}`         | STRING | JSON `{pubkey,name,display_name}`, `SETEX` ttl               |
 *
 * Keys nostr-push adds (divine never reads them):
 *
 * | key                              | type   | value                                                        |
 * |----------------------------------|--------|--------------------------------------------------------------|
 * | `token_devices`                  | HASH   | token → JSON `{transport, endpoint?, p256dh?, auth?, sandbox?, encryptTo?, locale?}`, only for devices that are not a plain FCM token. A token absent here is transport `fcm`, so a divine Redis reads as FCM devices |
 * | `user_tokens_forgetting:{pubkey}` | HASH  | token → intent id: tokens being taken out of `user_tokens:{pubkey}`, only while a removal step runs (or after it crashed); see `tokens.ts` |
 * | `social_filters:{pubkey}`        | STRING | JSON `{mutedPubkeys:[hex…], onlyFollowing: "all"\|[types]\|null}` (kind 3083), absent when nothing is filtered |
 * | `relay_cursors`                  | HASH   | relay URL → newest `created_at` seen (unix seconds), only ever raised |
 * | `queue:{name}:ready`             | ZSET   | item id → available-at (ms), normal lane                     |
 * | `queue:{name}:leased`            | ZSET   | item id → lease expiry (ms), normal lane                     |
 * | `queue:{name}:{lane}:ready`      | ZSET   | the same for the `critical` and `low` lanes                  |
 * | `queue:{name}:{lane}:leased`     | ZSET   | the same for the `critical` and `low` lanes                  |
 * | `queue:{name}:dead`              | ZSET   | item id → dead-lettered at (ms), every lane                  |
 * | `queue:{name}:items`             | HASH   | item id → payload JSON, opaque to Lua, every lane            |
 * | `queue:{name}:meta`              | HASH   | item id → JSON `{attempts, leaseToken?, lastError?, reason?, lane?, firstFailedAt?, lastFailedAt?, pendingOwner?}` |
 * | `queue:{name}:pending`           | ZSET   | item id → expiry (ms) of a delivery staged by claimAndEnqueue, not yet committed (`deliveries.ts`) |
 *
 * The queue design (states, transitions, why payload and metadata are split) is described in
 * full in the header of `queues.ts` and in `docs/queues.md`. The divine layout has ONE shard per
 * queue with exactly these names. The cluster layout splits every queue into
 * `redis.queue_shards` shards (default {@link DEFAULT_CLUSTER_QUEUE_SHARDS}), each the whole
 * table above under its own hash tag: `queue:{q:outbound:3}:ready`, `queue:{q:outbound:3}:items`,
 * … An item lives in shard {@link queueShardOf}(its id), so every operation on one item touches
 * one slot; lease, stats and the dead-letter views walk every shard.
 *
 * A `keyPrefix` given to the ioredis client is added by ioredis to every key below, including
 * Lua `KEYS`; no script builds a key name itself, so the prefix reaches every key a script
 * touches. Tenancy uses it: the default app has no prefix (seed 000's layout exactly, a divine
 * Redis is a drop-in), and every other app's store view has {@link appKeyPrefix} (`app:{id}:`),
 * so its whole layout, the tables below included, sits under it. No key of the default layout
 * starts with `app:`, so the two never meet. API keys are the exception: they live in the
 * default app's view only (`apikey:*`), since the key is what names the app.
 */
import calculateKeySlot from 'cluster-key-slot';
import type { Lane, QueueName } from '../port.ts';
import { DEFAULT_APP_ID } from '../../config/apps.ts';

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

/** The key prefix of app `appId`'s store view: none for the default app, `app:{id}:` for the others. */
export const appKeyPrefix = (appId: string): string => (appId === DEFAULT_APP_ID ? '' : `app:${appId}:`);

// ---- device tokens (port.ts; the steps and their invariant are in `tokens.ts`) ----------------

/*
 * Device tokens in the two layouts. Everything keyed by a token (its owner, activity, timezone
 * offset and description) is one token record, split in the cluster into
 * {@link CLUSTER_TOKEN_SHARDS} fixed shards by the token's hash ({@link shardOf}); the four keys of
 * a shard share the tag `{k:N}`, so a token record is written by one script. A user's token set
 * and the removal intents share the user's tag. The divine layout is the one shard with divine's
 * global names.
 *
 * | key (divine)                     | key (cluster)                        | type | value              |
 * |----------------------------------|--------------------------------------|------|--------------------|
 * | `token_to_pubkey`                | `token_to_pubkey:{k:N}`              | HASH | token → owner      |
 * | `stale_tokens`                   | `stale_tokens:{k:N}`                 | ZSET | token → activity, unix seconds |
 * | `token_timezone_offsets`         | `token_timezone_offsets:{k:N}`       | HASH | token → minutes    |
 * | `token_devices`                  | `token_devices:{k:N}`                | HASH | token → device JSON |
 * | `user_tokens:{pubkey}`           | `user_tokens:{u:PUBKEY}`             | SET  | the user's tokens: an index, checked against `token_to_pubkey` by every reader |
 * | `user_tokens_forgetting:{pubkey}`| `user_tokens_forgetting:{u:PUBKEY}`  | HASH | token → intent id, while a token leaves the user's set |
 *
 * N = {@link shardOf}(token, {@link CLUSTER_TOKEN_SHARDS}).
 */
/** Token-record shards in the cluster layout; changing it strands the tokens of the other shards. */
export const CLUSTER_TOKEN_SHARDS = 64;

/** The four keys of one token-record shard, in the KEYS order of the token-record scripts. */
export interface TokenShardKeys {
  owners: string;
  activity: string;
  offsets: string;
  devices: string;
}

function tokenKeys(t: KeyTags) {
  const divine = t.layout === 'divine';
  const shards = divine ? 1 : CLUSTER_TOKEN_SHARDS;
  const shardKey = (name: string, shard: number): string => (divine ? name : `${name}:{k:${shard}}`);
  return {
    /** How many token-record shards there are: 1 in divine, {@link CLUSTER_TOKEN_SHARDS} in the cluster. */
    tokenShards: shards,
    /** The token-record shard of a token. */
    tokenShardOf: (token: string): number => shardOf(token, shards),
    tokenShardKeys: (shard: number): TokenShardKeys => ({
      owners: shardKey('token_to_pubkey', shard),
      activity: shardKey('stale_tokens', shard),
      offsets: shardKey('token_timezone_offsets', shard),
      devices: shardKey('token_devices', shard),
    }),
    userTokensKey: (pubkey: string): string => `user_tokens:${t.user(pubkey)}`,
    userTokensForgettingKey: (pubkey: string): string => `user_tokens_forgetting:${t.user(pubkey)}`,
  };
}

function tokenAndClaimKeys(t: KeyTags) {
  return {
    relayCursorsKey: 'relay_cursors',
    eventClaimKey: (eventId: string): string => `dedup:${eventId}`,
    recipientClaimKey: (eventId: string, recipient: string): string => `dedup:${eventId}:${t.user(recipient)}`,
  };
}
/** Kind of the addressable videos whose coordinate records are kept. */
const VIDEO_KIND = 34236;
function userKeys(t: KeyTags) {
  return {
    videoRecordKey: (type: string, owner: string, dTag: string, recipient: string): string =>
      `dedup:${VIDEO_KIND}:${type}:${owner}:${dTag}:${t.user(recipient)}`,
    legacyVideoRecordKey: (owner: string, dTag: string, recipient: string): string =>
      `dedup:${VIDEO_KIND}:${owner}:${dTag}:${t.user(recipient)}`,
    userPreferencesKey: (pubkey: string): string => `user_preferences:${t.user(pubkey)}`,
    campaignConsentKey: (pubkey: string): string => `campaign_consent:${t.user(pubkey)}`,
    profileCacheKey: (pubkey: string): string => `profile_cache:${t.user(pubkey)}`,
    socialFiltersKey: (pubkey: string): string => `social_filters:${t.user(pubkey)}`,
  };
}
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

function queueKeysOf(t: KeyTags, queue: QueueName, shard: number): QueueKeys {
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
function ntfyKeys(t: KeyTags) {
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
  };
}
/** The append-event channel of a client with key prefix `keyPrefix` (ioredis does not prefix channels). */
export const ntfyWakeChannel = (keyPrefix: string): string => `${keyPrefix}ntfy:wake`;

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
function taggedGroupId(t: KeyTags, groupId: string): string {
  const first = groupId.indexOf(':');
  const second = first < 0 ? -1 : groupId.indexOf(':', first + 1);
  // Not a gid this service writes: tagged whole, so its group and actor keys still share a slot.
  if (second < 0) return t.user(groupId);
  return `${groupId.slice(0, first + 1)}${t.user(groupId.slice(first + 1, second))}${groupId.slice(second)}`;
}

function coalesceKeys(t: KeyTags) {
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
// ---- notify lists and fan-out jobs (port-bells.ts) ------------------------------------------

/*
 * Bells (seed 000's key table; divine's names, types and value formats). `{S}` is a fan-out job
 * shard, {@link FANOUT_CLUSTER_SHARDS} of them: the shard of a job's video (its `event_json`).
 *
 * | divine name                          | cluster name                          | type   | value |
 * |--------------------------------------|---------------------------------------|--------|-------|
 * | `notify_subs:{subscriber}`           | `notify_subs:{u:SUBSCRIBER}`          | SET    | creators the subscriber bells (forward index); no TTL |
 * | `notify_subs_ts:{subscriber}`        | `notify_subs_ts:{u:SUBSCRIBER}`       | STRING | `created_at:event_id` of the applied list (a bare integer from an earlier build is a timestamp with no id); no TTL |
 * | `notify_subs_lease:{subscriber}`     | `notify_subs_lease:{u:SUBSCRIBER}`    | STRING | `created_at:event_id` of the list being applied, PX the lease (nostr-push's own, see `bells.ts`) |
 * | `notify_watchers:{creator}`          | `notify_watchers:{u:CREATOR}`         | SET    | subscribers watching the creator (reverse index, walked by SSCAN); no TTL |
 * | `notify_rate:{subscriber}:{creator}` | `notify_rate:SUBSCRIBER:{u:CREATOR}`  | STRING | "1", bell rate window, `SET EX new_post_rate_limit_secs`; full hex, never truncated |
 * | `fanout:enqueued:{eventId}`          | `fanout:enqueued:{f:S}:EVENTID`       | STRING | "1", the video's fan-out was queued, `EX processed_event_ttl_secs` |
 * | `new_post_fanout_jobs`               | `new_post_fanout_jobs:{f:S}`          | ZSET   | job JSON (`fanout-job-codec.ts`) → next availability or lease deadline, ms |
 *
 * The rate window sits in the creator's slot: one bell page (one creator) opens its windows there.
 * A job, its successors and retries, and its enqueue marker share the shard of the video, so each
 * transition of the queue is one script in one slot.
 */
/** Fan-out job shards in the cluster layout (one in divine). */
export const FANOUT_CLUSTER_SHARDS = 8;
function bellKeys(t: KeyTags) {
  const cluster = t.layout === 'cluster';
  const shards = cluster ? FANOUT_CLUSTER_SHARDS : 1;
  const jobsKey = (shard: number): string => (cluster ? `new_post_fanout_jobs:{f:${shard}}` : 'new_post_fanout_jobs');
  return {
    notifySubsKey: (subscriber: string): string => `notify_subs:${t.user(subscriber)}`,
    notifySubsTsKey: (subscriber: string): string => `notify_subs_ts:${t.user(subscriber)}`,
    notifySubsLeaseKey: (subscriber: string): string => `notify_subs_lease:${t.user(subscriber)}`,
    notifyWatchersKey: (creator: string): string => `notify_watchers:${t.user(creator)}`,
    notifyRateKey: (subscriber: string, creator: string): string => `notify_rate:${subscriber}:${t.user(creator)}`,
    fanoutShards: shards,
    /** The shard of a fan-out job: the shard of its video's JSON, so a video's jobs stay together. */
    fanoutShardOf: (eventJson: string): number => shardOf(eventJson, shards),
    fanoutEnqueuedKey: (shard: number, eventId: string): string =>
      cluster ? `fanout:enqueued:{f:${shard}}:${eventId}` : `fanout:enqueued:${eventId}`,
    newPostFanoutJobsKey: jobsKey,
    /** Every shard of the job queue (one key in divine: `new_post_fanout_jobs`). */
    newPostFanoutJobsKeys: shardIndexes(shards).map(jobsKey),
  };
}
// ---- Web Push (port-vapid.ts) ----------------------------------------------------------------

/**
 * STRING: the fleet's VAPID key pair, JSON `{"publicKey","privateKey"}` (base64url), set once.
 * The same name in both layouts: `claimVapidKeys-1` touches it alone.
 */
function vapidKeys(_t: KeyTags) {
  return {
    vapidKeysKey: 'webpush:vapid',
  };
}

/**
 * `{TAG}` in the cluster layout, nothing in the divine one: for a group of small operator keys
 * that one script touches together (API keys, metric samples), kept in one slot by name.
 */
const groupTag = (t: KeyTags, group: string): string => (t.layout === 'cluster' ? `:{${group}}` : '');

/**
 * Shards of an index that grows with traffic: 1 in the divine layout (the seed's one key, its
 * name unchanged), a fixed number in the cluster, each its own slot. Fixed, because an entry's
 * shard is computed from its id: a different count would lose track of stored entries.
 */
export const SEND_DUE_SHARDS = 8;
export const DELIVERY_LOG_SHARDS = 16;
const shardCount = (t: KeyTags, clusterShards: number): number => (t.layout === 'cluster' ? clusterShards : 1);

// ---- API keys, sends, delivery log (port-apikeys.ts, port-sends.ts, port-delivery-log.ts) ----

/*
 * Keys of the app platform (nostr-push's own; divine never reads them). `{app}` is an app id
 * (`[a-z0-9_-]`, no colon), so `{app}:{id}` members split at the first colon. Divine layout
 * names first; the cluster layout's name below each (hash tags in braces, `S` a shard number).
 *
 * | key                                     | type   | value                                                  |
 * |-----------------------------------------|--------|--------------------------------------------------------|
 * | `apikey:{id}`                           | HASH   | `appId`, `role`, `hash`, `prefix`, `createdAtMs`, `revokedAtMs` (once revoked) |
 * |   cluster `apikey:{apikeys}:{id}`       |        | every API key in one slot: small operator data, created atomically with its hash |
 * | `apikey_hashes`                         | HASH   | key hash (SHA-256 hex) → key id                         |
 * |   cluster `apikey_hashes:{apikeys}`     |        |                                                        |
 * | `apikeys`                               | ZSET   | key id → created at, ms                                |
 * |   cluster `apikeys:{apikeys}`           |        |                                                        |
 * | `send:{app}:{id}`                       | HASH   | `request` JSON, `lane`, `state`, `sendAtMs`, `createdAtMs`, `offset`; PEXPIRE the record lifetime |
 * |   cluster `send:{app}:{s:ID}`           |        | the send's own slot                                    |
 * | `send_idem:{app}:{key}`                 | STRING | JSON `{"id","hash","atMs"}` of the first send with that Idempotency-Key (`atMs`: when it was taken); EX its TTL; the same name in the cluster (touched alone) |
 * | `sends:due:{lane}`                      | ZSET   | `{app}:{id}` → due time, ms (send time, lease deadline, or now after a page), one per lane (critical, normal, low) |
 * |   cluster `sends:due:{lane}:{sd:S}`     |        | {@link SEND_DUE_SHARDS} shards per lane, by `{app}:{id}`; touched alone |
 * | `delivery_log:{app}`                    | ZSET   | entry member (below) → appended at, ms                 |
 * |   cluster `delivery_log:{app}:{dl:S}`   |        | {@link DELIVERY_LOG_SHARDS} shards by recipient: every key of an entry is in its recipient's shard |
 * | `delivery_log:{app}:recipient:{pubkey}` | ZSET   | the same members, of one recipient                     |
 * |   cluster `delivery_log:{app}:{dl:S}:recipient:{pubkey}` |  |                                                  |
 * | `delivery_log:{app}:notification:{id}`  | ZSET   | the same members, of one notification                  |
 * |   cluster `delivery_log:{app}:{dl:S}:notification:{id}` |   | the notification's recipients of shard S           |
 * | `delivery_stats:{app}:{day}`            | HASH   | `sent:{type}`, `opened:{type}` → counts of one UTC day  |
 * |   cluster `delivery_stats:{app}:{dl:S}:{day}` |  | the counts of shard S's entries; readers sum the shards  |
 * | `delivery_stats_days:{app}`             | ZSET   | day → day: the days that have counters, for the sweep   |
 * |   cluster `delivery_stats_days:{app}:{dl:S}` |   |                                                        |
 *
 * A log member is `{append uuid}{index, 6 digits}|{entry JSON}`: unique, and ordered within one
 * append (a ZSET orders equal scores by member); readers merge the shards by (score, member),
 * the order one ZSET would have.
 */
function platformKeys(t: KeyTags) {
  const apiKeys = groupTag(t, 'apikeys');
  const sendDueShards = shardCount(t, SEND_DUE_SHARDS);
  const sendDueKey = (lane: Lane, shard: number): string =>
    t.layout === 'cluster' ? `sends:due:${lane}:{sd:${shard}}` : `sends:due:${lane}`;
  const logShards = shardCount(t, DELIVERY_LOG_SHARDS);
  const logShard = (shard: number): string => (t.layout === 'cluster' ? `:{dl:${shard}}` : '');
  return {
    apiKeyKey: (id: string): string => (t.layout === 'cluster' ? `apikey${apiKeys}:${id}` : `apikey:${id}`),
    apiKeyHashesKey: `apikey_hashes${apiKeys}`,
    apiKeysKey: `apikeys${apiKeys}`,
    sendKey: (appId: string, id: string): string => (t.layout === 'cluster' ? `send:${appId}:{s:${id}}` : `send:${appId}:${id}`),
    sendIdempotencyKey: (appId: string, key: string): string => `send_idem:${appId}:${key}`,
    /** The due shard of send `{appId}:{id}` in `lane`. */
    sendDueKey: (lane: Lane, appId: string, id: string): string => sendDueKey(lane, shardOf(`${appId}:${id}`, sendDueShards)),
    /** Every due shard of `lane` (one in the divine layout). */
    sendDueShardKeys: (lane: Lane): string[] => Array.from({ length: sendDueShards }, (_, shard) => sendDueKey(lane, shard)),
    /** The delivery-log shards (1 in the divine layout) and the shard of a recipient. */
    deliveryLogShards: logShards,
    deliveryLogShardOf: (recipient: string): number => shardOf(recipient, logShards),
    deliveryLogKey: (appId: string, shard: number): string => `delivery_log:${appId}${logShard(shard)}`,
    deliveryLogRecipientKey: (appId: string, recipient: string): string =>
      `delivery_log:${appId}${logShard(shardOf(recipient, logShards))}:recipient:${recipient}`,
    deliveryLogNotificationKey: (appId: string, id: string, shard: number): string =>
      `delivery_log:${appId}${logShard(shard)}:notification:${id}`,
    deliveryStatsKey: (appId: string, day: number, shard: number): string => `delivery_stats:${appId}${logShard(shard)}:${day}`,
    deliveryStatsDaysKey: (appId: string, shard: number): string => `delivery_stats_days:${appId}${logShard(shard)}`,
  };
}
// ---- the console's fleet view and sessions (port-fleet.ts) ----------------------------------

/*
 * | key                        | type   | value                                                         |
 * |----------------------------|--------|---------------------------------------------------------------|
 * | `fleet:heartbeats`         | HASH   | process id → JSON `{record, seenAtMs, expiresAtMs}`; expired fields are dropped by reads; the same name in the cluster (one key per command) |
 * | `fleet:samples`            | ZSET   | `{processId}|{atMs}` → at, ms; older than the retention dropped by writes |
 * |   cluster `fleet:samples:{fleet}` |  | with the values in one slot (`writeMetricSample-2`); bounded by processes × retention |
 * | `fleet:sample_values`      | HASH   | the same member → values JSON                                 |
 * |   cluster `fleet:sample_values:{fleet}` | |                                                        |
 * | `console_session:{idHash}` | STRING | session JSON; PX its time to live; the same name in the cluster |
 */
function fleetKeys(t: KeyTags) {
  const fleet = groupTag(t, 'fleet');
  return {
    fleetHeartbeatsKey: 'fleet:heartbeats',
    fleetSamplesKey: `fleet:samples${fleet}`,
    fleetSampleValuesKey: `fleet:sample_values${fleet}`,
    consoleSessionKey: (idHash: string): string => `console_session:${idHash}`,
  };
}
// ---- the user's inbox (port-inbox.ts) --------------------------------------------------------

/*
 * Inbox counters, alert words and announcements (issue 13), Twitarr's layout (seed 002):
 *
 * | key (divine)                     | key (cluster)                   | type    | value |
 * |----------------------------------|---------------------------------|---------|-------|
 * | `inbox:{pubkey}`                 | `inbox:{u:PUBKEY}`              | HASH    | Twitarr's `NotificationHash-<user>`: `{type}` total and `{type}_viewed` per counted type, `announcement` (the id high-water mark), `known` = "1" once remembered; its existence makes the user known |
 * | `inbox_counted:{countKey}:{recipient}` | `inbox_counted:{countKey}:{u:RECIPIENT}` | STRING | "1", the notification was counted, `SET NX EX processed_event_ttl_secs` |
 * | `alertwords`                     | `alertwords:{a:N}`, N < {@link CLUSTER_ALERT_WORD_SHARDS} | ZSET | watched word → number of users watching it (Twitarr's index); in the cluster, the words of shard N |
 * | `alertwordUsers:{word}`          | `alertwordUsers:{a:N}:{word}`, N the word's shard | SET | the pubkeys watching the word |
 * | `user_alertwords:{pubkey}`       | `user_alertwords:{u:PUBKEY}`    | SET     | the user's own words (the forward index); a superset of the words whose watcher set holds the user |
 * | `user_alertwords_lock:{pubkey}`  | `user_alertwords_lock:{u:PUBKEY}` | STRING | token of the replace in progress, `SET NX PX`; nostr-push's own |
 * | `announcements`                  | `{announcements}`               | HASH    | id → JSON `{text, createdAtMs, expiresAtMs}` |
 * | `announcements:active`           | `{announcements}:active`        | ZSET    | id → expiry (ms); read from `(now` upwards |
 * | `announcements:seq`              | `{announcements}:seq`           | STRING  | the last announcement id given out (INCR) |
 * | `inbox:hints`                    | the same                        | channel | pub/sub, JSON {@link InboxHint}; not a key, so the client's key prefix is added by hand |
 *
 * Slots in the cluster: a user's counters, marks, words and devices share `{u:PUBKEY}`; a word's
 * watcher set sits in the slot of its index shard (`{a:N}`, N = {@link shardOf} the word), so one
 * script keeps the two in step; the announcements (operator data, a handful) share one slot. The
 * divine layout is the one shard with Twitarr's names. Hints are published by the scripts that
 * change a user's counters, on the user's node, so one user's hints keep their order.
 */
/** Alert-word index shards in the cluster layout; changing it strands the words of other shards. */
export const CLUSTER_ALERT_WORD_SHARDS = 8;

function inboxKeys(t: KeyTags) {
  const divine = t.layout === 'divine';
  const wordShards = divine ? 1 : CLUSTER_ALERT_WORD_SHARDS;
  const wordIndexKey = (shard: number): string => (divine ? 'alertwords' : `alertwords:{a:${shard}}`);
  return {
    inboxKey: (pubkey: string): string => `inbox:${t.user(pubkey)}`,
    inboxCountedKey: (countKey: string, recipient: string): string => `inbox_counted:${countKey}:${t.user(recipient)}`,
    /** Every shard of the alert-word index (one key in divine). */
    alertWordIndexKeys: Array.from({ length: wordShards }, (_, shard) => wordIndexKey(shard)),
    /** The index shard that holds `word`. */
    alertWordIndexKey: (word: string): string => wordIndexKey(shardOf(word, wordShards)),
    alertWordUsersKey: (word: string): string =>
      divine ? `alertwordUsers:${word}` : `alertwordUsers:{a:${shardOf(word, wordShards)}}:${word}`,
    userAlertWordsKey: (pubkey: string): string => `user_alertwords:${t.user(pubkey)}`,
    userAlertWordsLockKey: (pubkey: string): string => `user_alertwords_lock:${t.user(pubkey)}`,
    announcementsKey: divine ? 'announcements' : '{announcements}',
    activeAnnouncementsKey: divine ? 'announcements:active' : '{announcements}:active',
    announcementSeqKey: divine ? 'announcements:seq' : '{announcements}:seq',
  };
}
/** The hint channel of a client with key prefix `keyPrefix` (ioredis does not prefix channels). */
export const inboxHintChannel = (keyPrefix: string): string => `${keyPrefix}inbox:hints`;

// ---- NIP-9a gateway (port-nip9a-gateway.ts) ----------------------------------------------------
/*
 * | key                      | type   | value                                                                 |
 * |--------------------------|--------|-----------------------------------------------------------------------|
 * | `nip9a:registrations`    | HASH   | `{pubkey}:{d}` → JSON `{pubkey,d,eventId,createdAt,relays,eventJson}` |
 * | `nip9a:author:{pubkey}`  | SET    | the author's `d` values                                               |
 * | `nip9a:relay_counts`     | HASH   | normalised relay URL → registrations watching it                      |
 * | `nip9a:version`          | STRING | change counter, INCR on every change                                  |
 * | `nip9a:outcomes`         | ZSET   | delivery key → terminal outcome recorded at (ms); the same name in the cluster (touched alone) |
 *
 * In the cluster layout the first four carry the tag `{nip9a}` (`nip9a:registrations:{nip9a}`,
 * `nip9a:author:{nip9a}:{pubkey}`, …): one slot, so `nip9aPut-4` and `nip9aDelete-4` keep checking
 * the per-author and the per-relay limits atomically with the write. The set is bounded by
 * design: every relay takes at most `nip9a.max_registrations_per_relay` registrations, every
 * author `max_registrations_per_author`, and every gateway process holds the whole set in memory
 * (`listAllNip9aRegistrations` on each change), so it would outgrow a gateway long before a master.
 */
function nip9aGatewayKeys(t: KeyTags) {
  const gateway = groupTag(t, 'nip9a');
  return {
    nip9aRegistrationsKey: `nip9a:registrations${gateway}`,
    nip9aAuthorKey: (pubkey: string): string => `nip9a:author${gateway}:${pubkey}`,
    nip9aRelayCountsKey: `nip9a:relay_counts${gateway}`,
    nip9aVersionKey: `nip9a:version${gateway}`,
    nip9aOutcomesKey: 'nip9a:outcomes',
  };
}
/** The field of a registration in {@link nip9aRegistrationsKey}; the pubkey is 64 hex, so the first `:` ends it. */
export const nip9aRegistrationField = (pubkey: string, d: string): string => `${pubkey}:${d}`;

// ---- NIP-9a callback receiver (port-nip9a-callbacks.ts) --------------------------------------

/*
 * | key                                      | type   | value                                                  |
 * |------------------------------------------|--------|--------------------------------------------------------|
 * | `nip9a:callbacks`                        | HASH   | callback id → JSON `{id, secretHash, secretHint, owner, relay, createdAtMs}` |
 * |   cluster `nip9a:callbacks:{cb:ID}`      |        | one field, in the callback's own slot                  |
 * | `nip9a:callback_secrets`                 | HASH   | SHA-256 of a callback URL's secret (hex) → callback id  |
 * |   cluster `nip9a:callback_secrets:{cs:HASH}` |    | one field, in the secret's own slot                    |
 * | `nip9a:callbacks_of:{owner}`             | ZSET   | callback id → created-at ms; cluster `{u:OWNER}`       |
 * | `nip9a:receipt:{callbackId}:{eventId}:{relay}` | STRING | owner uuid; one relay POST queued, `SET NX EX` by the claimAndEnqueue steps (`deliveries.ts`) |
 *
 * Every step of `nip9a-callbacks.ts` touches one of these keys at a time (the order and why it is
 * safe are in its header). The receipt key ends with the relay URL (it may hold any character but
 * a space), so the fixed-format parts before it cannot be confused.
 */
function nip9aCallbackKeys(t: KeyTags) {
  const cluster = t.layout === 'cluster';
  return {
    nip9aCallbacksKey: (id: string): string => (cluster ? `nip9a:callbacks:{cb:${id}}` : 'nip9a:callbacks'),
    nip9aCallbackSecretsKey: (secretHash: string): string =>
      cluster ? `nip9a:callback_secrets:{cs:${secretHash}}` : 'nip9a:callback_secrets',
    nip9aCallbacksOfKey: (owner: string): string => `nip9a:callbacks_of:${t.user(owner)}`,
    nip9aReceiptKey: (callbackId: string, eventId: string, relay: string): string => `nip9a:receipt:${callbackId}:${eventId}:${relay}`,
  };
}
// ---- the per-user push throttle (port-throttle.ts) -------------------------------------------

/*
 * | key                                       | type | value                                             |
 * |-------------------------------------------|------|---------------------------------------------------|
 * | `push_throttle:{pubkey}:{windowStartSecs}` | HASH | `pushed`, `withheld` in the window; EXPIRE two windows |
 */
function throttleKeys(t: KeyTags) {
  return {
    pushThrottleKey: (pubkey: string, windowStartSecs: number): string => `push_throttle:${t.user(pubkey)}:${windowStartSecs}`,
  };
}
// ---- campaigns and suppressions (port-campaigns.ts, port-suppressions.ts) ---------------------

/*
 * | key                                      | type   | value                                                  |
 * |------------------------------------------|--------|--------------------------------------------------------|
 * | `campaign:{app}:{id}`                    | HASH   | `request` JSON, `hash`, `state`, `createdAtMs`, `cursor`, and the counters `consenting`, `deferred`, `sent`, `failed`, `opened` |
 * |   cluster `campaign:{app}:{c:ID}`        |        | the campaign's own slot                                |
 * | `campaign_idem:{app}:{idempotencyKey}`   | STRING | JSON `{"id","hash"}` of the campaign created with that key |
 * | `campaigns:due`                          | ZSET   | `{app}:{id}` → due time, ms (now, a lease deadline); operator-created campaigns only, touched alone |
 * | `campaign_delivery:{idempotencyKey}`     | STRING | owner uuid: seed 000's campaign claim, `SET NX EX` 600 s, then EXPIRE to the dedup TTL once delivered; `{idempotencyKey}` is `{app}:{campaign key}:{device}` |
 * | `suppressions:{app}`                     | HASH   | suppression id → JSON `{kind, value, createdAtMs}`; a support tool's short list, one key per command |
 *
 * Every key but the campaign record has the same name in both layouts: each is touched alone.
 */
function campaignKeys(t: KeyTags) {
  return {
    campaignKey: (appId: string, id: string): string =>
      t.layout === 'cluster' ? `campaign:${appId}:{c:${id}}` : `campaign:${appId}:${id}`,
    campaignIdempotencyKey: (appId: string, key: string): string => `campaign_idem:${appId}:${key}`,
    campaignsDueKey: 'campaigns:due',
    campaignDeliveryKey: (idempotencyKey: string): string => `campaign_delivery:${idempotencyKey}`,
    suppressionsKey: (appId: string): string => `suppressions:${appId}`,
  };
}
/*
 * Quiet hours (port-quiet-hours.ts). `{S}` is a digest shard, {@link DIGEST_CLUSTER_SHARDS} of
 * them: the shard of the pubkey. A user's held counts sit in the slot of their shard's schedule,
 * so hold, claim and complete each change both in one script.
 *
 * | divine name             | cluster name                 | type   | value                                          |
 * |-------------------------|------------------------------|--------|------------------------------------------------|
 * | `quiet_hours:{pubkey}`  | `quiet_hours:{u:PUBKEY}`     | STRING | JSON `{startMinute, endMinute, urgentTypes}` (kind 3083) |
 * | `digest:{pubkey}`       | `digest:{d:S}:PUBKEY`        | HASH   | notification type → pushes held for the digest  |
 * | `digests:due`           | `digests:due:{d:S}`          | ZSET   | pubkey → when its digest is due (window end, lease deadline), ms |
 */
/** Digest schedule shards in the cluster layout (one in divine). */
export const DIGEST_CLUSTER_SHARDS = 8;
function quietHoursKeys(t: KeyTags) {
  const cluster = t.layout === 'cluster';
  const shards = cluster ? DIGEST_CLUSTER_SHARDS : 1;
  const dueKey = (shard: number): string => (cluster ? `digests:due:{d:${shard}}` : 'digests:due');
  return {
    quietHoursKey: (pubkey: string): string => `quiet_hours:${t.user(pubkey)}`,
    digestKey: (pubkey: string): string => (cluster ? `digest:{d:${shardOf(pubkey, shards)}}:${pubkey}` : `digest:${pubkey}`),
    /** The schedule shard holding `pubkey`'s digest (`digests:due` in divine). */
    digestsDueKeyOf: (pubkey: string): string => dueKey(shardOf(pubkey, shards)),
    /** Every shard of the digest schedule, in order. */
    digestsDueKeys: shardIndexes(shards).map(dueKey),
  };
}

/**
 * Every key name of one store view, in one layout. Built once per store (`RedisContext.keys`):
 * two stores of one process may use different layouts (`store migrate-layout` opens both).
 */
export function createRedisKeys(layout: KeyLayout, options: { queueShards?: number } = {}) {
  const t = keyTags(layout);
  const queueShards = queueShardCount(layout, options.queueShards);
  return {
    layout,
    /** Shards per durable queue: 1 in the divine layout. */
    queueShards,
    /** The keys of one shard of a queue (shard 0, the only one, in the divine layout). */
    queueKeys: (queue: QueueName, shard = 0): QueueKeys => queueKeysOf(t, queue, shard),
    /** The shard of item `id`. */
    queueShardOf: (id: string): number => queueShardOf(id, queueShards),
    ...tokenKeys(t),
    ...tokenAndClaimKeys(t),
    ...userKeys(t),
    ...ntfyKeys(t),
    ...coalesceKeys(t),
    ...bellKeys(t),
    ...vapidKeys(t),
    ...platformKeys(t),
    ...fleetKeys(t),
    ...inboxKeys(t),
    ...nip9aGatewayKeys(t),
    ...nip9aCallbackKeys(t),
    ...throttleKeys(t),
    ...campaignKeys(t),
    ...quietHoursKeys(t),
  };
}

export type RedisKeys = ReturnType<typeof createRedisKeys>;
