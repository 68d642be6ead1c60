/**
 * What a process samples into the store for the console's plots (port-fleet.ts `MetricSample`).
 * Series names are `:`-separated:
 *
 * - `push:{transport}:{outcome}`: cumulative pushes of this process since it started, one per
 *   device, `transport` one of `fcm`, `apns`, `webpush`, `unifiedpush` (a UnifiedPush device is its
 *   own, though the Web Push transport serves it), `outcome` `ok` or `failed` (every failure
 *   together, a device whose transport the app has not configured included); readers take
 *   differences between samples;
 * - `unconfigured:{transport}`: of those failures, the pushes to devices whose transport is not
 *   configured (no credentials: nothing was sent);
 * - `app:{app}:{transport}:{ok|failed|unconfigured}`: the same per app (`failed` without the
 *   unconfigured ones here), for each app's transports table;
 * - `queue:{queue}:{lane}:{ready|leased}` and `queue:{queue}:dead`: the queue's depths as read now
 *   (fleet-wide facts; every process samples them, readers take the newest);
 * - `tokens:{transport}`: registered devices, fleet-wide, sampled every
 *   {@link TOKEN_COUNT_EVERY_SAMPLES}th sample only (a count is a scan on Redis).
 */
import type { Metrics } from '../observability/metrics.ts';
import { LANES } from '../store/lanes.ts';
import type { QueueName, StorePort } from '../store/port.ts';

/** Count tokens on every 6th sample: once a minute at the default 10 s interval. */
export const TOKEN_COUNT_EVERY_SAMPLES = 6;
/** The queues whose depths are plotted (the NIP-9a gateway's has its own page elsewhere). */
export const SAMPLED_QUEUES: readonly QueueName[] = ['inbound', 'outbound'];
/** Samples are kept an hour: the plots' window. */
export const SAMPLE_RETENTION_MS = 3_600_000;

/** The transports the console plots, in its order. */
export const PLOTTED_TRANSPORTS = ['fcm', 'apns', 'webpush', 'unifiedpush'] as const;

/**
 * This process's cumulative push counters (`push_device_outcomes_total`): by transport and outcome
 * over every app (`push:…`, the plot), the unconfigured ones (`unconfigured:…`), and per app
 * (`app:{app}:{transport}:{ok|failed|unconfigured}`, each app's transports table).
 */
export async function pushCounters(metrics: Metrics): Promise<Record<string, number>> {
  const values: Record<string, number> = {};
  for (const transport of PLOTTED_TRANSPORTS)
    for (const key of [`push:${transport}:ok`, `push:${transport}:failed`, `unconfigured:${transport}`]) values[key] = 0;
  const add = (key: string, n: number) => (values[key] = (values[key] ?? 0) + n);
  for (const { labels, value } of (await metrics.pushDeviceOutcomes.get()).values) {
    const app = String(labels.app);
    const transport = String(labels.transport);
    const outcome = String(labels.outcome);
    add(`push:${transport}:${outcome === 'ok' ? 'ok' : 'failed'}`, value);
    if (outcome === 'unconfigured') add(`unconfigured:${transport}`, value);
    add(`app:${app}:${transport}:${outcome}`, value);
  }
  return values;
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
