#!/usr/bin/env node
// Summarise a V8 CPU profile (`node --cpu-prof`): self and inclusive time per function, over the
// whole profile or a window of it, so a benchmark's figure comes with where the time went.
//
//   node bench/support/profile-report.mjs FILE.cpuprofile [top=40] [fromMs] [toMs]
//
// A server profiled under the ntfy benchmark (docs/benchmarks.md):
//   node --cpu-prof --cpu-prof-dir=/tmp/prof bin/nostr-push.js serve      (roles api,pusher,janitor)
//   npm run bench:ntfy -- --server-url http://127.0.0.1:8000 --server-pid PID
// then stop the server with SIGINT and pass the window of the measured phase (`fromMs`, `toMs`).
import { readFileSync } from 'node:fs';

const [file, topArg = '40', fromArg = '0', toArg = String(Number.MAX_SAFE_INTEGER)] = process.argv.slice(2);
if (!file) {
  console.error('usage: profile-report.mjs FILE.cpuprofile [top] [fromMs] [toMs]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8'));
const top = Number(topArg);
const fromMs = Number(fromArg);
const toMs = Number(toArg);
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
const nameOf = (node) => {
  const where = node.callFrame.url
    .replace(/^.*node_modules\//, '')
    .replace(/^file:\/\/.*?\/(src|dist)\//, '$1/')
    .replace(/^node:/, '');
  return `${node.callFrame.functionName || '(anonymous)'}${where ? ` ${where}:${node.callFrame.lineNumber + 1}` : ''}`;
};

const hits = new Map();
let elapsedUs = 0;
let total = 0;
profile.samples.forEach((sample, i) => {
  elapsedUs += profile.timeDeltas[i];
  const ms = elapsedUs / 1000;
  if (ms < fromMs || ms > toMs) return;
  total += 1;
  hits.set(sample, (hits.get(sample) ?? 0) + 1);
});
const self = new Map();
const inclusive = new Map();
for (const [id, count] of hits) {
  const leaf = nameOf(byId.get(id));
  self.set(leaf, (self.get(leaf) ?? 0) + count);
  const seen = new Set();
  for (let at = id; at !== undefined; at = parentOf.get(at)) {
    const name = nameOf(byId.get(at));
    if (seen.has(name)) continue;
    seen.add(name);
    inclusive.set(name, (inclusive.get(name) ?? 0) + count);
  }
}
const idle = self.get('(idle)') ?? 0;
console.log(`${total} samples, ${((100 * idle) / Math.max(1, total)).toFixed(1)} % idle`);
for (const [title, table] of [
  ['self', self],
  ['inclusive', inclusive],
]) {
  console.log(`--- ${title}`);
  for (const [name, count] of [...table].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${((100 * count) / total).toFixed(1).padStart(5)} %  ${name}`);
}
