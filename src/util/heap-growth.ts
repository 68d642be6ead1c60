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
