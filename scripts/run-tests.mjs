#!/usr/bin/env node
// Node 20's test runner cannot glob .ts files itself (globs arrived in Node 21), so this script
// finds every *.test.ts under src/ and test/ and hands them to `node --test` with tsx loaded.
// Extra arguments are treated as path filters: `npm run test:only -- store` runs matching files.
import { readdirSync, statSync } from 'node:fs';
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

const files = ['src', 'test']
  .flatMap((d) => walk(join(root, d)))
  .map((f) => relative(root, f))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();

if (files.length === 0) {
  console.error('no test files matched', filters);
  process.exit(1);
}

const concurrency = process.env.TEST_CONCURRENCY ?? '2';
// A hung test fails after this long instead of holding CI until its own deadline.
const TEST_TIMEOUT_MS = 120_000;
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, `--test-timeout=${TEST_TIMEOUT_MS}`, '--test-reporter=spec', ...files],
  { cwd: root, stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } },
);
process.exit(result.status ?? 1);
