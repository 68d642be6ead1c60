/**
 * Abuse (issue 35, items 2 and 4): what a stranger with free keys can make the service store is
 * bounded per client and forgotten once idle. The real binary on each store adapter, NIP-98
 * signed as an app signs it, attacking as issue 35 found it could: alert words, callback URLs and
 * hint sockets from many fresh keys, then time moved with the test clock file.
 *
 * Loopback is the operator's proxy here (`server.trusted_proxies`), so the test names each
 * client's address with `X-Forwarded-For`. The 500 fresh keys come from 25 addresses, 20 requests
 * each (and no test sends more than 32 requests from one address): far under any per-address
 * request rate limit, so what stops them is the storage bound.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finalizeEvent, generateSecretKey, getPublicKey } from 'nostr-tools/pure';
import { WebSocket } from 'ws';
import { HTTP_AUTH_KIND } from '../../src/nostr/nip98.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { eventually, freePort, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { TestClockFile } from '../support/test-clock.ts';
import { makeUser } from '../support/nostr-client.ts';

const DAY_MS = 86_400_000;
const FRESH_KEYS = 500;
const ADDRESSES = 25;
/** The settings under attack, lowered from their defaults so the bounds show within a test. */
const ALERT_WORD_USERS_PER_ADDRESS = 8;
const WORDS_PER_KEY = 10;
const CALLBACKS_PER_ADDRESS = 5;
const SOCKETS_PER_ADDRESS = 10;
const USERS_PER_ADDRESS = 30;
const SOCKETS_PER_PUBKEY = 4;
const COMMUNITY_RELAY = 'wss://community.example/';

interface Key {
  secret: Uint8Array;
  pubkey: string;
}
const freshKey = (): Key => {
  const secret = generateSecretKey();
  return { secret, pubkey: getPublicKey(secret) };
};

/** A number as letters (`0` → `a`): alert words are single words, and digits next to letters may split. */
const letters = (n: number): string => String(n).replace(/\d/g, (d) => String.fromCharCode(97 + Number(d)));

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`abuse: storage from fresh keys is bounded per client and expires (${adapter})`, () => {
    let redis: PrivateRedisServer | undefined;
    let dataDir: string;
    let clock: TestClockFile;
    let service: ServiceProcess;
    let reader: StorePort;
    let base: string;

    /** `Authorization: Nostr …` signed at the test clock's time (the service's), with a nonce so no two are one event. */
    const authorization = (key: Key, url: string, method: string, body?: string): string => {
      const tags = [
        ['u', url],
        ['method', method],
        ['nonce', randomUUID()],
      ];
      if (body !== undefined) tags.push(['payload', sha256Hex(body)]);
      const event = finalizeEvent({ kind: HTTP_AUTH_KIND, created_at: clock.nowSecs(), content: '', tags }, key.secret);
      return `Nostr ${Buffer.from(JSON.stringify(event)).toString('base64')}`;
    };
    const call = async (key: Key, address: string, method: string, path: string, body?: Record<string, unknown>) => {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const response = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: authorization(key, `${base}${path}`, method, text),
          'x-forwarded-for': address,
          ...(text === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(text === undefined ? {} : { body: text }),
      });
      const raw = await response.text();
      return {
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        json: raw === '' ? null : (JSON.parse(raw) as Record<string, unknown>),
      };
    };
    /** Open a hint socket: `open` with the socket, or the refusal's status and code. */
    const openSocket = (key: Key, address: string): Promise<{ ws: WebSocket } | { status: number; code: string }> =>
      new Promise((resolve, reject) => {
        const url = `${base}/v1/inbox/socket`;
        const ws = new WebSocket(url.replace(/^http/, 'ws'), {
          headers: { authorization: authorization(key, url, 'GET'), 'x-forwarded-for': address },
        });
        ws.once('open', () => resolve({ ws }));
        ws.once('unexpected-response', (_request, response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, code: (JSON.parse(text) as { code: string }).code }));
        });
        ws.once('error', reject);
      });

    before(async () => {
      dataDir = mkdtempSync(join(tmpdir(), `np-abuse-storage-${adapter}-`));
      clock = new TestClockFile(Date.now());
      let storeUrl = `sqlite:${join(dataDir, 'nostr-push.sqlite')}`;
      if (adapter === 'redis') {
        redis = await startRedisServer();
        storeUrl = redis.url;
      }
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      service = await startServiceProcess({
        env: {
          ...clock.env(),
          NOSTR_PUSH__ROLES: 'api,janitor',
          NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: makeUser().secret,
          NOSTR_PUSH__STORE__URL: storeUrl,
          NOSTR_PUSH__DATA_DIR: dataDir,
          NOSTR_PUSH__SERVER__LISTEN_ADDR: `127.0.0.1:${port}`,
          NOSTR_PUSH__SERVER__PUBLIC_URL: base,
          NOSTR_PUSH__SERVER__TRUSTED_PROXIES: '127.0.0.1',
          // The janitor sweeps every second, so moved time is acted on at once.
          NOSTR_PUSH__CLEANUP__INTERVAL_SECS: '1',
          NOSTR_PUSH__INBOX__MAX_ALERT_WORD_USERS_PER_ADDRESS_PER_DAY: String(ALERT_WORD_USERS_PER_ADDRESS),
          NOSTR_PUSH__INBOX__MAX_SOCKETS_PER_ADDRESS: String(SOCKETS_PER_ADDRESS),
          NOSTR_PUSH__INBOX__MAX_USERS_PER_ADDRESS_PER_DAY: String(USERS_PER_ADDRESS),
          NOSTR_PUSH__INBOX__MAX_SOCKETS_PER_PUBKEY: String(SOCKETS_PER_PUBKEY),
          NOSTR_PUSH__NIP9A__RECEIVER__MAX_CALLBACKS_PER_ADDRESS_PER_DAY: String(CALLBACKS_PER_ADDRESS),
          NOSTR_PUSH__LOG__LEVEL: 'info',
          LOG_LEVEL: 'info',
        },
      });
      reader =
        adapter === 'redis' ? await openRedisStore({ url: storeUrl }) : await openSqliteStore({ path: join(dataDir, 'nostr-push.sqlite') });
    });

    after(async () => {
      await service.stop();
      await reader.close();
      await redis?.stop();
      clock.remove();
      rmSync(dataDir, { recursive: true, force: true });
    });

    test(`${FRESH_KEYS} fresh keys from ${ADDRESSES} addresses: ${ALERT_WORD_USERS_PER_ADDRESS} keys per address store alert words, the rest get 429 and store nothing`, async () => {
      const keys = Array.from({ length: FRESH_KEYS }, freshKey);
      const outcomes = await Promise.all(
        Array.from({ length: ADDRESSES }, async (_, a) => {
          const address = `203.0.113.${a + 1}`;
          const statuses: number[] = [];
          // One address's requests one after another, as one client sends them.
          for (let k = a; k < FRESH_KEYS; k += ADDRESSES) {
            const words = Array.from({ length: WORDS_PER_KEY }, (_, w) => `abuse${letters(k)}x${letters(w)}`);
            const put = await call(keys[k] as Key, address, 'PUT', '/v1/alert-words', { words });
            if (put.status === 429) {
              assert.equal(put.json?.code, 'CLIENT_QUOTA_EXCEEDED');
              assert.ok(Number(put.retryAfter) > 0, 'a refusal says when to come back');
            }
            statuses.push(put.status);
          }
          return statuses;
        }),
      );
      for (const statuses of outcomes) {
        assert.equal(statuses.filter((s) => s === 200).length, ALERT_WORD_USERS_PER_ADDRESS, JSON.stringify(statuses));
        assert.equal(statuses.filter((s) => s === 429).length, FRESH_KEYS / ADDRESSES - ALERT_WORD_USERS_PER_ADDRESS);
      }
      // What the store holds is the bound, not the attack: 25 × 8 keys' words, nothing of the refused.
      assert.equal(await reader.alertWordCount(), ADDRESSES * ALERT_WORD_USERS_PER_ADDRESS * WORDS_PER_KEY);
      const refused = keys[FRESH_KEYS - 1] as Key;
      assert.deepEqual(await reader.readAlertWords(refused.pubkey), []);
    });

    test(`inbox users per client address: ${USERS_PER_ADDRESS} fresh keys a day use the user API from one address, then 429 and nothing remembered`, async () => {
      const address = '192.0.2.60';
      const keys = Array.from({ length: USERS_PER_ADDRESS + 2 }, freshKey);
      const statuses: number[] = [];
      for (const key of keys) {
        const counts = await call(key, address, 'GET', '/v1/inbox/counts');
        if (counts.status === 429) assert.equal(counts.json?.code, 'CLIENT_QUOTA_EXCEEDED');
        statuses.push(counts.status);
      }
      assert.deepEqual(statuses, [...Array<number>(USERS_PER_ADDRESS).fill(200), 429, 429]);
      // Known users count a notification; a refused key was never remembered, so it counts nothing.
      const counted = await reader.countInboxNotifications(
        keys.map((key, i) => ({ countKey: `probe-${i}`, recipient: key.pubkey, type: 'like' as const })),
        3600,
      );
      assert.deepEqual(
        counted.map((c) => c !== null),
        [...Array<boolean>(USERS_PER_ADDRESS).fill(true), false, false],
      );
    });

    test('alert words per user: a list over inbox.max_alert_words_per_user (50) is 422 TOO_MANY_ALERT_WORDS and stores nothing', async () => {
      const key = freshKey();
      const words = Array.from({ length: 51 }, (_, w) => `many${letters(w)}`);
      const put = await call(key, '192.0.2.200', 'PUT', '/v1/alert-words', { words });
      assert.deepEqual([put.status, put.json?.code], [422, 'TOO_MANY_ALERT_WORDS']);
      assert.deepEqual(await reader.readAlertWords(key.pubkey), []);
    });

    test(`callback URLs per client address: fresh keys from one address make ${CALLBACKS_PER_ADDRESS} a day, then 429; another address is unaffected`, async () => {
      const address = '192.0.2.7';
      const owners = Array.from({ length: CALLBACKS_PER_ADDRESS + 3 }, freshKey);
      const statuses: number[] = [];
      for (const owner of owners)
        statuses.push((await call(owner, address, 'POST', '/v1/nip9a/callbacks', { relay: COMMUNITY_RELAY })).status);
      assert.deepEqual(statuses, [...Array<number>(CALLBACKS_PER_ADDRESS).fill(201), 429, 429, 429]);
      const stored = await Promise.all(owners.map(async (o) => (await reader.listNip9aCallbacks(o.pubkey)).length));
      assert.equal(
        stored.reduce((a, b) => a + b, 0),
        CALLBACKS_PER_ADDRESS,
      );
      assert.equal((await call(freshKey(), '192.0.2.8', 'POST', '/v1/nip9a/callbacks', { relay: COMMUNITY_RELAY })).status, 201);
    });

    test(`inbox sockets: ${SOCKETS_PER_ADDRESS} per client address and ${SOCKETS_PER_PUBKEY} per pubkey, then 429 TOO_MANY_INBOX_SOCKETS`, async () => {
      const opened: WebSocket[] = [];
      try {
        const address = '192.0.2.30';
        for (let i = 0; i < SOCKETS_PER_ADDRESS; i += 1) {
          const result = await openSocket(freshKey(), address);
          assert.ok('ws' in result, `socket ${i} from one address: ${JSON.stringify(result)}`);
          opened.push(result.ws);
        }
        for (let i = 0; i < 3; i += 1)
          assert.deepEqual(await openSocket(freshKey(), address), { status: 429, code: 'TOO_MANY_INBOX_SOCKETS' });
        const one = freshKey();
        for (let i = 0; i < SOCKETS_PER_PUBKEY; i += 1) {
          const result = await openSocket(one, `192.0.2.${40 + i}`);
          assert.ok('ws' in result, `socket ${i} of one pubkey: ${JSON.stringify(result)}`);
          opened.push(result.ws);
        }
        assert.deepEqual(await openSocket(one, '192.0.2.99'), { status: 429, code: 'TOO_MANY_INBOX_SOCKETS' });
      } finally {
        for (const ws of opened) ws.close();
      }
    });

    test('idle expiry: an inbox user idle for 30 days is forgotten with their words; a callback URL idle for 90 days is deleted', async () => {
      const idle = freshKey();
      const active = freshKey();
      const owner = freshKey();
      assert.equal((await call(idle, '192.0.2.50', 'PUT', '/v1/alert-words', { words: ['idleword'] })).status, 200);
      assert.equal((await call(active, '192.0.2.51', 'PUT', '/v1/alert-words', { words: ['activeword'] })).status, 200);
      const created = await call(owner, '192.0.2.52', 'POST', '/v1/nip9a/callbacks', { relay: COMMUNITY_RELAY });
      assert.equal(created.status, 201);
      const callbackPath = new URL(String(created.json?.url)).pathname;

      await clock.advance(29 * DAY_MS, [service]);
      assert.equal((await call(active, '192.0.2.51', 'GET', '/v1/inbox/counts')).status, 200, 'a request keeps a user');
      await clock.advance(2 * DAY_MS, [service]);
      await eventually(
        async () => ((await reader.readAlertWords(idle.pubkey)).length === 0 ? true : undefined),
        30_000,
        'the idle user forgotten',
      );
      assert.deepEqual([...(await reader.alertWordWatchers(['idleword', 'activeword']))], [['activeword', [active.pubkey]]]);
      assert.equal((await reader.listNip9aCallbacks(owner.pubkey)).length, 1, 'a callback URL lives 90 idle days');

      await clock.advance(60 * DAY_MS, [service]);
      await eventually(
        async () => ((await reader.listNip9aCallbacks(owner.pubkey)).length === 0 ? true : undefined),
        30_000,
        'the idle callback deleted',
      );
      const post = await fetch(`${base}${callbackPath}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'ab'.repeat(32), relay: COMMUNITY_RELAY }),
      });
      assert.equal(post.status, 404, 'a deleted URL answers 404, so the relay drops its registration');
      await service.waitForLog(
        (l) => l.msg === 'idle storage expired' && typeof l.callbacks === 'number' && l.callbacks >= 1,
        30_000,
        'the sweep logged',
      );
    });
  });
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
