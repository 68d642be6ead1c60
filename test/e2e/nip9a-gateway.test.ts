/**
 * End to end: the NIP-9a gateway in the real binary (roles api and gateway), a real relay it
 * watches (@nostr-relay/*), registrations through the gateway's own relay endpoint (NIP-42 AUTH)
 * and through `PUT /v1/nip9a/registrations` (NIP-98, nostr-tools' token), and a loopback callback
 * receiver, on each store. Short retry delays are configured (`nip9a.retry_delays_secs`); the
 * production schedule (30 s, 120 s, 600 s) is asserted with an injected clock in
 * `test/nip9a/gateway-delivery.test.ts`.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { getToken } from 'nostr-tools/nip98';
import WebSocket from 'ws';
import { frameText } from '../../src/nostr/relay-frames.ts';
import type { NostrEvent } from '../../src/nostr/event.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { startCallbackReceiver, type CallbackReceiver } from '../support/callback-receiver.ts';
import { makeUser, type TestUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { eventually, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';

const now = (): number => Math.floor(Date.now() / 1000);

/** A raw NIP-01 client of the gateway's relay endpoint: frames in order, one waiter at a time. */
class EndpointClient {
  private readonly frames: unknown[][] = [];
  private waiter: (() => void) | null = null;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data: WebSocket.RawData) => {
      this.frames.push(JSON.parse(frameText(data)) as unknown[]);
      this.waiter?.();
    });
  }

  static async connect(url: string): Promise<EndpointClient> {
    const socket = new WebSocket(url);
    const client = new EndpointClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return client;
  }

  send(frame: unknown[]): void {
    this.socket.send(JSON.stringify(frame));
  }

  /** The next frame whose type is `type` (earlier frames of other types are skipped). */
  async next(type: string, timeoutMs = 20_000): Promise<unknown[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.frames.findIndex((f) => f[0] === type);
      if (index >= 0) return this.frames.splice(0, index + 1).pop() as unknown[];
      if (Date.now() > deadline) throw new Error(`no ${type} frame from the relay endpoint`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  close(): void {
    this.socket.close();
  }
}

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`NIP-9a gateway end to end (${adapter})`, () => {
    let relay: TestRelay;
    let redis: PrivateRedisServer | undefined;
    let receiver: CallbackReceiver;
    let dataDir: string;
    let storeUrl: string;
    let reader: StorePort;
    let service: ServiceProcess;
    const recipient = makeUser().pubkey;
    const poster = makeUser();
    const env = (): Record<string, string> => ({
      NOSTR_PUSH__ROLES: 'api,gateway',
      NOSTR_PUSH__NOSTR__RELAYS: relay.url,
      NOSTR_PUSH__STORE__URL: storeUrl,
      NOSTR_PUSH__DATA_DIR: dataDir,
      NOSTR_PUSH__QUEUE__POLL_MILLIS: '20',
      NOSTR_PUSH__NIP9A__ALLOW_LOOPBACK_CALLBACKS: 'I_UNDERSTAND',
      NOSTR_PUSH__NIP9A__RETRY_DELAYS_SECS: '2,2,2',
      NOSTR_PUSH__NIP9A__RELOAD_POLL_MILLIS: '100',
    });

    before(async () => {
      relay = await startTestRelay();
      receiver = await startCallbackReceiver();
      dataDir = mkdtempSync(join(tmpdir(), `np-nip9a-${adapter}-`));
      if (adapter === 'redis') {
        redis = await startRedisServer();
        storeUrl = redis.url;
        reader = await openRedisStore({ url: storeUrl });
      } else {
        storeUrl = `sqlite:${join(dataDir, 'nostr-push.sqlite')}`;
      }
      service = await startServiceProcess({ env: env() });
      if (adapter === 'sqlite') reader = await openSqliteStore({ path: join(dataDir, 'nostr-push.sqlite') });
    });

    after(async () => {
      await service.stop();
      await reader.close();
      await receiver.stop();
      await relay.stop();
      await redis?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    function registration(user: TestUser, d: string, path: string, extra: string[][] = []): NostrEvent {
      return signEvent(
        {
          kind: 30390,
          created_at: now(),
          content: '',
          tags: [
            ['d', d],
            ['relay', relay.url],
            ['filter', JSON.stringify({ kinds: [1], '#p': [recipient], '#t': [d] })],
            ['ignore', JSON.stringify({ '#t': ['muted'] })],
            ['callback', `${receiver.baseUrl}${path}`],
            ...extra,
          ],
        },
        user.secret,
      );
    }

    /** A kind 1 that the registration `d` matches (its `#t` is the d), plus any extra tags. */
    function note(d: string, extra: string[][] = []): NostrEvent {
      return signEvent({ kind: 1, created_at: now(), content: randomUUID(), tags: [['p', recipient], ['t', d], ...extra] }, poster.secret);
    }

    async function putRegistration(user: TestUser, event: NostrEvent): Promise<Response> {
      const url = `${service.baseUrl}/v1/nip9a/registrations`;
      const body = JSON.stringify(event);
      const authorization = await getToken(url, 'PUT', (template) => signEvent(template, user.secret), true, event);
      return fetch(url, { method: 'PUT', headers: { authorization, 'content-type': 'application/json' }, body });
    }

    /** Wait until the gateway subscribed at the relay with a filter for `d`. */
    async function gatewayWatches(d: string): Promise<void> {
      await eventually(
        () => (relay.requests().some((r) => JSON.stringify(r).includes(`"${d}"`)) ? true : undefined),
        20_000,
        `the gateway to subscribe for ${d}`,
      );
    }

    const received = (path: string) => receiver.received.filter((r) => r.path === path);

    test('NIP-11 at /nip9a advertises 9a and the limits', async () => {
      const res = await fetch(`${service.baseUrl}/nip9a`, { headers: { accept: 'application/nostr+json' } });
      assert.equal(res.status, 200);
      const doc = (await res.json()) as {
        supported_nips: unknown[];
        limitation: { auth_required: boolean };
        nip9a: Record<string, unknown>;
      };
      assert.ok(doc.supported_nips.includes('9a'));
      assert.equal(doc.limitation.auth_required, true);
      assert.equal(doc.nip9a.max_registrations_per_author, 4);
      assert.equal(doc.nip9a.max_filters, 8);
      assert.deepEqual(doc.nip9a.retry_delays_secs, [2, 2, 2]);
    });

    test('through the relay endpoint with AUTH: a matching event is POSTed once, an ignored one never; authors read only their own', async () => {
      const alice = makeUser();
      const bob = makeUser();
      const endpointUrl = `${service.baseUrl.replace('http://', 'ws://')}/nip9a`;
      const client = await EndpointClient.connect(endpointUrl);
      const challenge = (await client.next('AUTH'))[1] as string;
      const reg = registration(alice, 'via-relay', '/relay-cb');
      // Before AUTH nothing is accepted or read.
      client.send(['EVENT', reg]);
      assert.match(String((await client.next('OK'))[3]), /^auth-required:/);
      client.send(['REQ', 'early', { kinds: [30390] }]);
      assert.match(String((await client.next('CLOSED'))[2]), /^auth-required:/);
      const auth = signEvent(
        {
          kind: 22242,
          created_at: now(),
          content: '',
          tags: [
            ['relay', endpointUrl],
            ['challenge', challenge],
          ],
        },
        alice.secret,
      );
      client.send(['AUTH', auth]);
      assert.deepEqual(await client.next('OK'), ['OK', auth.id, true, '']);
      client.send(['EVENT', reg]);
      assert.deepEqual((await client.next('OK')).slice(0, 3), ['OK', reg.id, true]);
      // Someone else's registration is refused on Alice's connection.
      client.send(['EVENT', registration(bob, 'not-yours', '/x')]);
      assert.match(String((await client.next('OK'))[3]), /^restricted:/);
      client.send(['REQ', 'mine', { kinds: [30390], authors: [bob.pubkey, alice.pubkey] }]);
      const listed = await client.next('EVENT');
      assert.equal((listed[2] as NostrEvent).id, reg.id);
      assert.deepEqual(await client.next('EOSE'), ['EOSE', 'mine']);
      client.close();

      await gatewayWatches('via-relay');
      const wanted = note('via-relay');
      const marker = note('via-relay');
      await publish(relay.url, wanted, note('via-relay', [['t', 'muted']]), note('other-topic'), marker);
      await receiver.waitFor(1);
      await eventually(() => (received('/relay-cb').length >= 2 ? true : undefined), 20_000, 'two callbacks');
      const ids = received('/relay-cb')
        .map((r) => (JSON.parse(r.body) as { id: string }).id)
        .sort();
      assert.deepEqual(ids, [wanted.id, marker.id].sort(), 'each matching event once; the ignored one never');
      assert.equal((JSON.parse(received('/relay-cb')[0]?.body ?? '{}') as { relay: string }).relay, `${relay.url}/`);
    });

    test('through HTTP with NIP-98: 503 then success delivers the complete event', async () => {
      const carol = makeUser();
      let answered = 0;
      const previous = receiver.answer;
      receiver.answer = (request, index) =>
        request.path === '/http-cb' ? { status: answered++ === 0 ? 503 : 200 } : previous(request, index);
      const reg = registration(carol, 'via-http', '/http-cb', [['include_event']]);
      const res = await putRegistration(carol, reg);
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(((await res.json()) as { outcome: string }).outcome, 'stored');
      const unauthenticated = await fetch(`${service.baseUrl}/v1/nip9a/registrations`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(reg),
      });
      assert.equal(unauthenticated.status, 401);

      await gatewayWatches('via-http');
      const event = note('via-http');
      await publish(relay.url, event);
      await eventually(() => (received('/http-cb').length >= 2 ? true : undefined), 30_000, 'the retry after 503');
      const [first, second] = received('/http-cb');
      assert.deepEqual(JSON.parse(first?.body ?? ''), { id: event.id, relay: `${relay.url}/`, event });
      assert.equal(second?.body, first?.body);
      assert.ok((second?.atMs ?? 0) - (first?.atMs ?? 0) >= 1_900, 'the retry waits the configured delay');
    });

    test('a 404 deletes the registration', async () => {
      const dave = makeUser();
      const previous = receiver.answer;
      receiver.answer = (request, index) => (request.path === '/gone' ? { status: 404 } : previous(request, index));
      assert.equal((await putRegistration(dave, registration(dave, 'gone', '/gone'))).status, 200);
      assert.notEqual(await reader.getNip9aRegistration(dave.pubkey, 'gone'), null);
      await gatewayWatches('gone');
      await publish(relay.url, note('gone'));
      await eventually(
        async () => ((await reader.getNip9aRegistration(dave.pubkey, 'gone')) === null ? true : undefined),
        20_000,
        'the deletion',
      );
      assert.equal(received('/gone').length, 1);
    });

    test('killed with -9 while deliveries are queued, the restarted process delivers them', async () => {
      const erin = makeUser();
      let up = false;
      const previous = receiver.answer;
      receiver.answer = (request, index) => (request.path === '/crash' ? { status: up ? 200 : 503 } : previous(request, index));
      assert.equal((await putRegistration(erin, registration(erin, 'crash', '/crash'))).status, 200);
      await gatewayWatches('crash');
      const events = [note('crash'), note('crash'), note('crash')];
      await publish(relay.url, ...events);
      await eventually(() => (received('/crash').length >= 3 ? true : undefined), 20_000, 'three first attempts');
      await service.kill();
      up = true;
      const before = received('/crash').length;
      service = await startServiceProcess({ env: env() });
      await eventually(
        () => {
          const delivered = new Set(
            received('/crash')
              .slice(before)
              .map((r) => (JSON.parse(r.body) as { id: string }).id),
          );
          return events.every((e) => delivered.has(e.id)) ? true : undefined;
        },
        30_000,
        'the queued deliveries after restart',
      );
    });
  });
}
