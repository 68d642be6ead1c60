/**
 * Property-based tests of the ntfy HTTP head parser on the bare socket (`raw-streams.ts`):
 * {@link parseStreamRequest} on its own, and the server's first-packet path on a real loopback
 * socket (fast-check; fixed seed in `npm test`, longer under `npm run fuzz`).
 *
 * The parser must take exactly the plain stream starts it promises to take, refuse (null, so
 * Node's parser answers) anything unusual, and never throw; the server, whatever a connection's
 * first packet is, must answer it or close it, never with a 5xx, and keep serving.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import fc from 'fast-check';
import { FUZZ_TEST_OPTIONS, fuzzParameters } from '../../test/support/fuzz.ts';
import { startNtfyTestServer, type NtfyTestServer } from '../../test/ntfy/harness.ts';
import { openStream } from '../../test/ntfy/client.ts';
import { parseStreamRequest, STREAM_REQUEST_MAX_BYTES } from './raw-streams.ts';

const TOKEN_CHARS = "!#$%&'*+.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-";
const RESERVED_HEADERS = new Set(['content-length', 'transfer-encoding', 'upgrade', 'expect']);

/** A plain stream start as a phone sends it, and what the parser must read from it. */
const streamRequestArbitrary = fc
  .record({
    topics: fc.array(fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/), { minLength: 1, maxLength: 3 }),
    transport: fc.constantFrom('json' as const, 'sse' as const, 'raw' as const),
    query: fc.array(fc.tuple(fc.constantFrom('since', 'scheduled', 'up', 'x'), fc.stringMatching(/^[A-Za-z0-9]{0,12}$/)), { maxLength: 3 }),
    headers: fc.uniqueArray(
      fc.tuple(
        fc.string({ unit: fc.constantFrom(...Array.from(TOKEN_CHARS)), minLength: 1, maxLength: 16 }),
        fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,30}[\x21-\x7e])?$/),
      ),
      { selector: ([name]) => name.toLowerCase(), maxLength: 6 },
    ),
  })
  .filter(({ headers }) => headers.every(([name]) => !RESERVED_HEADERS.has(name.toLowerCase())))
  .map(({ topics, transport, query, headers }) => {
    const queryText = query.map(([k, v]) => `${k}=${v}`).join('&');
    const target = `/${topics.join(',')}/${transport}${queryText === '' ? '' : `?${queryText}`}`;
    const packet = Buffer.from(`GET ${target} HTTP/1.1\r\n${headers.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n`, 'latin1');
    return { packet, topicSegment: topics.join(','), transport, query: queryText, headers };
  });

/** A change that makes a plain stream start something the parser must leave to Node. */
const spoilerArbitrary = fc.oneof(
  fc
    .constantFrom(...RESERVED_HEADERS)
    .map((name) => ({ name: `a ${name} header`, spoil: (p: string) => p.replace('\r\n', `\r\n${name}: 1\r\n`) })),
  fc.constant({ name: 'HTTP/1.0', spoil: (p: string) => p.replace(' HTTP/1.1\r\n', ' HTTP/1.0\r\n') }),
  fc.constant({ name: 'a POST', spoil: (p: string) => p.replace(/^GET/, 'POST') }),
  fc.constant({ name: 'no blank line yet', spoil: (p: string) => p.slice(0, -2) }),
  fc.string({ minLength: 1, maxLength: 20 }).map((rest) => ({ name: 'bytes after the head', spoil: (p: string) => p + rest })),
  fc.constant({ name: 'a header sent twice', spoil: (p: string) => p.replace('\r\n', '\r\nx-twice: 1\r\nX-Twice: 2\r\n') }),
  fc.constant({ name: 'a percent-encoded topic', spoil: (p: string) => p.replace('GET /', 'GET /%41') }),
  fc.constant({ name: 'a poll', spoil: (p: string) => p.replace('\r\n', '\r\nX-Poll: 1\r\n') }),
  fc.constant({ name: 'a header line without a colon', spoil: (p: string) => p.replace('\r\n', '\r\nno-colon\r\n') }),
  fc.constant({
    name: `over ${STREAM_REQUEST_MAX_BYTES} bytes`,
    spoil: (p: string) => p.replace('\r\n', `\r\nx-pad: ${'a'.repeat(STREAM_REQUEST_MAX_BYTES)}\r\n`),
  }),
);

describe('ntfy stream head parser (property-based)', () => {
  test('a plain stream start is read exactly: topics, transport, query and every header', FUZZ_TEST_OPTIONS, () => {
    fc.assert(
      fc.property(streamRequestArbitrary, (request) => {
        const parsed = parseStreamRequest(request.packet);
        assert.ok(parsed, request.packet.toString('latin1'));
        assert.equal(parsed.topicSegment, request.topicSegment);
        assert.equal(parsed.transport, request.transport);
        assert.equal(parsed.query, request.query);
        assert.deepEqual(
          [...parsed.headers],
          request.headers.map(([name, value]) => [name.toLowerCase(), value]),
        );
      }),
      fuzzParameters(300),
    );
  });

  test('anything unusual about it is left to Node (null)', FUZZ_TEST_OPTIONS, () => {
    fc.assert(
      fc.property(streamRequestArbitrary, spoilerArbitrary, (request, spoiler) => {
        const packet = Buffer.from(spoiler.spoil(request.packet.toString('latin1')), 'latin1');
        assert.equal(parseStreamRequest(packet), null, spoiler.name);
      }),
      fuzzParameters(300),
    );
  });

  test('random and mutated bytes never throw', FUZZ_TEST_OPTIONS, () => {
    const mutated = fc
      .tuple(streamRequestArbitrary, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }))
      .map(([request, flips]) => {
        const bytes = Buffer.from(request.packet);
        for (const [at, byte] of flips) bytes[at % bytes.length] = byte;
        return bytes;
      });
    fc.assert(
      fc.property(
        fc.oneof(
          mutated,
          fc.uint8Array({ maxLength: 1024 }).map((b) => Buffer.from(b)),
        ),
        (packet) => {
          const parsed = parseStreamRequest(packet);
          if (parsed) assert.ok(['json', 'sse', 'raw'].includes(parsed.transport));
        },
      ),
      fuzzParameters(500),
    );
  });
});

/** What the server did with a first packet: the status it answered, or that it closed without one. */
function firstAnswer(port: number, packet: Buffer): Promise<number | 'closed'> {
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    const socket = connect({ host: '127.0.0.1', port }, () => {
      // Half-close: a request Node's parser is still waiting on ends now instead of at its timeout.
      socket.end(packet);
    });
    const bound = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer and no close for ${JSON.stringify(packet.toString('latin1').slice(0, 80))}`));
    }, 20_000);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const match = /^HTTP\/1\.1 (\d{3}) /.exec(received.toString('latin1', 0, 16));
      if (match || received.length >= 16) {
        clearTimeout(bound);
        socket.destroy();
        if (match) resolve(Number(match[1]));
        else reject(new Error(`not an HTTP/1.1 answer: ${JSON.stringify(received.toString('latin1'))}`));
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(bound);
      resolve('closed');
    });
  });
}

describe('ntfy first packets on the bare socket (property-based, loopback)', () => {
  let server: NtfyTestServer;
  let port: number;
  before(async () => {
    server = await startNtfyTestServer();
    port = Number(new URL(server.baseUrl).port);
  });
  after(() => server.close());

  test('any first packet is answered (never 5xx) or closed, and the server keeps serving streams', FUZZ_TEST_OPTIONS, async () => {
    const packets = fc.oneof(
      streamRequestArbitrary.map((r) => r.packet),
      fc.tuple(streamRequestArbitrary, spoilerArbitrary).map(([r, s]) => Buffer.from(s.spoil(r.packet.toString('latin1')), 'latin1')),
      fc
        .tuple(streamRequestArbitrary, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }))
        .map(([r, flips]) => {
          const bytes = Buffer.from(r.packet);
          for (const [at, byte] of flips) bytes[at % bytes.length] = byte;
          return bytes;
        }),
      fc.uint8Array({ minLength: 1, maxLength: 512 }).map((b) => Buffer.from(b)),
    );
    await fc.assert(
      fc.asyncProperty(packets, async (packet) => {
        const answer = await firstAnswer(port, packet);
        if (answer !== 'closed') assert.ok(answer < 500, `answered ${answer}`);
      }),
      fuzzParameters(40),
    );
    const stream = await openStream(`${server.baseUrl}/upFuzzSurvivor/json`);
    assert.equal((await stream.nextJson('open')).event, 'open');
    stream.close();
  });
});
