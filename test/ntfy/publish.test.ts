/**
 * Publishing, black-box over HTTP, restating ntfy's documented behaviour (reference §1.3, §1.10,
 * §3.6): UnifiedPush mode and its four switches, bodies kept byte for byte, the 4096-byte limit,
 * topic rules, forwarded headers, JSON publishing, discovery, health and the error shape.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { NTFY_ERRORS } from '../../src/ntfy/errors.ts';
import { isNtfyMessageId } from '../../src/store/ntfy-ids.ts';
import { poll, publish } from './client.ts';
import { startNtfyTestServer, type NtfyTestServer } from './harness.ts';

const TOPIC = 'upAbCdEf123456';
const CACHE_SECS = 12 * 3600;
const LIMIT = 4096;
const LARGE_BODY_BYTES = 2 * 1024 * 1024;

/** Bytes that are not UTF-8 (0xff never appears in UTF-8), `size` long. */
function binaryBody(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 7 + 0xff) & 0xff;
  bytes[0] = 0xff;
  return bytes;
}

describe('ntfy publish', () => {
  let server: NtfyTestServer;
  before(async () => {
    server = await startNtfyTestServer();
  });
  after(() => server.close());

  test('a UnifiedPush publish answers 200 with the message JSON, a 12-character id and a 12 h expiry', async () => {
    const answer = await publish(server.baseUrl, `/${TOPIC}?up=1`, '  hi there  ');
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), 'application/json');
    const { id, time, expires, ...rest } = answer.body;
    assert.ok(typeof id === 'string' && isNtfyMessageId(id), String(id));
    assert.equal(time, Math.floor(server.clock.nowMs() / 1000));
    assert.equal(expires, time + CACHE_SECS);
    assert.deepEqual(rest, { event: 'message', topic: TOPIC, message: '  hi there  ' }, 'UTF-8 kept verbatim: untrimmed, no encoding');
  });

  test('the id of the answer is the id subscribers get', async () => {
    const topic = 'upSameIdTopic1';
    const answer = await publish(server.baseUrl, `/${topic}?up=1`, 'same id');
    const polled = await poll(`${server.baseUrl}/${topic}/json?poll=1`);
    assert.deepEqual(polled.messages, [answer.body]);
  });

  for (const [name, path, headers] of [
    ['up=1', `/${TOPIC}?up=1`, {}],
    ['unifiedpush=1', `/${TOPIC}?unifiedpush=1`, {}],
    ['X-UnifiedPush: 1', `/${TOPIC}`, { 'X-UnifiedPush': '1' }],
    ['Content-Encoding: aes128gcm', `/${TOPIC}`, { 'Content-Encoding': 'aes128gcm' }],
  ] as const) {
    test(`${name} turns on UnifiedPush mode: a binary body becomes padded standard base64`, async () => {
      const body = binaryBody(100);
      const answer = await publish(server.baseUrl, path, body, { headers });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.encoding, 'base64');
      assert.equal(answer.body.message, Buffer.from(body).toString('base64'));
      assert.ok(answer.body.message.endsWith('='), 'padded');
      assert.deepEqual(new Uint8Array(Buffer.from(answer.body.message, 'base64')), body);
    });
  }

  test('PUT publishes like POST', async () => {
    const answer = await publish(server.baseUrl, `/${TOPIC}?up=1`, 'via put', { method: 'PUT' });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.message, 'via put');
  });

  test('4096 bytes are accepted, 4097 are refused with 413 in ntfy error shape', async () => {
    const exact = await publish(server.baseUrl, `/${TOPIC}?up=1`, binaryBody(LIMIT));
    assert.equal(exact.status, 200);
    assert.equal(Buffer.from(String(exact.body.message), 'base64').length, LIMIT);
    const text = await publish(server.baseUrl, `/${TOPIC}?up=1`, 'x'.repeat(LIMIT));
    assert.equal(text.status, 200);
    assert.equal(String(text.body.message).length, LIMIT);
    for (const body of [binaryBody(LIMIT + 1), 'x'.repeat(LIMIT + 1)]) {
      const over = await publish(server.baseUrl, `/${TOPIC}?up=1`, body);
      assert.equal(over.status, 413);
      assert.deepEqual(Object.keys(over.body).sort(), ['code', 'error', 'http', 'link']);
      assert.equal(over.body.code, NTFY_ERRORS.MESSAGE_TOO_LARGE.code);
      assert.equal(over.body.http, 413);
    }
  });

  test('a large chunked body (no Content-Length) still gets a clean 413, not a reset connection', async () => {
    const answer = await new Promise<{ status: number; code: unknown }>((resolve, reject) => {
      const req = request(`${server.baseUrl}/${TOPIC}?up=1`, { method: 'POST', headers: { 'Transfer-Encoding': 'chunked' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, code: (JSON.parse(text) as { code: unknown }).code }));
      });
      req.on('error', reject);
      const chunk = Buffer.alloc(16 * 1024, 0x61);
      let sent = 0;
      const pump = () => {
        while (sent < LARGE_BODY_BYTES) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    assert.deepEqual(answer, { status: 413, code: NTFY_ERRORS.MESSAGE_TOO_LARGE.code });
  });

  test('without UnifiedPush mode text is trimmed, an empty body is "triggered", and binary is refused (40014)', async () => {
    assert.equal((await publish(server.baseUrl, '/plain', '  padded  ')).body.message, 'padded');
    assert.equal((await publish(server.baseUrl, '/plain', '')).body.message, 'triggered');
    assert.equal((await publish(server.baseUrl, '/plain?up=1', '')).body.message, 'triggered');
    const binary = await publish(server.baseUrl, '/plain', binaryBody(10));
    assert.equal(binary.status, 400);
    assert.equal(binary.body.code, 40014);
  });

  test('topic names: 1–64 of [-_A-Za-z0-9]; others 400 40009, reserved names 400 40010', async () => {
    assert.equal((await publish(server.baseUrl, `/${'t'.repeat(64)}`, 'x')).status, 200);
    assert.equal((await publish(server.baseUrl, '/with-dash_and_underscore', 'x')).status, 200);
    for (const bad of ['t'.repeat(65), 'dot.ted', 'semi%3Bcolon', 'comma,list', '%C3%BCml']) {
      const answer = await publish(server.baseUrl, `/${bad}`, 'x');
      assert.equal(answer.status, 400, bad);
      assert.equal(answer.body.code, 40009, bad);
    }
    for (const reserved of ['v1', 'docs', 'metrics']) {
      const answer = await publish(server.baseUrl, `/${reserved}`, 'x');
      assert.deepEqual([answer.status, answer.body.code], [400, 40010], reserved);
    }
  });

  test('a publish the front listener leaves to Hono (a percent-encoded topic) gets the same answer', async () => {
    const answer = await publish(server.baseUrl, '/%75pEncoded12345?up=1', ' same ', { headers: { Title: 'T' } });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), 'application/json');
    assert.deepEqual([answer.body.topic, answer.body.message, answer.body.title], ['upEncoded12345', ' same ', 'T']);
    const polled = await poll(`${server.baseUrl}/upEncoded12345/json?poll=1`);
    assert.deepEqual(polled.messages, [answer.body]);
  });

  test('Title, Priority and Tags (headers, X- headers or query) are forwarded in the message', async () => {
    const byHeaders = await publish(server.baseUrl, '/alerts', 'disk full', {
      headers: { Title: 'Server', Priority: 'high', Tags: 'warning, skull' },
    });
    assert.deepEqual([byHeaders.body.title, byHeaders.body.priority, byHeaders.body.tags], ['Server', 4, ['warning', 'skull']]);
    const byX = await publish(server.baseUrl, '/alerts', 'x', { headers: { 'X-Title': 'X title', 'X-Priority': '5', 'X-Tags': 'one' } });
    assert.deepEqual([byX.body.title, byX.body.priority, byX.body.tags], ['X title', 5, ['one']]);
    const byQuery = await publish(server.baseUrl, '/alerts?t=Query&p=min&ta=a,b', 'x');
    assert.deepEqual([byQuery.body.title, byQuery.body.priority, byQuery.body.tags], ['Query', 1, ['a', 'b']]);
    const encoded = await publish(server.baseUrl, '/alerts', 'x', { headers: { Title: '=?UTF-8?B?w7xuaWPDtmRl?=' } });
    assert.equal(encoded.body.title, 'ünicöde');
    const httpPriority = await publish(server.baseUrl, '/alerts', 'x', { headers: { Priority: 'u=3, i' } });
    assert.equal(httpPriority.status, 200, 'an RFC 9218 Priority header is ignored');
    assert.equal(httpPriority.body.priority, undefined);
    const bad = await publish(server.baseUrl, '/alerts', 'x', { headers: { Priority: 'extreme' } });
    assert.deepEqual([bad.status, bad.body.code], [400, 40007]);
  });

  test('POST / publishes a JSON message; bad JSON is 40024, a missing topic 40009', async () => {
    const answer = await publish(
      server.baseUrl,
      '/',
      JSON.stringify({ topic: 'jsontopic', message: 'from json', title: 'T', priority: 2, tags: ['x'] }),
    );
    assert.equal(answer.status, 200);
    assert.deepEqual(
      [answer.body.topic, answer.body.message, answer.body.title, answer.body.priority, answer.body.tags],
      ['jsontopic', 'from json', 'T', 2, ['x']],
    );
    assert.deepEqual([(await publish(server.baseUrl, '/', '{not json')).body.code], [40024]);
    assert.deepEqual([(await publish(server.baseUrl, '/', JSON.stringify({ message: 'no topic' }))).body.code], [40009]);
    assert.deepEqual([(await publish(server.baseUrl, '/', JSON.stringify({ topic: 'jsontopic', tags: 'nope' }))).body.code], [40024]);
    const tooLarge = await publish(server.baseUrl, '/', JSON.stringify({ topic: 'jsontopic', message: 'x'.repeat(3 * LIMIT) }));
    assert.deepEqual([tooLarge.status, tooLarge.body.code], [413, 41303]);
  });

  test('GET /{topic}?up=1 is the UnifiedPush discovery answer; without it, 404 in ntfy shape', async () => {
    const discovery = await fetch(`${server.baseUrl}/${TOPIC}?up=1`);
    assert.equal(discovery.status, 200);
    assert.equal(await discovery.text(), '{"unifiedpush":{"version":1}}\n');
    const plain = await fetch(`${server.baseUrl}/${TOPIC}`);
    assert.equal(plain.status, 404);
    assert.deepEqual(await plain.json(), { code: 40401, http: 404, error: 'page not found' });
  });

  test('GET /v1/health answers {"healthy":true}', async () => {
    const response = await fetch(`${server.baseUrl}/v1/health`);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { healthy: true });
  });

  test('error codes in the catalogue are unique and each has its HTTP status as prefix', () => {
    const codes = Object.values(NTFY_ERRORS).map((e) => e.code);
    assert.equal(new Set(codes).size, codes.length);
    for (const entry of Object.values(NTFY_ERRORS)) assert.equal(Math.floor(entry.code / 100), entry.http, entry.error);
  });
});
