import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { TEST_HOSTS_ENV } from '../../net/public-connect.ts';
import { createCallbackPoster, DRAINED_BODY_BYTES, type CallbackPoster } from './callback-post.ts';
import { CallbackPostThreads, THREAD_EXITED_MESSAGE } from './callback-post-threads.ts';

// Public-looking names with hostile answers, through the hosts override the binary honours under
// NODE_ENV=test (the test runner's): POST threads read it from their environment like the gateway thread.
process.env[TEST_HOSTS_ENV] = 'hook.example.com=127.0.0.1,private-hook.example.com=10.0.0.1|8.8.8.8';

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

/** The same suite for both sides of `nip9a.post_threads`: the POST is the same request either way. */
const SIDES: Array<{ name: string; make(options?: { connectionsPerOrigin?: number }): { post: CallbackPoster; close(): Promise<void> } }> =
  [
    { name: 'on the gateway thread', make: (options) => createCallbackPoster({ allowLoopback: true, ...options }) },
    { name: 'on a POST thread', make: (options) => new CallbackPostThreads({ threads: 1, allowLoopback: true, ...options }) },
  ];

for (const side of SIDES) {
  describe(`the callback POST ${side.name}`, () => {
    const poster = side.make({ connectionsPerOrigin: 1 });
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

    test('a callback name resolving to loopback or a private address gets no connection, loopback allowed or not', async () => {
      const before = srv.connections();
      const port = new URL(srv.url).port;
      const loopback = await poster.post(`http://hook.example.com:${port}/cb/x`, '{}', 5_000);
      assert.ok(loopback.kind === 'refused', `refused, not ${loopback.kind}`);
      assert.deepEqual(
        [loopback.refusal.purpose, loopback.refusal.reason, loopback.refusal.address],
        ['nip9a_callback', 'loopback', '127.0.0.1'],
      );
      const mixed = await poster.post(`https://private-hook.example.com/cb/y`, '{}', 5_000);
      assert.equal(mixed.kind === 'refused' && mixed.refusal.reason, 'private', 'one private record refuses the name');
      const literal = await poster.post(`http://10.0.0.1:${port}/cb/z`, '{}', 5_000);
      assert.equal(literal.kind === 'refused' && literal.refusal.reason, 'private');
      assert.equal(srv.connections(), before, 'the listener saw nothing');
    });

    test('an empty or short answer keeps the connection; a longer one costs it, unread', async () => {
      const connectionOf = (path: string): number | undefined => srv.seen.find((r) => r.url === path)?.connection;
      bodySize = 0;
      await poster.post(`${srv.url}/cb/1`, '{}', 5_000);
      bodySize = DRAINED_BODY_BYTES / 2;
      await poster.post(`${srv.url}/cb/2`, '{}', 5_000);
      await poster.post(`${srv.url}/cb/3`, '{}', 5_000);
      bodySize = 64 * DRAINED_BODY_BYTES;
      assert.deepEqual(await poster.post(`${srv.url}/cb/4`, '{}', 5_000), { kind: 'status', status: 200 });
      bodySize = 0;
      await poster.post(`${srv.url}/cb/5`, '{}', 5_000);
      const first = connectionOf('/cb/1');
      assert.ok(first !== undefined);
      assert.deepEqual(
        ['/cb/2', '/cb/3', '/cb/4'].map(connectionOf),
        [first, first, first],
        'empty and short answers passed over on the same connection',
      );
      assert.notEqual(connectionOf('/cb/5'), first, 'the long answer was not read: its connection was closed');
    });
  });

  describe(`the callback POST ${side.name} when the callback fails`, () => {
    test('no answer within the timeout is a timeout', async () => {
      const poster = side.make();
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
      const poster = side.make();
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
}

describe('the callback POST threads', () => {
  test('a thread that exits fails the POSTs it held as network errors, and a new thread takes the next', async () => {
    const exits: string[] = [];
    const threads = new CallbackPostThreads({ threads: 1, allowLoopback: true, onThreadExit: (reason) => exits.push(reason) });
    const silent = await startServer(() => undefined);
    const answering = await startServer((_req, res) => res.end());
    try {
      const held = threads.post(`${silent.url}/cb`, '{}', 60_000);
      // Terminated once the POST is on the thread (its request reached the server).
      while (silent.seen.length === 0) await new Promise((resolve) => setImmediate(resolve));
      const [worker] = threads.runningWorkers;
      assert.ok(worker, 'a thread runs');
      await worker.terminate();
      assert.deepEqual(await held, { kind: 'network', message: THREAD_EXITED_MESSAGE });
      assert.equal(exits.length, 1, 'the exit was reported');
      assert.deepEqual(await threads.post(`${answering.url}/cb`, '{}', 5_000), { kind: 'status', status: 200 });
      assert.equal(threads.runningWorkers.length, 1, 'a new thread answered');
      assert.notEqual(threads.runningWorkers[0], worker);
    } finally {
      await threads.close();
      for (const srv of [silent, answering]) {
        srv.server.closeAllConnections();
        await new Promise((resolve) => srv.server.close(resolve));
      }
    }
  });

  test('POSTs of one turn spread over the threads, each answered by its own id', async () => {
    const threads = new CallbackPostThreads({ threads: 2, allowLoopback: true });
    const srv = await startServer((req, res) => {
      res.statusCode = 200 + Number(req.url?.split('/').at(-1));
      res.end();
    });
    try {
      const first = await Promise.all([0, 1, 2].map((n) => threads.post(`${srv.url}/cb/${n}`, '{}', 5_000)));
      const second = await Promise.all([3, 4].map((n) => threads.post(`${srv.url}/cb/${n}`, '{}', 5_000)));
      assert.deepEqual(
        [...first, ...second].map((r) => (r.kind === 'status' ? r.status : r.kind)),
        [200, 201, 202, 203, 204],
        'each POST gets its own answer',
      );
      assert.equal(threads.runningWorkers.length, 2, 'the second turn went to the second thread');
    } finally {
      await threads.close();
      srv.server.closeAllConnections();
      await new Promise((resolve) => srv.server.close(resolve));
    }
  });
});
