import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { WebSocket } from 'ws';
import { createEventVerifier } from '../nostr/event.ts';
import { generateSecretKey, publicKeyOf, signEvent } from '../nostr/keys.ts';
import { HTTP_AUTH_KIND, nip98ReplayGuard } from '../nostr/nip98.ts';
import { createLogger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import { openSqliteStore } from '../store/sqlite/index.ts';
import type { StorePort } from '../store/port.ts';
import { attachInboxSockets, INBOX_SOCKET_PATH, type InboxSockets } from './inbox-socket.ts';
import { createClientAddressPolicy } from './client-address.ts';

const WAIT_MS = 20_000;
const SOCKETS_PER_PUBKEY = 2;
const SOCKETS_PER_ADDRESS = 3;

function authFor(secret: string, url: string, method = 'GET'): string {
  const event = signEvent(
    {
      kind: HTTP_AUTH_KIND,
      created_at: Math.floor(Date.now() / 1000),
      content: '',
      // A nonce, so two upgrades of one user in one second are two auth events (not a replay).
      tags: [
        ['u', url],
        ['method', method],
        ['nonce', String(Math.random())],
      ],
    },
    secret,
  );
  return `Nostr ${Buffer.from(JSON.stringify(event)).toString('base64')}`;
}

/** Open a socket; resolves with its frames once open, or with the refusal's status and body. */
function connect(
  url: string,
  headers: Record<string, string>,
): Promise<{ ws: WebSocket; frames: unknown[] } | { status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    const frames: unknown[] = [];
    ws.on('message', (data: Buffer) => frames.push(JSON.parse(data.toString('utf8')) as unknown));
    ws.once('open', () => resolve({ ws, frames }));
    ws.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    ws.once('error', reject);
  });
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The server releases a closed socket's place when it sees the close: retry the open until then. */
async function eventuallyOpens(
  attempt: () => Promise<{ ws: WebSocket; frames: unknown[] } | { status: number; body: string }>,
  opened: WebSocket[],
): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const result = await attempt();
    if ('ws' in result) {
      opened.push(result.ws);
      return;
    }
    if (Date.now() > deadline) throw new Error(`a freed place was not given back: ${result.status} ${result.body}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('inbox hint socket', () => {
  let store: StorePort;
  let storeB: StorePort;
  let server: Server;
  let sockets: InboxSockets;
  let base: string;
  const alice = generateSecretKey();
  const bob = generateSecretKey();

  beforeEach(async () => {
    store = await openSqliteStore({ path: ':memory:' });
    storeB = await openSqliteStore({ path: ':memory:' });
    server = createServer((_req, res) => res.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const logger = createLogger({ level: 'silent' });
    sockets = attachInboxSockets(server, {
      store,
      storeOf: (appId) => (appId === 'b' ? storeB : undefined),
      auth: { verifier: await createEventVerifier(), replay: nip98ReplayGuard(store), clock: store.clock, logger },
      metrics: new Metrics(),
      logger,
      // Loopback is the "proxy", so a test names each client's address with X-Forwarded-For.
      clientAddresses: createClientAddressPolicy(['127.0.0.1']),
      maxSocketsPerPubkey: SOCKETS_PER_PUBKEY,
      maxSocketsPerAddress: SOCKETS_PER_ADDRESS,
      otherUpgradesHandled: false,
    });
  });
  afterEach(async () => {
    await sockets.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await store.close();
    await storeB.close();
  });

  test('tenancy: X-App picks the app whose hints a socket hears; an unknown app is 404', async () => {
    const url = `${base}${INBOX_SOCKET_PATH}`;
    const ofDefault = await connect(url.replace('http', 'ws'), { authorization: authFor(alice, url) });
    const ofB = await connect(url.replace('http', 'ws'), { authorization: authFor(alice, url), 'x-app': 'b' });
    assert.ok('ws' in ofDefault && 'ws' in ofB);
    await storeB.countInboxNotifications([{ countKey: 'e1', recipient: publicKeyOf(alice), type: 'comment' }], 60);
    await until(() => ofB.frames.length === 1, 'the hint of app b');
    await store.countInboxNotifications([{ countKey: 'e2', recipient: publicKeyOf(alice), type: 'like' }], 60);
    await until(() => ofDefault.frames.length === 1, 'the hint of the default app');
    assert.deepEqual(ofB.frames, [{ type: 'comment', totalNew: 1 }], 'b’s socket heard b’s hint only');
    assert.deepEqual(ofDefault.frames, [{ type: 'like', totalNew: 1 }], 'the default socket heard the default’s only');
    const unknown = await connect(url.replace('http', 'ws'), { authorization: authFor(bob, url), 'x-app': 'nope' });
    assert.ok('status' in unknown);
    assert.equal(unknown.status, 404);
    ofDefault.ws.close();
    ofB.ws.close();
  });

  test(`open sockets are bounded per pubkey (${SOCKETS_PER_PUBKEY}) and per client address (${SOCKETS_PER_ADDRESS}): 429 past either, a closed one frees its place`, async () => {
    const url = `${base}${INBOX_SOCKET_PATH}`;
    const wsUrl = url.replace('http', 'ws');
    const open = (secret: string, address: string) => connect(wsUrl, { authorization: authFor(secret, url), 'x-forwarded-for': address });
    const opened: WebSocket[] = [];
    const mustOpen = async (secret: string, address: string): Promise<WebSocket> => {
      const result = await open(secret, address);
      assert.ok('ws' in result, `expected an open socket, got ${JSON.stringify(result)}`);
      opened.push(result.ws);
      return result.ws;
    };
    const mustRefuse = async (secret: string, address: string, bound: RegExp): Promise<void> => {
      const result = await open(secret, address);
      assert.ok('status' in result, 'expected a refusal');
      assert.equal(result.status, 429);
      const body = JSON.parse(result.body) as { code: string; error: string };
      assert.equal(body.code, 'TOO_MANY_INBOX_SOCKETS');
      assert.match(body.error, bound);
    };
    try {
      // Per pubkey, whichever address: Alice's third socket is refused, from a fresh address too.
      const first = await mustOpen(alice, '198.51.100.1');
      await mustOpen(alice, '198.51.100.2');
      await mustRefuse(alice, '198.51.100.3', /max_sockets_per_pubkey/);
      first.close();
      await until(() => first.readyState === WebSocket.CLOSED, 'the closed socket');
      await eventuallyOpens(() => open(alice, '198.51.100.3'), opened);
      // Per address, whichever keys: fresh keys from one address stop at the bound; another address is unaffected.
      for (let i = 0; i < SOCKETS_PER_ADDRESS; i += 1) await mustOpen(generateSecretKey(), '203.0.113.7');
      await mustRefuse(generateSecretKey(), '203.0.113.7', /max_sockets_per_address/);
      await mustOpen(generateSecretKey(), '203.0.113.8');
    } finally {
      for (const ws of opened) ws.close();
    }
  });

  test('a hint reaches the sockets of the user whose counter changed, and only theirs', async () => {
    const url = `${base}${INBOX_SOCKET_PATH}`;
    const aliceSocket = await connect(url.replace('http', 'ws'), { authorization: authFor(alice, url) });
    const bobSocket = await connect(url.replace('http', 'ws'), { authorization: authFor(bob, url) });
    assert.ok('ws' in aliceSocket && 'ws' in bobSocket);
    await store.countInboxNotifications([{ countKey: 'e1', recipient: publicKeyOf(alice), type: 'comment' }], 60);
    await until(() => aliceSocket.frames.length === 1, 'the hint');
    assert.deepEqual(aliceSocket.frames, [{ type: 'comment', totalNew: 1 }]);
    // Bob's sentinel: his own hint arrives, and Alice's never did.
    await store.countInboxNotifications([{ countKey: 'e2', recipient: publicKeyOf(bob), type: 'like' }], 60);
    await until(() => bobSocket.frames.length === 1, "Bob's hint");
    assert.deepEqual(bobSocket.frames, [{ type: 'like', totalNew: 1 }]);
    aliceSocket.ws.close();
    bobSocket.ws.close();
  });

  test('the upgrade is refused with 401 and a JSON code without NIP-98, with a reused or a wrong-URL auth event', async () => {
    const url = `${base}${INBOX_SOCKET_PATH}`;
    const wsUrl = url.replace('http', 'ws');
    const none = await connect(wsUrl, {});
    assert.ok('status' in none);
    assert.equal(none.status, 401);
    assert.equal((JSON.parse(none.body) as { code: string }).code, 'NIP98_UNAUTHORIZED');
    const wrongUrl = await connect(wsUrl, { authorization: authFor(alice, `${base}/v1/inbox/counts`) });
    assert.ok('status' in wrongUrl && wrongUrl.status === 401);
    const once = authFor(alice, url);
    const first = await connect(wsUrl, { authorization: once });
    assert.ok('ws' in first);
    first.ws.close();
    const again = await connect(wsUrl, { authorization: once });
    assert.ok('status' in again && again.status === 401, 'replayed');
  });

  test('with no other upgrade handler, an upgrade to another path is a 404, not left hanging', async () => {
    const other = await connect(`${base.replace('http', 'ws')}/elsewhere/ws`, {});
    assert.ok('status' in other && other.status === 404);
  });
});
