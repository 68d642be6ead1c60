/**
 * Key names of the user's inbox (counters, alert words, announcements) and the push throttle: one section of `createRedisKeys` (`../keys.ts`), the only place keys are
 * built. The tables give each name in the divine and the cluster layout.
 */
import { shardIndexes, shardOf, type KeyTags } from './tags.ts';

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
 * | `inbox_active`                   | `inbox_active:{ia:N}`, N < {@link CLUSTER_INBOX_ACTIVITY_SHARDS} | ZSET | pubkey → the user's activity day (ms), the idle sweep's index (issue 35); nostr-push's own |
 *
 * The user hash also holds `active`, the day (ms) of the user's last request or registration: the
 * truth the idle sweep checks in the user's slot; `inbox_active` is its index, shard N =
 * {@link shardOf}(pubkey), only ever raised by a request and lowered by nothing, so the sweep finds
 * every idle user and checks each against the hash before forgetting them.
 *
 * Slots in the cluster: a user's counters, marks, words and devices share `{u:PUBKEY}`; a word's
 * watcher set sits in the slot of its index shard (`{a:N}`, N = {@link shardOf} the word), so one
 * script keeps the two in step; the announcements (operator data, a handful) share one slot. The
 * divine layout is the one shard with Twitarr's names. Hints are published by the scripts that
 * change a user's counters, on the user's node, so one user's hints keep their order.
 */
/** Alert-word index shards in the cluster layout; changing it strands the words of other shards. */
export const CLUSTER_ALERT_WORD_SHARDS = 8;
/** Shards of the inbox activity index in the cluster layout; changing it strands the entries of other shards. */
export const CLUSTER_INBOX_ACTIVITY_SHARDS = 16;

export function inboxKeys(t: KeyTags) {
  const divine = t.layout === 'divine';
  const wordShards = divine ? 1 : CLUSTER_ALERT_WORD_SHARDS;
  const wordIndexKey = (shard: number): string => (divine ? 'alertwords' : `alertwords:{a:${shard}}`);
  const activityShards = divine ? 1 : CLUSTER_INBOX_ACTIVITY_SHARDS;
  const activityKey = (shard: number): string => (divine ? 'inbox_active' : `inbox_active:{ia:${shard}}`);
  return {
    /** Every shard of the inbox activity index (one key in divine). */
    inboxActivityKeys: shardIndexes(activityShards).map(activityKey),
    /** The activity index shard that holds `pubkey`. */
    inboxActivityKey: (pubkey: string): string => activityKey(shardOf(pubkey, activityShards)),
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

// ---- the per-user push throttle (port-throttle.ts) -------------------------------------------

/*
 * | key                                       | type | value                                             |
 * |-------------------------------------------|------|---------------------------------------------------|
 * | `push_throttle:{pubkey}:{windowStartSecs}` | HASH | `pushed`, `withheld` in the window; EXPIRE two windows |
 */
export function throttleKeys(t: KeyTags) {
  return {
    pushThrottleKey: (pubkey: string, windowStartSecs: number): string => `push_throttle:${t.user(pubkey)}:${windowStartSecs}`,
  };
}
