#!/usr/bin/env node
// `npm run test:stress`: the whole suite, several times, the way a slow or busy machine runs it,
// to find tests that depend on speed (issue 20). Each run's full log and per-test outcomes are
// kept under .tmp/test-stress/<time>/, and the end prints a pass/fail count per test file.
//
//   --condition wasm|busy|both   (a) NOSTR_PUSH_SECP256K1=wasm, (b) every core kept busy by a CPU
//                                hog beside the tests, (c) both at once; default both
//   --runs N                     default 3
//   other arguments              path filters, as for scripts/run-tests.mjs
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';

const root = new URL('..', import.meta.url).pathname;
const { values, positionals } = parseArgs({
  options: { condition: { type: 'string', default: 'both' }, runs: { type: 'string', default: '3' } },
  allowPositionals: true,
});
const CONDITIONS = { wasm: { wasm: true, busy: false }, busy: { wasm: false, busy: true }, both: { wasm: true, busy: true } };
const condition = CONDITIONS[values.condition];
if (!condition) {
  console.error(`--condition must be one of ${Object.keys(CONDITIONS).join(', ')}`);
  process.exit(2);
}
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) {
  console.error('--runs must be a positive integer');
  process.exit(2);
}

const outDir = join(root, '.tmp', 'test-stress', new Date().toISOString().replace(/[:.]/g, '-'));
mkdirSync(outDir, { recursive: true });

// One busy loop per core, each its own process, stopped by pid whatever happens.
const hogs = [];
function startHogs() {
  for (let i = 0; i < availableParallelism(); i++) {
    hogs.push(spawn(process.execPath, ['-e', 'for(;;);'], { stdio: 'ignore' }));
  }
}
function stopHogs() {
  for (const hog of hogs.splice(0)) hog.kill('SIGKILL');
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    running?.kill(signal);
    stopHogs();
    process.exit(130);
  });
}
process.on('exit', stopHogs);

let running = null;
function runSuite(index) {
  const log = join(outDir, `run-${index}.log`);
  const outcomes = join(outDir, `run-${index}.jsonl`);
  const env = { ...process.env, TEST_OUTCOMES_FILE: outcomes };
  if (condition.wasm) env.NOSTR_PUSH_SECP256K1 = 'wasm';
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'scripts/run-tests.mjs'), ...positionals], { cwd: root, env });
    running = child;
    const sink = createWriteStream(log);
    child.stdout.pipe(sink);
    child.stderr.pipe(sink);
    child.on('close', (code) => {
      running = null;
      resolve({ code, log, outcomes });
    });
  });
}

console.log(
  `test:stress: ${runs} run(s), condition ${values.condition} (wasm ${condition.wasm}, busy ${condition.busy}); logs in ${relative(root, outDir)}`,
);
const perFile = new Map();
let failedRuns = 0;
if (condition.busy) startHogs();
for (let i = 1; i <= runs; i++) {
  const started = Date.now();
  const { code, log, outcomes } = await runSuite(i);
  const lines = existsSync(outcomes)
    ? readFileSync(outcomes, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
    : [];
  let pass = 0;
  let fail = 0;
  for (const entry of lines.map((l) => JSON.parse(l))) {
    const file = entry.file ? relative(root, entry.file) : '?';
    const counts = perFile.get(file) ?? { pass: 0, fail: 0, failures: [] };
    if (entry.outcome === 'fail') {
      counts.fail++;
      fail++;
      counts.failures.push(`run ${i}: ${entry.name} -- ${entry.error}`);
    } else if (entry.outcome === 'pass') {
      counts.pass++;
      pass++;
    }
    perFile.set(file, counts);
  }
  if (code !== 0) failedRuns++;
  console.log(
    `run ${i}: exit ${code}, ${pass} passed, ${fail} failed, ${Math.round((Date.now() - started) / 1000)} s (${relative(root, log)})`,
  );
}
stopHogs();

console.log('\nper file (tests passed / failed over all runs):');
for (const [file, counts] of [...perFile].sort(([a], [b]) => a.localeCompare(b))) {
  console.log(`  ${counts.fail > 0 ? 'FAIL' : 'ok  '}  ${String(counts.pass).padStart(5)} / ${String(counts.fail).padEnd(3)} ${file}`);
  for (const failure of counts.failures) console.log(`          ${failure}`);
}
const total = [...perFile.values()].reduce((acc, c) => ({ pass: acc.pass + c.pass, fail: acc.fail + c.fail }), { pass: 0, fail: 0 });
console.log(`\nstress: ${runs - failedRuns} passed, ${failedRuns} failed`);
console.log(`stress tests: ${total.pass} passed, ${total.fail} failed`);
process.exit(failedRuns === 0 ? 0 : 1);
