/**
 * Abuse: one client hammering the public routes (issue 35, item 3), against the real binary on
 * each store. Every route answers 429 `RATE_LIMITED` with `Retry-After` once the client is over
 * its budget, and another client still gets through: a NIP-98 route per address (told apart by
 * `X-Forwarded-For` from a trusted proxy) and per pubkey, the inbox socket, console login (10 a
 * minute, the default), the send API per API key, and the NIP-9a receiver per callback owner.
 *
 * Limits are configured with windows of a minute or more, so no window ends during a test however
 * slow the machine, and nothing waits one out.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import type { StorePort } from '../../src/store/port.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { createApiKey } from '../../src/platform/api-keys.ts';
import { makeUser, type TestUser } from '../support/nostr-client.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { freePort, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { nip98Authorization } from '../support/user-api.ts';

/** NIP-98 requests per address in each route group: 5 in a window of a minute. */
const PER_ADDRESS = 5;
/** NIP-98 requests per pubkey: 3 in a window of a minute. */
const PER_PUBKEY = 3;
/** The console's default: 10 attempts a minute per address. */
const LOGINS = 10;
/** Requests per API key and relay POSTs per callback owner: 3 in a window of a minute (3 at 0.05/s). */
const PER_KEY = 3;
const PER_OWNER = 3;
const SLOW_RATE_PER_SEC = '0.05';
const RELAY = 'wss://relay.abuse.test/';
const RATE_LIMITED_LOG = 'rate limit reached; refusing this client until its window ends';

interface Answer {
  status: number;
  retryAfter: string | null;
  body: unknown;
}

async function answerOf(response: Response): Promise<Answer> {
  const text = await response.text();
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: text === '' ? null : (JSON.parse(text) as unknown),
  };
}

/** A 429 with the catalogue's body and a Retry-After within the window of a minute. */
function assertRateLimited(answer: Answer | undefined, what: string): void {
  assert.ok(answer, what);
  assert.equal(answer.status, 429, `${what}: ${JSON.stringify(answer.body)}`);
  assert.deepEqual(answer.body, { error: 'Too many requests; retry after the Retry-After header', code: 'RATE_LIMITED' }, what);
  const seconds = Number(answer.retryAfter);
  assert.ok(Number.isInteger(seconds) && seconds >= 1 && seconds <= 60, `${what}: Retry-After ${answer.retryAfter}`);
}

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`per-client rate limits on the public routes (${adapter})`, () => {
    let redis: PrivateRedisServer | undefined;
    let dataDir: string;
    let service: ServiceProcess;
    /** The binary's address (its own port, which server.public_url names). */
    let baseUrl: string;
    let sendKeys: string[];
    /** Callback URL secrets: PER_OWNER + 1 of one owner, one of another. */
    const greedyOwnerSecrets = Array.from({ length: PER_OWNER + 1 }, () => randomBytes(32).toString('base64url'));
    const otherOwnerSecret = randomBytes(32).toString('base64url');

    const openStore = (storeUrl: string): Promise<StorePort> =>
      adapter === 'redis' ? openRedisStore({ url: storeUrl }) : openSqliteStore({ path: join(dataDir, 'nostr-push.sqlite') });

    /** A NIP-98 GET from `address` (as the trusted proxy on loopback reports it). */
    const userGet = async (user: TestUser, path: string, address: string): Promise<Answer> => {
      const url = `${baseUrl}${path}`;
      const authorization = await nip98Authorization(user, url, 'GET');
      return answerOf(await fetch(url, { headers: { authorization, 'x-forwarded-for': address } }));
    };

    const rateLimitedCount = async (group: string, kind: string): Promise<number> => {
      const text = await (await fetch(`${baseUrl}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith(`push_rate_limited_total{route_group="${group}",key_kind="${kind}"} `));
      return line ? Number(line.split(' ')[1]) : 0;
    };

    before(async () => {
      dataDir = mkdtempSync(join(tmpdir(), `np-abuse-rate-${adapter}-`));
      let storeUrl = `sqlite:${join(dataDir, 'nostr-push.sqlite')}`;
      if (adapter === 'redis') {
        redis = await startRedisServer();
        storeUrl = redis.url;
      }
      // Seeded before the start: two send keys, and callback URLs as POST /v1/nip9a/callbacks makes them.
      const seeder = await openStore(storeUrl);
      sendKeys = [(await createApiKey(seeder, 'default', 'send')).key, (await createApiKey(seeder, 'default', 'send')).key];
      const greedy = makeUser().pubkey;
      const seeds = [
        ...greedyOwnerSecrets.map((secret) => ({ secret, owner: greedy })),
        { secret: otherOwnerSecret, owner: makeUser().pubkey },
      ];
      for (const [i, { secret, owner }] of seeds.entries())
        await seeder.createNip9aCallback({
          id: `abuse-${i}`,
          secretHash: createHash('sha256').update(secret).digest('hex'),
          secretHint: secret.slice(0, 4),
          owner,
          relay: RELAY,
          createdAtMs: Date.now(),
        });
      await seeder.close();
      // A public URL (callback URL management needs one) on the port the binary listens on.
      const port = await freePort();
      baseUrl = `http://127.0.0.1:${port}`;
      service = await startServiceProcess({
        env: {
          NOSTR_PUSH__SERVER__LISTEN_ADDR: `127.0.0.1:${port}`,
          NOSTR_PUSH__SERVER__PUBLIC_URL: baseUrl,
          NOSTR_PUSH__ROLES: 'api',
          NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: makeUser().secret,
          NOSTR_PUSH__NOSTR__RELAYS: 'ws://127.0.0.1:9',
          NOSTR_PUSH__STORE__URL: storeUrl,
          NOSTR_PUSH__DATA_DIR: dataDir,
          // The test is the proxy: its X-Forwarded-For names the client.
          NOSTR_PUSH__SERVER__TRUSTED_PROXIES: '127.0.0.1',
          NOSTR_PUSH__RATE_LIMITS__NIP98_PER_ADDRESS_PER_MINUTE: String(PER_ADDRESS),
          NOSTR_PUSH__RATE_LIMITS__NIP98_PER_ADDRESS_BURST: String(PER_ADDRESS),
          NOSTR_PUSH__RATE_LIMITS__NIP98_PER_PUBKEY_PER_MINUTE: String(PER_PUBKEY),
          NOSTR_PUSH__RATE_LIMITS__NIP98_PER_PUBKEY_BURST: String(PER_PUBKEY),
          NOSTR_PUSH__SEND_API__RATE_PER_SEC: SLOW_RATE_PER_SEC,
          NOSTR_PUSH__SEND_API__RATE_BURST: String(PER_KEY),
          NOSTR_PUSH__NIP9A__RECEIVER__OWNER_RATE_PER_SEC: SLOW_RATE_PER_SEC,
          NOSTR_PUSH__NIP9A__RECEIVER__OWNER_RATE_BURST: String(PER_OWNER),
        },
      });
    });

    // A failed before() leaves some of these unassigned: stop whatever was started.
    /* eslint-disable @typescript-eslint/no-unnecessary-condition */
    after(async () => {
      await service?.stop();
      await redis?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */

    test('a burst from one address on a NIP-98 route is refused 429 with Retry-After; another address still gets through', async () => {
      const flooder = '198.51.100.1';
      const answers: Answer[] = [];
      // A fresh key each time: the address is what is counted, whoever signs.
      for (let i = 0; i < PER_ADDRESS + 3; i++) answers.push(await userGet(makeUser(), '/v1/alert-words', flooder));
      assert.deepEqual(
        answers.map((a) => a.status),
        [...Array<number>(PER_ADDRESS).fill(200), 429, 429, 429],
      );
      assertRateLimited(answers[PER_ADDRESS], 'the first request over the budget');
      assert.equal((await userGet(makeUser(), '/v1/alert-words', '198.51.100.2')).status, 200, 'another client address');
      assert.equal((await userGet(makeUser(), '/v1/devices', flooder)).status, 429, 'every route of the group shares the budget');
      assert.equal((await rateLimitedCount('user_api', 'address')) >= 4, true, 'a metric per refusal');
      const warnings = service.logs.filter((l) => l.msg === RATE_LIMITED_LOG && l.key === flooder);
      assert.equal(warnings.length, 1, 'one warning for the flood, not one per request');
      assert.equal(warnings[0]?.routeGroup, 'user_api');
      const perRequestWarnings = service.logs.filter((l) => l.level >= 40 && l.code === 'RATE_LIMITED');
      assert.deepEqual(perRequestWarnings, [], 'no other warning per refused request');
    });

    test('one pubkey is limited whatever address it comes from', async () => {
      const user = makeUser();
      const answers: Answer[] = [];
      for (let i = 0; i < PER_PUBKEY + 1; i++) answers.push(await userGet(user, '/v1/inbox/counts', `198.51.100.${10 + i}`));
      assert.deepEqual(
        answers.map((a) => a.status),
        [...Array<number>(PER_PUBKEY).fill(200), 429],
      );
      assertRateLimited(answers[PER_PUBKEY], 'the pubkey over its budget');
      assert.equal(await rateLimitedCount('user_api', 'pubkey'), 1);
      assert.equal((await userGet(makeUser(), '/v1/inbox/counts', '198.51.100.20')).status, 200, 'another pubkey');
    });

    /** A WebSocket upgrade of `path` from `address`, NIP-98 signed by a fresh key: 101 when it opened. */
    const upgradeTo = async (path: string, address: string): Promise<{ status: number; retryAfter: string | undefined }> => {
      const url = `${baseUrl}${path}`;
      const authorization = await nip98Authorization(makeUser(), url, 'GET');
      const ws = new WebSocket(url.replace(/^http/, 'ws'), { headers: { authorization, 'x-forwarded-for': address } });
      return new Promise((resolve, reject) => {
        ws.once('open', () => {
          ws.close();
          resolve({ status: 101, retryAfter: undefined });
        });
        ws.once('unexpected-response', (_request, response) => {
          const retryAfter = response.headers['retry-after'];
          resolve({ status: response.statusCode ?? 0, retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined });
          ws.terminate();
        });
        ws.once('error', reject);
      });
    };

    test('inbox socket upgrades are limited per address: 429 with Retry-After before the signature is looked at', async () => {
      const upgrade = (address: string) => upgradeTo('/v1/inbox/socket', address);
      const statuses = [];
      for (let i = 0; i < PER_ADDRESS + 1; i++) statuses.push(await upgrade('198.51.100.30'));
      assert.deepEqual(
        statuses.map((s) => s.status),
        [...Array<number>(PER_ADDRESS).fill(101), 429],
      );
      const retryAfter = Number(statuses[PER_ADDRESS]?.retryAfter);
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${statuses[PER_ADDRESS]?.retryAfter}`);
      assert.equal((await upgrade('198.51.100.31')).status, 101, 'another client address');
    });

    test('NIP-9a callback URL management and registrations (HTTP bridge and relay endpoint) are limited per address', async () => {
      const callbacks: number[] = [];
      for (let i = 0; i < PER_ADDRESS + 1; i++) callbacks.push((await userGet(makeUser(), '/v1/nip9a/callbacks', '198.51.100.50')).status);
      assert.deepEqual(callbacks, [...Array<number>(PER_ADDRESS).fill(200), 429]);
      // The HTTP bridge and the relay endpoint count into one budget (group nip9a_registrations).
      const registrations: number[] = [];
      for (let i = 0; i < PER_ADDRESS - 1; i++)
        registrations.push((await userGet(makeUser(), '/v1/nip9a/registrations', '198.51.100.51')).status);
      assert.deepEqual(registrations, Array<number>(PER_ADDRESS - 1).fill(200));
      assert.equal((await upgradeTo('/nip9a', '198.51.100.51')).status, 101, 'the last request of the budget');
      const refused = await upgradeTo('/nip9a', '198.51.100.51');
      assert.equal(refused.status, 429);
      assert.ok(Number(refused.retryAfter) >= 1, `Retry-After ${refused.retryAfter}`);
      assert.equal((await userGet(makeUser(), '/v1/nip9a/registrations', '198.51.100.51')).status, 429);
      assert.equal((await upgradeTo('/nip9a', '198.51.100.52')).status, 101, 'another address');
      assert.equal(await rateLimitedCount('nip9a_callbacks', 'address'), 1);
      assert.equal(await rateLimitedCount('nip9a_registrations', 'address'), 2);
    });

    test(`console login is limited after ${LOGINS} attempts a minute per address, right or wrong`, async () => {
      const login = async (address: string): Promise<Answer> =>
        answerOf(
          await fetch(`${baseUrl}/console/api/login`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
            body: JSON.stringify({ key: `npk_guess_${randomBytes(8).toString('hex')}` }),
          }),
        );
      const answers: Answer[] = [];
      for (let i = 0; i < LOGINS + 2; i++) answers.push(await login('198.51.100.40'));
      assert.deepEqual(
        answers.map((a) => a.status),
        [...Array<number>(LOGINS).fill(401), 429, 429],
      );
      assertRateLimited(answers[LOGINS], 'the 11th login attempt');
      assert.equal((await login('198.51.100.41')).status, 401, 'another address may still try');
      assert.equal(await rateLimitedCount('console_login', 'address'), 2);
    });

    test('the send API is limited per API key', async () => {
      const get = async (key: string): Promise<Answer> =>
        answerOf(await fetch(`${baseUrl}/v1/notifications/not-a-send`, { headers: { authorization: `Bearer ${key}` } }));
      const [greedy, other] = sendKeys as [string, string];
      const answers: Answer[] = [];
      for (let i = 0; i < PER_KEY + 1; i++) answers.push(await get(greedy));
      assert.deepEqual(
        answers.map((a) => a.status),
        [...Array<number>(PER_KEY).fill(404), 429],
      );
      assertRateLimited(answers[PER_KEY], 'the key over its budget');
      assert.equal((await get(other)).status, 404, 'another key of the same app');
      assert.equal(await rateLimitedCount('api_key', 'api_key'), 1);
    });

    test('the NIP-9a receiver is limited per callback owner across all their URLs', async () => {
      const post = async (secret: string): Promise<Answer> =>
        answerOf(
          await fetch(`${baseUrl}/nip9a/cb/${secret}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ id: randomBytes(32).toString('hex'), relay: RELAY }),
          }),
        );
      const answers: Answer[] = [];
      // One POST per URL: no URL is near its own limit, the owner is over theirs.
      for (const secret of greedyOwnerSecrets) answers.push(await post(secret));
      assert.deepEqual(
        answers.map((a) => a.status),
        [...Array<number>(PER_OWNER).fill(202), 429],
      );
      assertRateLimited(answers[PER_OWNER], "the owner's fourth URL");
      assert.equal((await post(otherOwnerSecret)).status, 202, 'another owner');
      assert.equal(await rateLimitedCount('nip9a_receiver', 'owner'), 1);
    });
  });
}
