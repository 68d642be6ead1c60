/** The command line as an operator meets it: keygen, doctor, and configuration errors. */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeNsec } from '../../src/nostr/nip19.ts';
import { publicKeyOf } from '../../src/nostr/keys.ts';
import { loadNativeSecp256k1 } from '../../src/nostr/secp256k1.ts';
import { startTestRelay } from '../support/relay.ts';
import { freePort } from '../support/service-process.ts';

const BIN = fileURLToPath(new URL('../../bin/nostr-push.js', import.meta.url));
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8', timeout: 30_000 });

/** Like `run`, without blocking this process's event loop (the test relay lives in it). */
function runAsync(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

describe('nostr-push CLI', () => {
  test('--version and version print the package version', () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const args of [['--version'], ['version']]) {
      const out = run(args);
      assert.equal(out.status, 0, out.stderr);
      assert.equal(out.stdout, `nostr-push ${version}\n`);
    }
  });

  test('keygen prints a consistent key: hex, nsec, pubkey and npub', () => {
    const out = run(['keygen']);
    assert.equal(out.status, 0, out.stderr);
    const field = (name: string) => new RegExp(`^${name}:\\s+(\\S+)$`, 'm').exec(out.stdout)?.[1] ?? '';
    const hex = field('private_key_hex');
    assert.match(hex, /^[0-9a-f]{64}$/);
    assert.equal(decodeNsec(field('nsec')), hex);
    assert.equal(field('pubkey'), publicKeyOf(hex));
    assert.match(field('npub'), /^npub1[0-9a-z]{58}$/);
  });

  test('a configuration error exits 2 with one line per wrong key', () => {
    const out = run(['serve'], { NOSTR_PUSH__SERVICE__COALESCE_WINDOW_SECS: '0', NOSTR_PUSH__SERVER__LISTEN_ADDR: 'nowhere' });
    assert.equal(out.status, 2);
    assert.match(out.stderr, /service\.coalesce_window_secs must be greater than zero: at 0, /);
    assert.match(out.stderr, /server\.listen_addr: "nowhere" is not host:port/);
  });

  test('a broken template stops serve before anything starts: exit 2, where and what', () => {
    const dir = mkdtempSync(join(tmpdir(), 'np-templates-'));
    try {
      writeFileSync(
        join(dir, 'fr.yaml'),
        'like:\n  body: "{sender} a aimé {post}"\nlikeSummary:\n  body: { one: "{sender} et {count} autre", other: "{sender} et {count} autres" }\n',
      );
      const out = run(['serve'], { NOSTR_PUSH__TEMPLATES__DIR: dir, NOSTR_PUSH__DATA_DIR: dir });
      assert.equal(out.status, 2, out.stderr);
      assert.match(out.stderr, /templates \(templates\.dir fr\.yaml\) fr\.like\.body: unknown placeholder \{post\}/);
      assert.match(out.stderr, /fr\.likeSummary\.body: missing plural category many \(fr needs many, one, other\)/);
      assert.equal(existsSync(join(dir, 'service-key.hex')), false, 'stopped before the service key');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('an unknown NOSTR_PUSH_SECP256K1 stops serve before anything starts: exit 2, one line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'np-secp256k1-'));
    try {
      const out = run(['serve'], { NOSTR_PUSH_SECP256K1: 'fastest', NOSTR_PUSH__DATA_DIR: dir });
      assert.equal(out.status, 2, out.stderr);
      assert.match(out.stderr, /^NOSTR_PUSH_SECP256K1 must be native or wasm \(or unset\), got "fastest"$/m);
      assert.doesNotMatch(out.stderr, /\n\s+at /, 'no stack trace');
      assert.equal(existsSync(join(dir, 'service-key.hex')), false, 'stopped before the service key');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('doctor checks every configured app: its service key and FCM credentials, named with the app', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'np-doctor-apps-'));
    try {
      const configFile = join(dir, 'apps.yaml');
      writeFileSync(configFile, `apps:\n  - id: clips\n    firebase:\n      credentials_path: ${join(dir, 'missing.json')}\n`);
      const out = await runAsync(['doctor', '--config', configFile], {
        NOSTR_PUSH__DATA_DIR: dir,
        NOSTR_PUSH__NOSTR__RELAYS: 'ws://127.0.0.1:1',
        NOSTR_PUSH__SERVER__LISTEN_ADDR: `127.0.0.1:${await freePort()}`,
      });
      assert.equal(out.status, 1, out.stdout + out.stderr);
      assert.match(out.stdout, /^FAIL {2}no relay is reachable: /m, 'a listener with no relay is deaf');
      assert.match(
        out.stdout,
        /^warn {2}app clips: no service key yet: one will be generated in .*service-key\.clips\.hex on first start$/m,
      );
      assert.match(out.stdout, /^FAIL {2}app clips: FCM credentials .*missing\.json: /m);
      assert.match(out.stdout, /^warn {2}FCM is off/m, 'the default app’s own line is unprefixed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('doctor reports what is ready and what is wrong', async () => {
    const relay = await startTestRelay();
    const dir = mkdtempSync(join(tmpdir(), 'np-doctor-'));
    const listenAddr = `127.0.0.1:${await freePort()}`;
    try {
      const ok = await runAsync(['doctor'], {
        NOSTR_PUSH__DATA_DIR: dir,
        NOSTR_PUSH__NOSTR__RELAYS: `${relay.url},ws://127.0.0.1:1`,
        NOSTR_PUSH__SERVER__LISTEN_ADDR: listenAddr,
      });
      assert.equal(ok.status, 0, ok.stdout + ok.stderr);
      assert.match(ok.stdout, new RegExp(`ok    relay ${relay.url} accepts connections`));
      assert.match(ok.stdout, /warn {2}relay ws:\/\/127\.0\.0\.1:1: /);
      assert.match(ok.stdout, /warn {2}FCM is off/);
      assert.match(ok.stdout, /warn {2}no service key yet/);
      assert.match(ok.stdout, new RegExp(`^ok {4}the HTTP port is free \\(${listenAddr}\\)$`, 'm'));
      assert.match(ok.stdout, /^warn {2}no admin key of app default yet: .*nostr-push apps keys create default --role admin$/m);
      assert.match(ok.stdout, /ok {4}store sqlite:.* answers/);
      assert.match(
        ok.stdout,
        /^ok {4}HTTP\/2 client: builtin \(our own; delivery\.http2_client\); ntfy WebSocket server: builtin \(our own; ntfy\.websocket\)$/m,
      );
      // The binary finds the addon this process finds (the same checkout), or says how to get it.
      if (loadNativeSecp256k1().ok) assert.match(ok.stdout, /^ok {4}secp256k1: libsecp256k1 \(native\)$/m);
      else assert.match(ok.stdout, /^warn {2}secp256k1: libsecp256k1 \(WASM, tiny-secp256k1\), because .*install libsecp256k1-dev/m);
      const forced = await runAsync(['doctor'], {
        NOSTR_PUSH__DATA_DIR: dir,
        NOSTR_PUSH__NOSTR__RELAYS: relay.url,
        NOSTR_PUSH__SERVER__LISTEN_ADDR: listenAddr,
        NOSTR_PUSH_SECP256K1: 'wasm',
      });
      assert.match(forced.stdout, /^ok {4}secp256k1: libsecp256k1 \(WASM, tiny-secp256k1\), as NOSTR_PUSH_SECP256K1=wasm asks$/m);
      const fallbacks = await runAsync(['doctor'], {
        NOSTR_PUSH__DATA_DIR: dir,
        NOSTR_PUSH__NOSTR__RELAYS: relay.url,
        NOSTR_PUSH__SERVER__LISTEN_ADDR: listenAddr,
        NOSTR_PUSH__DELIVERY__HTTP2_CLIENT: 'node',
        NOSTR_PUSH__NTFY__WEBSOCKET: 'ws',
      });
      assert.match(
        fallbacks.stdout,
        /^ok {4}HTTP\/2 client: node \(node:http2; delivery\.http2_client\); ntfy WebSocket server: ws \(the ws package; ntfy\.websocket\)$/m,
      );
      assert.equal(existsSync(join(dir, 'service-key.hex')), false, 'doctor never creates the key');

      const badCreds = join(dir, 'creds.json');
      writeFileSync(badCreds, '{"client_email":"x"}');
      const bad = await runAsync(['doctor'], {
        NOSTR_PUSH__DATA_DIR: dir,
        NOSTR_PUSH__NOSTR__RELAYS: relay.url,
        NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: badCreds,
        NOSTR_PUSH__STORE__URL: 'redis://127.0.0.1:1',
        NOSTR_PUSH_SECP256K1: 'fastest',
      });
      assert.equal(bad.status, 1);
      assert.match(bad.stdout, /FAIL {2}FCM credentials .* lack private_key, token_uri/);
      assert.match(bad.stdout, /FAIL {2}store redis:\/\/127\.0\.0\.1:1/);
      assert.match(bad.stdout, /FAIL {2}secp256k1: NOSTR_PUSH_SECP256K1 must be native or wasm \(or unset\), got "fastest"/);
    } finally {
      await relay.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
