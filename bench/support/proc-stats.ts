/**
 * What the benchmarks read of a process from /proc (Linux): CPU time so far, per thread, and the
 * peak resident set. A benchmark's figures are CPU per item, so every one of them reads these.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** /proc's CPU times are in clock ticks of 10 ms (USER_HZ 100). */
const MS_PER_TICK = 10;

/** CPU time of a process (or, with `tid`, one of its threads) so far, ms: utime + stime. */
export function processCpuMs(pid: number, tid?: number): number {
  const path = tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`;
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
  const fields = readFileSync(path, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) * MS_PER_TICK;
}

/** CPU time so far (ms) of each thread of a process, by `name/tid` (`main` for the main thread). */
export function threadCpuMs(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      byName.set(Number(tid) === pid ? 'main' : `${name}/${tid}`, processCpuMs(pid, Number(tid)));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return byName;
}

/**
 * CPU per item (µs) of each thread between two {@link threadCpuMs} readings, busiest first,
 * printed as `main 63, node/1234 26, …` (threads under 1 µs an item left out).
 */
export function threadCpuPerItem(before: Map<string, number>, after: Map<string, number>, items: number): string {
  return [...after]
    .map(([name, ms]) => [name, ((ms - (before.get(name) ?? 0)) * 1000) / items] as const)
    .filter(([, us]) => us >= 1)
    .sort((a, b) => b[1] - a[1])
    .map(([name, us]) => `${name} ${us.toFixed(0)}`)
    .join(', ');
}

/** Peak resident set of a process, MiB (`VmHWM`). */
export function peakRssMiB(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}
