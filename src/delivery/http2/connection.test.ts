/**
 * The HTTP/2 client connection against Node's own server (nghttp2), the independent
 * implementation it must interoperate with, and against a raw socket speaking broken HTTP/2.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http2, { type Http2Server, type Http2SecureServer, type ServerHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Http2ClientConnection, type HeaderField, type Http2ClientResponse } from './connection.ts';
import { Http2RequestError } from './errors.ts';
import {
  CLIENT_PREFACE,
  encodeFrame,
  encodeGoaway,
  encodeSettings,
  ErrorCode,
  Flag,
  FrameReader,
  FrameType,
  type Frame,
} from './frames.ts';
import { HpackEncoder } from './hpack.ts';

type Handler = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, body: Buffer) => void;

interface TestServer {
  origin: URL;
  handler: Handler;
  close(): Promise<void>;
}

function serve(server: Http2Server | Http2SecureServer, scheme: 'http' | 'https'): Promise<TestServer> {
  const sessions = new Set<http2.Http2Session>();
  const test: TestServer = {
    origin: new URL('http://x'),
    handler: (stream) => {
      stream.respond({ ':status': 200 });
      stream.end('ok');
    },
    close: async () => {
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  server.on('stream', (stream, headers) => {
    stream.on('error', () => undefined);
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => test.handler(stream, headers, Buffer.concat(chunks)));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      test.origin = new URL(`${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`);
      resolve(test);
    }),
  );
}

function connect(origin: URL, extra: Partial<ConstructorParameters<typeof Http2ClientConnection>[0]> = {}): Http2ClientConnection {
  return new Http2ClientConnection({
    origin,
    connectTimeoutMs: 5_000,
    maxResponseBodyBytes: 64 * 1024,
    onUnusable: () => undefined,
    onCapacity: () => undefined,
    ...extra,
  });
}

function send(
  connection: Http2ClientConnection,
  path: string,
  body: Buffer | null = null,
  extra: HeaderField[] = [],
): Promise<Http2ClientResponse> {
  const fields: HeaderField[] = [
    [':method', body ? 'POST' : 'GET'],
    [':scheme', 'http'],
    [':authority', 'localhost'],
    [':path', path],
    ...extra,
  ];
  return new Promise((resolve, reject) =>
    connection.request(fields, body, (error, response) => (error ? reject(error) : resolve(response as Http2ClientResponse))),
  );
}

async function failsWith(promise: Promise<unknown>, reason: Http2RequestError['reason']): Promise<Http2RequestError> {
  const err = await promise.then(
    () => assert.fail(`expected ${reason}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof Http2RequestError, String(err));
  assert.equal(err.reason, reason, err.message);
  return err;
}

describe('Http2ClientConnection against node:http2 (h2c)', () => {
  let server: TestServer;
  let narrow: TestServer;
  before(async () => {
    server = await serve(http2.createServer(), 'http');
    // Small windows, frames and table, and at most 2 streams: every limit the client must honour.
    narrow = await serve(
      http2.createServer({ settings: { initialWindowSize: 1000, maxConcurrentStreams: 2, headerTableSize: 0 } }),
      'http',
    );
  });
  after(async () => {
    await server.close();
    await narrow.close();
  });

  test('many concurrent requests on one connection, each with its own answer, headers repeated as indexes', async () => {
    server.handler = (stream, headers, body) => {
      stream.respond({
        ':status': 201,
        'x-path': String(headers[':path']),
        'x-auth': String(headers.authorization),
        'set-cookie': ['a=1', 'b=2'],
      });
      stream.end(body);
    };
    const connection = connect(server.origin);
    await connection.ready;
    const auth: HeaderField = ['authorization', `Bearer ${'k'.repeat(500)}`];
    const responses = await Promise.all(
      Array.from({ length: 300 }, (_, i) => send(connection, `/r${i}`, Buffer.from(`body ${i}`), [auth])),
    );
    responses.forEach((response, i) => {
      assert.equal(response.status, 201);
      assert.equal(response.headers['x-path'], `/r${i}`);
      assert.equal(response.headers['x-auth'], auth[1]);
      assert.deepEqual(response.headers['set-cookie'], ['a=1', 'b=2']);
      assert.equal(response.body.toString(), `body ${i}`);
    });
    connection.close();
    await connection.closed();
  });

  test('request and response bodies far beyond the flow-control windows', async () => {
    server.handler = (stream, _headers, body) => {
      stream.respond({ ':status': 200 });
      stream.end(Buffer.concat([body, body]));
    };
    const connection = connect(server.origin, { maxResponseBodyBytes: 4 * 1024 * 1024 });
    await connection.ready;
    const big = Buffer.alloc(700_000, 7);
    big.write('start');
    const [one, two] = await Promise.all([send(connection, '/big1', big), send(connection, '/big2', big)]);
    assert.equal(one.body.length, 1_400_000);
    assert.ok(one.body.equals(Buffer.concat([big, big])));
    assert.equal(two.body.length, 1_400_000);
    connection.destroy();
  });

  test('a response body beyond maxResponseBodyBytes is cut there, and the stream still completes', async () => {
    server.handler = (stream) => {
      stream.respond({ ':status': 200 });
      stream.end(Buffer.alloc(200_000, 1));
    };
    const connection = connect(server.origin, { maxResponseBodyBytes: 1000 });
    const response = await connection.ready.then(() => send(connection, '/cut'));
    assert.equal(response.body.length, 1000);
    connection.destroy();
  });

  test("the server's small window, stream limit and zero-size header table are honoured", async () => {
    let open = 0;
    let peak = 0;
    narrow.handler = (stream, headers, body) => {
      open++;
      peak = Math.max(peak, open);
      setTimeout(() => {
        open--;
        stream.respond({ ':status': 200, 'x-len': String(body.length), 'x-h': String(headers['x-h']) });
        stream.end();
      }, 5);
    };
    const connection = connect(narrow.origin);
    await connection.ready;
    assert.equal(connection.streamLimit, 2);
    const results: Http2ClientResponse[] = [];
    const body = Buffer.alloc(5000, 3);
    // The client waits for capacity itself here (the pool does it in production).
    for (let i = 0; i < 6; i += 2)
      results.push(
        ...(await Promise.all([send(connection, '/a', body, [['x-h', `v${i}`]]), send(connection, '/b', body, [['x-h', `v${i + 1}`]])])),
      );
    assert.deepEqual(
      results.map((r) => r.headers['x-len']),
      Array(6).fill('5000'),
    );
    assert.deepEqual(
      results.map((r) => r.headers['x-h']),
      ['v0', 'v1', 'v2', 'v3', 'v4', 'v5'],
    );
    assert.ok(peak <= 2);
    connection.destroy();
  });

  test('response headers too large for one frame arrive in CONTINUATION frames', async () => {
    const huge = 'h'.repeat(40_000);
    server.handler = (stream) => {
      stream.respond({ ':status': 200, 'x-huge': huge });
      stream.end('after');
    };
    const connection = connect(server.origin);
    const response = await connection.ready.then(() => send(connection, '/huge'));
    assert.equal(response.headers['x-huge'], huge);
    assert.equal(response.body.toString(), 'after');
    connection.destroy();
  });

  test('an informational response, then the final one with trailers', async () => {
    server.handler = (stream) => {
      stream.additionalHeaders({ ':status': 103, link: '</x>; rel=preload' });
      stream.respond({ ':status': 200 }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'x-trailer': 'yes' }));
      stream.end('body');
    };
    const connection = connect(server.origin);
    const response = await connection.ready.then(() => send(connection, '/trailers'));
    assert.equal(response.status, 200);
    assert.equal(response.body.toString(), 'body');
    connection.destroy();
  });

  test('the server pinging and resetting streams', async () => {
    server.handler = (stream, headers) => {
      if (headers[':path'] === '/reset') stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
      else if (headers[':path'] === '/refuse') stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      else {
        stream.session?.ping(() => undefined);
        stream.respond({ ':status': 200 });
        stream.end('pong');
      }
    };
    const connection = connect(server.origin);
    await connection.ready;
    assert.equal((await send(connection, '/ping')).body.toString(), 'pong');
    await failsWith(send(connection, '/reset'), 'stream_error');
    await failsWith(send(connection, '/refuse'), 'refused');
    assert.equal((await send(connection, '/ping')).status, 200, 'the connection survives stream resets');
    connection.destroy();
  });

  test('GOAWAY: streams the server saw complete, later ones are refused, and the connection stops taking streams', async () => {
    let unusable = 0;
    let seen = 0;
    server.handler = (stream) => {
      seen++;
      if (seen === 1) {
        // Answer the first stream after telling the client to go away with lastStreamId 1.
        stream.session?.goaway(http2.constants.NGHTTP2_NO_ERROR, 1);
        setTimeout(() => {
          stream.respond({ ':status': 200 });
          stream.end('first');
        }, 20);
      }
    };
    const connection = connect(server.origin, { onUnusable: () => unusable++ });
    await connection.ready;
    const first = send(connection, '/one');
    const second = send(connection, '/two');
    const [a, b] = await Promise.allSettled([first, second]);
    assert.equal(a.status, 'fulfilled');
    assert.ok(b.status === 'rejected');
    assert.ok(b.reason instanceof Http2RequestError);
    assert.equal(b.reason.reason, 'refused');
    assert.equal(unusable, 1);
    assert.equal(connection.hasFreeStream, false);
    await failsWith(send(connection, '/late'), 'refused');
    await connection.closed();
  });

  test('cancel() resets a stream and fails it at once', async () => {
    server.handler = () => undefined; // never answers
    const connection = connect(server.origin);
    await connection.ready;
    const fields: HeaderField[] = [
      [':method', 'GET'],
      [':scheme', 'http'],
      [':authority', 'x'],
      [':path', '/hang'],
    ];
    const outcome = new Promise<Http2RequestError | null>((resolve) => {
      const id = connection.request(fields, null, (error) => resolve(error));
      setTimeout(() => connection.cancel(id, new Http2RequestError('request_timeout', 'gave up')), 20);
    });
    assert.equal((await outcome)?.reason, 'request_timeout');
    assert.equal(connection.activeStreams, 0);
    connection.destroy();
  });
});

describe('Http2ClientConnection over TLS', () => {
  let dir: string;
  let server: TestServer;
  let ca: Buffer;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'np-h2-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    ca = readFileSync(join(dir, 'cert.pem'));
    server = await serve(http2.createSecureServer({ key: readFileSync(join(dir, 'key.pem')), cert: ca, allowHTTP1: true }), 'https');
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('negotiates h2 by ALPN and verifies the certificate', async () => {
    const connection = connect(server.origin, { tls: { ca } });
    const response = await connection.ready.then(() => send(connection, '/tls'));
    assert.equal(response.status, 200);
    assert.equal(response.body.toString(), 'ok');
    connection.destroy();
  });

  test('an untrusted certificate is connect_failed', async () => {
    await failsWith(connect(server.origin).ready, 'connect_failed');
  });
});

describe('Http2ClientConnection against a broken server', () => {
  let raw: TcpServer;
  let origin: URL;
  let script: (socket: Socket, frame: Frame, encoder: HpackEncoder) => void = () => undefined;
  const sockets = new Set<Socket>();

  before(async () => {
    raw = createTcpServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
      const reader = new FrameReader();
      const encoder = new HpackEncoder();
      let preface = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        if (preface.length < CLIENT_PREFACE.length) {
          preface = Buffer.concat([preface, chunk]);
          if (preface.length < CLIENT_PREFACE.length) return;
          assert.ok(preface.subarray(0, CLIENT_PREFACE.length).equals(CLIENT_PREFACE));
          socket.write(encodeSettings([]));
          chunk = preface.subarray(CLIENT_PREFACE.length);
        }
        try {
          reader.push(chunk, (frame) => script(socket, frame, encoder));
        } catch {
          socket.destroy();
        }
      });
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', () => resolve()));
    origin = new URL(`http://127.0.0.1:${(raw.address() as AddressInfo).port}`);
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => raw.close(() => resolve()));
  });

  const cases: Array<[string, (socket: Socket, frame: Frame, encoder: HpackEncoder) => void]> = [
    [
      'a header block that is not HPACK',
      (socket, frame) =>
        socket.write(encodeFrame(FrameType.HEADERS, Flag.END_HEADERS, frame.streamId, Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]))),
    ],
    [
      'DATA before any headers',
      (socket, frame) => socket.write(encodeFrame(FrameType.DATA, Flag.END_STREAM, frame.streamId, Buffer.from('x'))),
    ],
    ['a frame on a stream never opened', (socket) => socket.write(encodeFrame(FrameType.DATA, 0, 99, Buffer.from('x')))],
    [
      'a PUSH_PROMISE although push is off',
      (socket, frame) => socket.write(encodeFrame(FrameType.PUSH_PROMISE, Flag.END_HEADERS, frame.streamId, Buffer.alloc(4))),
    ],
    [
      'a response without :status',
      (socket, frame, encoder) =>
        socket.write(encodeFrame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, frame.streamId, encoder.encode([['x', 'y']]))),
    ],
    [
      'an oversized frame',
      (socket) => socket.write(Buffer.concat([Buffer.from([0x01, 0, 0, FrameType.DATA, 0, 0, 0, 0, 1]), Buffer.alloc(65536)])),
    ],
    ['garbage instead of frames', (socket) => socket.write(Buffer.from('HTTP/1.1 400 Bad Request\r\n\r\n'))],
    ['the socket closing mid-response', (socket) => socket.destroy()],
    ['a GOAWAY with an error code, refusing everything', (socket) => socket.write(encodeGoaway(0, ErrorCode.ENHANCE_YOUR_CALM, 'calm'))],
  ];
  for (const [name, behaviour] of cases) {
    test(`${name}: the request fails cleanly, nothing throws`, async () => {
      script = (socket, frame, encoder) => {
        if (frame.type === FrameType.HEADERS) behaviour(socket, frame, encoder);
      };
      const connection = connect(origin);
      await connection.ready;
      const err = await send(connection, '/x').then(
        () => assert.fail('expected a failure'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof Http2RequestError, String(err));
      assert.ok(['stream_error', 'refused'].includes(err.reason), err.message);
      connection.destroy();
    });
  }

  test('a server that never sends SETTINGS: connect_timeout', async () => {
    // Reads and drops what arrives (so it sees the client hang up) but never answers.
    const silent = createTcpServer((socket) => socket.on('error', () => undefined).resume());
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
    const connection = connect(new URL(`http://127.0.0.1:${(silent.address() as AddressInfo).port}`), { connectTimeoutMs: 100 });
    const err = await failsWith(connection.ready, 'connect_timeout');
    assert.match(err.message, /exceeded 100ms/);
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });
});
