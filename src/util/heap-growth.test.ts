import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  limitHeapGrowth,
  semiSpaceMibInForce,
  SERVER_HEAP_GROWING_PERCENT,
  SERVER_NODE_FLAGS,
  SERVER_SEMI_SPACE_MIB,
} from './heap-growth.ts';

test('a growing percent on the command line is left alone', () => {
  assert.equal(limitHeapGrowth(['--heap-growing-percent=80']), null);
  assert.equal(limitHeapGrowth(['--heap_growing_percent=80']), null);
});

/**
 * A process that keeps ~30 MiB alive and churns garbage that survives a scavenge or two (as a
 * push's objects do), printing its largest heapTotal in MiB. Fixed work, not fixed time, so a
 * loaded machine changes how long it takes, not what it allocates.
 */
const CHURN = `
  const live = [];
  for (let i = 0; i < 200000; i++) live.push({ a: 'x'.repeat(40) + i, b: [i, i + 1] });
  let recent = [];
  let peak = 0;
  for (let round = 0; round < 1500; round++) {
    for (let i = 0; i < 1000; i++) recent.push({ s: 'y'.repeat(100) + i, n: [i, i, i] });
    if (recent.length > 40000) recent = recent.slice(20000);
    peak = Math.max(peak, process.memoryUsage().heapTotal);
  }
  console.log(Math.round(peak / 1048576), live.length);
`;

function peakHeapMiB(limit: boolean): number {
  const helper = fileURLToPath(new URL('./heap-growth.ts', import.meta.url));
  const script = limit ? `const { limitHeapGrowth } = await import(${JSON.stringify(helper)}); limitHeapGrowth();\n${CHURN}` : CHURN;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  return Number(out.split(' ')[0]);
}

test(`set after start, the ${SERVER_HEAP_GROWING_PERCENT}% growth bounds the heap that garbage inflates`, () => {
  const unbounded = peakHeapMiB(false);
  const bounded = peakHeapMiB(true);
  assert.ok(bounded < unbounded * 0.8, `peak heap ${bounded} MiB bounded against ${unbounded} MiB by default`);
});

test('the semi-space size in force: the command line over NODE_OPTIONS, either spelling, none when unset', () => {
  assert.equal(semiSpaceMibInForce(['--max-semi-space-size=32'], '--max-semi-space-size=8'), 32);
  assert.equal(semiSpaceMibInForce(['--import', 'tsx'], '--trace-warnings --max_semi_space_size=64'), 64);
  assert.equal(semiSpaceMibInForce(['--max-semi-space-size=16', '--max-semi-space-size=48'], undefined), 48, 'the last one, as in V8');
  assert.equal(semiSpaceMibInForce([], undefined), null);
  assert.equal(semiSpaceMibInForce(['--max-old-space-size=512'], ''), null);
});

/** The young generation's largest size (MiB) in a process churning short-lived objects, started with `flags`. */
function peakNewSpaceMiB(flags: readonly string[]): number {
  const churn = `
    const v8 = require('node:v8');
    let recent = [];
    let peak = 0;
    for (let round = 0; round < 1500; round++) {
      for (let i = 0; i < 1000; i++) recent.push({ s: 'y'.repeat(100) + i, n: [i, i, i] });
      if (recent.length > 40000) recent = recent.slice(20000);
      peak = Math.max(peak, v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
    }
    console.log(Math.round(peak / 1048576));
  `;
  return Number(execFileSync(process.execPath, [...flags, '-e', churn], { encoding: 'utf8' }).trim());
}

test('a process started with the server flags lets its young generation grow past the default', () => {
  const withFlags = peakNewSpaceMiB(SERVER_NODE_FLAGS);
  const without = peakNewSpaceMiB([]);
  assert.ok(withFlags > without, `young generation ${withFlags} MiB with ${SERVER_NODE_FLAGS.join(' ')}, ${without} MiB without`);
  assert.ok(withFlags <= 2 * SERVER_SEMI_SPACE_MIB, `bounded by two semi-spaces of ${SERVER_SEMI_SPACE_MIB} MiB: ${withFlags}`);
});
