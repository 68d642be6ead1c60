import { DEFAULT_WAIT_TIMEOUT_MS, WAIT_REPLICAS_AUTO } from '../store/redis/replication.ts';
/**
 * Every configuration key with its default, unit and reason.
 *
 * Names and defaults follow divine-push-service (reference §1.5) wherever it has the key, so a
 * divine deployment's environment (`NOSTR_PUSH__SERVICE__…`) carries over unchanged.
 */
import { ROLE_NAMES, type Config, type LogFormat } from './types.ts';

export * from './types.ts';

/** `templates.default_locale`: English, the copy divine's clients were built against. */
export const DEFAULT_TEMPLATE_LOCALE = 'en';

/** `throttle.per_user_per_hour`: off, so pushes are limited only by coalescing unless an operator asks. */
export const DEFAULT_THROTTLE_PER_USER_PER_HOUR = 0;

/**
 * A callback URL serves one user at one relay: 20 matching events a second, sustained, is far
 * beyond what a person reads, and a burst of 100 absorbs a relay flushing its retry queue.
 */
export const NIP9A_RECEIVER_RATE_PER_SEC = 20;
export const NIP9A_RECEIVER_RATE_BURST = 100;
/**
 * All callback URLs of one user together: twice one URL's rate (a user with an app on two busy
 * relays), and a burst of 200, so a user minting URLs to multiply the per-URL budget meets it
 * within a few hundred POSTs. Shared by every replica on Redis.
 */
export const NIP9A_RECEIVER_OWNER_RATE_PER_SEC = 40;
export const NIP9A_RECEIVER_OWNER_RATE_BURST = 200;
/** The seed's bound on a relay's own dedupe of terminal outcomes (7 days): a retry can come no later. */
export const NIP9A_RECEIPT_TTL_SECS = 7 * 86_400;
/** Callback URLs per user: one per relay they use, with room for several apps; bounds what a user can make us store. */
export const NIP9A_MAX_CALLBACKS_PER_OWNER = 32;
/**
 * Callback URLs one client address may create per UTC day, whatever keys it signs with: one user's
 * whole allowance ({@link NIP9A_MAX_CALLBACKS_PER_OWNER}) a day. Keys are free, so without it one
 * address could mint owners and fill the store; behind a carrier NAT an operator raises it.
 */
export const NIP9A_MAX_CALLBACKS_PER_ADDRESS_PER_DAY = 32;
/**
 * A callback URL that received nothing for 90 days is deleted: a relay that still pushes keeps it
 * alive, and one that stopped three months ago (a NIP-9a relay deletes its registration on our
 * 404) left behind a URL nobody uses.
 */
export const NIP9A_IDLE_CALLBACK_TTL_DAYS = 90;
/**
 * `nip9a.max_registrations_per_author_per_relay`: 4, all of an author's registrations (one per app
 * they use) may name their home relay. It bounds one author's share of a relay's subscription when
 * an operator raises the per-author total. It replaces a total per relay shared by every author,
 * which nine fresh keys filled to lock everyone else out of that relay (issue 35, docs/security.md).
 */
export const NIP9A_MAX_REGISTRATIONS_PER_AUTHOR_PER_RELAY = 4;
/**
 * `nip9a.max_watched_relays`: 1,000 relay connections per gateway process. Each costs a socket,
 * its subscriptions and reconnects; fresh keys are free, so without a cap throwaway registrations
 * could make the gateway dial any number of hosts. 1,000 is far above the relays real users share.
 */
export const NIP9A_MAX_WATCHED_RELAYS = 1_000;

/**
 * `nostr.mute_list_max_items`: hashtags, words and threads honoured of one user's mute list,
 * each. Mute lists in use hold a few dozen; a thousand is far beyond a person's curation and
 * bounds an outlier: its memory in the list cache (tens of KiB, times
 * `nostr.list_cache_entries` recipients) and the phrase matching each of their pushes costs.
 */
export const DEFAULT_MUTE_LIST_MAX_ITEMS = 1_000;

/**
 * `nostr.list_cache_mute_items`: mute-list items (pubkeys, hashtags, words, threads) the engine's
 * list cache holds at once, over all its users. An item takes about 100 bytes (a list at
 * {@link DEFAULT_MUTE_LIST_MAX_ITEMS} of each kind measured 304 KiB), so 2,000,000 is about
 * 200 MiB: room for the default 50,000 cached users at 40 items each — more than lists in use
 * hold — while users with maxed lists crowd out others instead of growing the heap.
 */
export const DEFAULT_LIST_CACHE_MUTE_ITEMS = 2_000_000;

/**
 * `server.max_body_bytes`: 64 KiB, the request body limit of every route (applied before routing,
 * `src/api/body-limit.ts`). Every JSON request the API defines fits in a few KiB (the largest, an
 * announcement or a direct-message hook call, 16 KiB), so 64 KiB leaves room for new fields while
 * an anonymous client can make a request hold at most this much. Routes that need more declare it
 * with their reason (the send API's recipient lists, NIP-9a callbacks carrying an event).
 */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;
/** The least `server.max_body_bytes`: the largest body a route's own limit admits (16 KiB, see above). */
export const MIN_MAX_BODY_BYTES = 16 * 1024;

/** ntfy's default `cache-duration`. */
export const DEFAULT_NTFY_CACHE_DURATION = '12h';
/** The UnifiedPush (AND_3) and RFC 8030 message size: 4096 bytes must always be accepted. */
export const NTFY_MESSAGE_SIZE_LIMIT_BYTES = 4096;
/** ntfy's shortest delay of a scheduled message: under 10 s a delay is indistinguishable from now. */
export const DEFAULT_NTFY_MIN_DELAY = '10s';
/** ntfy's `message-delay-limit`: a scheduled message is kept at most 3 days before it is sent. */
export const DEFAULT_NTFY_MAX_DELAY = '3d';

const DAY_SECS = 86_400;

/** Apple's provider API hosts (port 443). */
export const APNS_PRODUCTION_URL = 'https://api.push.apple.com';
export const APNS_SANDBOX_URL = 'https://api.sandbox.push.apple.com';

/**
 * `nostr.user_relays.max_connections`: 200 user relays. A socket costs some 100 KiB with its
 * buffers, so 200 stay near 20 MiB; the users of most deployments read from far fewer relays
 * (NIP-65 asks for 2–4 each, and most pick the same few), so the bound drops only the long tail.
 */
export const DEFAULT_USER_RELAY_MAX_CONNECTIONS = 200;
/**
 * `nostr.user_relays.max_pubkeys_per_filter`: 250 pubkeys. Relays cap a filter's tag values
 * (@nostr-relay at 256) or its bytes (strfry's default message limit is 512 KiB; 250 × 67 bytes is
 * 17 KiB), so 250 fits every limit seen, and 10,000 users on one relay still take only 40 filters.
 */
export const DEFAULT_USER_RELAY_MAX_PUBKEYS_PER_FILTER = 250;
/**
 * `nostr.user_relays.refresh_secs`: 5 s. The listener reads the users whose lists or devices
 * changed (the store's change log: a few reads, whatever the user base; the whole coverage only at
 * start and every 10 minutes) and re-subscribes only the relays whose users changed, so a new
 * 10002 moves the subscription within about 5 s, inside the 10 s p99 budget (at 10 s the
 * p99 was 10.2 s).
 */
export const DEFAULT_USER_RELAY_REFRESH_SECS = 5;
/** The acknowledgement `nostr.user_relays.allow_loopback` needs to admit loopback relays. */
export const USER_RELAY_LOOPBACK_ACKNOWLEDGEMENT = 'I_UNDERSTAND';

/** Public relays a fresh install watches until told otherwise. */
export const DEFAULT_RELAYS = ['wss://relay.damus.io', 'wss://nos.lol', 'wss://relay.primal.net'];

/** divine's default preference categories: comments/mentions, likes, reposts, DMs, long-form, bells. */
export const DEFAULT_PREFERENCE_KINDS = [1, 7, 16, 1059, 30023, 34236];

/**
 * `events.dm_push_min_interval_secs`: 60 s. A conversation sends wraps in bursts (one per message,
 * plus the sender's own copy), and one buzz a minute says "you have messages" as well as ten do.
 */
export const DEFAULT_DM_PUSH_MIN_INTERVAL_SECS = 60;

/** Kinds watched for pushes; kind 1 and kind 3 are deliberately absent (divine does not surface them). */
export const DEFAULT_EVENT_KINDS = [7, 16, 1111, 30023, 34236];

/** The seed's own types, so relay-style types can be sent as they are; apps add theirs. */
export const DEFAULT_SEND_API_TYPES = ['comment:1', 'mention:1', 'like:7', 'repost:16', 'directMessage:1059', 'newPost:34236'];
/** `inbox.alert_word_refresh_millis`: 5 s, a word set is matched within seconds, and an idle index costs one read per 5 s. */
/**
 * Seed 000's CLAIM_TTL_SECS: a campaign delivery claim lives this long while its send runs, far
 * beyond one provider call (45 s at most), and expires by itself if the process dies mid-send.
 */
export const CAMPAIGN_CLAIM_IN_FLIGHT_SECS = 600;
export const ALERT_WORD_REFRESH_MILLIS = 5_000;
/** `inbox.max_alert_words_per_user`: Twitarr's 50, enough for names, topics and a few misspellings; every event is matched against the whole index. */
export const INBOX_MAX_ALERT_WORDS_PER_USER = 50;
/**
 * `inbox.max_alert_word_users_per_address_per_day`: distinct keys one client address may give
 * alert words per UTC day. A household or an office is a handful of people; a script minting keys
 * from one address stops at 20 × 50 words a day. Behind a carrier NAT an operator raises it.
 */
export const INBOX_MAX_ALERT_WORD_USERS_PER_ADDRESS_PER_DAY = 20;
/**
 * `inbox.max_users_per_address_per_day`: distinct keys one client address may use the user API and
 * the hint socket with per UTC day (each such key is remembered as an inbox user). 50 is a busy
 * household or office; a script minting keys stops there instead of at the request rate limit.
 * Behind a carrier NAT an operator raises it.
 */
export const INBOX_MAX_USERS_PER_ADDRESS_PER_DAY = 50;
/** `inbox.max_sockets_per_pubkey`: hint sockets one user may hold open per process: a phone, a tablet and a few browser tabs. */
export const INBOX_MAX_SOCKETS_PER_PUBKEY = 8;
/** `inbox.max_sockets_per_address`: hint sockets one client address may hold open per process: a household's devices, not a script's hundreds. */
export const INBOX_MAX_SOCKETS_PER_ADDRESS = 32;
/**
 * `inbox.idle_user_ttl_days`: an inbox user with no device and no request for 30 days is
 * forgotten with their alert words and counters (a user with a device is never forgotten; their
 * counters are their next badge). A month covers any holiday; a key used once is gone in one.
 */
export const INBOX_IDLE_USER_TTL_DAYS = 30;
/** Console heartbeats: every 5 s, so the overview is at most seconds behind a process's state. */
export const CONSOLE_HEARTBEAT_INTERVAL_SECS = 5;
/** Beats a process may miss before the console drops it (a GC pause or a slow store write is not a death). */
export const CONSOLE_HEARTBEAT_MISSED_BEATS = 3;
/** Metric samples every 10 s: 360 per process per hour, a smooth enough pushes-per-second plot. */
export const CONSOLE_SAMPLE_INTERVAL_SECS = 10;
/**
 * Per-client limits of the NIP-98 routes (issue 35, docs/security.md), in each route group apart.
 * A person's app makes a handful of these a minute (counts, alert words, devices, a socket); 120
 * a minute with a burst of 60 per client address leaves a household or an office behind one
 * address ample room, and a single abusive client meets it within a few hundred requests.
 * Behind a carrier NAT, many users share one address: raise the address limit there.
 */
export const NIP98_PER_ADDRESS_PER_MINUTE = 120;
export const NIP98_PER_ADDRESS_BURST = 60;
/** One pubkey is one person: half an address's budget, still far beyond what an app asks. */
export const NIP98_PER_PUBKEY_PER_MINUTE = 60;
export const NIP98_PER_PUBKEY_BURST = 30;
/** Console logins per client address a minute: an operator mistypes a few times; guessing keys needs millions. */
export const CONSOLE_LOGIN_PER_MINUTE = 10;
/**
 * Requests per API key (send, campaign and admin API): 200 a second with a burst of 400. Twice
 * what bench/send-api's app server offers (100 requests a second, each up to 10,000 recipients:
 * far more pushes than one delivery process sends), so a real app server never meets it and a
 * leaked or looping key is bounded within a few hundred requests.
 */
export const SEND_API_RATE_PER_SEC = 200;
export const SEND_API_RATE_BURST = 400;
/** A console login lasts 12 hours: an operator's working day, then the key again. */
export const CONSOLE_SESSION_TTL_SECS = 12 * 3600;

/**
 * `health.relay_grace_secs`: 2 minutes. A relay restart or a network blip is over in seconds and
 * the listener's reconnect backoff tops out well below this, so two minutes without any relay
 * is an outage, not a reconnect.
 */
export const HEALTH_RELAY_GRACE_SECS = 120;
/**
 * `health.transport_failing_secs`: 5 minutes. A provider's brief 5xx burst is retried and
 * recovers within a minute or two; five minutes of nothing but failures is a broken credential,
 * a revoked key or an outage an operator must look at.
 */
export const HEALTH_TRANSPORT_FAILING_SECS = 300;

/**
 * `health.queue_age_secs`: 5 minutes. Consumers lease due items within a poll (a second) and a
 * retry's delay puts it in the future, not in the past; an item due for five minutes means the
 * workers are gone, stuck or far behind.
 */
export const HEALTH_QUEUE_AGE_SECS = 300;

/** `log.format`: human lines for a person at a terminal, JSON for everything that reads logs by program. */
export const DEFAULT_LOG_FORMAT: LogFormat = 'auto';

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
      // Not divine's 1000: a page ends by waiting for its slowest sends, so a page of only two
      // waves of sends idles the worker for a large share of its time (bench/fanout: 4,300 → 5,300
      // pushes/s from 1,000 to 5,000). A page is still one read and one claim step.
      new_post_fanout_page_size: 5000,
      // No longer used: bells are queued on the outbound queue and sent by the delivery stage at
      // its own concurrency (one way out, docs/bells.md). Accepted so existing configurations
      // (and divine's environment) still load.
      new_post_delivery_concurrency: 500,
      // A page claims and queues its bells in a few store steps, far inside the lease; the lease
      // only bounds how long a crashed worker's page waits before another worker takes it.
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
      honour_user_lists: true,
      // Like the profile cache: a new mute takes effect within five minutes, and a busy
      // recipient costs one relay query per five minutes.
      list_cache_ttl_secs: 300,
      // ~50,000 × a few hundred bytes of sets: tens of MiB at most, for the recipients active now.
      list_cache_entries: 50_000,
      mute_list_max_items: DEFAULT_MUTE_LIST_MAX_ITEMS,
      list_cache_mute_items: DEFAULT_LIST_CACHE_MUTE_ITEMS,
      user_relays: {
        enabled: true,
        max_connections: DEFAULT_USER_RELAY_MAX_CONNECTIONS,
        max_pubkeys_per_filter: DEFAULT_USER_RELAY_MAX_PUBKEYS_PER_FILTER,
        refresh_secs: DEFAULT_USER_RELAY_REFRESH_SECS,
        allow_loopback: 'false',
      },
    },
    store: { url: '' },
    // Empty key_layout follows the URL (cluster URL → cluster layout), so a divine Redis stays a
    // drop-in and a cluster never runs the divine layout's cross-slot scripts by accident.
    // wait_replicas auto: durable across a failover wherever a replica exists to fail over to.
    redis: {
      url: '',
      connection_pool_size: 10,
      cluster_nodes: [],
      key_layout: '',
      queue_shards: 0,
      wait_replicas: WAIT_REPLICAS_AUTO,
      wait_timeout_ms: DEFAULT_WAIT_TIMEOUT_MS,
    },
    server: {
      listen_addr: '0.0.0.0:8000',
      internal_api_token: '',
      public_url: '',
      trusted_proxies: [],
      max_body_bytes: DEFAULT_MAX_BODY_BYTES,
    },
    notification: {
      event_kinds: [...DEFAULT_EVENT_KINDS],
      default_preferences: { kinds: [...DEFAULT_PREFERENCE_KINDS] },
      max_event_age_secs: 3600,
    },
    cleanup: { enabled: true, interval_secs: DAY_SECS, token_max_age_days: 90 },
    // Our own client: a third of node:http2's CPU per FCM send (docs/benchmarks.md, issue 19).
    delivery: { http2_client: 'builtin' },
    firebase: { project_id: 'openvine-co', credentials_path: '', api_base_url: 'https://fcm.googleapis.com' },
    apns: {
      key_path: '',
      key_id: '',
      team_id: '',
      bundle_id: '',
      api_base_url: APNS_PRODUCTION_URL,
      sandbox_api_base_url: APNS_SANDBOX_URL,
      sandbox: false,
      // A day, like webpush.ttl_secs: a like pushed later than that is stale news.
      expiration_secs: DAY_SECS,
    },
    webpush: {
      vapid_private_key: '',
      vapid_public_key: '',
      vapid_subject: '',
      // A day: a like or a comment pushed later than that is stale news.
      ttl_secs: DAY_SECS,
      request_timeout_secs: 30,
      batch_concurrency: 50,
      allow_private_endpoints: false,
    },
    // Two threads keep both cores of a small machine busy during a burst of registrations (the
    // main thread then mostly waits on them: bench/registrations); raise it on bigger machines.
    engine: { crypto_workers: 2 },
    queue: { lease_secs: 60, max_attempts: 10, poll_millis: 250 },
    send_api: {
      types: [...DEFAULT_SEND_API_TYPES],
      max_recipients: 10_000,
      // notifkit's window for a caller's key (seed 001): a day covers any client's retries.
      idempotency_ttl_secs: DAY_SECS,
      // As long as the delivery log keeps the outcomes the record's GET reports.
      record_ttl_secs: 7 * DAY_SECS,
      // One gate read and one claim step per 200 recipients: 50 steps for the largest request.
      // A step is one synchronous stretch on the scheduler's event loop; at 500 recipients it
      // held back the API's answers in the same process (API p99 49–54 ms against 33–38 ms at
      // 200 in bench/send-api, docs/benchmarks.md), at the same pushes per second.
      page_size: 200,
      lease_secs: 60,
      poll_millis: 250,
      rate_per_sec: SEND_API_RATE_PER_SEC,
      rate_burst: SEND_API_RATE_BURST,
    },
    campaign_delivery: {
      // Seed 000's campaign_delivery.dedup_ttl_secs: a week, the longest a campaign is worth re-offering.
      dedup_ttl_secs: 7 * DAY_SECS,
      claim_ttl_secs: CAMPAIGN_CLAIM_IN_FLIGHT_SECS,
      // As the send API's pages: 200,000 devices are 400 steps, each a few ms of store work.
      page_size: 500,
      lease_secs: 60,
      poll_millis: 250,
    },
    // Windows end on a minute; a second's delay of the digest is nothing.
    quiet_hours: { poll_millis: 1000, lease_secs: 60 },
    delivery_log: { enabled: true, retention_days: 7, sweep_interval_secs: 3600 },
    inbox: {
      enabled: true,
      alert_word_refresh_millis: ALERT_WORD_REFRESH_MILLIS,
      max_alert_words_per_user: INBOX_MAX_ALERT_WORDS_PER_USER,
      max_alert_word_users_per_address_per_day: INBOX_MAX_ALERT_WORD_USERS_PER_ADDRESS_PER_DAY,
      max_users_per_address_per_day: INBOX_MAX_USERS_PER_ADDRESS_PER_DAY,
      max_sockets_per_pubkey: INBOX_MAX_SOCKETS_PER_PUBKEY,
      max_sockets_per_address: INBOX_MAX_SOCKETS_PER_ADDRESS,
      idle_user_ttl_days: INBOX_IDLE_USER_TTL_DAYS,
    },
    health: {
      relay_grace_secs: HEALTH_RELAY_GRACE_SECS,
      transport_failing_secs: HEALTH_TRANSPORT_FAILING_SECS,
      queue_age_secs: HEALTH_QUEUE_AGE_SECS,
    },
    console: {
      enabled: true,
      heartbeat_interval_secs: CONSOLE_HEARTBEAT_INTERVAL_SECS,
      sample_interval_secs: CONSOLE_SAMPLE_INTERVAL_SECS,
      session_ttl_secs: CONSOLE_SESSION_TTL_SECS,
    },
    events: {
      text_notes: false,
      zaps: false,
      zaps_allow_unverified: false,
      gift_wraps: false,
      dm_push_min_interval_secs: DEFAULT_DM_PUSH_MIN_INTERVAL_SECS,
      lnurl_allow_loopback: false,
    },
    ntfy: {
      base_url: '',
      cache_duration: DEFAULT_NTFY_CACHE_DURATION,
      message_size_limit_bytes: NTFY_MESSAGE_SIZE_LIMIT_BYTES,
      min_delay: DEFAULT_NTFY_MIN_DELAY,
      max_delay: DEFAULT_NTFY_MAX_DELAY,
      // ntfy's 45 s: not too often, to save phones' batteries, well inside the app's 77 s read timeout.
      keepalive_interval_secs: 45,
      // ntfy's read deadline: the keepalive interval plus 15 s.
      websocket_timeout_secs: 60,
      // Our own framing: a fraction of the `ws` package's heap per idle subscription (docs/benchmarks.md, issue 19).
      websocket: 'builtin',
      safety_redrain_secs: 30,
      // ntfy's manager prunes its cache every minute.
      expiry_interval_secs: 60,
      // ntfy's visitor defaults: a burst of 60, one back every 5 s, 30 connections.
      visitor_request_burst: 60,
      visitor_request_replenish_secs: 5,
      visitor_subscription_limit: 30,
      visitor_exempt_hosts: [],
      behind_proxy: false,
      // Like ntfy without an auth file: every topic open to everyone.
      auth_default_access: 'read-write',
      auth_tokens: [],
    },
    nip9a: {
      receiver: {
        rate_per_sec: NIP9A_RECEIVER_RATE_PER_SEC,
        rate_burst: NIP9A_RECEIVER_RATE_BURST,
        owner_rate_per_sec: NIP9A_RECEIVER_OWNER_RATE_PER_SEC,
        owner_rate_burst: NIP9A_RECEIVER_OWNER_RATE_BURST,
        receipt_ttl_secs: NIP9A_RECEIPT_TTL_SECS,
        max_callbacks_per_owner: NIP9A_MAX_CALLBACKS_PER_OWNER,
        max_callbacks_per_address_per_day: NIP9A_MAX_CALLBACKS_PER_ADDRESS_PER_DAY,
        idle_callback_ttl_days: NIP9A_IDLE_CALLBACK_TTL_DAYS,
      },
      callback_origins: [],
      allow_loopback_callbacks: 'false',
      max_registrations_per_author: 4,
      max_registrations_per_author_per_relay: NIP9A_MAX_REGISTRATIONS_PER_AUTHOR_PER_RELAY,
      max_watched_relays: NIP9A_MAX_WATCHED_RELAYS,
      max_registration_bytes: 8 * 1024,
      max_filters: 8,
      max_ignore_filters: 8,
      max_pending_deliveries_per_relay: 256,
      pending_expiry_secs: DAY_SECS,
      request_timeout_secs: 5,
      max_attempts: 4,
      retry_delays_secs: [30, 120, 600],
      outcome_dedup_entries: 2048,
      outcome_dedup_max_age_secs: 7 * DAY_SECS,
      // Callbacks mostly wait: on the network, and under load on the store's turns and the POST
      // thread's hand-over (bench/nip9a: ~15 ms a delivery in flight on a loaded 2-core host, so 64
      // capped the process at ~3,500 POSTs/s behind 4,250 matched; 256 kept up). 256 at a 100 ms
      // answer is 2,560 POSTs/s; a dead callback holds its slots for the 5 s timeout at most.
      delivery_concurrency: 256,
      // One thread takes the POSTs' HTTP work (a fifth of the gateway's main thread at 4,000 a
      // second, bench/nip9a) off the thread that reads the relays.
      post_threads: 1,
      reload_poll_millis: 1000,
    },
    templates: { dir: '', default_locale: DEFAULT_TEMPLATE_LOCALE, locales: {} },
    throttle: { per_user_per_hour: DEFAULT_THROTTLE_PER_USER_PER_HOUR },
    rate_limits: {
      enabled: true,
      nip98_per_address_per_minute: NIP98_PER_ADDRESS_PER_MINUTE,
      nip98_per_address_burst: NIP98_PER_ADDRESS_BURST,
      nip98_per_pubkey_per_minute: NIP98_PER_PUBKEY_PER_MINUTE,
      nip98_per_pubkey_burst: NIP98_PER_PUBKEY_BURST,
      console_login_per_minute: CONSOLE_LOGIN_PER_MINUTE,
    },
    log: { level: 'info', format: DEFAULT_LOG_FORMAT },
    apps: [],
  };
}
