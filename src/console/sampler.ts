/**
 * What a process samples into the store for the console's plots (port-fleet.ts `MetricSample`).
 * Series names are `:`-separated:
 *
 * - `push:{transport}:{outcome}`: cumulative sends of this process since it started, `outcome` `ok`
 *   or `failed` (every failure reason together); readers take differences between samples;
 * - `queue:{queue}:{lane}:{ready|leased}` and `queue:{queue}:dead`: the queue's depths as read now
 *   (fleet-wide facts; every process samples them, readers take the newest);
 * - `tokens:{transport}`: registered devices, fleet-wide, sampled every
 *   {@link TOKEN_COUNT_EVERY_SAMPLES}th sample only (a count is a scan on Redis).
 */
import type { Counter } from 'prom-client';
import type { Metrics } from '../observability/metrics.ts';
import { LANES } from '../store/lanes.ts';
import type { QueueName, StorePort } from '../store/port.ts';

/** Count tokens on every 6th sample: once a minute at the default 10 s interval. */
export const TOKEN_COUNT_EVERY_SAMPLES = 6;
/** The queues whose depths are plotted (the NIP-9a gateway's has its own page elsewhere). */
export const SAMPLED_QUEUES: readonly QueueName[] = ['inbound', 'outbound'];
/** Samples are kept an hour: the plots' window. */
export const SAMPLE_RETENTION_MS = 3_600_000;

async function total(counter: Counter): Promise<number> {
  const { values } = await counter.get();
  return values.reduce((sum, v) => sum + v.value, 0);
}

/** This process's cumulative push counters, by transport and outcome. */
export async function pushCounters(metrics: Metrics): Promise<Record<string, number>> {
  return {
    'push:fcm:ok': await total(metrics.fcmSendsSucceeded),
    'push:fcm:failed': await total(metrics.fcmSendsFailed),
    'push:apns:ok': await total(metrics.apnsSendsSucceeded),
    'push:apns:failed': await total(metrics.apnsSendsFailed),
    'push:webpush:ok': await total(metrics.webpushSendsSucceeded),
    'push:webpush:failed': await total(metrics.webpushSendsFailed),
  };
}

/** The queues' depths by lane and state, as the store reads them now. */
export async function queueDepths(store: StorePort): Promise<Record<string, number>> {
  const values: Record<string, number> = {};
  for (const queue of SAMPLED_QUEUES) {
    const stats = await store.queueStats(queue);
    for (const lane of LANES) {
      values[`queue:${queue}:${lane}:ready`] = stats.lanes[lane].ready;
      values[`queue:${queue}:${lane}:leased`] = stats.lanes[lane].leased;
    }
    values[`queue:${queue}:dead`] = stats.dead;
  }
  return values;
}

/** Registered tokens per transport. */
export async function tokenCounts(store: StorePort): Promise<Record<string, number>> {
  const counts = await store.countTokensByTransport();
  return Object.fromEntries(Object.entries(counts).map(([transport, n]) => [`tokens:${transport}`, n]));
}
