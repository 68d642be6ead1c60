/**
 * A start as an operator meets it (issue 38): readable lines on a terminal (`log.format: pretty`)
 * and JSON for programs, the short summary a start ends with, the first admin key shown once the
 * port is bound, and one plain line (exit 1) for a start-up failure the operator can fix.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { npubEncode } from '../../src/nostr/nip19.ts';
import { SERVER_NODE_FLAGS, SERVER_SEMI_SPACE_MIB } from '../../src/util/heap-growth.ts';
import { makeUser } from '../support/nostr-client.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { eventually, freePort, startServiceProcess, type LogLine, type ServiceProcess } from '../support/service-process.ts';

/** Roles that need no relay traffic and no provider: the start and the HTTP side only. */
const QUIET_RELAY = 'ws://127.0.0.1:1';

describe('start-up output', () => {
  let dataDir: string;
  const serviceKey = makeUser();
  const baseEnv = () => ({
    NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: serviceKey.secret,
    NOSTR_PUSH__NOSTR__RELAYS: QUIET_RELAY,
    NOSTR_PUSH__DATA_DIR: dataDir,
    NOSTR_PUSH__STORE__URL: `sqlite:${join(dataDir, 'nostr-push.sqlite')}`,
    NOSTR_PUSH__LOG__LEVEL: 'info',
    LOG_LEVEL: 'info',
  });

  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'np-startup-'));
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  test('log.format pretty: human lines only, ending with the summary', async () => {
    const service = await startServiceProcess({ env: { ...baseEnv(), NOSTR_PUSH__LOG__FORMAT: 'pretty' }, waitForHttp: false });
    try {
      await service.waitForLog((l) => /INFO: transports on: /.test(l.msg), 20_000, 'the summary’s transports line');
      // The harness keeps a line that is not JSON as { level: 30, msg: <the raw line> }: no `time`.
      const parsedAsJson = service.logs.filter((l) => 'time' in l);
      assert.deepEqual(parsedAsJson, [], 'no JSON line on stdout');
      const raw = service.logs.map((l) => l.msg);
      const has = (pattern: RegExp) =>
        assert.ok(
          raw.some((line) => pattern.test(line)),
          `a line matching ${String(pattern)}`,
        );
      has(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: configuration loaded$/);
      has(new RegExp(`^\\[[\\d:.]+\\] INFO: listening on ${service.baseUrl.replace(/\./g, '\\.')}$`));
      has(new RegExp(`^\\[[\\d:.]+\\] INFO: console: ${service.baseUrl.replace(/\./g, '\\.')}/console$`));
      has(new RegExp(`^\\[[\\d:.]+\\] INFO: app default: service key ${npubEncode(serviceKey.pubkey)}$`));
      has(new RegExp(`^\\[[\\d:.]+\\] INFO: store: sqlite:${dataDir.replace(/\./g, '\\.')}/nostr-push\\.sqlite$`));
      has(/^\[[\d:.]+\] INFO: relays: ws:\/\/127\.0\.0\.1:1$/);
      has(
        /^\[[\d:.]+\] INFO: transports on: webpush \(Web Push and UnifiedPush endpoints\); off: fcm \(firebase\.credentials_path is not set\), apns \(apns\.key_path, apns\.key_id, apns\.team_id, apns\.bundle_id not set\)$/,
      );
      // The summary's structured copy stays out of pretty output: its message says it all.
      assert.ok(!raw.some((line) => /^\s+summary:/.test(line)), 'no summary fields under the lines');
    } finally {
      await service.stop();
    }
  });

  test('stdout that is not a terminal gets JSON (log.format auto), the summary as fields too', async () => {
    const service = await startServiceProcess({ env: baseEnv() });
    try {
      const transports = await service.waitForLog((l) => l.msg.startsWith('transports on: '), 20_000, 'the transports line');
      const json = service.logs.filter((l) => 'time' in l);
      assert.equal(json.length, service.logs.length, 'every stdout line is JSON');
      const summaryOf = (line: LogLine) => line.summary as Record<string, unknown>;
      const listening = service.logs.find((l) => l.msg.startsWith('listening on '));
      assert.ok(listening);
      assert.deepEqual(summaryOf(listening), { listening: service.baseUrl });
      const consoleLine = service.logs.find((l) => l.msg.startsWith('console: '));
      assert.ok(consoleLine);
      assert.deepEqual(summaryOf(consoleLine), { console: `${service.baseUrl}/console` });
      assert.deepEqual(
        (summaryOf(transports).transports as Array<{ name: string; on: boolean }>).map((t) => [t.name, t.on]),
        [
          ['fcm', false],
          ['apns', false],
          ['webpush', true],
        ],
      );
      const youngGeneration = service.logs.find((l) => l.msg === 'V8 young generation sized by the command line');
      assert.equal(youngGeneration?.semiSpaceMib, SERVER_SEMI_SPACE_MIB, 'started with the server flags, as every launcher starts it');
    } finally {
      await service.stop();
    }
  });

  test('started as a bare `node bin/nostr-push.js serve`, it says at warn which Node flag it lacks, and serves', async () => {
    const service = await startServiceProcess({ env: baseEnv(), serverNodeFlags: [] });
    try {
      const warning = await service.waitForLog((l) => l.msg.startsWith('started without --max-semi-space-size'), 20_000, 'the warning');
      assert.equal(warning.level, 40);
      assert.equal(warning.recommended, SERVER_NODE_FLAGS.join(' '));
      assert.equal((await fetch(`${service.baseUrl}/health`)).status, 200);
    } finally {
      await service.stop();
    }
  });
});

const BIN = fileURLToPath(new URL('../../bin/nostr-push.js', import.meta.url));

/** The binary with `args`, its exit status and output (without blocking this process). */
function runBin(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Everything the process wrote on stderr, as lines. */
const stderrLines = (service: ServiceProcess) => service.stderr.join('').split('\n').filter(Boolean);

describe('start-up failures and the first admin key', () => {
  let dataDir: string;
  const storePath = () => join(dataDir, 'nostr-push.sqlite');
  const env = (extra: Record<string, string> = {}) => ({
    NOSTR_PUSH__NOSTR__RELAYS: QUIET_RELAY,
    NOSTR_PUSH__DATA_DIR: dataDir,
    NOSTR_PUSH__STORE__URL: `sqlite:${storePath()}`,
    ...extra,
  });
  const adminKeys = async () => {
    const store = await openSqliteStore({ path: storePath() });
    try {
      return (await store.listApiKeys('default')).filter((k) => k.role === 'admin');
    } finally {
      await store.close();
    }
  };

  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'np-first-key-'));
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  test('a port in use: one line, exit 1, no stack trace, and no admin key made', async () => {
    const port = await freePort();
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
    try {
      const service = await startServiceProcess({ env: env({ NOSTR_PUSH__SERVER__LISTEN_ADDR: `127.0.0.1:${port}` }), waitForHttp: false });
      assert.equal(await service.exited, 1);
      assert.deepEqual(stderrLines(service), [`cannot listen on 127.0.0.1:${port}: address already in use`]);
      assert.ok(!service.logs.some((l) => JSON.stringify(l).includes('npk_')), 'no key printed');
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
    assert.deepEqual(await adminKeys(), [], 'no key made before the port was bound');
  });

  test('the next start binds, shows the key alone on its line, and it works; a start after that shows none', async () => {
    const first = await startServiceProcess({ env: env() });
    let key: string;
    try {
      await first.waitForLog((l) => l.msg.startsWith('no admin key existed'), 20_000, 'the first admin key');
      const lines = stderrLines(first);
      key = lines.find((line) => /^npk_[A-Za-z0-9_-]+$/.test(line)) ?? '';
      assert.ok(key, `the key alone on a stderr line: ${lines.join(' | ')}`);
      assert.ok(lines.some((line) => line.includes(`log in at ${first.baseUrl}/console`)));
      assert.ok(!first.logs.some((l) => JSON.stringify(l).includes(key)), 'never in the log');
      const dlq = await fetch(`${first.baseUrl}/v1/admin/dlq?queue=outbound`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(dlq.status, 200, 'the key shown is an admin key of default');
    } finally {
      await first.stop();
    }
    assert.equal((await adminKeys()).length, 1);
    const second = await startServiceProcess({ env: env() });
    try {
      await second.waitForLog((l) => l.msg.startsWith('transports on: '), 20_000, 'the end of the start');
      assert.ok(!second.stderr.join('').includes('npk_'), 'shown once: no key on the next start');
    } finally {
      await second.stop();
    }
    assert.equal((await adminKeys()).length, 1);
  });

  test('an unreachable store: one line, exit 1', async () => {
    const service = await startServiceProcess({ env: env({ NOSTR_PUSH__STORE__URL: 'redis://127.0.0.1:1' }), waitForHttp: false });
    assert.equal(await service.exited, 1);
    assert.deepEqual(stderrLines(service), ['cannot open the store redis://127.0.0.1:1: connect ECONNREFUSED 127.0.0.1:1']);
  });

  test('a credentials file that does not load: one line, exit 1', async () => {
    const missing = join(dataDir, 'missing.json');
    const service = await startServiceProcess({ env: env({ NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: missing }), waitForHttp: false });
    assert.equal(await service.exited, 1);
    assert.deepEqual(stderrLines(service), [
      `FCM credentials ${missing} cannot be read: ENOENT: no such file or directory, open '${missing}'`,
    ]);
  });
});

describe('/health and /ready tell the truth', () => {
  let dataDir: string;
  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'np-health-'));
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  test('its only relay refusing connections: degraded (200) with the problem once the grace is over; ready for traffic; GET / goes to the console', async () => {
    const service = await startServiceProcess({
      env: {
        NOSTR_PUSH__NOSTR__RELAYS: QUIET_RELAY,
        NOSTR_PUSH__DATA_DIR: dataDir,
        NOSTR_PUSH__STORE__URL: `sqlite:${join(dataDir, 'nostr-push.sqlite')}`,
        NOSTR_PUSH__HEALTH__RELAY_GRACE_SECS: '1',
      },
    });
    try {
      const root = await fetch(`${service.baseUrl}/`, { redirect: 'manual' });
      assert.equal(root.status, 302, 'GET / sends a browser to the console');
      assert.equal(root.headers.get('location'), '/console');
      const ready = await fetch(`${service.baseUrl}/ready`);
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), { ready: true });
      const body = await eventually(
        async () => {
          const res = await fetch(`${service.baseUrl}/health`);
          const json = (await res.json()) as {
            status: string;
            pubkey: string;
            tasks: object;
            problems: Array<{ code: string; message: string }>;
          };
          return json.status === 'degraded' ? { http: res.status, json } : undefined;
        },
        10_000,
        '/health degraded',
      );
      assert.equal(body.http, 200, 'degraded still serves');
      assert.match(body.json.pubkey, /^[0-9a-f]{64}$/, 'divine’s fields stay');
      assert.ok(Object.keys(body.json.tasks).length > 0);
      assert.deepEqual(
        body.json.problems.map((p) => p.code),
        ['no_relay'],
      );
      assert.match(body.json.problems[0]?.message ?? '', /^no relay connected for \d+ s: ws:\/\/127\.0\.0\.1:1 \(/);
    } finally {
      await service.stop();
    }
  });

  test('`nostr-push healthcheck` (the image’s check) asks /health at server.listen_addr: 0 on 200, 1 when nothing answers', async () => {
    const service = await startServiceProcess({
      env: {
        NOSTR_PUSH__NOSTR__RELAYS: QUIET_RELAY,
        NOSTR_PUSH__DATA_DIR: dataDir,
        NOSTR_PUSH__STORE__URL: `sqlite:${join(dataDir, 'nostr-push.sqlite')}`,
      },
    });
    try {
      const up = await runBin(['healthcheck'], { NOSTR_PUSH__SERVER__LISTEN_ADDR: `0.0.0.0:${service.port}` });
      assert.equal(up.status, 0, up.stdout + up.stderr);
      assert.match(up.stdout, new RegExp(`^http://127\\.0\\.0\\.1:${service.port}/health: 200 (ok|degraded)\n$`));
    } finally {
      await service.stop();
    }
    const port = await freePort();
    const down = await runBin(['healthcheck'], { NOSTR_PUSH__SERVER__LISTEN_ADDR: `127.0.0.1:${port}` });
    assert.equal(down.status, 1, down.stdout + down.stderr);
    assert.match(down.stdout, new RegExp(`^http://127\\.0\\.0\\.1:${port}/health: `));
  });
});
