import assert from 'node:assert/strict';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Hono } from 'hono';
import { sendRawBody } from '../../test/support/raw-http.ts';
import { BodyLimits, bodyLimitFront, LimitedRequest, REFUSED_BODY_DRAIN_BYTES, type RouteBodyLimit } from './body-limit.ts';

const DEFAULT = 1024;

function sampleApp(): { app: Hono; ntfy: Hono } {
  const app = new Hono();
  app.use('/v1/*', async (_c, next) => next());
  app.get('/health', (c) => c.text('ok'));
  app.post('/v1/big', (c) => c.text('big'));
  const ntfy = new Hono();
  ntfy.put('/:topic', (c) => c.text('published'));
  app.route('/', ntfy);
  return { app, ntfy };
}

describe('the body limit table', () => {
  const { app, ntfy } = sampleApp();
  const limits = new BodyLimits(DEFAULT, app.routes, {
    larger: [{ method: 'POST', path: '/v1/big', maxBytes: 4096, reason: 'test' }],
    ntfyHandlers: new Set(ntfy.routes.map((r) => r.handler)),
  });

  test('each route has the default or its declared larger limit; middleware is no route; ntfy routes take ntfy’s shape', () => {
    const rows = limits.list().map((r) => [r.method, r.path, r.maxBytes, r.shape]);
    assert.deepEqual(rows, [
      ['GET', '/health', DEFAULT, 'catalogue'],
      ['POST', '/v1/big', 4096, 'catalogue'],
      ['PUT', '/:topic', DEFAULT, 'ntfy'],
    ]);
  });

  test('lookups: the route Hono would answer with, HEAD as GET, anything else the default', () => {
    const pick = (r: RouteBodyLimit) => [r.path, r.maxBytes, r.shape];
    assert.deepEqual(pick(limits.limitFor('POST', '/v1/big')), ['/v1/big', 4096, 'catalogue']);
    assert.deepEqual(pick(limits.limitFor('PUT', '/mytopic')), ['/:topic', DEFAULT, 'ntfy']);
    assert.deepEqual(pick(limits.limitFor('HEAD', '/health')), ['/health', DEFAULT, 'catalogue']);
    assert.deepEqual(pick(limits.limitFor('POST', '/nothing/here')), [null, DEFAULT, 'catalogue']);
  });

  test('a larger limit is never below the default, and one naming no route is refused at start-up', () => {
    const lower = new BodyLimits(DEFAULT, app.routes, {
      larger: [{ method: 'POST', path: '/v1/big', maxBytes: 10, reason: 'smaller' }],
      ntfyHandlers: new Set(),
    });
    assert.equal(lower.limitFor('POST', '/v1/big').maxBytes, DEFAULT);
    assert.throws(
      () =>
        new BodyLimits(DEFAULT, app.routes, {
          larger: [{ method: 'POST', path: '/v1/gone', maxBytes: 1, reason: 'x' }],
          ntfyHandlers: new Set(),
        }),
      /POST \/v1\/gone, which no route/,
    );
  });
});

describe('the front over a real socket', () => {
  let server: Server;
  let base: string;
  const refused: string[] = [];
  const received: Array<{ path: string; bytes: number }> = [];

  before(async () => {
    const { app } = sampleApp();
    const limits = new BodyLimits(DEFAULT, app.routes, { larger: [], ntfyHandlers: new Set() });
    // The route reads the whole body, counting it: what reached it is what was let through.
    const route: RequestListener = (request, response) => {
      let bytes = 0;
      request.on('data', (chunk: Buffer) => (bytes += chunk.length));
      request.on('end', () => {
        received.push({ path: request.url ?? '', bytes });
        response.end('ok');
      });
    };
    server = createServer(
      { IncomingMessage: LimitedRequest },
      bodyLimitFront(
        limits,
        { ntfyBody: () => ({ code: 41304, http: 413, error: 'message too large' }), onRefused: (r) => refused.push(String(r.path)) },
        route,
      ),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('a chunked body at the limit reaches the route whole; one byte more is 413 and never reaches it', async () => {
    const at = await sendRawBody({ method: 'POST', url: `${base}/health`, bodyBytes: DEFAULT, framing: 'chunked', chunkBytes: 100 });
    assert.equal(at.status, 200);
    assert.deepEqual(received.at(-1), { path: '/health', bytes: DEFAULT });
    const count = received.length;
    const over = await sendRawBody({ method: 'POST', url: `${base}/health`, bodyBytes: DEFAULT + 1, framing: 'chunked', chunkBytes: 100 });
    assert.equal(over.status, 413);
    assert.deepEqual(JSON.parse(over.text), { error: 'Request body too large', code: 'BODY_TOO_LARGE' });
    const declared = await sendRawBody({ method: 'POST', url: `${base}/health`, bodyBytes: DEFAULT + 1, framing: 'content-length' });
    assert.equal(declared.status, 413);
    assert.equal(received.length, count, 'neither refused body reached the route');
    // No POST route at /health: the default limit, as for any path no route serves.
    assert.deepEqual(refused.slice(-2), ['null', 'null']);
  });

  test('a refused body is drained for a while, then the connection is closed: never read to its end', async () => {
    let serverBytes = 0;
    const counting = (socket: import('node:net').Socket) => socket.on('data', (chunk: Buffer) => (serverBytes += chunk.length));
    server.on('connection', counting);
    try {
      const huge = 64 * 1024 * 1024;
      // A client that ignores the answer and keeps sending: the server closes on it.
      const answer = await sendRawBody({
        method: 'POST',
        url: `${base}/health`,
        headers: { connection: 'keep-alive' },
        bodyBytes: huge,
        framing: 'content-length',
        keepWriting: true,
      });
      assert.equal(answer.status, 413);
      assert.ok(answer.error, 'the connection was closed before the body was sent');
      // What the server read is bounded by the drain allowance (plus one socket read), far from 64 MiB.
      assert.ok(serverBytes < DEFAULT + REFUSED_BODY_DRAIN_BYTES + 256 * 1024, `read ${serverBytes} bytes`);
      assert.ok(serverBytes > REFUSED_BODY_DRAIN_BYTES, `drained first: read ${serverBytes} bytes`);
    } finally {
      server.off('connection', counting);
    }
  });
});
