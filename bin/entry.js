// Which code the nostr-push binary runs: the JavaScript `npm run build` compiled into dist/
// (`npm install` builds it), or the TypeScript in src/ through tsx's loader.
//
// dist/ is used only while it is at least as new as every file in src/: after an edit (or a
// checkout) without a rebuild, the binary runs the source instead, so it never runs stale code.
// NOSTR_PUSH_FROM_SOURCE=1 forces the source.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Written by scripts/build.mjs when a build completes; its time is the build's. */
export const BUILD_STAMP = '.build-stamp';

/** The newest modification time (ms) of any file under `dir`. */
export function newestMtimeMs(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtimeMs(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * `{ kind: 'dist' | 'source', reason }` for a checkout at `root` (a directory path).
 * @param {string} root
 * @param {Record<string, string | undefined>} env
 */
export function chooseEntry(root, env) {
  if (env.NOSTR_PUSH_FROM_SOURCE === '1') return { kind: 'source', reason: 'NOSTR_PUSH_FROM_SOURCE=1' };
  const stamp = join(root, 'dist', BUILD_STAMP);
  if (!existsSync(stamp)) return { kind: 'source', reason: 'no build in dist/' };
  if (newestMtimeMs(join(root, 'src')) > statSync(stamp).mtimeMs)
    return { kind: 'source', reason: 'dist/ is older than src/ (run npm run build)' };
  return { kind: 'dist', reason: 'dist/ is current' };
}

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
