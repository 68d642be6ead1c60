import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createCallbackPoster, DRAINED_BODY_BYTES } from './callback-post.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  connection: number;
}

/** A loopback server that records requests with the number of the connection each came on. */
async function startServer(
  answer: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; seen: Seen[]; connections: () => number; server: Server }> {
  const seen: Seen[] = [];
  let connections = 0;
  const ids = new WeakMap<object, number>();
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, connection: ids.get(req.socket) ?? 0 });
      answer(req, res);
    });
  });
  server.on('connection', (socket) => ids.set(socket, ++connections));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen, connections: () => connections, server };
}

describe('the callback POST', () => {
  const poster = createCallbackPoster({ connectionsPerOrigin: 1 });
  let bodySize = 0;
  let status = 200;
  let location: string | null = null;
  let srv: Awaited<ReturnType<typeof startServer>>;

  before(async () => {
    srv = await startServer((_req, res) => {
      if (location) res.setHeader('location', location);
      res.statusCode = status;
      res.end('x'.repeat(bodySize));
    });
  });
  after(async () => {
    await poster.close();
    srv.server.closeAllConnections();
    await new Promise((resolve) => srv.server.close(resolve));
  });

  test('sends the JSON body as it is, with no credentials or cookies, and answers the status', async () => {
    status = 202;
    const body = JSON.stringify({ id: 'a'.repeat(64), relay: 'wss://relay.example.com/' });
    const result = await poster.post(`${srv.url}/cb/token?x=1`, body, 5_000);
    assert.deepEqual(result, { kind: 'status', status: 202 });
    const request = srv.seen.at(-1);
    assert.ok(request, 'the request arrived');
    assert.equal(request.method, 'POST');
    assert.equal(request.url, '/cb/token?x=1', 'path and query kept');
    assert.equal(request.body, body);
    assert.equal(request.headers['content-type'], 'application/json');
    assert.equal(request.headers.cookie, undefined, 'no cookie');
    assert.equal(request.headers.authorization, undefined, 'no credentials');
    status = 200;
  });

  test('a redirect is answered as it is, never followed', async () => {
    const before = srv.seen.length;
    status = 302;
    location = 'http://10.0.0.1/steal';
    const result = await poster.post(`${srv.url}/cb/r`, '{}', 5_000);
    status = 200;
    location = null;
    assert.deepEqual(result, { kind: 'status', status: 302 });
    assert.equal(srv.seen.length, before + 1, 'one request, to the callback only');
  });

  test('an empty or short answer keeps the connection; a longer one costs it, unread', async () => {
    bodySize = 0;
    await poster.post(`${srv.url}/cb/1`, '{}', 5_000);
    const first = srv.connections();
    bodySize = DRAINED_BODY_BYTES / 2;
    await poster.post(`${srv.url}/cb/2`, '{}', 5_000);
    await poster.post(`${srv.url}/cb/3`, '{}', 5_000);
    assert.equal(srv.connections(), first, 'short answers passed over on the same connection');
    bodySize = 64 * DRAINED_BODY_BYTES;
    assert.deepEqual(await poster.post(`${srv.url}/cb/4`, '{}', 5_000), { kind: 'status', status: 200 });
    bodySize = 0;
    await poster.post(`${srv.url}/cb/5`, '{}', 5_000);
    assert.equal(srv.connections(), first + 1, 'the long answer was not read: its connection was closed');
  });
});

describe('the callback POST when the callback fails', () => {
  test('no answer within the timeout is a timeout', async () => {
    const poster = createCallbackPoster();
    const silent = await startServer(() => undefined);
    try {
      assert.deepEqual(await poster.post(`${silent.url}/cb`, '{}', 100), { kind: 'timeout' });
    } finally {
      await poster.close().catch(() => undefined);
      silent.server.closeAllConnections();
      await new Promise((resolve) => silent.server.close(resolve));
    }
  });

  test('a refused connection is a network error with its code', async () => {
    const poster = createCallbackPoster();
    const gone = await startServer(() => undefined);
    const url = gone.url;
    await new Promise((resolve) => gone.server.close(resolve));
    try {
      assert.deepEqual(await poster.post(`${url}/cb`, '{}', 5_000), { kind: 'network', message: 'ECONNREFUSED' });
    } finally {
      await poster.close();
    }
  });
});
