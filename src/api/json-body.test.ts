import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Hono } from 'hono';
import { getRequestListener } from '@hono/node-server';
import { HttpError } from './errors.ts';
import { readJsonBody } from './json-body.ts';

const LIMIT = 64;

function app(): Hono {
  const routes = new Hono();
  routes.onError((err, c) => (err instanceof HttpError ? c.json(err.toJSON(), err.status as 400) : c.json({ error: String(err) }, 500)));
  // Read straight from the Node request (nothing touched the body first).
  routes.post('/direct', async (c) => c.json({ body: await readJsonBody(c, LIMIT) }));
  // The WHATWG request built first (a middleware looked at it), its body left alone: still read whole.
  routes.post('/after-raw', async (c) => {
    assert.equal(c.req.raw.bodyUsed, false);
    return c.json({ body: await readJsonBody(c, LIMIT) });
  });
  return routes;
}

/** POST `chunks` with chunked transfer encoding (no Content-Length): the limit must hold while reading. */
function post(port: number, path: string, chunks: string[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

describe('readJsonBody on a real Node server', () => {
  let server: Server;
  let port = 0;
  before(async () => {
    const listener = getRequestListener(app().fetch);
    server = createServer((req, res) => void listener(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  for (const path of ['/direct', '/after-raw']) {
    test(`${path}: a body in several chunks is read whole`, async () => {
      const answer = await post(port, path, ['{"a":', '[1,2', ',3]}']);
      assert.equal(answer.status, 200);
      assert.deepEqual(JSON.parse(answer.body), { body: { a: [1, 2, 3] } });
    });

    test(`${path}: a chunked body over the limit is refused with 413 and the catalogue's code`, async () => {
      const answer = await post(port, path, ['"', 'x'.repeat(LIMIT), '"']);
      assert.equal(answer.status, 413);
      assert.equal((JSON.parse(answer.body) as { code: string }).code, 'BODY_TOO_LARGE');
    });

    test(`${path}: a body that is not JSON is a 400`, async () => {
      const answer = await post(port, path, ['{nope']);
      assert.equal(answer.status, 400);
      assert.equal((JSON.parse(answer.body) as { code: string }).code, 'INVALID_JSON');
    });
  }
});

// Without a Node request under Hono's (app.request(), other runtimes): the WHATWG stream path.
describe('readJsonBody on a WHATWG request', () => {
  const streamOf = (chunks: string[]): ReadableStream<Uint8Array> =>
    new ReadableStream({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
        controller.close();
      },
    });
  const send = (chunks: string[]) =>
    app().request('/direct', {
      method: 'POST',
      body: streamOf(chunks),
      headers: { 'content-type': 'application/json' },
      duplex: 'half',
    } as RequestInit);

  test('a body in several chunks is read whole', async () => {
    const response = await send(['{"a":', '[1,2', ',3]}']);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { body: { a: [1, 2, 3] } });
  });

  test('a streamed body over the limit is refused with 413', async () => {
    const response = await send(['"', 'x'.repeat(LIMIT), '"']);
    assert.equal(response.status, 413);
    assert.equal(((await response.json()) as { code: string }).code, 'BODY_TOO_LARGE');
  });
});
