/**
 * The gateway's Prometheus metrics, registered on the service's registry (so `/metrics` shows
 * them) without widening `observability/metrics.ts`.
 */
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Metrics } from '../../observability/metrics.ts';

export interface GatewayMetrics {
  registrations: Counter<'via' | 'outcome'>;
  matched: Counter;
  dropped: Counter<'reason'>;
  attempts: Counter<'result'>;
  outcomes: Counter<'outcome'>;
  watchedRelays: Gauge;
  arrivalToCallback: Histogram;
  /**
   * Deliveries queued by this process's gateway and not settled yet (its pending bound counts
   * them, per relay): a backlog growing here comes before `dropped{reason="queue_full"}`. Read
   * from {@link pendingSources} when scraped.
   */
  pendingDeliveries: Gauge;
  /** What {@link pendingDeliveries} sums: a running gateway adds its count, and removes it when stopped. */
  pendingSources: Set<() => number>;
}

const cache = new WeakMap<Metrics, GatewayMetrics>();

export function gatewayMetrics(metrics: Metrics): GatewayMetrics {
  const known = cache.get(metrics);
  if (known) return known;
  const registers = [metrics.registry];
  const pendingSources = new Set<() => number>();
  const made: GatewayMetrics = {
    registrations: new Counter({
      name: 'push_nip9a_registrations_total',
      help: 'NIP-9a registrations and deletions received, by path (relay, http) and outcome',
      labelNames: ['via', 'outcome'] as const,
      registers,
    }),
    matched: new Counter({ name: 'push_nip9a_matched_total', help: 'Events matched to a NIP-9a registration', registers }),
    dropped: new Counter({
      name: 'push_nip9a_dropped_total',
      help: 'NIP-9a deliveries dropped before their first attempt (queue_full, store_error, bad_signature)',
      labelNames: ['reason'] as const,
      registers,
    }),
    attempts: new Counter({
      name: 'push_nip9a_callback_attempts_total',
      help: 'NIP-9a callback attempts by result (2xx, 404, 429, 5xx, 3xx, 4xx, timeout, network, refused: the address policy refused the callback host)',
      labelNames: ['result'] as const,
      registers,
    }),
    outcomes: new Counter({
      name: 'push_nip9a_delivery_outcomes_total',
      help: 'Terminal NIP-9a delivery outcomes',
      labelNames: ['outcome'] as const,
      registers,
    }),
    watchedRelays: new Gauge({ name: 'push_nip9a_watched_relays', help: 'Relays the NIP-9a gateway watches', registers }),
    arrivalToCallback: new Histogram({
      name: 'push_nip9a_arrival_to_callback_seconds',
      help: 'From an event read from the relay to its successful callback',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1, 5, 30, 300],
      registers,
    }),
    pendingDeliveries: new Gauge({
      name: 'push_nip9a_pending_deliveries',
      help: 'NIP-9a deliveries queued by this gateway process and not settled yet (bounded per relay by nip9a.max_pending_deliveries_per_relay)',
      registers,
      collect() {
        let pending = 0;
        for (const source of pendingSources) pending += source();
        this.set(pending);
      },
    }),
    pendingSources,
  };
  cache.set(metrics, made);
  return made;
}
