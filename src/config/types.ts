/**
 * The shape of the configuration: every section's keys, their types and what they mean. The
 * defaults, with their units and reasons, are in `defaults.ts`, which re-exports these types.
 */
import type { KeyLayout } from '../store/redis/keys.ts';
import type { NtfyConfig } from './ntfy-types.ts';
import type { Nip9aConfig } from './nip9a-types.ts';

export type { NtfyConfig } from './ntfy-types.ts';
export type { Nip9aConfig, Nip9aReceiverConfig } from './nip9a-types.ts';

export const ROLE_NAMES = ['listener', 'engine', 'delivery', 'scheduler', 'janitor', 'api', 'pusher', 'gateway'] as const;
export type RoleName = (typeof ROLE_NAMES)[number];

/**
 * `delivery.http2_client`: the HTTP/2 client provider requests (FCM, APNs) go through. `builtin`
 * is our own (`src/delivery/http2/`, less CPU per send); `node` is `node:http2`, the standard
 * fallback an operator can switch to without a release.
 */
export const HTTP2_CLIENT_KINDS = ['builtin', 'node'] as const;
export type Http2ClientKind = (typeof HTTP2_CLIENT_KINDS)[number];

/**
 * `ntfy.websocket`: the WebSocket server of `/…/ws` subscriptions. `builtin` is our own framing
 * on the bare socket (`src/ntfy/ws-frames.ts`, less memory per idle subscription); `ws` is the
 * `ws` package, the standard fallback.
 */
export const NTFY_WEBSOCKET_KINDS = ['builtin', 'ws'] as const;
export type NtfyWebSocketKind = (typeof NTFY_WEBSOCKET_KINDS)[number];

/**
 * How log lines are written (`log.format`): `json`, one JSON object a line (pino's own, for log
 * shippers and `jq`); `pretty`, one human line a fact (pino-pretty); `auto`, pretty when stdout
 * is a terminal and JSON otherwise (a pipe, a file, journald, `docker logs`).
 */
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
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
  /**
   * Honour recipients' own kind 10000 mute lists and, for `onlyFollowing`, kind 3 contact lists,
   * fetched from the main relays (or the user's kind 10002 write relays). Off, only the mutes a
   * user shares in kind 3083 `mutedPubkeys` apply and `onlyFollowing` lets everyone through.
   */
  honour_user_lists: boolean;
  /** How long a recipient's fetched mute and contact lists are believed. */
  list_cache_ttl_secs: number;
  /** Recipients whose lists are kept in memory at once (per engine process). */
  list_cache_entries: number;
  /**
   * Hashtags, words and threads honoured of one kind 10000 mute list, each; the newest (last)
   * are kept. Muted pubkeys are not bounded by it.
   */
  mute_list_max_items: number;
  /**
   * Mute-list items (pubkeys, hashtags, words, threads) held in the list cache at once, over all
   * its users (per engine process); the oldest users are forgotten first to make room.
   */
  list_cache_mute_items: number;
  /** Following users on their own relays (issue 36, docs/user-relays.md). */
  user_relays: UserRelaysConfig;
}

/**
 * The outbox model: the relays each user with a device reads from (kind 10002 read relays, kind
 * 10050 DM relays, a registration's `relays`), watched for what tags them.
 */
export interface UserRelaysConfig {
  /** Read users' relay lists and watch their relays; `false` keeps the service on `nostr.relays` alone. */
  enabled: boolean;
  /** Most user relays connected at once; the relays covering the fewest users are dropped first. */
  max_connections: number;
  /** Most pubkeys in one `#p` filter; more users on a relay are split over several filters. */
  max_pubkeys_per_filter: number;
  /** How often the listener reads the changed users' relay lists from the store and moves its subscriptions (seconds). */
  refresh_secs: number;
  /**
   * `false`, or `I_UNDERSTAND` to admit loopback and private-address relays over `ws://`, bypassing
   * the public-address policy: for test suites only.
   */
  allow_loopback: string;
}

export interface Config {
  /** Roles this process runs; `all` is every role. */
  roles: RoleName[];
  /** Where the SQLite file, the generated service key and other local state live. */
  data_dir: string;
  service: ServiceConfig;
  nostr: NostrConfig;
  store: {
    /** `sqlite:PATH`, `sqlite::memory:`, `redis://…` or a cluster's `redis+cluster://host:port,host:port,…`. */
    url: string;
  };
  redis: {
    /** Selects the Redis store when set (also `REDIS_URL`). */
    url: string;
    connection_pool_size: number;
    /** More Redis Cluster seed nodes (`host:port`) beside those of a `redis+cluster://` URL. */
    cluster_nodes: string[];
    /**
     * Key names: `divine` (seed 000's layout; a divine Redis is a drop-in) or `cluster` (hash-tagged
     * so every script touches one slot). Empty: `cluster` with a cluster URL, `divine` otherwise.
     */
    key_layout: '' | KeyLayout;
    /**
     * Shards per durable queue in the cluster layout (each its own slot, so enqueue and lease
     * spread over the masters). 0: the layout's default (8 in `cluster`; the divine layout has
     * exactly 1). Every process sharing a store must use the same count.
     */
    queue_shards: number;
    /**
     * Replicas a step's writes must reach before a step in another slot depends on them
     * (`WAIT`, `src/store/redis/replication.ts`): -1 (auto) is 1 on a cluster and 0 on one Redis;
     * 0 never waits. A master is never asked for more replicas than it has alive, and a WAIT
     * answered by fewer than asked fails the step, which is retried.
     */
    wait_replicas: number;
    /** Longest one WAIT blocks, ms (it holds the process's connection to that master meanwhile). */
    wait_timeout_ms: number;
  };
  server: {
    listen_addr: string;
    /** Bearer token of the internal hooks; unset disables them. */
    internal_api_token: string;
    /**
     * The public base URL clients and relays reach the service at (`https://push.example.com`,
     * no trailing slash): NIP-98 `u` tags are checked against it, and NIP-9a callback URLs are made
     * under it. Unset: NIP-98 checks the URL as this process receives it (right unless a proxy
     * rewrites the scheme or host), and NIP-9a callback URLs cannot be created (nothing is derived
     * from the request's Host).
     */
    public_url: string;
    /**
     * The operator's reverse proxies (CIDRs or addresses, `src/api/client-address.ts`). Only a request
     * whose socket peer is one of them has its `X-Forwarded-For` (the client address every per-client
     * limit is keyed by) and `X-Forwarded-Proto` believed. Empty: the socket's peer is the client.
     */
    trusted_proxies: string[];
    /**
     * The request body limit of every route, bytes, applied before routing whatever the body's
     * framing (`src/api/body-limit.ts`): over it, 413. Routes that need more declare a larger limit
     * with their reason (docs/security.md lists them).
     */
    max_body_bytes: number;
  };
  notification: {
    event_kinds: number[];
    default_preferences: { kinds: number[] };
    /** Content older than this is never pushed, so an outage does not end in a flood of stale pushes. */
    max_event_age_secs: number;
  };
  cleanup: {
    /** The janitor's stale-token sweep and its idle-storage sweep (`roles/storage-expiry.ts`: inbox users, NIP-9a callback URLs). */
    enabled: boolean;
    /** How often both sweeps run. */
    interval_secs: number;
    token_max_age_days: number;
  };
  delivery: {
    /** HTTP/2 client of the provider transports: `builtin` or `node` ({@link HTTP2_CLIENT_KINDS}). */
    http2_client: Http2ClientKind;
  };
  firebase: {
    project_id: string;
    /** Service-account JSON; unset leaves FCM off. */
    credentials_path: string;
    /** `http://` means HTTP/2 without TLS (h2c), for loopback fakes. */
    api_base_url: string;
  };
  /** Direct APNs (Apple's provider API, token-based auth): on when key_path, key_id, team_id and bundle_id are all set. */
  apns: {
    /** The `.p8` signing key (EC P-256, PKCS#8 PEM) downloaded from the Apple developer account; unset leaves APNs off. */
    key_path: string;
    /** The key's 10-character Key ID (the JWT's `kid`). */
    key_id: string;
    /** The 10-character Team ID (the JWT's `iss`). */
    team_id: string;
    /** The app's bundle id, sent as `apns-topic`. */
    bundle_id: string;
    /** Production endpoint; `http://` means h2c (loopback fakes). */
    api_base_url: string;
    /** Development (sandbox) endpoint, for devices registered with `"sandbox": true` or every device when `sandbox` is on. */
    sandbox_api_base_url: string;
    /** Send every APNs device to the sandbox (a development build of the app). */
    sandbox: boolean;
    /** `apns-expiration`: how long Apple keeps a push for an offline device. */
    expiration_secs: number;
  };
  webpush: {
    /** VAPID private key, base64url (32 bytes). Unset: a key pair is generated on first start and kept in `data_dir` (SQLite) or in the shared store (Redis, one pair for the fleet). */
    vapid_private_key: string;
    /** VAPID public key, base64url (65 bytes); optional, checked against the private key. */
    vapid_public_key: string;
    /** VAPID `sub` contact (`mailto:` or `https:`); Apple's push service refuses JWTs without one. */
    vapid_subject: string;
    /** RFC 8030 TTL of each push: how long a push service keeps it for an offline device. */
    ttl_secs: number;
    /** Bound of one push request, connect to answer. */
    request_timeout_secs: number;
    /** Subscriptions of one notification sent at once. */
    batch_concurrency: number;
    /**
     * Allow endpoints on loopback, private and other non-public addresses. Off, they are refused
     * (SSRF); tests and a push service on the local network turn it on.
     */
    allow_private_endpoints: boolean;
  };
  engine: {
    /**
     * Worker threads that decrypt control events (NIP-44 ECDH dominates a registration) and check
     * signatures: relay events of the listener, included events of NIP-9a callbacks in a process
     * with the engine, matched events of the NIP-9a gateway (role `gateway`, which starts the
     * threads for checks only). 0 does all of it on the main thread.
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
  /** The send API (`POST /v1/notifications`, `src/api/notifications.ts`, `src/platform/`). */
  send_api: {
    /**
     * The notification types apps may send, each `type:category`: the preference category
     * (kind 3083 `kinds`) that enables it. A type not listed is refused (422 UNKNOWN_TYPE).
     */
    types: string[];
    /** Most recipients of one request (the 10,000). */
    max_recipients: number;
    /** How long an `Idempotency-Key` is kept. */
    idempotency_ttl_secs: number;
    /** How long a notification record (and its `GET`) is kept after its send time. */
    record_ttl_secs: number;
    /** Recipients expanded per page (one gate read and one claim-and-enqueue step each). */
    page_size: number;
    /** How long a page may take before another scheduler takes it over. */
    lease_secs: number;
    /** Idle poll of the send scheduler. */
    poll_millis: number;
    /**
     * Requests one API key may make per second, sustained, on every API-key route (send, campaign
     * and admin API; `src/api/rate-limits.ts`); more answer 429 with `Retry-After`.
     */
    rate_per_sec: number;
    /** Requests one API key may make at once above the sustained rate. */
    rate_burst: number;
  };
  /** Campaigns (`POST /v1/campaigns`, `src/platform/campaign-worker.ts`, docs/campaigns.md). */
  campaign_delivery: {
    /** How long a delivered (idempotency key, device) claim is kept once a provider accepted the push (seed 000). */
    dedup_ttl_secs: number;
    /** How long a claim lives while its send runs (seed 000's CLAIM_TTL_SECS, 600 s); a crashed send's claim frees itself after it. */
    claim_ttl_secs: number;
    /** Devices read per expansion page (one scan step, one consent read, one enqueue step). */
    page_size: number;
    /** How long a page may take before another scheduler takes it over. */
    lease_secs: number;
    /** Idle poll of the campaign scheduler. */
    poll_millis: number;
  };
  /** Quiet hours (kind 3083 `quietHours`, docs/campaigns.md): the digest sender. */
  quiet_hours: {
    /** How often the scheduler looks for digests whose window ended. */
    poll_millis: number;
    /** How long a digest may take before another scheduler takes it over. */
    lease_secs: number;
  };
  /** The delivery log (`src/platform/delivery-log.ts`). */
  delivery_log: {
    /** Record every attempt and outcome; off, nothing is logged (and `GET` outcomes show only what the expansion saw). */
    enabled: boolean;
    /** Entries older than this are swept by the janitor. */
    retention_days: number;
    /** How often the janitor sweeps. */
    sweep_interval_secs: number;
  };
  /** The built-in ntfy-compatible UnifiedPush server (`src/ntfy/`). */
  ntfy: NtfyConfig;
  /** Event kinds beyond divine's set (issue 21, docs/events.md); every one off by default. */
  events: EventsConfig;
  /** The user's inbox (issue 13): unread counters, badges, alert words, announcements, the user API. */
  inbox: {
    /**
     * Count routed notifications, match alert words and stamp badges. Off, pushes carry no badge and
     * the counters stay as they are (a switch for measuring the counters' cost, and for deployments
     * that want pushes only).
     */
    enabled: boolean;
    /**
     * How long the engine believes "nobody watches any alert word" before asking the store again
     * (0: ask for every event). While none is watched an event costs no tokenising and no lookup;
     * a word set anywhere is matched from at most this long after.
     */
    alert_word_refresh_millis: number;
    /** Alert words one user may store (the whole list, by the API or a kind 3083); more is refused with `TOO_MANY_ALERT_WORDS`. At most {@link ALERT_WORDS_CEILING}. */
    max_alert_words_per_user: number;
    /**
     * Distinct keys one client address (`server.trusted_proxies`) may give alert words per UTC day,
     * counted in the store so every replica shares it; more is refused with `ADDRESS_QUOTA_EXCEEDED`.
     */
    max_alert_word_users_per_address_per_day: number;
    /**
     * Distinct keys one client address may call the user API or open the hint socket with per UTC
     * day (each is remembered as an inbox user), counted in the store; more are refused with
     * `CLIENT_QUOTA_EXCEEDED`. A key counted that day is never refused again that day.
     */
    max_users_per_address_per_day: number;
    /** Hint sockets (`/v1/inbox/socket`) one pubkey may hold open on one process; more are refused with 429. */
    max_sockets_per_pubkey: number;
    /** Hint sockets one client address may hold open on one process; more are refused with 429. */
    max_sockets_per_address: number;
    /** An inbox user with no device and no request for this many days is forgotten (janitor). */
    idle_user_ttl_days: number;
  };
  /**
   * NIP-9a both ways: `receiver`, the callback URLs relays that push call for our users
   * (`src/nip9a/receiver/`), and the rest, the gateway that gives NIP-9a to relays without it
   * (`src/nip9a/gateway/`).
   */
  nip9a: Nip9aConfig;
  /** What `/health` calls a problem (`src/observability/health-monitor.ts`, docs/operations.md). */
  health: {
    /** No relay connected for this long (from the start, or since the last one was): `degraded`. */
    relay_grace_secs: number;
    /** A transport whose every send failed for this long (none succeeded since its first failure): `degraded`. */
    transport_failing_secs: number;
    /** A queue (inbound, outbound, nip9a) whose oldest due item has waited this long: `degraded`. */
    queue_age_secs: number;
  };
  /** The operator console at `/console` (`src/console/`): process heartbeats, metric samples, sessions. */
  console: {
    /** Serve `/console` (api role). Heartbeats and samples are written either way, for other replicas' consoles. */
    enabled: boolean;
    /** How often each process writes its heartbeat; a process is gone after {@link CONSOLE_HEARTBEAT_MISSED_BEATS} missed beats. */
    heartbeat_interval_secs: number;
    /** How often each process samples its counters into the store (the plots' resolution). */
    sample_interval_secs: number;
    /** How long a console login lasts. */
    session_ttl_secs: number;
  };
  /** Notification copy per locale (issue 15, docs/copy.md): the operator's templates over the shipped ones. */
  templates: TemplatesConfig;
  /** Per-client request limits of the public routes (issue 35, `src/api/rate-limits.ts`, docs/security.md). */
  rate_limits: RateLimitsConfig;
  /** The per-user push throttle (issue 15, docs/copy.md). */
  throttle: {
    /**
     * Most pushes of non-urgent types (everything but direct messages and critical-lane sends) a
     * user gets in one clock hour; 0 turns the throttle off. The excess is counted, not pushed.
     */
    per_user_per_hour: number;
  };
  log: {
    /** pino's level: trace, debug, info, warn, error, fatal or silent (`LOG_LEVEL` in the environment wins). */
    level: string;
    /** `auto`, `json` or `pretty` ({@link LOG_FORMATS}). */
    format: LogFormat;
  };
  /**
   * The apps besides the default one (`apps:` in the YAML, `src/config/apps.ts`), each with its
   * configuration merged over this one. Empty in an app's own configuration.
   */
  apps: AppEntry[];
}

/**
 * The `rate_limits` section: what one client may ask of the public routes, per client address
 * (`server.trusted_proxies` decides whose `X-Forwarded-For` is believed) and per NIP-98 pubkey.
 * Each route group counts apart (the user API, NIP-9a callback URLs, NIP-9a registrations, the
 * inbox socket). API keys are limited by `send_api.rate_per_sec`/`rate_burst`, the NIP-9a receiver
 * per user by `nip9a.receiver.owner_rate_*`, ntfy by its own visitor limits.
 */
export interface RateLimitsConfig {
  /**
   * false turns off every limit of this section, the API keys' and the NIP-9a receiver's per user
   * (ntfy's visitor limits and the per-callback-URL limit keep their own settings). For measuring
   * the limits' cost (bench/send-api, bench/nip9a); never on a public deployment.
   */
  enabled: boolean;
  /** NIP-98 requests one client address may make per minute, sustained, in each route group. */
  nip98_per_address_per_minute: number;
  /** NIP-98 requests one client address may make at once, in each route group. */
  nip98_per_address_burst: number;
  /** NIP-98 requests one pubkey may make per minute, sustained, in each route group. */
  nip98_per_pubkey_per_minute: number;
  /** NIP-98 requests one pubkey may make at once, in each route group. */
  nip98_per_pubkey_burst: number;
  /** Console login attempts (`POST /console/api/login`) one client address may make per minute, right or wrong. */
  console_login_per_minute: number;
}

/** One app of `apps:`: its id and its whole configuration (the top level with the app's own keys over it). */
export interface AppEntry {
  id: string;
  config: Config;
}

/** The `templates` section (`src/notification/templates/load.ts`). */
export interface TemplatesConfig {
  /** A folder of one JSON or YAML file per locale, named by the locale (`pt-BR.yaml`); '' for none. */
  dir: string;
  /** The language of devices that registered no `locale` (a BCP 47 tag). */
  default_locale: string;
  /** Templates by locale, then message, then field; from the config file only (see docs/copy.md). */
  locales: Record<string, unknown>;
}

/**
 * The `events:` section (issue 21): what an app pushes beyond divine's kinds 7, 16, 1111, 30023 and
 * 34236. All off by default, so the default app behaves exactly as divine does.
 */
export interface EventsConfig {
  /** Kind 1 notes: replies (NIP-10) notify the parent's and the root's authors, `p` tags and NIP-27 mentions the mentioned. */
  text_notes: boolean;
  /** Kind 9735 zap receipts (NIP-57), checked, to the zapped user. */
  zaps: boolean;
  /** Push zaps whose receipt signer cannot be checked against the recipient's lnurl provider (no `lud16`, endpoint down). */
  zaps_allow_unverified: boolean;
  /** Kind 1059 gift wraps (NIP-59): a content-free "new message" push to the `p`-tagged user. */
  gift_wraps: boolean;
  /** At most one gift-wrap push per recipient per this many seconds (the rest of a burst is silent). */
  dm_push_min_interval_secs: number;
  /** Ask `http://` lnurl-pay endpoints on loopback hosts when verifying zaps (NODE_ENV=test only). */
  lnurl_allow_loopback: boolean;
}
