#!/usr/bin/env node
// Runs the compiled JavaScript in dist/ when it is current, and the TypeScript source through
// tsx otherwise (see entry.js). Production runs dist/: no TypeScript loader thread, no
// transform cache, and about 35 MiB less resident memory.
import { chooseEntry, ROOT } from './entry.js';

const entry = chooseEntry(ROOT, process.env);
if (entry.kind === 'dist') {
  const { main } = await import('../dist/cli.js');
  await main(process.argv.slice(2));
} else {
  if (entry.reason !== 'no build in dist/' && entry.reason !== 'NOSTR_PUSH_FROM_SOURCE=1')
    process.stderr.write(`nostr-push: ${entry.reason}; running the source through tsx\n`);
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('../src/cli.ts');
  await main(process.argv.slice(2));
}
