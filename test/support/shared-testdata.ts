/**
 * Test data kept beside the repository, in `../shared/testdata/` (DESIGN §4): files that are not
 * ours to redistribute (the official NIP-44 vectors), read in place and never copied in.
 *
 * A plain clone has no such folder: the tests that need it are skipped there with one line
 * saying what and why, and `npm test` still passes. CI sets
 * {@link REQUIRE_SHARED_TESTDATA_ENV}`=1` (`.ci/run`), and then a missing file fails the run
 * instead of skipping, so the vectors are never silently left out where they exist.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Set to `1` where the shared folder must exist (CI): an absent file is then an error, not a skip. */
export const REQUIRE_SHARED_TESTDATA_ENV = 'NOSTR_PUSH_REQUIRE_SHARED_TESTDATA';

/** The shared test data folder: `shared/testdata/` next to the repository's folder. */
export const SHARED_TESTDATA_DIR = fileURLToPath(new URL('../../../shared/testdata/', import.meta.url));

/** Where a shared file is, or why the tests that read it are skipped. */
export type SharedTestdata = { path: string; skip: false } | { path: string; skip: string };

/**
 * Locate `name` in the shared test data folder. Present: `{ path, skip: false }`. Absent: throws
 * when {@link REQUIRE_SHARED_TESTDATA_ENV} is `1`; otherwise `skip` is the one line to pass as
 * `node:test`'s `skip` option (it is printed with each skipped test).
 */
export function sharedTestdata(name: string, env: NodeJS.ProcessEnv = process.env): SharedTestdata {
  const path = `${SHARED_TESTDATA_DIR}${name}`;
  if (existsSync(path)) return { path, skip: false };
  if (env[REQUIRE_SHARED_TESTDATA_ENV] === '1')
    throw new Error(
      `${path} is missing, and ${REQUIRE_SHARED_TESTDATA_ENV}=1 requires it (the shared test data folder beside the repository)`,
    );
  return { path, skip: `${name} is not in ${SHARED_TESTDATA_DIR} (shared test data beside the repository, absent in a plain clone)` };
}
