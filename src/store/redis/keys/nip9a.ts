/**
 * Key names of NIP-9a: the gateway's registrations and the receiver's callbacks: one section of `createRedisKeys` (`../keys.ts`), the only place keys are
 * built. The tables give each name in the divine and the cluster layout.
 */
import { groupTag, shardIndexes, shardOf, type KeyTags } from './tags.ts';

/** Shards of the callbacks' last-received index in the cluster layout; changing it strands the entries of other shards. */
export const CLUSTER_CALLBACK_ACTIVITY_SHARDS = 16;

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
 * the per-author, per-author-per-relay and watched-relays limits atomically with the write
 * (`nip9a:relay_counts` has one field per watched relay, so its HLEN is the watched-relay count).
 * Every gateway process holds the whole set in memory (`listAllNip9aRegistrations` on each
 * change), so it would outgrow a gateway long before a master.
 */
export function nip9aGatewayKeys(t: KeyTags) {
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
 * | `nip9a:callbacks_received`               | ZSET   | callback id → last received (ms, a day's start), the idle sweep's index (issue 35) |
 * |   cluster `nip9a:callbacks_received:{cr:N}` |     | N = shardOf(id) < {@link CLUSTER_CALLBACK_ACTIVITY_SHARDS} |
 *
 * Every step of `nip9a-callbacks.ts` touches one of these keys at a time (the order and why it is
 * safe are in its header). The receipt key ends with the relay URL (it may hold any character but
 * a space), so the fixed-format parts before it cannot be confused.
 */
export function nip9aCallbackKeys(t: KeyTags) {
  const cluster = t.layout === 'cluster';
  const activityShards = cluster ? CLUSTER_CALLBACK_ACTIVITY_SHARDS : 1;
  const activityKey = (shard: number): string => (cluster ? `nip9a:callbacks_received:{cr:${shard}}` : 'nip9a:callbacks_received');
  return {
    /** Every shard of the last-received index (one key in divine). */
    nip9aCallbackActivityKeys: shardIndexes(activityShards).map(activityKey),
    /** The last-received index shard that holds callback `id`. */
    nip9aCallbackActivityKey: (id: string): string => activityKey(shardOf(id, activityShards)),
    nip9aCallbacksKey: (id: string): string => (cluster ? `nip9a:callbacks:{cb:${id}}` : 'nip9a:callbacks'),
    nip9aCallbackSecretsKey: (secretHash: string): string =>
      cluster ? `nip9a:callback_secrets:{cs:${secretHash}}` : 'nip9a:callback_secrets',
    nip9aCallbacksOfKey: (owner: string): string => `nip9a:callbacks_of:${t.user(owner)}`,
    nip9aReceiptKey: (callbackId: string, eventId: string, relay: string): string => `nip9a:receipt:${callbackId}:${eventId}:${relay}`,
  };
}
