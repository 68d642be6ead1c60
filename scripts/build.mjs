#!/usr/bin/env node
// npm run build (and npm install, through `prepare`): build the optional native libsecp256k1
// addon (native/secp256k1/; skipped, with a line saying why, where libsecp256k1-dev is missing),
// then compile src/ to dist/ with tsc
// (tsconfig.build.json: no type check, `.ts` imports rewritten to `.js`), copy the files the code
// reads at run time (Lua scripts, the crypto worker's entry), then stamp the build. bin/entry.js
// runs dist/ only while the stamp is newer than every file in src/.
//
// Without TypeScript installed (a production install that left dev dependencies out) there is
// nothing to build with: the binary then runs the source through tsx, and this says so.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const STAMP = '.build-stamp';

buildNativeSecp256k1();

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
writeFileSync(join(dist, STAMP), `${new Date().toISOString()}\n`);
console.log(`build: dist/ is current (${relative(root, dist)}/cli.js)`);

/**
 * The native libsecp256k1 binding, built with the node-gyp that npm bundles. Optional: without the
 * library's headers, or if the build fails, nostr-push checks signatures with the WASM build and
 * says so at start. Runs before the TypeScript build, so a production install (no dev
 * dependencies, no tsc) still gets it.
 */
function buildNativeSecp256k1() {
  const dir = join(root, 'native', 'secp256k1');
  const addon = join(dir, 'build', 'Release', 'nostr_push_secp256k1.node');
  const header = '/usr/include/secp256k1_schnorrsig.h';
  if (!existsSync(header)) {
    console.log(`build: native libsecp256k1 skipped (${header} not found: apt-get install libsecp256k1-dev); signatures will be checked by the WASM build`);
    return;
  }
  const sources = ['binding.gyp', 'secp256k1_addon.c'].map((name) => statSync(join(dir, name)).mtimeMs);
  if (existsSync(addon) && statSync(addon).mtimeMs > Math.max(...sources)) return;
  const nodeGyp = findNodeGyp();
  if (!nodeGyp) {
    console.log('build: native libsecp256k1 skipped (node-gyp not found next to npm); signatures will be checked by the WASM build');
    return;
  }
  // Node's own headers where the distribution ships them (Debian: /usr/include/node), so node-gyp
  // never tries to download them; npm passes its `nodedir` setting itself.
  const prefix = join(process.execPath, '..', '..');
  const nodedir = !process.env.npm_config_nodedir && existsSync(join(prefix, 'include', 'node', 'node_api.h')) ? [`--nodedir=${prefix}`] : [];
  const built = spawnSync(process.execPath, [nodeGyp, 'rebuild', '--release', ...nodedir], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (built.status !== 0) {
    const reason = (built.stderr ?? '').split('\n').find((line) => /error/i.test(line)) ?? `node-gyp exited ${built.status}`;
    console.log(`build: native libsecp256k1 failed (${reason.trim()}); signatures will be checked by the WASM build`);
    return;
  }
  console.log(`build: native libsecp256k1 built (${relative(root, addon)})`);
}

/** npm sets npm_config_node_gyp for its scripts; otherwise look beside npm itself. */
function findNodeGyp() {
  const candidates = [
    process.env.npm_config_node_gyp,
    process.env.npm_execpath && join(process.env.npm_execpath, '..', '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
    join(process.execPath, '..', '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ];
  return candidates.find((candidate) => candidate && existsSync(candidate)) ?? null;
}
