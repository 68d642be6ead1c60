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
 * | `token_devices`                  | HASH   | token → JSON `{transport, endpoint?, p256dh?, auth?}`, only for devices that are not a plain FCM token. A token absent here is transport `fcm`, so a divine Redis reads as FCM devices |
 * | `relay_cursors`                  | HASH   | relay URL → newest `created_at` seen (unix seconds), only ever raised |
 * | `queue:{name}:ready`             | ZSET   | item id → available-at (ms)                                  |
 * | `queue:{name}:leased`            | ZSET   | item id → lease expiry (ms)                                  |
 * | `queue:{name}:dead`              | ZSET   | item id → dead-lettered at (ms)                              |
 * | `queue:{name}:items`             | HASH   | item id → payload JSON, opaque to Lua                        |
 * | `queue:{name}:meta`              | HASH   | item id → JSON `{attempts, leaseToken?, lastError?, reason?}` |
 *
 * The queue design (states, transitions, why payload and metadata are split) is described in
 * full in the header of `queues.ts` and in `docs/queues.md`.
 *
 * A `keyPrefix` given to the ioredis client (test isolation only) is added by ioredis to every
 * key below, including Lua `KEYS`; no script builds a key name itself, so the prefix reaches
 * every key a script touches.
 */
import type { QueueName } from '../port.ts';

export const tokenToPubkeyKey = 'token_to_pubkey';
export const tokenTimezoneOffsetsKey = 'token_timezone_offsets';
export const staleTokensKey = 'stale_tokens';
export const tokenDevicesKey = 'token_devices';
export const relayCursorsKey = 'relay_cursors';

export const userTokensKey = (pubkey: string): string => `user_tokens:${pubkey}`;
export const eventClaimKey = (eventId: string): string => `dedup:${eventId}`;
export const recipientClaimKey = (eventId: string, recipient: string): string => `dedup:${eventId}:${recipient}`;
/** Kind of the addressable videos whose coordinate records are kept. */
const VIDEO_KIND = 34236;
export const videoRecordKey = (type: string, owner: string, dTag: string, recipient: string): string =>
  `dedup:${VIDEO_KIND}:${type}:${owner}:${dTag}:${recipient}`;
export const legacyVideoRecordKey = (owner: string, dTag: string, recipient: string): string => `dedup:${VIDEO_KIND}:${owner}:${dTag}:${recipient}`;
export const userPreferencesKey = (pubkey: string): string => `user_preferences:${pubkey}`;
export const campaignConsentKey = (pubkey: string): string => `campaign_consent:${pubkey}`;
export const profileCacheKey = (pubkey: string): string => `profile_cache:${pubkey}`;

/** The five keys of one durable queue. */
export interface QueueKeys {
  ready: string;
  leased: string;
  dead: string;
  items: string;
  meta: string;
}

export function queueKeys(queue: QueueName): QueueKeys {
  const base = `queue:${queue}`;
  return {
    ready: `${base}:ready`,
    leased: `${base}:leased`,
    dead: `${base}:dead`,
    items: `${base}:items`,
    meta: `${base}:meta`,
  };
}

// ---- ntfy topics (port-ntfy.ts) -------------------------------------------------------------

// ---- coalescing (port-coalesce.ts) ----------------------------------------------------------

// ---- notify lists and fan-out jobs (port-bells.ts) ------------------------------------------
