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
