/**
 * End to end for the send API: the real binary (roles without a listener), keys made and revoked
 * with the real CLI, the FCM fake speaking HTTP/2, on each store adapter. An idempotent request
 * sent twice pushes once; a scheduled send fires no earlier than its sendAt (on the binary's test
 * clock, moved by the test) and a cancelled one never; keys are scoped and revocation
 * reaches the running server through the store; a large recipient list is expanded in pages.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StorePort } from '../../src/store/port.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { generateSecretKey } from '../../src/nostr/keys.ts';
import { startRedisServer } from '../support/redis-server.ts';
import { startFcmFake, type FcmFake } from '../support/fcm-fake.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { TestClockFile } from '../support/test-clock.ts';

const BIN = fileURLToPath(new URL('../../bin/nostr-push.js', import.meta.url));
const ALICE = 'a1'.repeat(32);
const BOB = 'b2'.repeat(32);

function cli(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`send API end to end (${adapter})`, () => {
    let fcm: FcmFake;
    let dataDir: string;
    let reader: StorePort;
    let service: ServiceProcess;
    let env: Record<string, string>;
    const clock = new TestClockFile(Date.UTC(2026, 5, 1, 12));
    /** What `before` started, stopped in reverse order by `after` (whatever `before` got to). */
    const cleanup: Array<() => Promise<unknown>> = [];
    const keys = { send: '', admin: '', sendId: '' };

    const createKey = async (role: 'send' | 'admin') => {
      const out = await cli(['apps', 'keys', 'create', 'default', '--role', role], env);
      assert.equal(out.status, 0, out.stderr);
      const field = (name: string) => new RegExp(`^${name}:\\s+(\\S+)$`, 'm').exec(out.stdout)?.[1] ?? '';
      assert.match(field('key'), /^npk_[A-Za-z0-9_-]{43}$/);
      return { key: field('key'), id: field('id') };
    };
    const request = (method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) =>
      fetch(`${service.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const send = async (body: Record<string, unknown>, headers: Record<string, string> = {}) => {
      const res = await request(
        'POST',
        '/v1/notifications',
        keys.send,
        { recipients: [ALICE], type: 'payout', body: 'b', priority: 'normal', ...body },
        headers,
      );
      assert.equal(res.status, 202, await res.clone().text());
      return (await res.json()) as { id: string; duplicate: boolean };
    };
    const pushesOf = (id: string) => fcm.messages.filter((m) => m.body.message.data.notificationId === id);
    const pushed = (id: string) => eventually(() => (pushesOf(id).length > 0 ? pushesOf(id) : undefined), 20_000, `a push of ${id}`);

    before(async () => {
      fcm = await startFcmFake();
      cleanup.push(() => fcm.stop());
      dataDir = mkdtempSync(join(tmpdir(), `np-send-${adapter}-`));
      cleanup.push(async () => rmSync(dataDir, { recursive: true, force: true }));
      let storeUrl = `sqlite:${join(dataDir, 'nostr-push.sqlite')}`;
      if (adapter === 'redis') {
        const redis = await startRedisServer();
        cleanup.push(() => redis.stop());
        storeUrl = redis.url;
      }
      env = {
        NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: generateSecretKey(),
        NOSTR_PUSH__STORE__URL: storeUrl,
        NOSTR_PUSH__DATA_DIR: dataDir,
        NOSTR_PUSH__SEND_API__TYPES: 'payout:1059,digest:7',
        NOSTR_PUSH__LOG__LEVEL: 'info',
      };
      service = await startServiceProcess({
        env: {
          ...env,
          NOSTR_PUSH__ROLES: 'api,engine,delivery,scheduler,janitor',
          NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
          NOSTR_PUSH__SEND_API__POLL_MILLIS: '20',
          NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: fcm.writeCredentials(dataDir),
          NOSTR_PUSH__FIREBASE__PROJECT_ID: 'fake-project',
          NOSTR_PUSH__FIREBASE__API_BASE_URL: fcm.baseUrl,
          ...clock.env(),
        },
      });
      cleanup.push(() => service.stop());
      reader =
        adapter === 'redis' ? await openRedisStore({ url: storeUrl }) : await openSqliteStore({ path: join(dataDir, 'nostr-push.sqlite') });
      cleanup.push(() => reader.close());
      await reader.registerToken(ALICE, { token: 'alice-phone', transport: 'fcm' });
      await reader.setPreferences(BOB, { kinds: [7], campaignsEnabled: false });
      await reader.registerToken(BOB, { token: 'bob-phone', transport: 'fcm' });
      const sendKey = await createKey('send');
      keys.send = sendKey.key;
      keys.sendId = sendKey.id;
      keys.admin = (await createKey('admin')).key;
    });

    after(async () => {
      for (const stop of cleanup.reverse()) await stop();
      clock.remove();
    });

    test('a request with an Idempotency-Key sent twice pushes once', async () => {
      const headers = { 'idempotency-key': `payout-${adapter}` };
      const first = await send({ title: 'once' }, headers);
      const second = await send({ title: 'once' }, headers);
      assert.deepEqual(second, { id: first.id, duplicate: true });
      await pushed(first.id);
      // A later send arriving proves the delivery stage is past anything the first request queued.
      await pushed((await send({ title: 'later' })).id);
      assert.equal(pushesOf(first.id).length, 1);
      const conflict = await request(
        'POST',
        '/v1/notifications',
        keys.send,
        { recipients: [ALICE], type: 'payout', title: 'x', body: 'b', priority: 'normal' },
        headers,
      );
      assert.equal(conflict.status, 409);
    });

    test('a scheduled send fires no earlier than sendAt; a cancelled one due before it never', async () => {
      const sendAtMs = clock.nowMs() + 10 * 60_000;
      const cancelled = await send({ title: 'cancelled', sendAt: new Date(sendAtMs - 60_000).toISOString() });
      const scheduled = await send({ title: 'scheduled', sendAt: new Date(sendAtMs).toISOString() });
      assert.equal((await request('DELETE', `/v1/notifications/${cancelled.id}`, keys.send)).status, 200);
      // One ms early: a send due now goes out (so the scheduler looked after time moved), the scheduled one does not.
      await clock.advance(sendAtMs - 1 - clock.nowMs(), [service]);
      await pushed((await send({ title: 'probe' })).id);
      assert.equal(pushesOf(scheduled.id).length, 0, 'not before sendAt');
      await clock.advance(1, [service]);
      await pushed(scheduled.id);
      assert.equal(pushesOf(cancelled.id).length, 0);
      assert.equal((await request('DELETE', `/v1/notifications/${scheduled.id}`, keys.send)).status, 409, 'too late to cancel');
    });

    test('recipients pass the gates: a disabled preference and a recipient without devices are suppressed; 2,000 expand in pages', async () => {
      const others = Array.from({ length: 1998 }, (_, i) => `e${i.toString(16).padStart(63, '0')}`);
      const { id } = await send({ title: 'many', recipients: [ALICE, BOB, ...others], priority: 'low' });
      await pushed(id);
      const view = await eventually(
        async () => {
          const body = (await (await request('GET', `/v1/notifications/${id}`, keys.send)).json()) as {
            state: string;
            counts: Record<string, number>;
            recipients: Array<{ pubkey: string; status: string; reason?: string }>;
          };
          return body.state === 'done' && body.counts.sent === 1 ? body : undefined;
        },
        20_000,
        'every page expanded and the push logged',
      );
      assert.deepEqual(view.counts, { sent: 1, suppressed: 1999, opened: 0 });
      assert.deepEqual(view.recipients[1], { pubkey: BOB, status: 'suppressed', reason: 'preference_disabled', opened: false });
      assert.equal(view.recipients[2]?.reason, 'no_tokens');
      assert.equal(fcm.messages.filter((m) => m.token === 'bob-phone').length, 0);

      const opened = await request('POST', `/v1/notifications/${id}/opened`, keys.send, { recipient: ALICE });
      assert.deepEqual(await opened.json(), { recorded: true });
      const log = (await (await request('GET', `/v1/admin/deliveries?recipient=${ALICE}&limit=1000`, keys.admin)).json()) as {
        entries: Array<{ notificationId: string; status: string; providerMessageId?: string; tokenPrefix?: string; transport?: string }>;
      };
      const sent = log.entries.find((e) => e.notificationId === id && e.status === 'sent');
      assert.match(sent?.providerMessageId ?? '', /^projects\/fake-project\/messages\/\d+$/);
      assert.equal(sent?.transport, 'fcm');
      assert.ok(
        sent.tokenPrefix !== 'alice-phone' && 'alice-phone'.startsWith((sent.tokenPrefix ?? 'x').replace('…', '')),
        'a prefix, not the token',
      );
      const rates = (await (await request('GET', '/v1/admin/deliveries/open-rates', keys.admin)).json()) as {
        types: Array<{ type: string; opened: number }>;
      };
      assert.equal(rates.types.find((t) => t.type === 'payout')?.opened, 1);
    });

    test('keys are scoped: 403 for a send key on admin routes, 404 for another app, 401 once revoked by the CLI', async () => {
      assert.equal((await request('GET', '/v1/admin/deliveries', keys.send)).status, 403);
      assert.equal((await request('GET', '/v1/admin/deliveries', keys.admin, undefined, { 'x-app': 'other' })).status, 404);
      assert.equal((await request('GET', '/v1/notifications/00000000-0000-4000-8000-000000000000', keys.send)).status, 404);
      const list = await cli(['apps', 'keys', 'list', 'default'], env);
      assert.ok(list.stdout.includes(keys.sendId) && !list.stdout.includes(keys.send), 'listed by id and prefix, never the key');
      const sendKeyLine = list.stdout.split('\n').find((line) => line.startsWith(keys.sendId)) ?? '';
      assert.match(sendKeyLine, / last used \d{4}-\d\d-\d\dT[\d:.]+Z/, `the send key was used above: ${sendKeyLine}`);
      const revoked = await cli(['apps', 'keys', 'revoke', keys.sendId], env);
      assert.equal(revoked.status, 0, revoked.stderr);
      const refused = await request('POST', '/v1/notifications', keys.send, {
        recipients: [ALICE],
        type: 'payout',
        title: 't',
        body: 'b',
        priority: 'normal',
      });
      assert.equal(refused.status, 401);
      assert.ok(!service.logs.some((l) => JSON.stringify(l).includes(keys.send)), 'the key is never logged');
    });

    test('the OpenAPI document is served', async () => {
      const doc = (await (await fetch(`${service.baseUrl}/v1/openapi.json`)).json()) as { openapi: string; paths: Record<string, unknown> };
      assert.equal(doc.openapi, '3.1.0');
      assert.ok(doc.paths['/v1/notifications/{id}/opened']);
    });
  });
}
