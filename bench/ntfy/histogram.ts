/**
 * A bounded latency histogram, as seed 004's loadgen keeps one: fixed log-spaced bucket edges from
 * 100 µs to 120 s (plus an overflow bucket), so memory does not grow with the sample count.
 * Percentiles are reported as the upper edge of the bucket they fall in (at most ~5 % high).
 */

const LOWEST_US = 100;
const HIGHEST_US = 120_000_000;
/** Ratio between neighbouring edges. */
const GROWTH = 1.05;

const EDGES_US: number[] = [];
for (let edge = LOWEST_US; edge < HIGHEST_US; edge *= GROWTH) EDGES_US.push(Math.round(edge));
EDGES_US.push(HIGHEST_US);

export class LatencyHistogram {
  private readonly counts = new Array<number>(EDGES_US.length + 1).fill(0);
  private total = 0;
  private maxUs = 0;

  record(latencyUs: number): void {
    const value = Math.max(0, latencyUs);
    let lo = 0;
    let hi = EDGES_US.length;
    // The first edge at or above the value.
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((EDGES_US[mid] as number) < value) lo = mid + 1;
      else hi = mid;
    }
    this.counts[lo] = (this.counts[lo] ?? 0) + 1;
    this.total += 1;
    if (value > this.maxUs) this.maxUs = value;
  }

  get count(): number {
    return this.total;
  }

  /** The upper bucket edge below which `fraction` of the samples fall, in µs (the max for the overflow bucket). */
  percentileUs(fraction: number): number {
    if (this.total === 0) return 0;
    const rank = Math.ceil(fraction * this.total);
    let seen = 0;
    for (let i = 0; i < this.counts.length; i++) {
      seen += this.counts[i] ?? 0;
      if (seen >= rank) return Math.min(EDGES_US[i] ?? this.maxUs, this.maxUs);
    }
    return this.maxUs;
  }

  get max(): number {
    return this.maxUs;
  }

  merge(other: LatencyHistogram): void {
    other.counts.forEach((n, i) => (this.counts[i] = (this.counts[i] ?? 0) + n));
    this.total += other.total;
    this.maxUs = Math.max(this.maxUs, other.maxUs);
  }
}

/** `1.23 ms`, `45.6 ms`, `1.20 s`. */
export function formatUs(us: number): string {
  if (us < 1_000) return `${us.toFixed(0)} µs`;
  if (us < 1_000_000) return `${(us / 1_000).toFixed(us < 10_000 ? 2 : 1)} ms`;
  return `${(us / 1_000_000).toFixed(2)} s`;
}
