import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { Hono } from 'hono';
import { finalizeEvent, generateSecretKey, getPublicKey, type EventTemplate } from 'nostr-tools/pure';
import { getToken } from 'nostr-tools/nip98';
import { createEventVerifier } from '../nostr/event.ts';
import { createLogger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import { openSqliteStore } from '../store/sqlite/index.ts';
import type { StorePort } from '../store/port.ts';
import type { InboundEnvelope, InboundItem, RelayEventNotice } from '../engine/router.ts';
import { defaultConfig, type Nip9aReceiverConfig } from '../config/defaults.ts';
import { hashSecret } from '../nip9a/receiver/callback-url.ts';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { getRequestListener } from '@hono/node-server';
import { createApiApp } from './app.ts';
import { createCallbackReceiver, nip9aCallbackRoutes } from './nip9a-callbacks.ts';
import { nip9aCallbackFront } from './nip9a-callback-front.ts';
import { createClientAddressPolicy } from './client-address.ts';
import { ManualClock } from '../util/clock.ts';

const PUBLIC_URL = 'https://push.example.com';
const RELAY = 'wss://community.example/';
const LEASE = { max: 100, leaseMs: 30_000, maxAttempts: 5 };

/**
 * How a relay's POST reaches the receiver: Hono's route (`app.request()`, what a non-Node caller
 * gets), or the service's Node listener over real HTTP, where the callback front answers first.
 */
type Via = 'hono' | 'node front';

interface Harness {
  app: Hono;
  store: StorePort;
  metrics: Metrics;
  queued: number;
  /** A request to `path` the way `via` sends it. */
  send(path: string, init: RequestInit): Promise<Response>;
  /** The Node listener's port (`node front`), for a client that misbehaves below fetch; else null. */
  port: number | null;
  close(): Promise<void>;
}

async function harness(
  options: { publicUrl?: string; receiver?: Partial<Nip9aReceiverConfig>; via?: Via; clock?: ManualClock } = {},
): Promise<Harness> {
  const store = await openSqliteStore({
    path: ':memory:',
    logger: createLogger({ level: 'silent' }),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const metrics = new Metrics();
  const logger = createLogger({ level: 'silent' });
  const app = createApiApp({ health: { pubkey: () => '', criticalFlags: () => ({}) }, metrics, logger });
  let server: Server | null = null;
  const h: Harness = {
    app,
    store,
    metrics,
    queued: 0,
    port: null,
    send: async (path, init) => app.request(`http://127.0.0.1:8000${path}`, init),
    close: async () => {
      if (server) await new Promise((resolve) => server?.close(resolve));
      await store.close();
    },
  };
  const deps = {
    store,
    verifier: await createEventVerifier(),
    publicUrl: options.publicUrl ?? PUBLIC_URL,
    receiver: { ...defaultConfig().nip9a.receiver, ...options.receiver },
    clientAddresses: createClientAddressPolicy([]),
    contentKinds: defaultConfig().notification.event_kinds,
    onQueued: () => (h.queued += 1),
    metrics,
    logger,
  };
  const receiver = createCallbackReceiver(deps);
  app.route('/', nip9aCallbackRoutes(deps, receiver));
  if (options.via === 'node front') {
    const honoListener = getRequestListener(app.fetch);
    const listening = createServer(nip9aCallbackFront(receiver, logger, (req, res) => void honoListener(req, res)));
    server = listening;
    await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
    const { port } = listening.address() as AddressInfo;
    h.port = port;
    h.send = (path, init) => fetch(`http://127.0.0.1:${port}${path}`, init);
  }
  return h;
}

interface User {
  secret: Uint8Array;
  pubkey: string;
}

function user(): User {
  const secret = generateSecretKey();
  return { secret, pubkey: getPublicKey(secret) };
}

/**
 * A management request as an app makes it: nostr-tools' NIP-98 token over the exact body. An
 * identical request in the same second would carry the same auth event (refused as a replay), so
 * a test repeating one signs it `secondsEarlier` (well inside the 60 s window, and far enough back
 * that the first one, signed a second or two before, cannot have the same `created_at`).
 */
async function manage(
  h: Harness,
  who: User,
  method: string,
  path: string,
  body?: Record<string, unknown>,
  secondsEarlier = 0,
): Promise<Response> {
  const url = `${PUBLIC_URL}${path}`;
  const sign = (e: EventTemplate) => finalizeEvent({ ...e, created_at: e.created_at - secondsEarlier }, who.secret);
  const token = await getToken(url, method, sign, true, body);
  return h.app.request(`http://127.0.0.1:8000${path}`, {
    method,
    headers: { authorization: token, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function createCallback(h: Harness, who: User, relay = RELAY): Promise<{ id: string; url: string; relay: string }> {
  const res = await manage(h, who, 'POST', '/v1/nip9a/callbacks', { relay });
  assert.equal(res.status, 201, await res.clone().text());
  return (await res.json()) as { id: string; url: string; relay: string };
}

function signed(author: User, template: Partial<EventTemplate> & { kind: number }) {
  return finalizeEvent({ created_at: Math.floor(Date.now() / 1000), content: '', tags: [], ...template }, author.secret);
}

/** What a NIP-9a relay POSTs to a callback URL. */
async function relayPost(h: Harness, url: string, body: unknown, contentType = 'application/json'): Promise<Response> {
  const path = new URL(url).pathname;
  return h.send(path, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function inboundItems(store: StorePort): Promise<InboundItem[]> {
  return (await store.lease<InboundItem>('inbound', LEASE)).map((i) => i.payload);
}

describe('NIP-9a callback management (NIP-98)', () => {
  let h: Harness;
  beforeEach(async () => (h = await harness()));
  afterEach(() => h.store.close());

  test('every route answers 401 JSON without an Authorization header, and with one signed for another URL', async () => {
    for (const [method, path] of [
      ['POST', '/v1/nip9a/callbacks'],
      ['GET', '/v1/nip9a/callbacks'],
      ['DELETE', '/v1/nip9a/callbacks/abc'],
    ] as const) {
      const res = await h.app.request(`http://127.0.0.1:8000${path}`, {
        method,
        ...(method === 'POST' ? { body: '{}', headers: { 'content-type': 'application/json' } } : {}),
      });
      assert.equal(res.status, 401, `${method} ${path}`);
      assert.equal(((await res.json()) as { code: string }).code, 'NIP98_UNAUTHORIZED');
    }
    const alice = user();
    const token = await getToken(`${PUBLIC_URL}/v1/other`, 'GET', (e) => finalizeEvent(e, alice.secret), true);
    const res = await h.app.request('http://127.0.0.1:8000/v1/nip9a/callbacks', { headers: { authorization: token } });
    assert.equal(res.status, 401);
    const body = (await res.json()) as { code: string; error: string };
    assert.equal(body.code, 'NIP98_UNAUTHORIZED');
    assert.match(body.error, /u tag/);
  });

  test('a created URL is under server.public_url with a 256-bit secret the store keeps only as a hash', async () => {
    const alice = user();
    const created = await createCallback(h, alice, 'WSS://Community.Example');
    const match = /^https:\/\/push\.example\.com\/nip9a\/cb\/([A-Za-z0-9_-]{43})$/.exec(created.url);
    assert.ok(match, created.url);
    const secret = match[1] ?? '';
    assert.equal(created.relay, RELAY, 'the relay is stored normalised');
    const stored = await h.store.findNip9aCallback(hashSecret(secret));
    assert.equal(stored?.owner, alice.pubkey);
    assert.ok(!JSON.stringify(stored).includes(secret), 'the secret itself is not stored');

    const listed = await manage(h, alice, 'GET', '/v1/nip9a/callbacks');
    assert.equal(listed.status, 200);
    const { callbacks } = (await listed.json()) as { callbacks: Array<{ id: string; url: string }> };
    assert.deepEqual(
      callbacks.map((c) => [c.id, c.url]),
      [[created.id, `${PUBLIC_URL}/nip9a/cb/${secret.slice(0, 4)}…`]],
    );
    assert.deepEqual(await (await manage(h, user(), 'GET', '/v1/nip9a/callbacks')).json(), { callbacks: [] }, 'another user sees none');
  });

  test('a relay that is not a ws(s) URL is a 400; too many callbacks a 409', async () => {
    const alice = user();
    const bad = await manage(h, alice, 'POST', '/v1/nip9a/callbacks', { relay: 'https://community.example' });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { code: string }).code, 'NIP9A_INVALID_RELAY');
    const small = await harness({ receiver: { max_callbacks_per_owner: 1 } });
    await createCallback(small, alice);
    const over = await manage(small, alice, 'POST', '/v1/nip9a/callbacks', { relay: 'wss://other.example/' });
    assert.equal(over.status, 409);
    await small.store.close();
  });

  test('callback URLs per client address: new keys from one address stop at max_callbacks_per_address_per_day, 429 with Retry-After', async () => {
    const small = await harness({ receiver: { max_callbacks_per_address_per_day: 3 } });
    try {
      for (let i = 0; i < 3; i += 1) await createCallback(small, user());
      const stranger = user();
      const over = await manage(small, stranger, 'POST', '/v1/nip9a/callbacks', { relay: RELAY });
      assert.equal(over.status, 429);
      assert.equal(((await over.json()) as { code: string }).code, 'CLIENT_QUOTA_EXCEEDED');
      const retryAfter = Number(over.headers.get('retry-after'));
      assert.ok(retryAfter > 0 && retryAfter <= 86_400, `Retry-After ${retryAfter}`);
      assert.deepEqual(await small.store.listNip9aCallbacks(stranger.pubkey), []);
    } finally {
      await small.close();
    }
  });

  test('a callback URL records its last POST once a day: idle ones are what the sweep deletes', async () => {
    const clock = new ManualClock(Date.now());
    const timed = await harness({ clock });
    try {
      const alice = user();
      // Two users: one user's two identical requests in one second would be one auth event.
      const used = await createCallback(timed, alice);
      const unused = await createCallback(timed, user());
      const DAY = 86_400_000;
      clock.advance(2 * DAY);
      const post = (id: string) => relayPost(timed, used.url, { id, relay: RELAY });
      assert.equal((await post('ab'.repeat(32))).status, 202);
      assert.equal((await post('cd'.repeat(32))).status, 202);
      const today = Math.floor(clock.nowMs() / DAY) * DAY;
      const swept = await timed.store.forgetIdleNip9aCallbacks(today, 10);
      assert.deepEqual(swept, { examined: 1, removed: 1 }, `the unused URL ${unused.id} went`);
      assert.deepEqual(
        (await timed.store.listNip9aCallbacks(alice.pubkey)).map((c) => c.id),
        [used.id],
        'the used one stayed',
      );
    } finally {
      await timed.close();
    }
  });

  test('without server.public_url nothing is made, with a clear 503', async () => {
    const unconfigured = await harness({ publicUrl: '' });
    const res = await manage(unconfigured, user(), 'POST', '/v1/nip9a/callbacks', { relay: RELAY });
    assert.equal(res.status, 503);
    const body = (await res.json()) as { code: string; error: string };
    assert.equal(body.code, 'PUBLIC_URL_NOT_CONFIGURED');
    assert.match(body.error, /server\.public_url/);
    await unconfigured.store.close();
  });

  test('only the owner revokes; a revoked URL answers 404 to relays', async () => {
    const alice = user();
    const created = await createCallback(h, alice);
    assert.equal((await manage(h, user(), 'DELETE', `/v1/nip9a/callbacks/${created.id}`)).status, 404);
    assert.equal((await manage(h, alice, 'DELETE', `/v1/nip9a/callbacks/${created.id}`)).status, 204);
    const res = await relayPost(h, created.url, { id: 'ab'.repeat(32), relay: RELAY });
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as { code: string }).code, 'NOT_FOUND');
    assert.equal((await manage(h, alice, 'DELETE', `/v1/nip9a/callbacks/${created.id}`, undefined, 30)).status, 404);
  });
});

for (const via of ['hono', 'node front'] as const)
  describe(`NIP-9a callback receiving (${via})`, () => {
    let h: Harness;
    let alice: User;
    let url: string;
    beforeEach(async () => {
      h = await harness({ receiver: { rate_burst: 50 }, via });
      alice = user();
      url = (await createCallback(h, alice)).url;
    });
    afterEach(() => h.close());

    test('an included like is queued restricted to the owner, once; a repeat is a 200 duplicate', async () => {
      const like = signed(user(), {
        kind: 7,
        content: '+',
        tags: [
          ['p', alice.pubkey],
          ['e', 'cd'.repeat(32)],
        ],
      });
      const first = await relayPost(h, url, { id: like.id, relay: 'wss://community.example', event: like });
      assert.equal(first.status, 202);
      assert.deepEqual(await first.json(), { status: 'queued' });
      const again = await relayPost(h, url, { id: like.id, relay: RELAY, event: like });
      assert.equal(again.status, 200);
      assert.deepEqual(await again.json(), { status: 'duplicate' });
      assert.equal(h.queued, 1);
      const items = await inboundItems(h.store);
      assert.equal(items.length, 1);
      const envelope = items[0] as InboundEnvelope;
      assert.equal(envelope.event.id, like.id);
      assert.equal(envelope.onlyRecipient, alice.pubkey);
      assert.equal(envelope.relay, RELAY);
      assert.equal(envelope.context, 'live');
    });

    test('an id-only callback, and an included event of a kind without copy, become relay-event notices', async () => {
      const note = signed(user(), { kind: 1, content: 'hello' });
      assert.equal((await relayPost(h, url, { id: 'ef'.repeat(32), relay: RELAY })).status, 202);
      assert.equal((await relayPost(h, url, { id: note.id, relay: RELAY, event: note })).status, 202);
      const notices = (await inboundItems(h.store)) as RelayEventNotice[];
      assert.deepEqual(
        notices.map((n) => [n.notice, n.eventId, n.recipient, n.relay, n.eventKind]),
        [
          ['relayEvent', 'ef'.repeat(32), alice.pubkey, RELAY, undefined],
          ['relayEvent', note.id, alice.pubkey, RELAY, 1],
        ],
      );
    });

    test('a forged event, an id that is not the envelope’s, another relay and a bad shape are refused; nothing is queued', async () => {
      const like = signed(user(), { kind: 7, content: '+', tags: [['p', alice.pubkey]] });
      const forged = { ...like, content: '-' };
      const cases: Array<[unknown, number, string]> = [
        [{ id: forged.id, relay: RELAY, event: forged }, 400, 'NIP9A_INVALID_EVENT'],
        [{ id: like.id, relay: RELAY, event: { ...like, sig: '00'.repeat(64) } }, 400, 'NIP9A_INVALID_EVENT'],
        [{ id: 'ab'.repeat(32), relay: RELAY, event: like }, 400, 'NIP9A_EVENT_ID_MISMATCH'],
        [{ id: like.id, relay: 'wss://elsewhere.example/', event: like }, 403, 'NIP9A_RELAY_MISMATCH'],
        [{ id: 'not-hex', relay: RELAY }, 400, 'NIP9A_INVALID_ENVELOPE'],
        [{ id: like.id }, 400, 'NIP9A_INVALID_ENVELOPE'],
        [[like.id, RELAY], 400, 'NIP9A_INVALID_ENVELOPE'],
        ['{not json', 400, 'INVALID_JSON'],
      ];
      for (const [body, status, code] of cases) {
        const res = await relayPost(h, url, body);
        assert.equal(res.status, status, JSON.stringify(body).slice(0, 80));
        assert.equal(((await res.json()) as { code: string }).code, code);
      }
      assert.equal((await h.store.queueStats('inbound')).ready, 0);
      assert.match(await h.metrics.registry.metrics(), /push_nip9a_callback_requests_total\{outcome="nip9a_invalid_event"\} 2/);
    });

    test('Content-Type must be application/json (415), the body is bounded (413), an unknown secret is a 404', async () => {
      const like = signed(user(), { kind: 7, tags: [['p', alice.pubkey]] });
      const plain = await relayPost(h, url, { id: like.id, relay: RELAY }, 'text/plain');
      assert.equal(plain.status, 415);
      assert.equal(((await plain.json()) as { code: string }).code, 'UNSUPPORTED_MEDIA_TYPE');
      assert.equal((await relayPost(h, url, { id: like.id, relay: RELAY }, 'application/json; charset=utf-8')).status, 202);
      const huge = await relayPost(h, url, { id: like.id, relay: RELAY, padding: 'x'.repeat(4 * 1024 * 1024 + 4 * 1024) });
      assert.equal(huge.status, 413);
      const unknown = await relayPost(h, `${PUBLIC_URL}/nip9a/cb/${'A'.repeat(43)}`, { id: like.id, relay: RELAY });
      assert.equal(unknown.status, 404);
      assert.equal((await relayPost(h, `${PUBLIC_URL}/nip9a/cb/short`, { id: like.id, relay: RELAY })).status, 404);
    });

    test('a relay that goes away mid-body is refused BODY_UNREADABLE, counted, and nothing is queued', async () => {
      const path = new URL(url).pathname;
      const partial = `{"id":"${'ab'.repeat(16)}`;
      if (h.port === null) {
        // Hono's route: a body stream that fails after its first chunk, as a dropped connection does.
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(Buffer.from(partial));
            controller.error(new Error('relay went away'));
          },
        });
        const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body, duplex: 'half' };
        const res = await h.send(path, init);
        assert.equal(res.status, 400);
        assert.equal(((await res.json()) as { code: string }).code, 'BODY_UNREADABLE');
      } else {
        // Over real HTTP: the headers and a part of the promised body, then the connection closes
        // (destroyed once the bytes are written: a half-close would leave Node's side open).
        const socket = connect(h.port, '127.0.0.1');
        await once(socket, 'connect');
        const request = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n${partial}`;
        await new Promise<void>((resolve, reject) => socket.write(request, (err) => (err ? reject(err) : resolve())));
        socket.destroy();
      }
      // The abort is seen by the server after the client is gone: wait for its count (bounded).
      const deadline = Date.now() + 5_000;
      const counted = /push_nip9a_callback_requests_total\{outcome="body_unreadable"\} 1/;
      while (!counted.test(await h.metrics.registry.metrics())) {
        assert.ok(Date.now() < deadline, 'the unreadable body was counted within 5 s');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.equal((await h.store.queueStats('inbound')).ready, 0, 'nothing was queued');
    });

    test('each callback is rate-limited on its own, with a Retry-After', async () => {
      const limited = await harness({ receiver: { rate_burst: 2, rate_per_sec: 1 }, via });
      const bob = user();
      const bobs = (await createCallback(limited, bob)).url;
      const others = (await createCallback(limited, alice)).url;
      const post = (target: string, i: number) => relayPost(limited, target, { id: i.toString(16).padStart(64, '0'), relay: RELAY });
      assert.equal((await post(bobs, 1)).status, 202);
      assert.equal((await post(bobs, 2)).status, 202);
      const third = await post(bobs, 3);
      assert.equal(third.status, 429);
      assert.equal(third.headers.get('retry-after'), '1');
      assert.equal(((await third.json()) as { code: string }).code, 'RATE_LIMITED');
      assert.equal((await post(others, 4)).status, 202, 'another callback keeps its own budget');
      await limited.close();
    });
  });
