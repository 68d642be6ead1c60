#!/usr/bin/env node
// The optional native secp256k1 addon (native/secp256k1/, linked to the system libsecp256k1),
// built with the node-gyp that npm bundles. scripts/build.mjs calls this first, so installs
// without TypeScript get the addon too; `node scripts/build-native.mjs` runs it alone.
//
// Never fatal: when the addon cannot be built (libsecp256k1-dev, a compiler or Python missing),
// this prints one line saying why and nostr-push checks signatures with the WASM build instead.
// The addon is rebuilt only when a source is newer than it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ADDON = join('native', 'secp256k1');
const SOURCES = ['binding.gyp', 'secp256k1.c'];
/** Keep in step with NATIVE_ADDON_RELATIVE_PATH in src/nostr/secp256k1.ts. */
const OUTPUT = join('build', 'Release', 'secp256k1.node');
const LOG = join('build', 'node-gyp.log');
/** A compile of one small file takes about a second; this only stops a wedged toolchain. */
const BUILD_TIMEOUT_MS = 5 * 60_000;

const INSTALL_LIBSECP256K1 = 'libsecp256k1-dev is missing (apt-get install libsecp256k1-dev)';

/** node-gyp's entry script: the one npm runs scripts with, else the copy inside npm itself. */
function findNodeGyp(root) {
  const candidates = [process.env.npm_config_node_gyp];
  // npm_execpath is npm's own CLI script (…/npm/bin/npm-cli.js) while npm runs this script.
  if (process.env.npm_execpath)
    candidates.push(join(dirname(process.env.npm_execpath), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'));
  const prefix = resolve(dirname(process.execPath), '..');
  candidates.push(join(prefix, 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'));
  try {
    candidates.push(createRequire(join(root, 'package.json')).resolve('node-gyp/bin/node-gyp.js'));
  } catch {
    // Not a dependency of this project: the usual case.
  }
  return candidates.find((path) => path !== undefined && path !== '' && existsSync(path)) ?? null;
}

/**
 * Where Node's headers are: npm's `nodedir` setting while npm runs this, else the prefix of the
 * running node when its headers were installed beside it (distribution packages put them in
 * /usr/include/node). Without either, node-gyp downloads the headers of this Node version.
 */
function findNodeDir() {
  if (process.env.npm_config_nodedir) return process.env.npm_config_nodedir;
  const prefix = resolve(dirname(process.execPath), '..');
  return existsSync(join(prefix, 'include', 'node', 'node_api.h')) ? prefix : null;
}

/** One short reason for a failed build, from node-gyp's output. */
function explain(output) {
  if (/secp256k1[a-z_]*\.h: No such file/.test(output) || /cannot find -lsecp256k1/.test(output)) return INSTALL_LIBSECP256K1;
  if (/node_api\.h: No such file/.test(output) || /gyp ERR! .*(tarball|download|headers)/i.test(output))
    return 'Node headers not found (set npm_config_nodedir to the prefix of include/node)';
  if (/gyp ERR! find Python/.test(output)) return 'node-gyp needs Python 3';
  if (/(make|cc|gcc|g\+\+): (command )?not found|not found: (make|cc)/.test(output))
    return 'no C toolchain (apt-get install build-essential)';
  const compileError = /error: (.*secp256k1_.*)/.exec(output);
  if (compileError) return `does not compile against the installed libsecp256k1 (0.2.0 or newer needed): ${compileError[1]?.slice(0, 120)}`;
  const line = output.split('\n').find((l) => /error|ERR!/i.test(l)) ?? 'node-gyp failed';
  return line.trim().slice(0, 160);
}

const mtimeMs = (path) => statSync(path).mtimeMs;

/** Builds the addon under `root` unless it is current; prints one line either way. */
export function buildNativeAddon(root) {
  const dir = join(root, ADDON);
  const output = join(dir, OUTPUT);
  const newestSource = Math.max(...SOURCES.map((file) => mtimeMs(join(dir, file))));
  if (existsSync(output) && mtimeMs(output) > newestSource) {
    console.log(`build: ${relative(root, output)} is current`);
    return;
  }
  const fallback = 'signatures are checked by the WASM build (tiny-secp256k1) instead';
  const nodeGyp = findNodeGyp(root);
  if (nodeGyp === null) {
    console.warn(`build: native secp256k1 addon not built (node-gyp not found: set npm_config_node_gyp); ${fallback}`);
    return;
  }
  const args = [nodeGyp, 'rebuild', '--directory', dir];
  const nodeDir = findNodeDir();
  if (nodeDir !== null) args.push(`--nodedir=${nodeDir}`);
  // `rebuild` starts by removing build/, so a failed build never leaves a stale addon behind.
  const built = spawnSync(process.execPath, args, { cwd: dir, encoding: 'utf8', timeout: BUILD_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });
  if (built.status === 0 && existsSync(output)) {
    console.log(`build: ${relative(root, output)} built against the system libsecp256k1`);
    return;
  }
  const transcript = `${built.stdout ?? ''}${built.stderr ?? ''}${built.error ? `\n${built.error.message}\n` : ''}`;
  mkdirSync(join(dir, 'build'), { recursive: true });
  writeFileSync(join(dir, LOG), transcript);
  console.warn(`build: native secp256k1 addon not built (${explain(transcript)}; log in ${join(ADDON, LOG)}); ${fallback}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) buildNativeAddon(fileURLToPath(new URL('..', import.meta.url)));
