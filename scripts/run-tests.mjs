#!/usr/bin/env node
// Node 20's test runner cannot glob .ts files itself (globs arrived in Node 21), so this script
// finds every *.test.ts under src/, test/ and packages/client/test/ and hands them to `node --test` with tsx loaded.
// Extra arguments are treated as path filters: `npm run test:only -- store` runs matching files.
import { existsSync, mkdtempSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...walk(path));
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const files = ['src', 'test', 'packages/client/test']
  .flatMap((d) => walk(join(root, d)))
  .map((f) => relative(root, f))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();

if (files.length === 0) {
  console.error('no test files matched', filters);
  process.exit(1);
}

const concurrency = process.env.TEST_CONCURRENCY ?? '2';
// A hung test fails after this long instead of holding CI until its own deadline. Node 20 applies
// it to each file as a whole too, and an end-to-end file takes minutes on a loaded 2-core machine
// (test/e2e/bells.test.ts: 100 s beside other work), so it is a hang guard, not a speed bet.
const TEST_TIMEOUT_MS = 900_000;
// Each test's outcome also goes to a JSON-lines file, so the last lines of a run can name the
// failing tests and their files however long the spec output above them is.
const outcomesFile = process.env.TEST_OUTCOMES_FILE ?? join(mkdtempSync(join(tmpdir(), 'nostr-push-tests-')), 'outcomes.jsonl');
const result = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    `--test-timeout=${TEST_TIMEOUT_MS}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${join(root, 'scripts/test-outcomes-reporter.mjs')}`,
    `--test-reporter-destination=${outcomesFile}`,
    ...files,
  ],
  { cwd: root, stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } },
);

const outcomes = readOutcomes(outcomesFile);
const failed = outcomes.filter((o) => o.outcome === 'fail');
if (failed.length > 0) {
  console.log(`\nfailing tests (${failed.length}):`);
  for (const f of failed) console.log(`  ${f.file ? relative(root, f.file) : '?'}:${f.line ?? '?'}  ${f.name}  -- ${f.error}`);
}
const passed = outcomes.filter((o) => o.outcome === 'pass').length;
const skipped = outcomes.filter((o) => o.outcome === 'skip');
// A skip is said where it can be seen: one line each, with why (test/support/shared-testdata.ts).
if (skipped.length > 0) {
  console.log(`\nskipped (${skipped.length}):`);
  for (const s of skipped)
    console.log(`  ${s.file ? relative(root, s.file) : '?'}:${s.line ?? '?'}  ${s.name}  -- ${s.reason ?? 'no reason given'}`);
}
console.log(`\ntests: ${passed} passed, ${failed.length} failed${skipped.length > 0 ? `, ${skipped.length} skipped` : ''}`);
process.exit(result.status ?? 1);

function readOutcomes(path) {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
}
