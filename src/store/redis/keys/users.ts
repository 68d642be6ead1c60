/**
 * Key names of device tokens, claims and the per-user records (preferences, consent, profiles, filters, video records): one section of `createRedisKeys` (`../keys.ts`), the only place keys are
 * built. The tables give each name in the divine and the cluster layout.
 */
import { shardOf, type KeyTags } from './tags.ts';

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

export function tokenKeys(t: KeyTags) {
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

export function tokenAndClaimKeys(t: KeyTags) {
  return {
    relayCursorsKey: 'relay_cursors',
    eventClaimKey: (eventId: string): string => `dedup:${eventId}`,
    recipientClaimKey: (eventId: string, recipient: string): string => `dedup:${eventId}:${t.user(recipient)}`,
  };
}
/** Kind of the addressable videos whose coordinate records are kept. */
const VIDEO_KIND = 34236;
export function userKeys(t: KeyTags) {
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

// ---- user relay lists (port-user-relays.ts; the steps are in `../user-relays.ts`) -------------

/*
 * | key (divine)                     | key (cluster)                        | type | value              |
 * |----------------------------------|--------------------------------------|------|--------------------|
 * | `user_relays:{pubkey}`           | `user_relays:{u:PUBKEY}`             | HASH | source (`nip65`, `dm`, `app`) → JSON `{eventId, createdAt, relays}`, the newest list of that source |
 * | `user_relay_users`               | `user_relay_users:{r:N}`             | SET  | pubkeys that have (or had) a list: the index the coverage read walks |
 * | `user_relay_changes`             | `user_relay_changes:{r:N}`           | ZSET | pubkey → ms (store clock) of its latest coverage change: the log the listener follows, trimmed after a day |
 *
 * N = {@link shardOf}(pubkey, {@link CLUSTER_USER_RELAY_INDEX_SHARDS}). A list lives with the
 * user's other records; the index is sharded so it spreads over the masters like the users do.
 */
/** Shards of the user relay index in the cluster layout; changing it strands the users of the other shards. */
export const CLUSTER_USER_RELAY_INDEX_SHARDS = 16;

export function userRelayKeys(t: KeyTags) {
  const shards = t.layout === 'divine' ? 1 : CLUSTER_USER_RELAY_INDEX_SHARDS;
  const indexKey = (shard: number): string => (t.layout === 'divine' ? 'user_relay_users' : `user_relay_users:{r:${shard}}`);
  const changesKey = (shard: number): string => (t.layout === 'divine' ? 'user_relay_changes' : `user_relay_changes:{r:${shard}}`);
  return {
    userRelaysKey: (pubkey: string): string => `user_relays:${t.user(pubkey)}`,
    /** The index shard that holds `pubkey`. */
    userRelayIndexKey: (pubkey: string): string => indexKey(shardOf(pubkey, shards)),
    /** Every shard of the index (one key in divine). */
    userRelayIndexKeys: Array.from({ length: shards }, (_, shard) => indexKey(shard)),
    /** The change-log shard that holds `pubkey` (the index's shard). */
    userRelayChangesKey: (pubkey: string): string => changesKey(shardOf(pubkey, shards)),
    /** Every shard of the change log (one key in divine). */
    userRelayChangesKeys: Array.from({ length: shards }, (_, shard) => changesKey(shard)),
  };
}
