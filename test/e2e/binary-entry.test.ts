/**
 * Which code bin/nostr-push.js runs (bin/entry.js): dist/ while the build is current, the
 * source through tsx when src/ changed after the build or there is none, and the source when
 * NOSTR_PUSH_FROM_SOURCE=1. So the binary never runs stale code.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { BUILD_STAMP, chooseEntry as choose } from '../../bin/entry.js';
const BIN = fileURLToPath(new URL('../../bin/nostr-push.js', import.meta.url));
const HOUR_S = 3600;

describe('the binary entry', () => {
  let root: string;
  const setTime = (path: string, epochSecs: number) => utimesSync(path, epochSecs, epochSecs);
  const now = Math.floor(Date.now() / 1000);

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'np-entry-'));
    mkdirSync(join(root, 'src', 'store'), { recursive: true });
    writeFileSync(join(root, 'src', 'cli.ts'), '');
    writeFileSync(join(root, 'src', 'store', 'a.lua'), '');
    setTime(join(root, 'src', 'cli.ts'), now - 2 * HOUR_S);
    setTime(join(root, 'src', 'store', 'a.lua'), now - 2 * HOUR_S);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const build = (epochSecs: number) => {
    mkdirSync(join(root, 'dist'), { recursive: true });
    writeFileSync(join(root, 'dist', BUILD_STAMP), '');
    setTime(join(root, 'dist', BUILD_STAMP), epochSecs);
  };

  test('without a build it runs the source', () => {
    assert.deepEqual(choose(root, {}).kind, 'source');
  });

  test('a build newer than every source file runs dist/', () => {
    build(now - HOUR_S);
    assert.deepEqual(choose(root, {}), { kind: 'dist', reason: 'dist/ is current' });
  });

  test('a source file changed after the build (in any folder) runs the source', () => {
    build(now - HOUR_S);
    setTime(join(root, 'src', 'store', 'a.lua'), now);
    assert.deepEqual(choose(root, {}).kind, 'source');
    assert.match(choose(root, {}).reason, /older than src/);
  });

  test('NOSTR_PUSH_FROM_SOURCE=1 runs the source even with a current build', () => {
    build(now);
    assert.deepEqual(choose(root, { NOSTR_PUSH_FROM_SOURCE: '1' }).kind, 'source');
  });

  test('the binary runs from the source when asked to', () => {
    const out = spawnSync(process.execPath, [BIN, 'help'], {
      env: { PATH: process.env.PATH ?? '', NOSTR_PUSH_FROM_SOURCE: '1' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(out.status, 0, out.stderr);
    assert.match(out.stdout, /^nostr-push — push notifications for Nostr apps/);
  });
});
