import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createServer, type IncomingMessage, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../observability/logger.ts';
import { callbackSecretOf, nip9aCallbackFront } from './nip9a-callback-front.ts';
import type { CallbackReceiver, CallbackRequest } from './nip9a-callbacks.ts';

function request(method: string, url: string): Pick<IncomingMessage, 'method' | 'url'> {
  return { method, url };
}

test('callbackSecretOf takes the one segment after /nip9a/cb/ of a POST, decoded, without the query', () => {
  assert.equal(callbackSecretOf(request('POST', '/nip9a/cb/AbC_-9')), 'AbC_-9');
  assert.equal(callbackSecretOf(request('POST', '/nip9a/cb/AbC?x=1')), 'AbC', 'the query is not part of the secret');
  assert.equal(callbackSecretOf(request('POST', '/nip9a/cb/A%42C')), 'ABC', 'percent-encoding is decoded, as Hono decodes :secret');
  for (const [method, url] of [
    ['GET', '/nip9a/cb/AbC'],
    ['PUT', '/nip9a/cb/AbC'],
    ['POST', '/nip9a/cb/'],
    ['POST', '/nip9a/cb/AbC/more'],
    ['POST', '/nip9a/cbAbC'],
    ['POST', '/v1/nip9a/callbacks'],
    ['POST', '/nip9a/cb/%E0%A4%A'],
  ] as const) {
    assert.equal(callbackSecretOf(request(method, url)), null, `${method} ${url} is left to Hono`);
  }
});

/** The front over real HTTP, in front of a listener that answers 418 with the path it was given. */
async function serve(receiver: CallbackReceiver): Promise<{ base: string; close: () => Promise<void> }> {
  const next: RequestListener = (req, res) => {
    res.writeHead(418, { 'Content-Type': 'text/plain' });
    res.end(`next ${req.method} ${req.url}`);
  };
  const server = createServer(nip9aCallbackFront(receiver, createLogger({ level: 'silent' }), next));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { base: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

test('the front hands the receiver the secret, Content-Type and body, and writes its answer as JSON', async () => {
  const seen: Array<{ secret: string; contentType: string | undefined; body: string }> = [];
  const receiver: CallbackReceiver = async (req: CallbackRequest) => {
    seen.push({ secret: req.secret, contentType: req.contentType, body: Buffer.from(await req.readBody(1024)).toString('utf8') });
    return { status: 429, body: { error: 'slow down', code: 'RATE_LIMITED' }, headers: { 'Retry-After': '7' } };
  };
  const { base, close } = await serve(receiver);
  try {
    const res = await fetch(`${base}/nip9a/cb/SeCrEt?ignored=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: '{"id":"x"}',
    });
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), '7', 'the answer’s headers are written');
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.deepEqual(await res.json(), { error: 'slow down', code: 'RATE_LIMITED' });
    assert.deepEqual(seen, [{ secret: 'SeCrEt', contentType: 'application/json; charset=utf-8', body: '{"id":"x"}' }]);

    const other = await fetch(`${base}/nip9a/cb/SeCrEt/extra`, { method: 'POST', body: '{}' });
    assert.equal(other.status, 418, 'a path with another segment goes on to the next listener');
    assert.equal(await other.text(), 'next POST /nip9a/cb/SeCrEt/extra');
    assert.equal((await fetch(`${base}/nip9a/cb/SeCrEt`)).status, 418, 'a GET goes on to the next listener');
    assert.equal(seen.length, 1, 'the receiver saw only the callback POST');
  } finally {
    await close();
  }
});

test('a receiver that throws is answered 500 INTERNAL JSON, and the next request is served', async () => {
  let calls = 0;
  const receiver: CallbackReceiver = () => {
    calls += 1;
    return calls === 1 ? Promise.reject(new Error('store exploded')) : Promise.resolve({ status: 202, body: { status: 'queued' } });
  };
  const { base, close } = await serve(receiver);
  try {
    const broken = await fetch(`${base}/nip9a/cb/s`, { method: 'POST', body: '{}' });
    assert.equal(broken.status, 500);
    assert.deepEqual(await broken.json(), { error: 'Internal server error', code: 'INTERNAL' });
    const next = await fetch(`${base}/nip9a/cb/s`, { method: 'POST', body: '{}' });
    assert.equal(next.status, 202);
    assert.deepEqual(await next.json(), { status: 'queued' });
  } finally {
    await close();
  }
});
