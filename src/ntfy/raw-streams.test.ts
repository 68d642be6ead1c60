import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseStreamRequest, STREAM_REQUEST_MAX_BYTES } from './raw-streams.ts';

const packet = (text: string) => Buffer.from(text, 'latin1');
const request = (target: string, headers: string[] = ['Host: push.example.org']) =>
  packet(`GET ${target} HTTP/1.1\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`);

describe('parseStreamRequest', () => {
  test('a plain stream start: topics, transport, query and headers (names in lower case)', () => {
    const parsed = parseStreamRequest(
      request('/upAAA,upBBB/json?since=abc', ['Host: x', 'Authorization: Bearer tk_1', 'X-Forwarded-For:  1.2.3.4 ']),
    );
    assert.deepEqual(parsed && { ...parsed, headers: Object.fromEntries(parsed.headers) }, {
      topicSegment: 'upAAA,upBBB',
      transport: 'json',
      query: 'since=abc',
      headers: { host: 'x', authorization: 'Bearer tk_1', 'x-forwarded-for': '1.2.3.4' },
    });
    assert.equal(parseStreamRequest(request('/t/sse'))?.transport, 'sse');
    assert.equal(parseStreamRequest(request('/t/raw'))?.query, '');
  });

  const refused: Array<[string, Buffer]> = [
    ['a poll (query)', request('/t/json?poll=1')],
    ['a poll (header)', request('/t/json', ['X-Poll: yes'])],
    ['a WebSocket path', request('/t/ws', ['Upgrade: websocket', 'Connection: Upgrade'])],
    ['an upgrade header', request('/t/json', ['Upgrade: h2c'])],
    ['a body', request('/t/json', ['Content-Length: 0'])],
    ['chunked', request('/t/json', ['Transfer-Encoding: chunked'])],
    ['Expect', request('/t/json', ['Expect: 100-continue'])],
    ['a header sent twice', request('/t/json', ['Authorization: a', 'authorization: b'])],
    ['a folded header line', request('/t/json', ['X-A: one', ' two'])],
    ['a malformed header line', request('/t/json', ['no colon here'])],
    ['HTTP/1.0', packet('GET /t/json HTTP/1.0\r\n\r\n')],
    ['HEAD', packet('HEAD /t/json HTTP/1.1\r\n\r\n')],
    ['POST', packet('POST /t/json HTTP/1.1\r\n\r\n')],
    ['a percent-encoded segment', request('/%74/json')],
    ['more segments', request('/a/b/json')],
    ['another suffix', request('/t/auth')],
    ['an absolute-form target', request('http://x/t/json')],
    ['headers not complete in the packet', packet('GET /t/json HTTP/1.1\r\nHost: x\r\n')],
    ['bytes after the headers (pipelining)', Buffer.concat([request('/t/json'), request('/u/json')])],
    ['bare newlines', packet('GET /t/json HTTP/1.1\nHost: x\n\n')],
    ['a long packet', request('/t/json', [`X-Pad: ${'p'.repeat(STREAM_REQUEST_MAX_BYTES)}`])],
  ];
  test('arbitrary bytes never throw: a request or null', () => {
    // A small deterministic generator, so a failure replays.
    let seed = 0x2545f491;
    const next = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) & 0xff;
    const pieces = ['GET /', 't/json', '?since=', 'all', ' HTTP/1.1\r\n', 'X-Poll: 1\r\n', 'A:\x00\r\n', '\r\n', '%zz', '\xff\xfe'];
    for (let i = 0; i < 3000; i++) {
      const parts: Buffer[] = [];
      for (let j = next() % 8; j >= 0; j--)
        parts.push(next() % 2 ? Buffer.from(pieces[next() % pieces.length] as string, 'latin1') : Buffer.from([next(), next(), next()]));
      const result = parseStreamRequest(Buffer.concat(parts));
      assert.ok(result === null || typeof result.topicSegment === 'string');
    }
  });

  for (const [what, bytes] of refused) {
    test(`left to Node's HTTP server: ${what}`, () => assert.equal(parseStreamRequest(bytes), null));
  }
});
