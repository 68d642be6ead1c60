/**
 * Issue 35, item 6, against the real binary on both stores:
 *
 * - behind a proxy (`server.public_url` set, the Host the process sees different), a recipient
 *   records an open with NIP-98 (`POST /v1/notifications/{id}/opened`; main checked `u` against
 *   the Host, so it never worked there);
 * - every JSON route answers a body of another Content-Type with 415 and the catalogue's error,
 *   never 500 (main: 500 and an error log on the send API);
 * - console login CSRF: a cross-origin `text/plain` POST (what a hostile page can send without a
 *   preflight) is refused, before the key is looked at, and no cookie is set;
 * - the session cookie is `Secure` when `server.public_url` is https or a trusted proxy says https,
 *   and not when an untrusted peer says `X-Forwarded-Proto: https`;
 * - a failed login logs no characters of what was typed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generateSecretKey } from '../../src/nostr/keys.ts';
import { createApiKey } from '../../src/platform/api-keys.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import type { StorePort } from '../../src/store/port.ts';
import { makeUser } from '../support/nostr-client.ts';
import { startRedisServer } from '../support/redis-server.ts';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { nip98Authorization } from '../support/user-api.ts';

const PUBLIC_URL = 'https://push.example.com';

interface Started {
  service: ServiceProcess;
  store: StorePort;
}

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`NIP-98 behind a proxy, content types and the console login (${adapter}, real binary)`, () => {
    const cleanup: Array<() => Promise<unknown>> = [];
    let redisUrl = '';

    /** A binary with the given `server.*` settings, its own data (a SQLite file, or a Redis database of its own). */
    const start = async (server: Record<string, string>, database: number): Promise<Started> => {
      const dataDir = mkdtempSync(join(tmpdir(), `np-edge-${adapter}-`));
      cleanup.push(async () => rmSync(dataDir, { recursive: true, force: true }));
      const storeUrl = adapter === 'redis' ? `${redisUrl}/${database}` : `sqlite:${join(dataDir, 'nostr-push.sqlite')}`;
      const service = await startServiceProcess({
        env: {
          NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: generateSecretKey(),
          NOSTR_PUSH__STORE__URL: storeUrl,
          NOSTR_PUSH__DATA_DIR: dataDir,
          NOSTR_PUSH__ROLES: 'api',
          NOSTR_PUSH__SERVER__INTERNAL_API_TOKEN: 'internal-token',
          ...Object.fromEntries(Object.entries(server).map(([key, value]) => [`NOSTR_PUSH__SERVER__${key.toUpperCase()}`, value])),
        },
      });
      cleanup.push(() => service.stop());
      const store =
        adapter === 'redis' ? await openRedisStore({ url: storeUrl }) : await openSqliteStore({ path: join(dataDir, 'nostr-push.sqlite') });
      cleanup.push(() => store.close());
      return { service, store };
    };

    let behindProxy: Started;
    let direct: Started;
    let viaTrustedProxy: Started;

    before(async () => {
      if (adapter === 'redis') {
        const redis = await startRedisServer();
        cleanup.push(() => redis.stop());
        redisUrl = redis.url;
      }
      behindProxy = await start({ public_url: PUBLIC_URL }, 1);
      direct = await start({}, 2);
      viaTrustedProxy = await start({ trusted_proxies: '127.0.0.1/32' }, 3);
    });
    after(async () => {
      for (const step of cleanup.reverse()) await step();
    });

    const login = (service: ServiceProcess, key: string, headers: Record<string, string>, body = JSON.stringify({ key })) =>
      fetch(`${service.baseUrl}/console/api/login`, { method: 'POST', headers, body });

    test('a recipient records an open with NIP-98 signed for the public URL, though the Host this process sees differs', async () => {
      const { service, store } = behindProxy;
      const alice = makeUser();
      const sendKey = (await createApiKey(store, 'default', 'send')).key;
      const sent = await fetch(`${service.baseUrl}/v1/notifications`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sendKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ recipients: [alice.pubkey], type: 'like', title: 'Hi', body: 'hello', priority: 'normal' }),
      });
      assert.equal(sent.status, 202, await sent.clone().text());
      const { id } = (await sent.json()) as { id: string };
      const path = `/v1/notifications/${id}/opened`;
      const body = {};
      const open = (signedFor: string) =>
        nip98Authorization(alice, `${signedFor}${path}`, 'POST', body).then((authorization) =>
          fetch(`${service.baseUrl}${path}`, {
            method: 'POST',
            headers: { authorization, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          }),
        );
      // Signed for what this process sees (http://127.0.0.1:port): not the URL the client addressed.
      const asSeen = await open(service.baseUrl);
      assert.equal(asSeen.status, 401, await asSeen.clone().text());
      const asPublished = await open(PUBLIC_URL);
      assert.equal(asPublished.status, 200, await asPublished.clone().text());
      assert.deepEqual(await asPublished.json(), { recorded: true });
    });

    test('every JSON route answers another Content-Type with 415 and the catalogue error, never 500', async () => {
      const { service, store } = direct;
      const admin = `Bearer ${(await createApiKey(store, 'default', 'admin')).key}`;
      const user = makeUser();
      const routes: Array<[string, string, Record<string, string>]> = [
        ['POST', '/v1/notifications', { authorization: admin }],
        ['POST', '/v1/notifications/x/opened', { authorization: admin }],
        ['POST', '/v1/campaigns', { authorization: admin }],
        ['POST', '/v1/campaigns/x/opened', { authorization: admin }],
        ['POST', '/v1/admin/suppressions', { authorization: admin }],
        ['DELETE', '/v1/admin/suppressions', { authorization: admin }],
        ['POST', '/v1/admin/announcements', { authorization: admin }],
        ['POST', '/internal/v1/direct-message', { authorization: 'Bearer internal-token' }],
        ['PUT', '/v1/alert-words', {}],
        ['POST', '/v1/inbox/viewed', {}],
        ['PUT', '/v1/nip9a/registrations', {}],
        ['POST', '/v1/nip9a/callbacks', {}],
        ['POST', '/console/api/login', {}],
      ];
      const body = '{"recipients":[]}';
      for (const [method, path, headers] of routes) {
        for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
          // NIP-98 routes: a valid signature over this very request, so nothing but the type is wrong.
          const authorization =
            headers.authorization ??
            (await nip98Authorization(user, `${service.baseUrl}${path}`, method, JSON.parse(body) as Record<string, unknown>));
          const answer = await fetch(`${service.baseUrl}${path}`, { method, headers: { authorization, 'content-type': type }, body });
          const text = await answer.text();
          assert.equal(answer.status, 415, `${method} ${path} (${type}): ${text}`);
          assert.deepEqual(JSON.parse(text), { error: 'Content-Type must be application/json', code: 'UNSUPPORTED_MEDIA_TYPE' });
        }
      }
      assert.ok(!service.logs.some((line) => line.level >= 50), 'no error logged');
      const metrics = await (await fetch(`${service.baseUrl}/metrics`)).text();
      assert.match(metrics, /push_http_requests_refused_total\{route="POST \/v1\/notifications",code="UNSUPPORTED_MEDIA_TYPE"\} 2/);
    });

    test('login CSRF: a cross-origin text/plain POST of a valid key is refused and sets no cookie', async () => {
      const { service, store } = direct;
      const key = (await createApiKey(store, 'default', 'admin')).key;
      const crossSite = await login(service, key, { origin: 'https://evil.example', 'content-type': 'text/plain' });
      assert.equal(crossSite.status, 403);
      assert.equal(((await crossSite.json()) as { code: string }).code, 'CONSOLE_ORIGIN_REFUSED');
      assert.equal(crossSite.headers.get('set-cookie'), null);
      // Without an Origin (a form from a page that hides it), the type alone refuses it.
      const textPlain = await login(service, key, { 'content-type': 'text/plain' });
      assert.equal(textPlain.status, 415);
      assert.equal(textPlain.headers.get('set-cookie'), null);
      // The console page itself: its own origin (the Host it came to), JSON.
      const own = await login(service, key, { origin: service.baseUrl, 'content-type': 'application/json' });
      assert.equal(own.status, 200, await own.clone().text());
    });

    test('the session cookie is Secure for an https public URL or a trusted proxy’s https, not for an untrusted X-Forwarded-Proto', async () => {
      const cookieOf = async (started: Started, headers: Record<string, string>): Promise<string> => {
        const key = (await createApiKey(started.store, 'default', 'admin')).key;
        const answer = await login(started.service, key, { 'content-type': 'application/json', ...headers });
        assert.equal(answer.status, 200, await answer.clone().text());
        return answer.headers.get('set-cookie') ?? '';
      };
      assert.match(await cookieOf(behindProxy, { origin: PUBLIC_URL }), /; Secure/);
      assert.doesNotMatch(await cookieOf(direct, { 'x-forwarded-proto': 'https' }), /Secure/);
      assert.match(await cookieOf(viaTrustedProxy, { 'x-forwarded-proto': 'https' }), /; Secure/);
      assert.doesNotMatch(await cookieOf(viaTrustedProxy, { 'x-forwarded-proto': 'http' }), /Secure/);
    });

    test('a failed login logs no characters of what was typed', async () => {
      const { service } = direct;
      const typed = 'npk_TypedIntoTheWrongBoxByMistake_0123456789abcdef';
      const answer = await login(service, typed, { 'content-type': 'application/json' });
      assert.equal(answer.status, 401);
      await service.waitForLog((line) => line.msg === 'console request refused' && line.code === 'CONSOLE_LOGIN_FAILED', 5_000);
      const logged = JSON.stringify(service.logs);
      assert.ok(!logged.includes(typed.slice(0, 8)), `no part of the typed key in the logs: ${typed.slice(0, 8)}`);
    });
  });
}
