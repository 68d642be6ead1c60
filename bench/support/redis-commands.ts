/**
 * The commands Redis servers ran, from `INFO commandstats`: a benchmark reads them before and
 * after its measured phase and prints the commands per item, so a figure says how many round
 * trips (and which) each item cost the store, beside the CPU it cost. Every script call is one
 * `evalsha` (Redis keeps no count per script).
 */
import { Redis } from 'ioredis';

/** Command name → calls and microseconds of server time, summed over the servers asked. */
export type CommandCounts = Map<string, { calls: number; usec: number }>;

/** The command counts of the Redis servers on 127.0.0.1 `ports` so far. */
export async function redisCommandCounts(ports: readonly number[]): Promise<CommandCounts> {
  const counts: CommandCounts = new Map();
  for (const port of ports) {
    const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await client.connect();
      const info = await client.info('commandstats');
      for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
        const [, name, calls, usec] = match;
        if (!name) continue;
        const found = counts.get(name) ?? { calls: 0, usec: 0 };
        counts.set(name, { calls: found.calls + Number(calls), usec: found.usec + Number(usec) });
      }
    } finally {
      client.disconnect();
    }
  }
  return counts;
}

/** `evalsha 3.02 (41 µs), hgetall 1.00 (2 µs), …`: what ran between `before` and `after`, per item, busiest first. */
export function commandsPerItem(before: CommandCounts, after: CommandCounts, items: number): string {
  const rows: Array<{ name: string; calls: number; usec: number }> = [];
  for (const [name, { calls, usec }] of after) {
    const was = before.get(name) ?? { calls: 0, usec: 0 };
    // `info` itself is the reading, not the benchmark.
    if (name === 'info' || calls === was.calls) continue;
    rows.push({ name, calls: calls - was.calls, usec: usec - was.usec });
  }
  rows.sort((a, b) => b.usec - a.usec);
  const total = rows.reduce((sum, row) => sum + row.calls, 0);
  return (
    `${(total / items).toFixed(2)} commands per item: ` +
    rows.map((row) => `${row.name} ${(row.calls / items).toFixed(2)} (${(row.usec / items).toFixed(0)} µs)`).join(', ')
  );
}
