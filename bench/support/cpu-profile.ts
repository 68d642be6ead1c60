/**
 * In-process CPU profiling for benchmarks: wraps a run in the V8 sampling profiler (node:inspector)
 * and reports the functions with the most self time, so a figure comes with where it went.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface Profile {
  nodes: ProfileNode[];
  samples?: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileEntry {
  name: string;
  selfPercent: number;
}

let profilesWritten = 0;

/**
 * Runs `run`, under V8's sampling profiler only when BENCH_PROFILE or BENCH_PROFILE_OUT is set:
 * sampling every 200 µs costs the measured process about a tenth more CPU (its own sampler
 * thread and the interrupts), which would show up in every rate and CPU-per-item figure.
 */
export async function profile<T>(run: () => Promise<T>): Promise<{ result: T; top: ProfileEntry[] }> {
  if (!process.env.BENCH_PROFILE && !process.env.BENCH_PROFILE_OUT) return { result: await run(), top: [] };
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  const result = await run();
  const { profile: raw } = (await session.post('Profiler.stop')) as unknown as { profile: Profile };
  session.disconnect();
  // BENCH_PROFILE_OUT=FILE keeps the whole profile (open it in Chrome DevTools for the call tree).
  if (process.env.BENCH_PROFILE_OUT) writeFileSync(`${process.env.BENCH_PROFILE_OUT}.${++profilesWritten}.cpuprofile`, JSON.stringify(raw));
  return { result, top: topSelfTime(raw, 25) };
}

function topSelfTime(raw: Profile, limit: number): ProfileEntry[] {
  const hits = new Map<string, number>();
  let total = 0;
  for (const node of raw.nodes) {
    const count = node.hitCount ?? 0;
    if (count === 0) continue;
    total += count;
    const file = node.callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/work\/main\//, '');
    const name = `${node.callFrame.functionName || '(anonymous)'} ${file ? `${file}:${node.callFrame.lineNumber + 1}` : ''}`.trim();
    hits.set(name, (hits.get(name) ?? 0) + count);
  }
  return [...hits.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([name, count]) => ({ name, selfPercent: (100 * count) / Math.max(1, total) }));
}

export function printProfile(label: string, top: ProfileEntry[]): void {
  if (top.length === 0) return;
  console.log(`  cpu profile (${label}), top self time:`);
  for (const entry of top) console.log(`    ${entry.selfPercent.toFixed(1).padStart(5)}%  ${entry.name}`);
}

/**
 * Node flags that profile a service a benchmark starts (`startServiceProcess({ nodeArgs })`): with
 * `BENCH_CPU_PROF_DIR` set, a V8 profile per thread lands there on exit, for
 * `profile-report.mjs` and `long-tasks.mjs`. `BENCH_SERVICE_NODE_ARGS` adds flags of its own
 * (space-separated: `--v8-pool-size=2`, `--max-semi-space-size=32`, `--import ./probe.mjs`), to
 * try a runtime setting without editing the bench.
 */
export function serviceProfileNodeArgs(): string[] {
  const dir = process.env.BENCH_CPU_PROF_DIR;
  const extra = process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  return [...(dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []), ...extra];
}
