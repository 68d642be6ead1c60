#!/usr/bin/env -S node --max-semi-space-size=32
// Runs the compiled JavaScript in dist/ when it is current, and the TypeScript source through
// tsx otherwise (see entry.js). Production runs dist/: no TypeScript loader thread, no
// transform cache, and about 35 MiB less resident memory.
import { chooseEntry, ROOT } from './entry.js';

// `healthcheck` (the image's health check, every 30 s) loads only its own small module, not the CLI.
const module = process.argv[2] === 'healthcheck' ? 'healthcheck' : 'cli';
const args = process.argv.slice(module === 'cli' ? 2 : 3);
const entry = chooseEntry(ROOT, process.env);
if (entry.kind === 'dist') {
  const { main } = await import(`../dist/${module}.js`);
  await main(args);
} else {
  if (entry.reason !== 'no build in dist/' && entry.reason !== 'NOSTR_PUSH_FROM_SOURCE=1')
    process.stderr.write(`nostr-push: ${entry.reason}; running the source through tsx\n`);
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import(`../src/${module}.ts`);
  await main(args);
}
