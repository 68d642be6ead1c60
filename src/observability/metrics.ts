import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Every Prometheus metric the service exports, on a registry of its own (never prom-client's
 * global one), so two services in one test process never share counters.
 *
 * Names follow divine-push-service (§10.2 of the reference) where it has them.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly eventsReceived = new Counter({
    name: 'push_events_received_total',
    help: 'Events received from relays (historical and live), before validation',
    registers: [this.registry],
  });
  readonly eventsInvalid = new Counter({
    name: 'push_events_invalid_total',
    help: 'Events dropped by validation',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly eventsDuplicate = new Counter({
    name: 'push_events_duplicate_total',
    help: 'Events already seen from another relay or subscription',
    registers: [this.registry],
  });
  readonly eventsProcessed = new Counter({
    name: 'push_events_processed_total',
    help: 'Events the engine finished handling',
    registers: [this.registry],
  });
  readonly lastEventProcessed = new Gauge({
    name: 'push_last_event_processed_timestamp_seconds',
    help: 'Unix time the engine last finished an event (deadman: time() - max(...) > 900)',
    registers: [this.registry],
  });
  readonly controlEvents = new Counter({
    name: 'push_control_events_total',
    help: 'Control events (3079/3080/3083) by kind and outcome',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly userRelayLists = new Counter({
    name: 'push_user_relay_lists_total',
    help: "Users' relay lists (kind 10002, kind 10050, registration relays) by source and outcome (stored, stale, no_device)",
    labelNames: ['source', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly userRelaysConnected = new Gauge({
    name: 'push_user_relays_connected',
    help: "User relays (named by users' relay lists) with an open connection",
    registers: [this.registry],
  });
  readonly userRelaysWatched = new Gauge({
    name: 'push_user_relays_watched',
    help: 'User relays the listener keeps a connection to (open or reconnecting), at most nostr.user_relays.max_connections',
    registers: [this.registry],
  });
  readonly userRelaysDropped = new Gauge({
    name: 'push_user_relays_dropped',
    help: 'User relays not watched: over nostr.user_relays.max_connections, or refused by the outbound address policy',
    registers: [this.registry],
  });
  readonly userRelayUsersUncovered = new Gauge({
    name: 'push_user_relay_users_uncovered',
    help: 'Users with devices and a relay list none of whose relays is watched',
    registers: [this.registry],
  });
  readonly userRelayRequests = new Counter({
    name: 'push_user_relay_requests_total',
    help: 'REQs sent to user relays (each one filter of up to max_pubkeys_per_filter pubkeys)',
    registers: [this.registry],
  });
  readonly relayConnections = new Gauge({
    name: 'push_relay_connected',
    help: '1 when the relay connection is open',
    labelNames: ['relay'] as const,
    registers: [this.registry],
  });
  readonly relayReconnects = new Counter({
    name: 'push_relay_reconnects_total',
    help: 'Relay reconnect attempts',
    labelNames: ['relay'] as const,
    registers: [this.registry],
  });
  readonly relayProtocolErrors = new Counter({
    name: 'push_relay_protocol_errors_total',
    help: 'Malformed or unexpected frames from relays',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly relayClosed = new Counter({
    name: 'push_relay_subscriptions_closed_total',
    help: 'CLOSED messages for our subscriptions',
    labelNames: ['relay'] as const,
    registers: [this.registry],
  });
  readonly queueDeadLettered = new Counter({
    name: 'push_queue_dead_lettered_total',
    help: 'Queue items moved to the dead-letter list',
    labelNames: ['queue'] as const,
    registers: [this.registry],
  });
  readonly tokensPruned = new Counter({
    name: 'push_tokens_pruned_total',
    help: 'Device tokens removed by the service',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly storageExpired = new Counter({
    name: 'push_storage_expired_total',
    help: 'Records the janitor deleted for idleness (issue 35): inbox users, NIP-9a callback URLs',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly httpRequests = new Counter({
    name: 'push_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['route', 'status'] as const,
    registers: [this.registry],
  });
  /**
   * Every device a push was meant for, by app, by the device's transport (`unifiedpush` apart from
   * `webpush`, though one transport serves both) and outcome: `ok`, `failed` (the provider's
   * answer, or no answer), or `unconfigured` (the app has no such transport: no credentials, so
   * nothing was sent and the per-provider counters above never see it). The console plots it.
   */
  readonly pushDeviceOutcomes = new Counter({
    name: 'push_device_outcomes_total',
    help: 'Pushes per device by app, transport (fcm|apns|webpush|unifiedpush) and outcome (ok|failed|unconfigured)',
    labelNames: ['app', 'transport', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly fcmSendsAttempted = new Counter({
    name: 'push_fcm_sends_attempted_total',
    help: 'FCM sends attempted, one per device token',
    registers: [this.registry],
  });
  readonly fcmSendsSucceeded = new Counter({
    name: 'push_fcm_sends_succeeded_total',
    help: 'FCM sends answered with 2xx',
    registers: [this.registry],
  });
  readonly fcmSendsFailed = new Counter({
    name: 'push_fcm_sends_failed_total',
    help: 'FCM sends that failed, by DeliveryErrorKind',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly apnsSendsAttempted = new Counter({
    name: 'push_apns_sends_attempted_total',
    help: 'APNs sends attempted, one per device token',
    registers: [this.registry],
  });
  readonly apnsSendsSucceeded = new Counter({
    name: 'push_apns_sends_succeeded_total',
    help: 'APNs sends answered with 200',
    registers: [this.registry],
  });
  readonly apnsSendsFailed = new Counter({
    name: 'push_apns_sends_failed_total',
    help: 'APNs sends that failed, by DeliveryErrorKind',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  // ---- relay listener ----
  readonly relayRecoveries = new Counter({
    name: 'push_relay_recoveries_total',
    help: 'Live-flow recoveries per relay: trigger silence|closed, action resubscribe|reconnect',
    labelNames: ['relay', 'trigger', 'action'] as const,
    registers: [this.registry],
  });
  readonly relayAuth = new Counter({
    name: 'push_relay_auth_total',
    help: 'NIP-42 AUTH replies sent to relays, by outcome (accepted|rejected|failed)',
    labelNames: ['relay', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly relaySinkFailures = new Counter({
    name: 'push_relay_sink_failures_total',
    help: 'Attempts to hand an event to the inbound queue that failed (asked again in place a few times, then the relay connection is rebuilt to fetch it again)',
    labelNames: ['relay'] as const,
    registers: [this.registry],
  });
  readonly socialListLookups = new Counter({
    name: 'push_social_list_lookups_total',
    help: 'Mute/contact list lookups of recipients by outcome (cache_hit, found, not_found, outbox, error)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly muteListItemsDropped = new Counter({
    name: 'push_mute_list_items_dropped_total',
    help: 'Hashtags, words and threads of fetched mute lists left out by nostr.mute_list_max_items (the oldest of each list), by item',
    labelNames: ['item'] as const,
    registers: [this.registry],
  });
  readonly socialListCacheMuteItems = new Gauge({
    name: 'push_social_list_cache_mute_items',
    help: 'Mute-list items (pubkeys, hashtags, words, threads) held in the engine list cache, bounded by nostr.list_cache_mute_items',
    registers: [this.registry],
  });
  readonly mutesMatched = new Counter({
    name: 'push_mutes_matched_total',
    help: 'Recipients a push was withheld from by their mutes, by what matched (pubkey, hashtag, word, thread)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly profileLookups = new Counter({
    name: 'push_profile_lookups_total',
    help: 'Sender-name profile lookups by outcome (cache_hit, found, not_found, unusable, error)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly contentEventsStale = new Counter({
    name: 'push_content_events_stale_total',
    help: 'Live content events older than notification.max_event_age_secs, never pushed',
    registers: [this.registry],
  });
  readonly contentRecipients = new Counter({
    name: 'push_content_recipients_total',
    help: 'Recipients of content events by notification type and gate outcome',
    labelNames: ['type', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly inboxCounted = new Counter({
    name: 'push_inbox_counted_total',
    help: 'Routed notifications offered to the inbox counters, by type and outcome (counted, or not: unknown user or counted before)',
    labelNames: ['type', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly alertWordMatches = new Counter({
    name: 'push_alert_word_matches_total',
    help: 'Alert-word hits counted (one per event, word and watcher)',
    registers: [this.registry],
  });
  readonly inboxApiRequests = new Counter({
    name: 'push_inbox_api_requests_total',
    help: 'User API requests by route and outcome (ok or an error code)',
    labelNames: ['route', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly inboxSockets = new Gauge({
    name: 'push_inbox_sockets',
    help: 'Open inbox hint WebSockets of this process',
    registers: [this.registry],
  });
  readonly deliveriesGivenUp = new Counter({
    name: 'push_deliveries_given_up_total',
    help: 'Notifications dead-lettered after every device kept failing retryably',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });
  readonly pushesThrottled = new Counter({
    name: 'push_user_throttled_total',
    help: 'Pushes withheld by the per-user throttle (throttle.per_user_per_hour), by notification type',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });
  readonly apiRequests = new Counter({
    name: 'push_api_requests_total',
    help: 'Requests of the app platform API (send API, admin routes) by route and outcome (an error code, or ok)',
    labelNames: ['route', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly sendRecipients = new Counter({
    name: 'push_send_recipients_total',
    help: 'Recipients of send API notifications expanded, by outcome (queued, or the gate that suppressed them)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly deliveryLogFailures = new Counter({
    name: 'push_delivery_log_failures_total',
    help: 'Delivery log writes that failed (the pushes are unaffected; their entries are lost)',
    registers: [this.registry],
  });
  readonly deadLetterOperations = new Counter({
    name: 'push_dead_letter_operations_total',
    help: 'Operator actions on dead letters (HTTP admin routes and the CLI) by operation, queue and outcome',
    labelNames: ['operation', 'queue', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly nip9aCallbackRequests = new Counter({
    name: 'push_nip9a_callback_requests_total',
    help: 'Relay POSTs to NIP-9a callback URLs by outcome (queued, duplicate, not_found, rate_limited, and each refusal reason)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly rateLimited = new Counter({
    name: 'push_rate_limited_total',
    help: 'Requests refused 429 by a per-client rate limit (src/api/rate-limits.ts), by route group and what the limit counts per (address, pubkey, api_key, owner)',
    labelNames: ['route_group', 'key_kind'] as const,
    registers: [this.registry],
  });
  readonly nip9aCallbackManagement = new Counter({
    name: 'push_nip9a_callback_management_total',
    help: 'NIP-9a callback URL management requests (create, list, revoke) by operation and outcome',
    labelNames: ['operation', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly internalDmRequests = new Counter({
    name: 'push_internal_dm_requests_total',
    help: 'POST /internal/v1/direct-message requests by outcome',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly queueItems = new Gauge({
    name: 'push_queue_items',
    help: 'Items per app, durable queue and state (ready includes scheduled retries)',
    labelNames: ['app', 'queue', 'state'] as const,
    registers: [this.registry],
  });

  // ---- Web Push / UnifiedPush delivery ----
  readonly webpushSendsAttempted = new Counter({
    name: 'push_webpush_sends_attempted_total',
    help: 'Web Push / UnifiedPush sends attempted, one per subscription, by route (http|local ntfy topic)',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });
  readonly webpushSendsSucceeded = new Counter({
    name: 'push_webpush_sends_succeeded_total',
    help: 'Web Push / UnifiedPush sends accepted (2xx, or appended to a local ntfy topic), by route',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });
  readonly webpushSendsFailed = new Counter({
    name: 'push_webpush_sends_failed_total',
    help: 'Web Push / UnifiedPush sends that failed, by route and DeliveryErrorKind',
    labelNames: ['route', 'reason'] as const,
    registers: [this.registry],
  });

  // ---- new-post bells (issue 5) ----
  readonly newPostFanoutRetries = new Counter({
    name: 'push_new_post_fanout_retries_total',
    help: 'New-post fan-out page retries: reason delivery|watcher_page_read|lifetime|worker_error, outcome scheduled|exhausted|expired|preserved',
    labelNames: ['reason', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly newPostFanoutPages = new Counter({
    name: 'push_new_post_fanout_pages_total',
    help: 'New-post fan-out pages finished, by outcome (completed, retried, released, discarded)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly notifyLists = new Counter({
    name: 'push_notify_lists_total',
    help: 'Notify lists (kind 30000 d=notify) by outcome (applied, stale)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  // ---- like/repost coalescing (issue 4) ----
  readonly coalescedSends = new Counter({
    name: 'push_coalesced_sends_total',
    help: 'Coalesced like/repost summaries delivered to at least one device, by type',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });
  readonly coalesceOldestDueAge = new Gauge({
    name: 'push_coalesce_oldest_due_age_seconds',
    help: 'How long the earliest due coalescing group has waited past its deadline (0 when none)',
    registers: [this.registry],
  });
  readonly throttledRecipients = new Counter({
    name: 'push_throttled_recipients_total',
    help: 'Would-be immediate likes/reposts buffered because the recipient budget (token bucket or daily cap) was spent',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });
  readonly coalesceSkipped = new Counter({
    name: 'push_coalesce_skipped_total',
    help: 'Coalescing groups dropped without a summary, by reason',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly coalesceDeferred = new Counter({
    name: 'push_coalesce_deferred_total',
    help: 'Summary flushes put off because the recipient budget was spent, by reason',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly coalesceFlushFailures = new Counter({
    name: 'push_coalesce_flush_failures_total',
    help: 'Summary flushes that timed out or failed, by reason (timeout|error)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  // ---- ntfy server ----
  readonly ntfyPublished = new Counter({
    name: 'push_ntfy_messages_published_total',
    help: 'Messages published to ntfy topics, by mode (unifiedpush|plain|local for in-process appends|uncached for Cache: no|scheduled)',
    labelNames: ['mode'] as const,
    registers: [this.registry],
  });
  readonly ntfyDelivered = new Counter({
    name: 'push_ntfy_messages_delivered_total',
    help: 'Message frames written to ntfy subscribers, by transport (json|sse|raw|ws)',
    labelNames: ['transport'] as const,
    registers: [this.registry],
  });
  readonly ntfySubscribers = new Gauge({
    name: 'push_ntfy_subscribers',
    help: 'Open ntfy subscriptions in this process, by transport',
    labelNames: ['transport'] as const,
    registers: [this.registry],
  });
  readonly httpRefused = new Counter({
    name: 'push_http_requests_refused_total',
    help:
      'Requests refused for their framing, by route and code: BODY_TOO_LARGE (413, before routing: server.max_body_bytes or the ' +
      'route’s declared larger limit), UNSUPPORTED_MEDIA_TYPE (415, a JSON route sent something else)',
    labelNames: ['route', 'code'] as const,
    registers: [this.registry],
  });
  readonly ntfyRefused = new Counter({
    name: 'push_ntfy_requests_refused_total',
    help: 'ntfy requests answered with an error, by ntfy error code',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  readonly ntfyExpired = new Counter({
    name: 'push_ntfy_messages_expired_total',
    help: 'Expired ntfy messages deleted by the janitor',
    registers: [this.registry],
  });
  readonly ntfyDrainFailures = new Counter({
    name: 'push_ntfy_drain_failures_total',
    help: 'ntfy subscription re-reads that failed on a store error (retried)',
    registers: [this.registry],
  });
  readonly ntfyFeedBridges = new Counter({
    name: 'push_ntfy_feed_bridges_total',
    help: 'Times the ntfy pusher found a gap in the append events (or a stall at the safety check) and read the store to bridge it',
    registers: [this.registry],
  });
  readonly ntfyScheduledDelivered = new Counter({
    name: 'push_ntfy_scheduled_delivered_total',
    help: 'Scheduled ntfy messages (Delay, At, In) delivered to their topics when due',
    registers: [this.registry],
  });
  readonly ntfyScheduledPassClock = new Gauge({
    name: 'push_ntfy_scheduled_pass_clock_ms',
    help: 'Store-clock time (unix ms) at which the last completed scheduled-delivery pass of this process looked for due messages',
    registers: [this.registry],
  });
  readonly ntfyScheduledFailures = new Counter({
    name: 'push_ntfy_scheduled_failures_total',
    help: 'Passes of the scheduled-delivery task that failed on a store error (retried on the next pass)',
    registers: [this.registry],
  });
  readonly ntfySlowSubscribersDropped = new Counter({
    name: 'push_ntfy_slow_subscribers_dropped_total',
    help: 'ntfy subscribers disconnected because they did not read their stream',
    registers: [this.registry],
  });

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics) collectDefaultMetrics({ register: this.registry });
  }

  async render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
