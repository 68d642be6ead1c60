/**
 * Every Redis key nostr-push reads or writes, built here (and in the sections of `keys/`, one per
 * area: tags and shards, users and tokens, queues, ntfy, coalescing, bells and quiet hours, the
 * platform, the inbox, NIP-9a, per-client quotas, rate limits) and nowhere else.
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
 * | `user_relays:{pubkey}`           | HASH   | source (`nip65`, `dm`, `app`) → JSON `{eventId, createdAt, relays}` (issue 36; cluster names in `keys/users.ts`) |
 * | `user_relay_users`               | SET    | pubkeys with a relay list, the index of the coverage read |
 * | `user_relay_changes`             | ZSET   | pubkey → ms (store clock) of its latest relay-coverage change, the log the listener follows; trimmed after a day |
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
import { DEFAULT_APP_ID } from '../../config/apps.ts';
import type { QueueName } from '../port.ts';
import { keyTags, type KeyLayout } from './keys/tags.ts';
import { tokenAndClaimKeys, tokenKeys, userKeys, userRelayKeys } from './keys/users.ts';
import { queueKeysOf, queueShardCount, queueShardOf, type QueueKeys } from './keys/queues.ts';
import { ntfyKeys } from './keys/ntfy.ts';
import { coalesceKeys } from './keys/coalesce.ts';
import { bellKeys, quietHoursKeys } from './keys/bells.ts';
import { campaignKeys, fleetKeys, platformKeys, vapidKeys } from './keys/platform.ts';
import { inboxKeys, throttleKeys } from './keys/inbox.ts';
import { nip9aCallbackKeys, nip9aGatewayKeys } from './keys/nip9a.ts';
import { clientQuotaKeys } from './keys/quotas.ts';
import { rateLimitKeys } from './keys/rate-limits.ts';

export { KEY_LAYOUTS, keyTags, shardIndexes, shardOf, type KeyLayout, type KeyTags } from './keys/tags.ts';
export { CLUSTER_TOKEN_SHARDS, CLUSTER_USER_RELAY_INDEX_SHARDS, type TokenShardKeys } from './keys/users.ts';
export {
  DEFAULT_CLUSTER_QUEUE_SHARDS,
  MAX_QUEUE_SHARDS,
  queueShardCount,
  queueShardOf,
  type LaneKeys,
  type QueueKeys,
} from './keys/queues.ts';
export { NTFY_CLUSTER_INDEX_SHARDS, ntfyWakeChannel } from './keys/ntfy.ts';
export { CLUSTER_COALESCE_OUTBOX_SHARDS } from './keys/coalesce.ts';
export { DIGEST_CLUSTER_SHARDS, FANOUT_CLUSTER_SHARDS } from './keys/bells.ts';
export { DELIVERY_LOG_SHARDS, SEND_DUE_SHARDS } from './keys/platform.ts';
export { CLUSTER_ALERT_WORD_SHARDS, CLUSTER_INBOX_ACTIVITY_SHARDS, inboxHintChannel } from './keys/inbox.ts';
export { CLUSTER_CALLBACK_ACTIVITY_SHARDS, nip9aRegistrationField } from './keys/nip9a.ts';

/** The key prefix of app `appId`'s store view: none for the default app, `app:{id}:` for the others. */
export const appKeyPrefix = (appId: string): string => (appId === DEFAULT_APP_ID ? '' : `app:${appId}:`);

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
    ...userRelayKeys(t),
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
    ...clientQuotaKeys(),
    ...rateLimitKeys(t),
  };
}

export type RedisKeys = ReturnType<typeof createRedisKeys>;
