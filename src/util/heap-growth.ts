/**
 * How far V8 lets the old generation grow past what the last full GC left alive, in a server
 * process (`nostr-push serve`).
 *
 * Why: V8 sets the next full-GC threshold at (live bytes × a growing factor) and picks the factor
 * from how fast the program allocates against how fast it collects: up to 4× on a machine with
 * gigabytes of memory (Node's default heap limit is a share of it). The delivery stage allocates
 * fast and every push's objects live across awaits long enough to be promoted, so during a campaign
 * of 200,000 devices the old generation ran from ~40 MiB live to ~115 MiB before each full GC: 70
 * MiB of resident memory that was garbage, more the faster the machine (the quiet run's peak was
 * 378 MiB, a loaded one's 305; docs/benchmarks.md at 1cc7613, "Where the SQLite service's memory
 * went"). A live heap of about 30 MiB (a heap snapshot mid-campaign) does not need that headroom.
 */
import { setFlagsFromString } from 'node:v8';

/**
 * Growth allowed over the live heap before the next full GC, percent: 50 is a factor of 1.5, so
 * the sawtooth over ~30–40 MiB live stays within ~20 MiB. The price is more frequent full GCs of
 * that small heap (tens of milliseconds each, every few seconds at thousands of pushes/s).
 */
export const SERVER_HEAP_GROWING_PERCENT = 50;

/** The flag as V8 spells it, and with underscores, which V8 accepts too. */
const FLAG = '--heap-growing-percent';
const FLAG_UNDERSCORED = '--heap_growing_percent';

/**
 * Set V8's heap growing factor for this process, unless the operator chose one on the command line
 * (`node --heap-growing-percent=N bin/nostr-push.js serve`; NODE_OPTIONS does not admit the
 * flag). V8 reads it at every full GC, so setting it after start takes effect from the next one.
 * Returns the percent in force when this process set it, null when the command line did.
 */
export function limitHeapGrowth(execArgv: readonly string[] = process.execArgv, percent = SERVER_HEAP_GROWING_PERCENT): number | null {
  if (execArgv.some((arg) => arg.startsWith(FLAG) || arg.startsWith(FLAG_UNDERSCORED))) return null;
  setFlagsFromString(`${FLAG}=${percent}`);
  return percent;
}

/**
 * The most V8's young generation may grow to, per semi-space, in the service process: MiB, where
 * Node's default on a 64-bit machine is 16. A push allocates short-lived objects (its payload,
 * JSON, promises, store answers) that live across a few awaits, so with the default the scavenger
 * runs every few milliseconds under load and promotes objects still in flight to the old
 * generation, where only a full GC frees them. 32 MiB measured −5 % CPU per push in
 * `bench/fanout` and −7 % per push in `bench/campaign` for ~30 MiB more resident memory at the
 * peak; 64 saved −9 % and −17 % but took the campaign's peak past its 300 MiB bound
 * (docs/benchmarks.md, "The fan-out's cost per push").
 *
 * V8 sizes the heap when the process starts, so this cannot be set from inside it
 * (`setFlagsFromString` is too late): every launcher of the binary passes
 * {@link SERVER_NODE_FLAGS} (`npm start`, the binary's `#!` line, the image's entrypoint, the
 * systemd unit; test/packaging/node-flags.test.ts holds them to it).
 */
export const SERVER_SEMI_SPACE_MIB = 32;

/** The Node.js options the service process is started with (before the script's path). */
export const SERVER_NODE_FLAGS: readonly string[] = [`--max-semi-space-size=${SERVER_SEMI_SPACE_MIB}`];

const SEMI_SPACE_FLAG = /^--max[-_]semi[-_]space[-_]size=(\d+)$/;

/**
 * The semi-space size (MiB) this process was started with, from its command line or NODE_OPTIONS
 * (the command line wins, as in Node), or null when neither sets it (V8's default).
 */
export function semiSpaceMibInForce(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): number | null {
  const fromArgs = (args: readonly string[]) => {
    let found: number | null = null;
    for (const arg of args) {
      const match = SEMI_SPACE_FLAG.exec(arg);
      if (match) found = Number(match[1]);
    }
    return found;
  };
  return fromArgs(execArgv) ?? fromArgs((nodeOptions ?? '').split(/\s+/));
}
