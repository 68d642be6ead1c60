// The long synchronous stretches of a V8 CPU profile (`node --cpu-prof`): every run of busy
// samples (no `(idle)` between them) longer than a threshold, with the functions that took most of
// it (inclusive, our code and libraries; node internals folded into their caller). What an event
// loop was doing while a request waited behind it.
//   node bench/support/long-tasks.mjs FILE.cpuprofile [thresholdMs=20] [top=6]
import { readFileSync } from 'node:fs';

const [file, thresholdArg = '20', topArg = '6'] = process.argv.slice(2);
if (!file) {
  console.error('usage: long-tasks.mjs FILE.cpuprofile [thresholdMs] [top]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8'));
const thresholdUs = Number(thresholdArg) * 1000;
const top = Number(topArg);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
const label = (n) =>
  `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(dist|src|node_modules)\//, '$1/')}:${n.callFrame.lineNumber + 1}`;
const ours = (n) => /\/(dist|src|node_modules)\//.test(n.callFrame.url);
/** Every frame of a sample's stack that is ours or a library's, once each. */
function framesOf(id) {
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parentOf.get(cur)) {
    const n = byId.get(cur);
    if (ours(n)) seen.add(label(n));
  }
  return seen;
}
const idle = (id) => byId.get(id).callFrame.functionName === '(idle)';
let start = -1;
let startUs = 0;
let t = profile.startTime;
const stretches = [];
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i];
  if (idle(profile.samples[i])) {
    if (start >= 0 && t - startUs >= thresholdUs) stretches.push([start, i, startUs, t]);
    start = -1;
  } else if (start < 0) {
    start = i;
    startUs = t;
  }
}
console.log(`${stretches.length} busy stretches ≥ ${thresholdArg} ms in ${((t - profile.startTime) / 1e6).toFixed(1)} s`);
for (const [from, to, s, e] of stretches) {
  const counts = new Map();
  for (let i = from; i < to; i++) for (const f of framesOf(profile.samples[i])) counts.set(f, (counts.get(f) ?? 0) + 1);
  const n = to - from;
  const shown = [...counts].sort((a, b) => b[1] - a[1]).slice(0, top);
  console.log(
    `@${((s - profile.startTime) / 1000).toFixed(0)} ms, ${((e - s) / 1000).toFixed(1)} ms: ${shown.map(([f, c]) => `${((100 * c) / n).toFixed(0)}% ${f}`).join(' | ')}`,
  );
}
