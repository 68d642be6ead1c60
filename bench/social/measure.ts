/**
 * bench/social's measurements: latency summaries, CPU per event of this process, the FCM fake and
 * redis-server, and Redis commands per event (INFO commandstats) between two snapshots.
 */
import { Redis } from 'ioredis';
import { processCpuMs } from '../support/proc-stats.ts';

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** `p50 …, p99 …, max …` of sorted latencies (ms). */
export function latencySummary(sorted: number[]): string {
  return `p50 ${percentile(sorted, 50)} ms, p99 ${percentile(sorted, 99)} ms, max ${sorted.at(-1)} ms`;
}

/** Calls per command since the last CONFIG RESETSTAT (Redis INFO commandstats), summed over every node given. */
export async function redisCommandCalls(urls: readonly string[]): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const url of urls) {
    const client = new Redis(url);
    try {
      const stats = await client.info('commandstats');
      for (const m of stats.matchAll(/^cmdstat_(\S+):calls=(\d+)/gm))
        calls.set(m[1] as string, (calls.get(m[1] as string) ?? 0) + Number(m[2]));
    } finally {
      client.disconnect();
    }
  }
  return calls;
}

/** `total (name n, …)` per event of the commands called between two {@link redisCommandCalls} snapshots. */
export function commandsLine(before: Map<string, number>, after: Map<string, number>, events: number): string {
  const calls = [...after]
    .filter(([name]) => name !== 'info' && !name.startsWith('config'))
    .map(([name, n]): [string, number] => [name, n - (before.get(name) ?? 0)])
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
  const total = calls.reduce((sum, [, n]) => sum + n, 0);
  return `${(total / events).toFixed(1)} (${calls
    .slice(0, 10)
    .map(([name, n]) => `${name} ${(n / events).toFixed(2)}`)
    .join(', ')})`;
}

export async function resetRedisStats(urls: readonly string[]): Promise<void> {
  for (const url of urls) {
    const client = new Redis(url);
    await client.config('RESETSTAT');
    client.disconnect();
  }
}

/** The Redis processes behind a run: their pids (CPU) and URLs (command counts); none for SQLite. */
export interface RedisNodes {
  pids: number[];
  urls: string[];
}

export interface CpuSample {
  selfMs: number;
  /** This process's main thread alone (the event loop every role shares). */
  mainMs: number;
  fakeMs: number;
  redisMs: number;
}

export function sampleCpu(fakePid: number, redis: RedisNodes | undefined): CpuSample {
  const self = process.cpuUsage();
  return {
    selfMs: (self.user + self.system) / 1000,
    mainMs: processCpuMs(process.pid, process.pid),
    fakeMs: processCpuMs(fakePid),
    redisMs: (redis?.pids ?? []).reduce((sum, pid) => sum + processCpuMs(pid), 0),
  };
}

export function cpuLine(before: CpuSample, after: CpuSample, events: number): string {
  const per = (ms: number) => ((ms * 1000) / events).toFixed(0);
  return `this process ${per(after.selfMs - before.selfMs)} µs (main thread ${per(after.mainMs - before.mainMs)} µs), FCM fake ${per(after.fakeMs - before.fakeMs)} µs${after.redisMs ? `, redis-server ${per(after.redisMs - before.redisMs)} µs` : ''}`;
}
