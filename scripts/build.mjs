#!/usr/bin/env node
// npm run build (and npm install, through `prepare`): build the optional native secp256k1 addon
// (scripts/build-native.mjs; a failure there only means the WASM fallback), then compile src/ to
// dist/ with tsc (tsconfig.build.json: no type check, `.ts` imports rewritten to `.js`), copy the
// files the code reads at run time (Lua scripts, the crypto worker's entry), bundle the console's
// single-page app (scripts/build-console.mjs), then stamp the build.
// bin/entry.js runs dist/ only while the stamp is newer than every file in src/.
//
// Without TypeScript installed (a production install that left dev dependencies out) there is
// nothing to compile with: the binary then runs the source through tsx, and this says so. The
// addon is built before that check, so such installs still get it.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildNativeAddon } from './build-native.mjs';
import { buildConsole } from './build-console.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const STAMP = '.build-stamp';

buildNativeAddon(root);

let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  console.warn('build: typescript is not installed; nostr-push will run its TypeScript source through tsx');
  process.exit(0);
}

rmSync(dist, { recursive: true, force: true });
const compiled = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
if (compiled.status !== 0) {
  // A half-written dist/ without its stamp is never run.
  console.error('build: tsc failed');
  process.exit(compiled.status ?? 1);
}

/** Every file under `dir` that is not TypeScript. */
function assets(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return assets(path);
    return entry.name.endsWith('.ts') ? [] : [path];
  });
}
const src = join(root, 'src');
for (const file of assets(src)) cpSync(file, join(dist, relative(src, file)));
if (!existsSync(join(dist, 'cli.js'))) {
  console.error('build: dist/cli.js is missing after tsc');
  process.exit(1);
}
// The operator console's browser bundle (dist/console-ui/): a failure fails the build.
await buildConsole();
writeFileSync(join(dist, STAMP), `${new Date().toISOString()}\n`);
console.log(`build: dist/ is current (${relative(root, dist)}/cli.js)`);
