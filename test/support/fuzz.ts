/**
 * Settings of the property-based tests of the hand-made parsers (`*.fuzz.test.ts`, fast-check).
 *
 * `npm test` runs each property with a fixed seed and a modest number of runs, so CI is
 * deterministic and quick; `npm run fuzz` raises the runs (`NOSTR_PUSH_FUZZ_RUNS`, a multiplier)
 * and, unless `NOSTR_PUSH_FUZZ_SEED` fixes one, lets fast-check pick a fresh seed each time, which
 * it prints with any counterexample so the failure can be replayed with that seed.
 */
import type { Parameters } from 'fast-check';

/** The seed of every property in `npm test`. */
export const FUZZ_SEED = 0x19f022;

const multiplier = Number(process.env.NOSTR_PUSH_FUZZ_RUNS ?? '1');
const seedFromEnv = process.env.NOSTR_PUSH_FUZZ_SEED;
/** True under `npm run fuzz`. */
export const LONG_FUZZ = multiplier > 1;

/**
 * fast-check parameters for a property run `runs` times in `npm test` (times the multiplier under
 * `npm run fuzz`): a fixed seed in CI, a fresh one (or `NOSTR_PUSH_FUZZ_SEED`) in a long run.
 */
export function fuzzParameters<T>(runs: number): Parameters<T> {
  const numRuns = Math.max(1, Math.round(runs * (Number.isFinite(multiplier) && multiplier > 0 ? multiplier : 1)));
  if (seedFromEnv !== undefined) return { numRuns, seed: Number(seedFromEnv) };
  return LONG_FUZZ ? { numRuns } : { numRuns, seed: FUZZ_SEED };
}

/** node:test options of a property test: a long run may take longer than the runner's default timeout. */
export const FUZZ_TEST_OPTIONS = { timeout: LONG_FUZZ ? 60 * 60_000 : 120_000 };
