/**
 * A start as an operator meets it (issue 38): readable lines on a terminal (`log.format: pretty`)
 * and JSON for programs, and the short summary a start ends with.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { npubEncode } from '../../src/nostr/nip19.ts';
import { makeUser } from '../support/nostr-client.ts';
import { startServiceProcess, type LogLine } from '../support/service-process.ts';

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
    } finally {
      await service.stop();
    }
  });
});
