/**
 * The pushes-per-second plot from the fleet's metric samples (`sampler.ts`): for each process,
 * the difference of its cumulative `push:*` counters between consecutive samples over the time
 * between them, summed over processes per time bucket of one sample interval. A counter that went
 * down (the process restarted under the same id: never, ids are per run; or a reset) counts from 0.
 */
import type { MetricSample } from '../store/port-fleet.ts';

export interface PushSeries {
  /** Bucket start times, unix seconds, ascending. */
  times: number[];
  /** `{transport}:{outcome}` → pushes per second in each bucket (0 where no process pushed). */
  rates: Record<string, number[]>;
  /** `{transport}:{outcome}` → pushes over the whole window. */
  totals: Record<string, number>;
}

const PUSH_PREFIX = 'push:';

/**
 * The series of `prefix` (the pushes by default; `unconfigured:` for the pushes to transports an
 * app has not configured), as rates per bucket and totals over the samples' window.
 */
export function pushSeries(samples: readonly MetricSample[], bucketMs: number, prefix = PUSH_PREFIX): PushSeries {
  const previous = new Map<string, MetricSample>();
  const buckets = new Map<number, Map<string, number>>();
  const names = new Set<string>();
  const totals: Record<string, number> = {};
  for (const sample of samples) {
    const before = previous.get(sample.processId);
    previous.set(sample.processId, sample);
    const bucket = Math.floor(sample.atMs / bucketMs) * bucketMs;
    if (!buckets.has(bucket)) buckets.set(bucket, new Map());
    for (const key of Object.keys(sample.values)) if (key.startsWith(prefix)) names.add(key.slice(prefix.length));
    if (!before || sample.atMs <= before.atMs) continue;
    const seconds = (sample.atMs - before.atMs) / 1000;
    const rates = buckets.get(bucket) as Map<string, number>;
    for (const [key, value] of Object.entries(sample.values)) {
      if (!key.startsWith(prefix)) continue;
      const name = key.slice(prefix.length);
      const last = before.values[key] ?? 0;
      const delta = value >= last ? value - last : value;
      totals[name] = (totals[name] ?? 0) + delta;
      rates.set(name, (rates.get(name) ?? 0) + delta / seconds);
    }
  }
  const times = [...buckets.keys()].sort((a, b) => a - b);
  const sorted = [...names].sort();
  const rates: Record<string, number[]> = {};
  for (const name of sorted) {
    rates[name] = times.map((t) => buckets.get(t)?.get(name) ?? 0);
    totals[name] ??= 0;
  }
  return { times: times.map((t) => Math.floor(t / 1000)), rates, totals };
}

/** The newest value of every series that starts with `prefix` (fleet-wide gauges: any process's newest sample). */
export function newestValues(samples: readonly MetricSample[], prefix: string): { atMs: number; values: Record<string, number> } | null {
  for (let i = samples.length - 1; i >= 0; i--) {
    const sample = samples[i] as MetricSample;
    const values = Object.entries(sample.values).filter(([key]) => key.startsWith(prefix));
    if (values.length > 0) return { atMs: sample.atMs, values: Object.fromEntries(values.map(([k, v]) => [k.slice(prefix.length), v])) };
  }
  return null;
}
