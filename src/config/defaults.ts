/**
 * Every configuration key with its default, unit and reason.
 *
 * Names and defaults follow divine-push-service (reference §1.5) wherever it has the key, so a
 * divine deployment's environment (`NOSTR_PUSH__SERVICE__…`) carries over unchanged.
 */

export const ROLE_NAMES = ['listener', 'engine', 'delivery', 'scheduler', 'janitor', 'api', 'pusher'] as const;
export type RoleName = (typeof ROLE_NAMES)[number];

export interface ServiceConfig {
  /** Service identity and NIP-44 key. Unset: generated on first start and kept in `data_dir`. */
  private_key_hex: string;
  /** Days of control events (3079/3080/3083) replayed from relays at start. */
  process_window_days: number;
  /** TTL of per-event and per-recipient claims, the fan-out marker and fan-out job lifetime. */
  processed_event_ttl_secs: number;
  /** TTL of per-recipient video coordinate records; must exceed processed_event_ttl_secs. */
  video_coordinate_dedup_ttl_secs: number;
  new_post_rate_limit_secs: number;
  notify_list_max_creators: number;
  notify_list_history_limit: number;
  new_post_fanout_page_size: number;
  new_post_delivery_concurrency: number;
  new_post_fanout_lease_secs: number;
  new_post_fanout_retry_secs: number;
  new_post_fanout_poll_millis: number;
  /** Recipient allowlist (hex pubkeys); empty means everyone. */
  allowed_pubkeys: string[];
  coalesce_window_secs: number;
  coalesce_immediate_limit: number;
  coalesce_lease_secs: number;
  coalesce_retry_secs: number;
  coalesce_poll_millis: number;
  coalesce_group_ttl_secs: number;
  coalesce_flush_timeout_secs: number;
  coalesce_logical_expiry_grace_secs: number;
  recipient_throttle_capacity: number;
  recipient_throttle_refill_secs: number;
  recipient_daily_window_secs: number;
  recipient_daily_cap: number;
}

export interface NostrConfig {
  /** Relays watched for control and content events. */
  relays: string[];
  /** divine's one-relay key; accepted as an alias that adds one relay. */
  relay_url: string;
  event_silence_timeout_secs: number;
  /** Relays asked for kind-0 profiles only (never a source of pushes); the main relays are a fallback. */
  profile_relays: string[];
  profile_cache_ttl_secs: number;
  /** Timeout of one profile lookup. */
  query_timeout_secs: number;
}

export interface Config {
  /** Roles this process runs; `all` is every role. */
  roles: RoleName[];
  /** Where the SQLite file, the generated service key and other local state live. */
  data_dir: string;
  service: ServiceConfig;
  nostr: NostrConfig;
  store: {
    /** `sqlite:PATH`, `sqlite::memory:` or `redis://…`. */
    url: string;
  };
  redis: {
    /** Selects the Redis store when set (also `REDIS_URL`). */
    url: string;
    connection_pool_size: number;
  };
  server: {
    listen_addr: string;
    /** Bearer token of the internal hooks; unset disables them. */
    internal_api_token: string;
  };
  notification: {
    event_kinds: number[];
    default_preferences: { kinds: number[] };
    /** Content older than this is never pushed, so an outage does not end in a flood of stale pushes. */
    max_event_age_secs: number;
  };
  cleanup: {
    enabled: boolean;
    interval_secs: number;
    token_max_age_days: number;
  };
  firebase: {
    project_id: string;
    /** Service-account JSON; unset leaves FCM off. */
    credentials_path: string;
    /** `http://` means HTTP/2 without TLS (h2c), for loopback fakes. */
    api_base_url: string;
  };
  engine: {
    /**
     * Worker threads that decrypt control events (NIP-44 ECDH dominates a registration); 0
     * decrypts on the main thread.
     */
    crypto_workers: number;
  };
  queue: {
    /** How long a stage may hold a queue item before it returns to the queue. */
    lease_secs: number;
    /** Leases an item may take before it is dead-lettered. */
    max_attempts: number;
    /** Idle poll of the queue consumers when nothing woke them. */
    poll_millis: number;
  };
  log: {
    level: string;
  };
}

const DAY_SECS = 86_400;

/** Public relays a fresh install watches until told otherwise. */
export const DEFAULT_RELAYS = ['wss://relay.damus.io', 'wss://nos.lol', 'wss://relay.primal.net'];

/** divine's default preference categories: comments/mentions, likes, reposts, DMs, long-form, bells. */
export const DEFAULT_PREFERENCE_KINDS = [1, 7, 16, 1059, 30023, 34236];

/** Kinds watched for pushes; kind 1 and kind 3 are deliberately absent (divine does not surface them). */
export const DEFAULT_EVENT_KINDS = [7, 16, 1111, 30023, 34236];

export function defaultConfig(): Config {
  return {
    roles: [...ROLE_NAMES],
    data_dir: './data',
    service: {
      private_key_hex: '',
      process_window_days: 7,
      processed_event_ttl_secs: 7 * DAY_SECS,
      video_coordinate_dedup_ttl_secs: 365 * DAY_SECS,
      new_post_rate_limit_secs: 3600,
      notify_list_max_creators: 1000,
      notify_list_history_limit: 5000,
      new_post_fanout_page_size: 1000,
      new_post_delivery_concurrency: 50,
      // 1000 / 50 = 20 waves × 45 s FCM ceiling, plus 5 minutes of headroom.
      new_post_fanout_lease_secs: 1200,
      new_post_fanout_retry_secs: 5,
      new_post_fanout_poll_millis: 250,
      allowed_pubkeys: [],
      coalesce_window_secs: 7200,
      coalesce_immediate_limit: 3,
      coalesce_lease_secs: 300,
      coalesce_retry_secs: 5,
      coalesce_poll_millis: 250,
      coalesce_group_ttl_secs: DAY_SECS,
      coalesce_flush_timeout_secs: 120,
      coalesce_logical_expiry_grace_secs: 3600,
      recipient_throttle_capacity: 20,
      recipient_throttle_refill_secs: 60,
      recipient_daily_window_secs: DAY_SECS,
      recipient_daily_cap: 20,
    },
    nostr: {
      relays: [...DEFAULT_RELAYS],
      relay_url: '',
      event_silence_timeout_secs: 300,
      profile_relays: [],
      profile_cache_ttl_secs: 300,
      query_timeout_secs: 5,
    },
    store: { url: '' },
    redis: { url: '', connection_pool_size: 10 },
    server: { listen_addr: '0.0.0.0:8000', internal_api_token: '' },
    notification: {
      event_kinds: [...DEFAULT_EVENT_KINDS],
      default_preferences: { kinds: [...DEFAULT_PREFERENCE_KINDS] },
      max_event_age_secs: 3600,
    },
    cleanup: { enabled: true, interval_secs: DAY_SECS, token_max_age_days: 90 },
    firebase: { project_id: 'openvine-co', credentials_path: '', api_base_url: 'https://fcm.googleapis.com' },
    // One thread beside the main one uses both cores of a small machine; raise it on bigger ones.
    engine: { crypto_workers: 1 },
    queue: { lease_secs: 60, max_attempts: 10, poll_millis: 250 },
    log: { level: 'info' },
  };
}
