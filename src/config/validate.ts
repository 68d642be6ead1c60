import { HTTP2_CLIENT_KINDS, LOG_FORMATS, MIN_MAX_BODY_BYTES, USER_RELAY_LOOPBACK_ACKNOWLEDGEMENT, type Config } from './defaults.ts';
import { ALERT_WORDS_CEILING } from '../store/port-inbox.ts';
import { KEY_LAYOUTS, MAX_QUEUE_SHARDS } from '../store/redis/keys.ts';
import { isClusterUrl, parseRedisTarget } from '../store/redis/target.ts';
import { MAX_WAIT_REPLICAS, MAX_WAIT_TIMEOUT_MS, WAIT_REPLICAS_AUTO } from '../store/redis/replication.ts';
import { ntfyConfigProblems } from '../ntfy/config.ts';
import { trustedProxyProblem } from '../api/client-address.ts';
import { nip9aConfigProblems } from '../nip9a/gateway/config.ts';
import { templateConfigProblems } from '../notification/templates/load.ts';

/** Problems of `nostr.user_relays` (issue 36). */
export function userRelayConfigProblems(userRelays: Config['nostr']['user_relays']): string[] {
  const problems: string[] = [];
  const whole = (name: string, value: number, min: number): void => {
    if (!Number.isInteger(value) || value < min) problems.push(`nostr.user_relays.${name} must be a whole number, ${min} or more`);
  };
  whole('max_connections', userRelays.max_connections, 0);
  whole('max_pubkeys_per_filter', userRelays.max_pubkeys_per_filter, 1);
  if (!Number.isFinite(userRelays.refresh_secs) || userRelays.refresh_secs <= 0)
    problems.push('nostr.user_relays.refresh_secs must be greater than zero: at 0, the listener would re-read the lists in a tight loop');
  if (userRelays.allow_loopback !== 'false' && userRelays.allow_loopback !== USER_RELAY_LOOPBACK_ACKNOWLEDGEMENT)
    problems.push(`nostr.user_relays.allow_loopback must be false or ${USER_RELAY_LOOPBACK_ACKNOWLEDGEMENT}`);
  return problems;
}

type NumericPath = { [S in keyof Config]: Config[S] extends object ? `${S & string}.${string}` : never }[keyof Config];

/**
 * Fields that must be greater than zero, each with what a zero would do. The message is divine's
 * exact format: `"{field} must be greater than zero: at 0, {consequence}"`.
 */
export const POSITIVE_FIELDS: ReadonlyArray<readonly [NumericPath, string]> = [
  ['nostr.event_silence_timeout_secs', 'the silence watchdog would resubscribe in a tight loop'],
  ['nostr.profile_cache_ttl_secs', 'every profile would expire as soon as it was cached'],
  ['service.processed_event_ttl_secs', 'claims would expire at once and events would be delivered twice'],
  ['service.video_coordinate_dedup_ttl_secs', 'video edits would re-announce every video'],
  ['service.new_post_rate_limit_secs', 'bells would never be rate-limited'],
  ['service.notify_list_max_creators', 'every bell would be dropped'],
  ['service.notify_list_history_limit', 'the notify-list replay would fetch nothing'],
  ['service.new_post_fanout_page_size', 'fan-out pages would read no watchers'],
  ['service.new_post_delivery_concurrency', 'fan-out pages would send nothing'],
  ['service.new_post_fanout_lease_secs', 'every fan-out page would be re-leased while it runs'],
  ['service.new_post_fanout_retry_secs', 'failed fan-out pages would retry in a tight loop'],
  ['service.new_post_fanout_poll_millis', 'the fan-out worker would spin'],
  ['service.coalesce_window_secs', 'coalescing buckets would have no length'],
  ['service.coalesce_immediate_limit', 'no like or repost would be sent immediately'],
  ['service.coalesce_lease_secs', 'every flush would be re-leased while it runs'],
  ['service.coalesce_retry_secs', 'failed flushes would retry in a tight loop'],
  ['service.coalesce_poll_millis', 'the flush worker would spin'],
  ['service.coalesce_group_ttl_secs', 'buffered groups would be dropped before their flush'],
  ['service.coalesce_flush_timeout_secs', 'every flush would time out'],
  ['service.coalesce_logical_expiry_grace_secs', 'groups would vanish at their deadline'],
  ['service.recipient_throttle_capacity', 'every immediate push would be throttled'],
  ['service.recipient_throttle_refill_secs', 'the recipient token bucket would never refill'],
  ['service.recipient_daily_window_secs', 'the rolling emission window would have no length'],
  ['service.recipient_daily_cap', 'no like or repost notification would ever be emitted'],
  ['notification.max_event_age_secs', 'every content event would be too old to push'],
  ['queue.lease_secs', 'every queue item would be re-leased while it is worked on'],
  ['queue.max_attempts', 'every queue item would be dead-lettered before its first attempt'],
  ['queue.poll_millis', 'queue consumers would spin'],
  ['webpush.request_timeout_secs', 'every Web Push request would time out at once'],
  ['webpush.batch_concurrency', 'no Web Push subscription would ever be sent to'],
  ['send_api.max_recipients', 'every send would be refused'],
  ['send_api.idempotency_ttl_secs', 'idempotency keys would be forgotten at once'],
  ['send_api.record_ttl_secs', 'notifications would be forgotten before they are sent'],
  ['send_api.page_size', 'no recipient would ever be expanded'],
  ['send_api.lease_secs', 'every page would be taken over while it runs'],
  ['send_api.poll_millis', 'the send scheduler would spin'],
  ['campaign_delivery.dedup_ttl_secs', 'a delivered campaign would be offered again at once'],
  ['campaign_delivery.claim_ttl_secs', 'every campaign claim would lapse before its send'],
  ['campaign_delivery.page_size', 'no campaign device would ever be expanded'],
  ['campaign_delivery.lease_secs', 'every campaign page would be taken over while it runs'],
  ['campaign_delivery.poll_millis', 'the campaign scheduler would spin'],
  ['quiet_hours.poll_millis', 'the digest sender would spin'],
  ['quiet_hours.lease_secs', 'every digest would be taken over while it is queued'],
  ['delivery_log.retention_days', 'every entry would be swept as soon as it is written'],
  ['delivery_log.sweep_interval_secs', 'the janitor would sweep in a tight loop'],
  ['health.relay_grace_secs', '/health would call every reconnect an outage'],
  ['health.transport_failing_secs', '/health would call a transport down at its first failed send'],
  ['health.queue_age_secs', '/health would call every due queue item a stall'],
  ['console.heartbeat_interval_secs', 'every process would write its heartbeat in a tight loop'],
  ['console.sample_interval_secs', 'every process would sample its metrics in a tight loop'],
  ['console.session_ttl_secs', 'every console login would expire at once'],
  ['ntfy.message_size_limit_bytes', 'every ntfy publish would be refused as too large'],
  ['ntfy.keepalive_interval_secs', 'ntfy streams would send keepalives in a tight loop'],
  ['ntfy.websocket_timeout_secs', 'every ntfy WebSocket would be dropped at once'],
  ['ntfy.safety_redrain_secs', 'the ntfy pusher would read the store head in a tight loop'],
  ['ntfy.expiry_interval_secs', 'the ntfy janitor would spin'],
  ['ntfy.visitor_request_replenish_secs', 'ntfy visitors would get their requests back instantly'],
  ['nip9a.max_registrations_per_author', 'no author could register a NIP-9a callback'],
  ['nip9a.max_registrations_per_author_per_relay', 'no author could register a NIP-9a callback for any relay'],
  ['nip9a.max_watched_relays', 'the NIP-9a gateway could watch no relay'],
  ['nip9a.max_registration_bytes', 'every NIP-9a registration would be too large'],
  ['nip9a.max_filters', 'no NIP-9a registration could have a filter'],
  ['nip9a.max_pending_deliveries_per_relay', 'every NIP-9a delivery would be dropped'],
  ['nip9a.pending_expiry_secs', 'every NIP-9a delivery would expire before its first attempt'],
  ['nip9a.request_timeout_secs', 'every NIP-9a callback would time out at once'],
  ['nip9a.max_attempts', 'no NIP-9a callback would ever be attempted'],
  ['nip9a.outcome_dedup_entries', 'NIP-9a deliveries would never be deduplicated'],
  ['nip9a.outcome_dedup_max_age_secs', 'NIP-9a deliveries would never be deduplicated'],
  ['nip9a.delivery_concurrency', 'no NIP-9a callback would ever be sent'],
  ['nip9a.reload_poll_millis', 'the NIP-9a gateway would poll the store in a tight loop'],
  ['nip9a.receiver.rate_per_sec', 'every NIP-9a callback past its burst would be refused'],
  ['nip9a.receiver.rate_burst', 'every NIP-9a callback would be refused'],
  ['nip9a.receiver.owner_rate_per_sec', "every NIP-9a callback past a user's burst would be refused"],
  ['nip9a.receiver.owner_rate_burst', 'every NIP-9a callback would be refused'],
  ['send_api.rate_per_sec', 'every API-key request past its burst would be refused'],
  ['send_api.rate_burst', 'every API-key request would be refused'],
  ['rate_limits.nip98_per_address_per_minute', 'every NIP-98 request past its burst would be refused'],
  ['rate_limits.nip98_per_address_burst', 'every NIP-98 request would be refused'],
  ['rate_limits.nip98_per_pubkey_per_minute', 'every NIP-98 request past its burst would be refused'],
  ['rate_limits.nip98_per_pubkey_burst', 'every NIP-98 request would be refused'],
  ['rate_limits.console_login_per_minute', 'nobody could log in to the console'],
  ['nip9a.receiver.receipt_ttl_secs', 'repeated NIP-9a callbacks would be pushed again'],
  ['nip9a.receiver.max_callbacks_per_owner', 'no user could create a NIP-9a callback URL'],
  ['nip9a.receiver.max_callbacks_per_address_per_day', 'no client could create a NIP-9a callback URL'],
  ['nip9a.receiver.idle_callback_ttl_days', 'every NIP-9a callback URL would be deleted by the next sweep'],
  ['inbox.max_alert_words_per_user', 'no user could watch an alert word'],
  ['inbox.max_alert_word_users_per_address_per_day', 'no client could set alert words'],
  ['inbox.max_users_per_address_per_day', 'no client could use the user API'],
  ['inbox.max_sockets_per_pubkey', 'no user could open the hint socket'],
  ['inbox.max_sockets_per_address', 'no client could open the hint socket'],
  ['inbox.idle_user_ttl_days', 'every inbox user without a device would be forgotten by the next sweep'],
];

const HEX64 = /^[0-9a-f]{64}$/;
/** `payout:1059`: a type name (letters, digits, `_.-`) and the preference category that enables it. */
export const SEND_TYPE_ENTRY = /^([A-Za-z0-9_.-]{1,64}):(\d{1,5})$/;

function readPath(config: Config, path: string): unknown {
  let node: unknown = config;
  for (const part of path.split('.')) node = (node as Record<string, unknown>)[part];
  return node;
}

/** `host:port` or `[v6]:port`; returns null when it does not parse. */
export function parseListenAddr(addr: string): { host: string; port: number } | null {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(addr.trim());
  if (!m) return null;
  const port = Number(m[3]);
  if (port > 65535) return null;
  return { host: m[1] ?? (m[2] === '' ? '0.0.0.0' : (m[2] as string)), port };
}

/**
 * Why `url` cannot be `server.public_url`, or null: an absolute http(s) URL without credentials,
 * query, fragment or trailing slash, since paths are appended to it as they are.
 */
export function publicUrlProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `"${url}" is not an absolute URL`;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return `"${url}" must be an http:// or https:// URL`;
  if (parsed.username !== '' || parsed.password !== '') return 'must not hold credentials';
  if (parsed.search !== '' || parsed.hash !== '' || url.includes('?') || url.includes('#')) return 'must not have a query or fragment';
  if (url.endsWith('/')) return `"${url}" must not end with "/"`;
  return null;
}

/** Every problem with a merged configuration, one line per wrong key. */
export function validateConfig(config: Config, explicitKeys: ReadonlySet<string> = new Set()): string[] {
  const problems: string[] = [];
  for (const [field, consequence] of POSITIVE_FIELDS) {
    const value = readPath(config, field);
    if (typeof value !== 'number' || !(value > 0)) problems.push(`${field} must be greater than zero: at ${String(value)}, ${consequence}`);
  }
  for (const field of [
    'cleanup.interval_secs',
    'cleanup.token_max_age_days',
    'service.process_window_days',
    'inbox.alert_word_refresh_millis',
  ] as const) {
    const value = readPath(config, field);
    if (typeof value !== 'number' || value < 0) problems.push(`${field} must not be negative`);
  }

  if (config.inbox.max_alert_words_per_user > ALERT_WORDS_CEILING)
    problems.push(
      `inbox.max_alert_words_per_user must be at most ${ALERT_WORDS_CEILING} (the store's ceiling: a list must fit the user API's body limit)`,
    );

  if (!Number.isInteger(config.nip9a.post_threads) || config.nip9a.post_threads < 0)
    problems.push('nip9a.post_threads must be a whole number, 0 or more (0 makes the callback POSTs on the main thread)');

  const s = config.service;
  if (s.video_coordinate_dedup_ttl_secs <= s.processed_event_ttl_secs) {
    problems.push('service.video_coordinate_dedup_ttl_secs must be greater than service.processed_event_ttl_secs');
  }
  if (s.new_post_delivery_concurrency > s.new_post_fanout_page_size) {
    problems.push('service.new_post_delivery_concurrency must not exceed service.new_post_fanout_page_size');
  }
  if (s.coalesce_lease_secs <= 2 * s.coalesce_flush_timeout_secs) {
    problems.push('service.coalesce_lease_secs must be greater than twice service.coalesce_flush_timeout_secs');
  }
  if (s.coalesce_group_ttl_secs <= s.coalesce_window_secs + s.coalesce_lease_secs) {
    problems.push('service.coalesce_group_ttl_secs must be greater than coalesce_window_secs + coalesce_lease_secs');
  }
  if (s.private_key_hex !== '' && !HEX64.test(s.private_key_hex.toLowerCase())) {
    problems.push('service.private_key_hex must be 64 hex characters');
  }
  for (const pk of s.allowed_pubkeys) {
    if (!HEX64.test(pk.toLowerCase())) problems.push(`service.allowed_pubkeys: "${pk}" is not a 64-hex pubkey`);
  }

  if (explicitKeys.has('server.internal_api_token') && config.server.internal_api_token.trim() === '') {
    problems.push('server.internal_api_token must not be empty when configured');
  }
  const publicUrl = config.server.public_url;
  if (publicUrl !== '' && publicUrlProblem(publicUrl)) problems.push(`server.public_url: ${publicUrlProblem(publicUrl)}`);
  for (const proxy of config.server.trusted_proxies) {
    const problem = trustedProxyProblem(proxy);
    if (problem) problems.push(`server.trusted_proxies: ${problem}`);
  }
  if (!Number.isInteger(config.server.max_body_bytes) || config.server.max_body_bytes < MIN_MAX_BODY_BYTES)
    problems.push(
      `server.max_body_bytes must be a whole number of bytes, at least ${MIN_MAX_BODY_BYTES} (routes' own bodies are up to that size)`,
    );
  if (!parseListenAddr(config.server.listen_addr)) problems.push(`server.listen_addr: "${config.server.listen_addr}" is not host:port`);

  if (config.nostr.relays.length === 0) problems.push('nostr.relays must list at least one relay');
  for (const relay of [...config.nostr.relays, ...config.nostr.profile_relays]) {
    if (!/^wss?:\/\/[^\s/]+/.test(relay)) problems.push(`nostr relay "${relay}" must be a ws:// or wss:// URL`);
  }

  const url = config.store.url;
  if (!url.startsWith('sqlite:') && !url.startsWith('redis://') && !url.startsWith('rediss://') && !isClusterUrl(url)) {
    problems.push(`store.url: "${url}" must be sqlite:PATH, sqlite::memory:, redis://… or redis+cluster://host:port,…`);
  } else if (url === 'sqlite:') {
    problems.push('store.url: sqlite: needs a path (or :memory:)');
  }
  problems.push(...redisTargetProblems(config));
  if (!(HTTP2_CLIENT_KINDS as readonly string[]).includes(config.delivery.http2_client))
    problems.push(`delivery.http2_client: "${config.delivery.http2_client}" must be one of ${HTTP2_CLIENT_KINDS.join(', ')}`);
  if (!/^https?:\/\/[^\s/]+/.test(config.firebase.api_base_url)) problems.push('firebase.api_base_url must be an http:// or https:// URL');
  problems.push(...apnsConfigProblems(config.apns));
  if (!Number.isInteger(config.nostr.list_cache_ttl_secs) || config.nostr.list_cache_ttl_secs < 0)
    problems.push('nostr.list_cache_ttl_secs must be a whole number of seconds, 0 or more');
  if (!Number.isInteger(config.nostr.list_cache_entries) || config.nostr.list_cache_entries < 1)
    problems.push('nostr.list_cache_entries must be a whole number, 1 or more');
  if (!Number.isInteger(config.nostr.mute_list_max_items) || config.nostr.mute_list_max_items < 1)
    problems.push('nostr.mute_list_max_items must be a whole number, 1 or more');
  // One list at the per-list bound (hashtags, words and threads each) must fit, or such a user is fetched for every push.
  if (!Number.isInteger(config.nostr.list_cache_mute_items) || config.nostr.list_cache_mute_items < 3 * config.nostr.mute_list_max_items)
    problems.push('nostr.list_cache_mute_items must be a whole number, at least 3 × nostr.mute_list_max_items');
  problems.push(...userRelayConfigProblems(config.nostr.user_relays));
  const webpush = config.webpush;
  if (webpush.ttl_secs < 0 || !Number.isInteger(webpush.ttl_secs))
    problems.push('webpush.ttl_secs must be a whole number of seconds, 0 or more');
  if (webpush.vapid_subject !== '' && !/^(mailto:|https:\/\/)\S+$/.test(webpush.vapid_subject)) {
    problems.push('webpush.vapid_subject must be a mailto: or https:// contact (RFC 8292 §2.1)');
  }
  if (webpush.vapid_public_key !== '' && webpush.vapid_private_key === '')
    problems.push('webpush.vapid_public_key is set without webpush.vapid_private_key');
  for (const kind of [...config.notification.event_kinds, ...config.notification.default_preferences.kinds]) {
    if (kind < 0 || kind > 65535) problems.push(`notification kinds: ${kind} is not a Nostr kind`);
  }
  for (const entry of config.send_api.types) {
    if (!SEND_TYPE_ENTRY.test(entry)) problems.push(`send_api.types: "${entry}" is not type:category (a name and a Nostr kind)`);
  }
  if (!(LOG_FORMATS as readonly string[]).includes(config.log.format))
    problems.push(`log.format: "${config.log.format}" must be one of ${LOG_FORMATS.join(', ')}`);
  problems.push(...ntfyConfigProblems(config.ntfy));
  problems.push(...eventsConfigProblems(config.events, process.env.NODE_ENV));
  problems.push(...nip9aConfigProblems(config.nip9a, process.env.NODE_ENV));
  problems.push(...templateConfigProblems(config.templates));
  const throttle = config.throttle.per_user_per_hour;
  if (!Number.isInteger(throttle) || throttle < 0)
    problems.push('throttle.per_user_per_hour must be a whole number of pushes, 0 (off) or more');
  const { wait_replicas: waitReplicas, wait_timeout_ms: waitTimeoutMs } = config.redis;
  if (!Number.isSafeInteger(waitReplicas) || waitReplicas < WAIT_REPLICAS_AUTO || waitReplicas > MAX_WAIT_REPLICAS) {
    problems.push(
      `redis.wait_replicas must be -1 (auto), 0 (off) or a number of replicas up to ${MAX_WAIT_REPLICAS}, got ${String(waitReplicas)}`,
    );
  }
  if (!Number.isSafeInteger(waitTimeoutMs) || waitTimeoutMs < 1 || waitTimeoutMs > MAX_WAIT_TIMEOUT_MS) {
    problems.push(`redis.wait_timeout_ms must be a whole number of ms from 1 to ${MAX_WAIT_TIMEOUT_MS}, got ${String(waitTimeoutMs)}`);
  }
  return problems;
}

/**
 * The `events:` section (issue 21): an unverified-zap allowance without zaps is a mistake, as is a
 * zero DM interval; loopback lnurl endpoints are for test suites only.
 */
export function eventsConfigProblems(events: Config['events'], nodeEnv: string | undefined): string[] {
  const problems: string[] = [];
  if (events.lnurl_allow_loopback && nodeEnv !== 'test')
    problems.push('events.lnurl_allow_loopback is for test suites only (NODE_ENV=test)');
  if (!Number.isInteger(events.dm_push_min_interval_secs) || events.dm_push_min_interval_secs < 1)
    problems.push('events.dm_push_min_interval_secs must be a whole number of seconds, 1 or more');
  if (events.zaps_allow_unverified && !events.zaps) problems.push('events.zaps_allow_unverified is set without events.zaps');
  return problems;
}

/** APNs is all or nothing: a key without its ids (or the reverse) is a mistake, not "off". */
function apnsConfigProblems(apns: Config['apns']): string[] {
  const problems: string[] = [];
  for (const key of ['api_base_url', 'sandbox_api_base_url'] as const) {
    if (!/^https?:\/\/[^\s/]+/.test(apns[key])) problems.push(`apns.${key} must be an http:// or https:// URL`);
  }
  const given = (['key_path', 'key_id', 'team_id', 'bundle_id'] as const).filter((key) => apns[key] !== '');
  if (given.length > 0 && given.length < 4) {
    const missing = (['key_path', 'key_id', 'team_id', 'bundle_id'] as const).filter((key) => apns[key] === '');
    problems.push(
      `apns: ${missing.map((key) => `apns.${key}`).join(', ')} must be set too (APNs needs the key, its key id, the team id and the bundle id)`,
    );
  }
  if (apns.key_id !== '' && !/^[A-Z0-9]{10}$/.test(apns.key_id)) problems.push('apns.key_id must be the 10-character Key ID');
  if (apns.team_id !== '' && !/^[A-Z0-9]{10}$/.test(apns.team_id)) problems.push('apns.team_id must be the 10-character Team ID');
  if (!Number.isInteger(apns.expiration_secs) || apns.expiration_secs < 0)
    problems.push('apns.expiration_secs must be a whole number of seconds, 0 or more (0: try once, never stored)');
  return problems;
}

/** `redis.cluster_nodes` and `redis.key_layout` against the store URL they go with. */
function redisTargetProblems(config: Config): string[] {
  const { url } = config.store;
  const { cluster_nodes: clusterNodes, key_layout: layout } = config.redis;
  const problems: string[] = [];
  if (layout !== '' && !(KEY_LAYOUTS as readonly string[]).includes(layout)) {
    problems.push(`redis.key_layout: "${layout}" must be one of ${KEY_LAYOUTS.join(', ')} (or empty: by the URL)`);
  }
  if (isClusterUrl(url)) {
    try {
      parseRedisTarget(url, clusterNodes);
    } catch (error) {
      problems.push(`store.url / redis.cluster_nodes: ${(error as Error).message}`);
    }
    // The divine layout's scripts touch keys of many slots at once: a cluster refuses them.
    if (layout === 'divine') problems.push('redis.key_layout: divine cannot run on a Redis Cluster; use cluster (the default there)');
  } else if (clusterNodes.length > 0) {
    problems.push('redis.cluster_nodes: needs a redis+cluster:// store URL');
  }
  const shards = config.redis.queue_shards;
  const clusterLayout = layout === 'cluster' || (layout === '' && isClusterUrl(url));
  if (!Number.isSafeInteger(shards) || shards < 0 || shards > MAX_QUEUE_SHARDS) {
    problems.push(`redis.queue_shards must be a whole number from 0 (the layout's default) to ${MAX_QUEUE_SHARDS}, got ${String(shards)}`);
  } else if (!clusterLayout && shards > 1) {
    problems.push(
      `redis.queue_shards: the divine key layout has exactly one shard per queue (got ${shards}); shards need redis.key_layout: cluster`,
    );
  }
  return problems;
}
