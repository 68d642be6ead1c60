/**
 * Key names of the app platform: VAPID, API keys, sends, the delivery log, the fleet view, campaigns: one section of `createRedisKeys` (`../keys.ts`), the only place keys are
 * built. The tables give each name in the divine and the cluster layout.
 */
import type { Lane } from '../../port.ts';
import { groupTag, shardCount, shardOf, type KeyTags } from './tags.ts';

// ---- Web Push (port-vapid.ts) ----------------------------------------------------------------

/**
 * STRING: the fleet's VAPID key pair, JSON `{"publicKey","privateKey"}` (base64url), set once.
 * The same name in both layouts: `claimVapidKeys-1` touches it alone.
 */
export function vapidKeys(_t: KeyTags) {
  return {
    vapidKeysKey: 'webpush:vapid',
  };
}

/**
 * Shards of an index that grows with traffic: 1 in the divine layout (the seed's one key, its
 * name unchanged), a fixed number in the cluster, each its own slot. Fixed, because an entry's
 * shard is computed from its id: a different count would lose track of stored entries.
 */
export const SEND_DUE_SHARDS = 8;
export const DELIVERY_LOG_SHARDS = 16;

// ---- API keys, sends, delivery log (port-apikeys.ts, port-sends.ts, port-delivery-log.ts) ----

/*
 * Keys of the app platform (nostr-push's own; divine never reads them). `{app}` is an app id
 * (`[a-z0-9_-]`, no colon), so `{app}:{id}` members split at the first colon. Divine layout
 * names first; the cluster layout's name below each (hash tags in braces, `S` a shard number).
 *
 * | key                                     | type   | value                                                  |
 * |-----------------------------------------|--------|--------------------------------------------------------|
 * | `apikey:{id}`                           | HASH   | `appId`, `role`, `hash`, `prefix`, `createdAtMs`, `revokedAtMs` (once revoked), `lastUsedAtMs` (once used) |
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
export function platformKeys(t: KeyTags) {
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
export function fleetKeys(t: KeyTags) {
  const fleet = groupTag(t, 'fleet');
  return {
    fleetHeartbeatsKey: 'fleet:heartbeats',
    fleetSamplesKey: `fleet:samples${fleet}`,
    fleetSampleValuesKey: `fleet:sample_values${fleet}`,
    consoleSessionKey: (idHash: string): string => `console_session:${idHash}`,
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
export function campaignKeys(t: KeyTags) {
  return {
    campaignKey: (appId: string, id: string): string =>
      t.layout === 'cluster' ? `campaign:${appId}:{c:${id}}` : `campaign:${appId}:${id}`,
    campaignIdempotencyKey: (appId: string, key: string): string => `campaign_idem:${appId}:${key}`,
    campaignsDueKey: 'campaigns:due',
    campaignDeliveryKey: (idempotencyKey: string): string => `campaign_delivery:${idempotencyKey}`,
    suppressionsKey: (appId: string): string => `suppressions:${appId}`,
  };
}
