/**
 * Abuse suite (issue 35): the NIP-9a gateway attacked as a stranger with throwaway keys would,
 * against the real binary (roles api and gateway) on each store.
 *
 * - SSRF through a registration's relay and callback: public-looking names whose addresses are
 *   loopback, private, IPv4-mapped, NAT64 and IPv6 loopback (the binary's test-only hosts
 *   override, `NOSTR_PUSH_TEST_HOSTS`, honoured under NODE_ENV=test only) get no connection: a
 *   loopback listener on the named port sees nothing, and each refusal is a warning line and a
 *   `push_outbound_refused_total` count. Loopback is admitted for this run
 *   (`nip9a.allow_loopback_callbacks`, so the test relay can be watched), which is the weaker
 *   policy: a public name resolving to loopback is refused even so.
 * - Relay growth: fresh keys naming new relays stop at `nip9a.max_watched_relays` with
 *   `NIP9A_RELAY_CAP_REACHED`; relays already watched stay open.
 * - Lock-out: nine keys with four registrations each on one relay, and a tenth user still
 *   registers there (main refused them with 403 once 32 were stored).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { getToken } from 'nostr-tools/nip98';
import { OUTBOUND_REFUSED_MESSAGE } from '../../src/net/refusals.ts';
import { TEST_HOSTS_ENV } from '../../src/net/public-connect.ts';
import type { NostrEvent } from '../../src/nostr/event.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { makeUser, type TestUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { eventually, startServiceProcess, type LogLine, type ServiceProcess } from '../support/service-process.ts';

const now = (): number => Math.floor(Date.now() / 1000);
const HOOKS_ORIGIN = 'https://hooks.example.com';
const MAX_WATCHED_RELAYS = 12;
/** Names the relay SSRF test registers, with the address each resolves to and the refusal reason. */
const HOSTILE_RELAYS: Array<[string, string, string]> = [
  ['loopback-relay.example.com', '127.0.0.1', 'loopback'],
  ['private-relay.example.com', '10.0.0.1', 'private'],
  ['mapped-relay.example.com', '::ffff:127.0.0.1', 'loopback'],
  ['nat64-relay.example.com', '64:ff9b::7f00:1', 'loopback'],
  ['v6-relay.example.com', '::1', 'loopback'],
];
/** Relays the growth test names: a documentation address, refused at once, never dialled. */
const GROWTH_RELAYS = Array.from({ length: 40 }, (_, i) => `grow-${i}.example.com`);

/** A TCP listener on loopback that only counts connections: where the hostile names point. */
async function startTrap(): Promise<{ port: number; connections: () => number; stop(): Promise<void> }> {
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`abuse: NIP-9a gateway (${adapter})`, () => {
    let relay: TestRelay;
    let trap: Awaited<ReturnType<typeof startTrap>>;
    let redis: PrivateRedisServer | undefined;
    let dataDir: string;
    let reader: StorePort;
    let service: ServiceProcess;
    const recipient = makeUser().pubkey;

    before(async () => {
      relay = await startTestRelay();
      trap = await startTrap();
      dataDir = mkdtempSync(join(tmpdir(), `np-abuse-nip9a-${adapter}-`));
      let storeUrl = `sqlite:${join(dataDir, 'nostr-push.sqlite')}`;
      if (adapter === 'redis') {
        redis = await startRedisServer();
        storeUrl = redis.url;
        reader = await openRedisStore({ url: storeUrl });
      }
      const hosts = [
        ...HOSTILE_RELAYS.map(([name, address]) => `${name}=${address}`),
        'hooks.example.com=127.0.0.1',
        ...GROWTH_RELAYS.map((name) => `${name}=192.0.2.1`),
      ];
      service = await startServiceProcess({
        env: {
          NOSTR_PUSH__ROLES: 'api,gateway',
          NOSTR_PUSH__NOSTR__RELAYS: relay.url,
          NOSTR_PUSH__STORE__URL: storeUrl,
          NOSTR_PUSH__DATA_DIR: dataDir,
          NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
          NOSTR_PUSH__NIP9A__ALLOW_LOOPBACK_CALLBACKS: 'I_UNDERSTAND',
          NOSTR_PUSH__NIP9A__CALLBACK_ORIGINS: HOOKS_ORIGIN,
          NOSTR_PUSH__NIP9A__RELOAD_POLL_MILLIS: '100',
          NOSTR_PUSH__NIP9A__MAX_WATCHED_RELAYS: String(MAX_WATCHED_RELAYS),
          [TEST_HOSTS_ENV]: hosts.join(','),
          // Every key here registers from 127.0.0.1: the per-address rate limit (its own abuse
          // test, rate-limits.test.ts) is raised so these attacks reach the bounds they test.
          NOSTR_PUSH__RATE_LIMITS__NIP98_PER_ADDRESS_BURST: '1000',
          NOSTR_PUSH__RATE_LIMITS__NIP98_PER_ADDRESS_PER_MINUTE: '1000',
        },
      });
      if (adapter === 'sqlite') reader = await openSqliteStore({ path: join(dataDir, 'nostr-push.sqlite') });
    });

    after(async () => {
      await service.stop();
      await reader.close();
      await trap.stop();
      await relay.stop();
      await redis?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    function registration(user: TestUser, d: string, relays: string[], callback: string): NostrEvent {
      return signEvent(
        {
          kind: 30390,
          created_at: now(),
          content: '',
          tags: [
            ['d', d],
            ...relays.map((r) => ['relay', r]),
            ['filter', JSON.stringify({ kinds: [1], '#p': [recipient], '#t': [d] })],
            ['callback', callback],
          ],
        },
        user.secret,
      );
    }

    async function put(user: TestUser, event: NostrEvent): Promise<{ status: number; body: { code?: string; error?: string } }> {
      const url = `${service.baseUrl}/v1/nip9a/registrations`;
      const body = JSON.stringify(event);
      const authorization = await getToken(url, 'PUT', (template) => signEvent(template, user.secret), true, event);
      const res = await fetch(url, { method: 'PUT', headers: { authorization, 'content-type': 'application/json' }, body });
      return { status: res.status, body: (await res.json()) as { code?: string; error?: string } };
    }

    async function metric(line: RegExp): Promise<number> {
      const text = await (await fetch(`${service.baseUrl}/metrics`)).text();
      const found = text.split('\n').find((l) => line.test(l));
      return found === undefined ? 0 : Number(found.split(' ').pop());
    }

    const refusalOf =
      (purpose: string, host: string) =>
      (line: LogLine): boolean =>
        line.msg === OUTBOUND_REFUSED_MESSAGE && line.purpose === purpose && line.host === host;

    test('SSRF through relay URLs: public names resolving to loopback, 10/8, ::ffff:127.0.0.1, NAT64 or ::1 get no connection', async () => {
      const attacker = makeUser();
      const urls = HOSTILE_RELAYS.map(([name]) => `wss://${name}:${trap.port}/`);
      // The name rules pass them (they are public-looking names): the refusal is at connect time.
      assert.equal((await put(attacker, registration(attacker, 'ssrf-relays', urls.slice(0, 4), `${HOOKS_ORIGIN}/cb/a`))).status, 200);
      assert.equal((await put(attacker, registration(attacker, 'ssrf-relays-v6', urls.slice(4), `${HOOKS_ORIGIN}/cb/b`))).status, 200);
      for (const [name, address, reason] of HOSTILE_RELAYS) {
        const line = await service.waitForLog(refusalOf('nip9a_relay', name), 30_000, `the refusal of ${name}`);
        assert.equal(line.level, 40, 'a warning');
        assert.deepEqual([line.address, line.reason], [address, reason], name);
      }
      assert.ok((await metric(/^push_outbound_refused_total\{purpose="nip9a_relay",reason="loopback"\}/)) >= 4);
      assert.ok((await metric(/^push_outbound_refused_total\{purpose="nip9a_relay",reason="private"\}/)) >= 1);
      assert.equal(trap.connections(), 0, 'the loopback listener saw no connection');
    });

    test('SSRF through an allowlisted callback origin whose name resolves to 127.0.0.1: no POST, the delivery ends address_refused', async () => {
      const victim = makeUser();
      const poster = makeUser();
      const reg = registration(victim, 'ssrf-callback', [relay.url], `${HOOKS_ORIGIN}/cb/secret-token`);
      assert.equal((await put(victim, reg)).status, 200);
      await eventually(
        () => (relay.requests().some((r) => JSON.stringify(r).includes('"ssrf-callback"')) ? true : undefined),
        30_000,
        'the gateway to subscribe',
      );
      await publish(
        relay.url,
        signEvent(
          {
            kind: 1,
            created_at: now(),
            content: 'hi',
            tags: [
              ['p', recipient],
              ['t', 'ssrf-callback'],
            ],
          },
          poster.secret,
        ),
      );
      const line = await service.waitForLog(refusalOf('nip9a_callback', 'hooks.example.com'), 30_000, 'the callback refusal');
      assert.deepEqual([line.level, line.address, line.reason], [40, '127.0.0.1', 'loopback']);
      await eventually(
        async () => ((await metric(/^push_nip9a_delivery_outcomes_total\{outcome="address_refused"\}/)) >= 1 ? true : undefined),
        30_000,
        'the delivery to end address_refused',
      );
      assert.ok((await metric(/^push_outbound_refused_total\{purpose="nip9a_callback",reason="loopback"\}/)) >= 1);
    });

    test(`relay growth from throwaway keys stops at nip9a.max_watched_relays (${MAX_WATCHED_RELAYS}); watched relays stay open`, async () => {
      const watched = async (): Promise<number> => new Set((await reader.listAllNip9aRegistrations()).flatMap((r) => r.relays)).size;
      const before = await watched();
      assert.ok(before < MAX_WATCHED_RELAYS, `${before} relays watched before`);
      const answers: Array<{ status: number; code?: string }> = [];
      // 5 fresh keys × 4 registrations × 4 new relays: 80 relays asked for, as in the attack.
      for (let k = 0; k < 5; k++) {
        const key = makeUser();
        for (let r = 0; r < 4; r++) {
          const first = (k * 4 + r) * 2;
          const names = [0, 1].flatMap((i) => [
            `wss://${GROWTH_RELAYS[first + i] as string}/`,
            `wss://${GROWTH_RELAYS[first + i] as string}:444/`,
          ]);
          const answer = await put(key, registration(key, `grow-${r}`, names, `${HOOKS_ORIGIN}/cb/g`));
          answers.push({ status: answer.status, code: answer.body.code });
        }
      }
      const refused = answers.filter((a) => a.status !== 200);
      assert.ok(refused.length > 0, 'the cap was met');
      assert.ok(
        refused.every((a) => a.status === 403 && a.code === 'NIP9A_RELAY_CAP_REACHED'),
        JSON.stringify(refused),
      );
      const after = await watched();
      assert.ok(after <= MAX_WATCHED_RELAYS && after > MAX_WATCHED_RELAYS - 4, `${after} relays watched`);
      await eventually(
        async () => ((await metric(/^push_nip9a_watched_relays /)) === after ? true : undefined),
        30_000,
        'the gateway to watch what the store holds',
      );
      // A stranger naming a relay already watched is not refused by the cap.
      const late = makeUser();
      assert.equal((await put(late, registration(late, 'late', [relay.url], `${HOOKS_ORIGIN}/cb/late`))).status, 200);
    });

    test('no lock-out: nine keys × four registrations on one relay, and a tenth user still registers there', async () => {
      for (let k = 0; k < 9; k++) {
        const squatter = makeUser();
        for (let r = 0; r < 4; r++)
          assert.equal((await put(squatter, registration(squatter, `squat-${r}`, [relay.url], `${HOOKS_ORIGIN}/cb/s`))).status, 200);
      }
      const tenth = makeUser();
      const answer = await put(tenth, registration(tenth, 'mine', [relay.url], `${HOOKS_ORIGIN}/cb/mine`));
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.notEqual(await reader.getNip9aRegistration(tenth.pubkey, 'mine'), null);
    });
  });
}
