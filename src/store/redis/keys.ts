/**
 * Every Redis key nostr-push reads or writes, built here and nowhere else.
 *
 * Keys shared with divine-push-service (seed 000, reference §3.1): the names, types and value
 * formats are kept exactly, so an existing divine Redis is taken over as it is.
 *
 * | key                              | type   | value                                                        |
 * |----------------------------------|--------|--------------------------------------------------------------|
 * | `user_tokens:{pubkey}`           | SET    | the pubkey's device tokens                                   |
 * | `token_to_pubkey`                | HASH   | token → owner pubkey                                         |
 * | `token_timezone_offsets`         | HASH   | token → UTC offset in minutes (east positive)                |
 * | `stale_tokens`                   | ZSET   | token → last activity, unix SECONDS (registration, delivery) |
 * | `dedup:{eventId}`                | STRING | "1", per-event control claim, `SET NX EX`                    |
 * | `dedup:{eventId}:{recipient}`    | STRING | owner uuid, per-recipient delivery claim, `SET NX EX`        |
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
 * | `token_devices`                  | HASH   | token → JSON `{transport, endpoint?, p256dh?, auth?, sandbox?, encryptTo?}`, only for devices that are not a plain FCM token. A token absent here is transport `fcm`, so a divine Redis reads as FCM devices |
 * | `social_filters:{pubkey}`        | STRING | JSON `{mutedPubkeys:[hex…], onlyFollowing: "all"\|[types]\|null}` (kind 3083), absent when nothing is filtered |
 * | `relay_cursors`                  | HASH   | relay URL → newest `created_at` seen (unix seconds), only ever raised |
 * | `queue:{name}:ready`             | ZSET   | item id → available-at (ms), normal lane                     |
 * | `queue:{name}:leased`            | ZSET   | item id → lease expiry (ms), normal lane                     |
 * | `queue:{name}:{lane}:ready`      | ZSET   | the same for the `critical` and `low` lanes                  |
 * | `queue:{name}:{lane}:leased`     | ZSET   | the same for the `critical` and `low` lanes                  |
 * | `queue:{name}:dead`              | ZSET   | item id → dead-lettered at (ms), every lane                  |
 * | `queue:{name}:items`             | HASH   | item id → payload JSON, opaque to Lua, every lane            |
 * | `queue:{name}:meta`              | HASH   | item id → JSON `{attempts, leaseToken?, lastError?, reason?, lane?, firstFailedAt?, lastFailedAt?}` |
 *
 * The queue design (states, transitions, why payload and metadata are split) is described in
 * full in the header of `queues.ts` and in `docs/queues.md`.
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

/** The key prefix of app `appId`'s store view: none for the default app, `app:{id}:` for the others. */
export const appKeyPrefix = (appId: string): string => (appId === DEFAULT_APP_ID ? '' : `app:${appId}:`);

function tokenAndClaimKeys(t: KeyTags) {
  return {
    tokenToPubkeyKey: 'token_to_pubkey',
    tokenTimezoneOffsetsKey: 'token_timezone_offsets',
    staleTokensKey: 'stale_tokens',
    tokenDevicesKey: 'token_devices',
    relayCursorsKey: 'relay_cursors',
    userTokensKey: (pubkey: string): string => `user_tokens:${t.user(pubkey)}`,
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
  /** The per-lane ready sets in KEYS order (critical, normal, low). */
  readyKeys: [string, string, string];
  /** The per-lane leased sets in KEYS order (critical, normal, low). */
  leasedKeys: [string, string, string];
}

function queueKeysOf(t: KeyTags, queue: QueueName): QueueKeys {
  const base = `queue:${t.queue(queue)}`;
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
    readyKeys: [lanes.critical.ready, lanes.normal.ready, lanes.low.ready],
    leasedKeys: [lanes.critical.leased, lanes.normal.leased, lanes.low.leased],
  };
}

// ---- ntfy topics (port-ntfy.ts) -------------------------------------------------------------

/*
 * ntfy topics (port-ntfy.ts; the design is described in full in `ntfy.ts`):
 *
 * | key                  | type    | value                                                         |
 * |----------------------|---------|---------------------------------------------------------------|
 * | `ntfy:head`          | STRING  | `ms-seq` of the newest message id allocated (any topic)       |
 * | `ntfy:topic:{topic}` | STREAM  | entry id `ms-seq` (the message id) → `m` content JSON, `x` expiry ms |
 * | `ntfy:expiry`        | ZSET    | topic → expiry (ms) of the topic's oldest entry; the janitor's index |
 * | `ntfy:ids`           | HASH    | entry id `ms-seq` → topic, for every stored message (`since=<id>` of any topic) |
 * | `ntfy:wake`          | channel | pub/sub, one append event per append (below); not a key, so the client's key prefix is added by hand |
 *
 * An append event is `1 <previous> <entry id> <expiry ms> <topic length> <topic><content JSON>`:
 * format version 1, the head before the append (`ms-seq`, or `-` for the first message ever),
 * the new entry id, its expiry, then the topic (length-prefixed, so any topic string is safe) and
 * the content JSON as stored. Payloads of another format (an older version mid-deploy published
 * `{instance} {topic}`) are ignored: listeners see the broken chain and read the store.
 */
function ntfyKeys(t: KeyTags) {
  return {
    ntfyHeadKey: 'ntfy:head',
    ntfyExpiryKey: 'ntfy:expiry',
    ntfyIdsKey: 'ntfy:ids',
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
 * | key                                  | type   | value                                                    |
 * |--------------------------------------|--------|----------------------------------------------------------|
 * | `coalesce:g:{gid}`                   | HASH   | `due`, `expires_at`, `owner`, `type`, `target`, `event_kind`, `immediate`, `pending`, `first_actor`, `first_event`, `last_at`, `ref_event_id`, `ref_address`, `ref_kind`, `ref_author`, `ref_dtag`, `lease`; TTL group_ttl + grace with buffered work, window + grace with immediates only |
 * | `coalesce:hll:{gid}`                 | HLL    | distinct buffered actors; same TTL as the group          |
 * | `coalesce:disp:{eventId}:{recipient}`| STRING | `i:{gid}` (immediate) or `b:{gid}` (buffered); TTL window + grace |
 * | `coalesce:due`                       | ZSET   | gid → when it may be flushed                             |
 * | `coalesce:leases`                    | ZSET   | gid → lease expiry of the flush holding it               |
 * | `coalesce:throttle:{owner}`          | HASH   | `tokens` (may be fractional), `ts` (ms of the last refill); TTL max(capacity·refill·2, window + grace) |
 * | `coalesce:emitted:{owner}`           | ZSET   | emitted notification (event id of an immediate, gid of a summary) → send time; TTL daily window + grace |
 *
 * `coalesceClaim-2.lua` reaches the group and actor keys of the gids it finds in `due` and
 * `leases`, which it cannot declare; it gets {@link COALESCE_GROUP_KEY_PREFIX} and
 * {@link COALESCE_HLL_KEY_PREFIX} with the client's key prefix in front as arguments, so a test
 * prefix still reaches those keys.
 */
const COALESCE_GROUP_KEY_PREFIX = 'coalesce:g:';
const COALESCE_HLL_KEY_PREFIX = 'coalesce:hll:';
function coalesceKeys(t: KeyTags) {
  return {
    COALESCE_GROUP_KEY_PREFIX,
    COALESCE_HLL_KEY_PREFIX,
    coalesceGroupKey: (groupId: string): string => `${COALESCE_GROUP_KEY_PREFIX}${groupId}`,
    coalesceHllKey: (groupId: string): string => `${COALESCE_HLL_KEY_PREFIX}${groupId}`,
    coalesceDispositionKey: (eventId: string, recipient: string): string => `coalesce:disp:${eventId}:${t.user(recipient)}`,
    coalesceDueKey: 'coalesce:due',
    coalesceLeasesKey: 'coalesce:leases',
    coalesceThrottleKey: (owner: string): string => `coalesce:throttle:${t.user(owner)}`,
    coalesceEmittedKey: (owner: string): string => `coalesce:emitted:${t.user(owner)}`,
  };
}
// ---- notify lists and fan-out jobs (port-bells.ts) ------------------------------------------

/*
 * Bells (seed 000's key table; divine's names, types and value formats):
 *
 * | key                                  | type   | value                                                    |
 * |--------------------------------------|--------|----------------------------------------------------------|
 * | `notify_subs:{subscriber}`           | SET    | creators the subscriber bells (forward index); no TTL    |
 * | `notify_subs_ts:{subscriber}`        | STRING | `created_at:event_id` of the applied list (a bare integer from an earlier build is a timestamp with no id); no TTL |
 * | `notify_watchers:{creator}`          | SET    | subscribers watching the creator (reverse index, walked by SSCAN); no TTL |
 * | `notify_rate:{subscriber}:{creator}` | STRING | "1", bell rate window, `SET EX new_post_rate_limit_secs`; full hex, never truncated |
 * | `fanout:enqueued:{eventId}`          | STRING | "1", the video's fan-out was queued, `EX processed_event_ttl_secs` |
 * | `new_post_fanout_jobs`               | ZSET   | job JSON (`fanout-job-codec.ts`) → next availability or lease deadline, ms |
 *
 * `replaceNotifySubscriptions-2.lua` writes `notify_watchers:*` keys it cannot declare (they
 * depend on the stored creators); it gets {@link NOTIFY_WATCHERS_KEY_PREFIX} with the client's key
 * prefix in front as an argument instead, so a test prefix still reaches those keys.
 */
const NOTIFY_WATCHERS_KEY_PREFIX = 'notify_watchers:';
function bellKeys(t: KeyTags) {
  return {
    notifySubsKey: (subscriber: string): string => `notify_subs:${t.user(subscriber)}`,
    notifySubsTsKey: (subscriber: string): string => `notify_subs_ts:${t.user(subscriber)}`,
    NOTIFY_WATCHERS_KEY_PREFIX,
    notifyWatchersKey: (creator: string): string => `${NOTIFY_WATCHERS_KEY_PREFIX}${t.user(creator)}`,
    notifyRateKey: (subscriber: string, creator: string): string => `notify_rate:${subscriber}:${t.user(creator)}`,
    fanoutEnqueuedKey: (eventId: string): string => `fanout:enqueued:${eventId}`,
    newPostFanoutJobsKey: 'new_post_fanout_jobs',
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
/** The shard of `id` among `shards`: CRC16 as Redis computes slots, so stable across processes and versions. */
const shardOf = (id: string, shards: number): number => (shards === 1 ? 0 : calculateKeySlot(id) % shards);

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
 * | key                              | type    | value                                                     |
 * |----------------------------------|---------|-----------------------------------------------------------|
 * | `inbox:{pubkey}`                 | HASH    | Twitarr's `NotificationHash-<user>`: `{type}` total and `{type}_viewed` per counted type, `announcement` (the id high-water mark), `known` = "1" once remembered; its existence makes the user known |
 * | `inbox_counted:{countKey}:{recipient}` | STRING | "1", the notification was counted, `SET NX EX processed_event_ttl_secs` |
 * | `alertwords`                     | ZSET    | every watched word → number of users watching it (Twitarr's index) |
 * | `alertwordUsers:{word}`          | SET     | the pubkeys watching the word                             |
 * | `user_alertwords:{pubkey}`       | SET     | the user's own words (the forward index)                  |
 * | `announcements`                  | HASH    | id → JSON `{text, createdAtMs, expiresAtMs}`              |
 * | `announcements:active`           | ZSET    | id → expiry (ms); read from `(now` upwards                |
 * | `announcements:seq`              | STRING  | the last announcement id given out (INCR)                 |
 * | `inbox:hints`                    | channel | pub/sub, JSON {@link InboxHint}; not a key, so the client's key prefix is added by hand |
 *
 * `replaceAlertWords-3.lua` writes `alertwordUsers:*` keys it cannot declare (they depend on the
 * stored words); it gets {@link ALERT_WORD_USERS_KEY_PREFIX} with the client's key prefix in front.
 * The per-user keys of the counting and badge scripts are passed, fully built, as arguments.
 */
const ALERT_WORD_USERS_KEY_PREFIX = 'alertwordUsers:';
function inboxKeys(t: KeyTags) {
  return {
    inboxKey: (pubkey: string): string => `inbox:${t.user(pubkey)}`,
    inboxCountedKey: (countKey: string, recipient: string): string => `inbox_counted:${countKey}:${t.user(recipient)}`,
    alertWordsKey: 'alertwords',
    ALERT_WORD_USERS_KEY_PREFIX,
    alertWordUsersKey: (word: string): string => `${ALERT_WORD_USERS_KEY_PREFIX}${word}`,
    userAlertWordsKey: (pubkey: string): string => `user_alertwords:${t.user(pubkey)}`,
    announcementsKey: 'announcements',
    activeAnnouncementsKey: 'announcements:active',
    announcementSeqKey: 'announcements:seq',
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
 * | `nip9a:receipt:{callbackId}:{eventId}:{relay}` | STRING | `pending:{owner uuid}` while its item is being queued, then `{owner uuid}`; `SET NX EX`; the same name in the cluster (touched alone) |
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
 * Quiet hours (port-quiet-hours.ts):
 *
 * | key                     | type   | value                                                           |
 * |-------------------------|--------|-----------------------------------------------------------------|
 * | `quiet_hours:{pubkey}`  | STRING | JSON `{startMinute, endMinute, urgentTypes}` (kind 3083)        |
 * | `digest:{pubkey}`       | HASH   | notification type → pushes held for the digest                  |
 * | `digests:due`           | ZSET   | pubkey → when its digest is due (window end, lease deadline), ms |
 */
function quietHoursKeys(t: KeyTags) {
  return {
    quietHoursKey: (pubkey: string): string => `quiet_hours:${t.user(pubkey)}`,
    digestKey: (pubkey: string): string => `digest:${t.user(pubkey)}`,
    digestsDueKey: 'digests:due',
  };
}

/**
 * Every key name of one store view, in one layout. Built once per store (`RedisContext.keys`):
 * two stores of one process may use different layouts (`store migrate-layout` opens both).
 */
export function createRedisKeys(layout: KeyLayout) {
  const t = keyTags(layout);
  return {
    layout,
    queueKeys: (queue: QueueName): QueueKeys => queueKeysOf(t, queue),
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
