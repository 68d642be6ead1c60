/**
 * How fast this host runs a fixed piece of single-threaded JavaScript right now, so a figure can
 * be read beside the speed of the minute it was taken in.
 *
 * The machines here are shared: the same build's NIP-9a receiver spent 303 µs of main thread a
 * callback in one minute and 600 in another (docs/benchmarks.md at 1cc7613, the receiver's "Seventh
 * session"), and /proc/stat shows neither as busy or stolen. A probe run just before and just after
 * a measurement tells a slow minute from a slow change.
 *
 * The work is the kind a push service does: JSON of event-like objects, SHA-256, hex, a Map. Its
 * size is fixed (the same operations every run), so the time is the host's, not the code's.
 */
import { createHash } from 'node:crypto';

/** Rounds of the workload; ~50–100 ms on the hosts here. */
const PROBE_ROUNDS = 12_000;
/** Runs timed; the fastest is reported (interference only ever adds time). */
const PROBE_RUNS = 3;

function workload(): number {
  const seen = new Map<string, number>();
  let checksum = 0;
  for (let i = 0; i < PROBE_ROUNDS; i++) {
    const event = {
      id: i.toString(16).padStart(64, '0'),
      pubkey: 'ab'.repeat(32),
      created_at: 1_700_000_000 + i,
      kind: 7,
      tags: [
        ['e', 'cd'.repeat(32)],
        ['p', 'ef'.repeat(32)],
      ],
      content: '+',
    };
    const json = JSON.stringify(event);
    const parsed = JSON.parse(json) as { id: string };
    const digest = createHash('sha256').update(json).digest('hex');
    seen.set(digest.slice(0, 8), i);
    checksum += parsed.id.length + digest.charCodeAt(0);
  }
  return checksum + seen.size;
}

/** Milliseconds the fastest of a few runs of the fixed workload took. */
export function hostSpeedProbeMs(): number {
  let fastest = Number.POSITIVE_INFINITY;
  for (let run = 0; run < PROBE_RUNS; run++) {
    const started = process.hrtime.bigint();
    if (workload() < 0) throw new Error('unreachable: keeps the workload from being optimised away');
    fastest = Math.min(fastest, Number(process.hrtime.bigint() - started) / 1e6);
  }
  return fastest;
}
