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
  readonly httpRequests = new Counter({
    name: 'push_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['route', 'status'] as const,
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
    help: 'Events the inbound queue did not take (the relay connection is rebuilt to fetch them again)',
    labelNames: ['relay'] as const,
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
  readonly deliveriesGivenUp = new Counter({
    name: 'push_deliveries_given_up_total',
    help: 'Notifications dead-lettered after every device kept failing retryably',
    labelNames: ['type'] as const,
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
    help: 'Items per durable queue and state (ready includes scheduled retries)',
    labelNames: ['queue', 'state'] as const,
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
