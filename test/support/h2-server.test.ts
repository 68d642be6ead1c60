/**
 * The FCM fake's HTTP/2 server against Node's own client (nghttp2): the independent
 * implementation it must interoperate with (our client is tested against Node's server).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http2, { type ClientHttp2Session } from 'node:http2';
import { connect as tcpConnect } from 'node:net';
import { startH2Server, type H2Server, type H2ServerStream } from './h2-server.ts';
import { ErrorCode } from '../../src/delivery/http2/frames.ts';

interface Answer {
  status: number;
  headers: http2.IncomingHttpHeaders;
  body: Buffer;
}

function request(
  session: ClientHttp2Session,
  path: string,
  body?: Buffer | string,
  headers: http2.OutgoingHttpHeaders = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': body === undefined ? 'GET' : 'POST', ':path': path, ...headers });
    let answer: Answer = { status: 0, headers: {}, body: Buffer.alloc(0) };
    const chunks: Buffer[] = [];
    stream.on('response', (h) => (answer = { status: Number(h[':status']), headers: h, body: answer.body }));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve({ ...answer, body: Buffer.concat(chunks) }));
    stream.on('error', reject);
    stream.end(body);
  });
}

describe('the fake HTTP/2 server with node:http2 as the client', () => {
  let server: H2Server;
  let handle: (stream: H2ServerStream) => void;
  let opened = 0;
  let closedStreams = 0;
  const clients: ClientHttp2Session[] = [];
  const client = (): ClientHttp2Session => {
    const session = http2.connect(`http://127.0.0.1:${server.port}`);
    session.on('error', () => undefined);
    clients.push(session);
    return session;
  };

  before(async () => {
    server = await startH2Server(
      {
        onStream: () => opened++,
        onStreamClosed: () => closedStreams++,
        onRequest: (stream) => handle(stream),
      },
      { maxConcurrentStreams: 4 },
    );
  });
  after(async () => {
    for (const session of clients) session.destroy();
    await server.close();
  });

  test('requests with headers and bodies, answered with headers and bodies, many in turn over one connection', async () => {
    handle = (stream) =>
      stream.session.respond(
        stream,
        201,
        [
          ['x-path', String(stream.headers[':path'])],
          ['x-auth', String(stream.headers.authorization)],
        ],
        Buffer.concat(stream.body),
      );
    const session = client();
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          request(session, `/r${round}-${i}`, `body ${round}-${i}`, { authorization: `Bearer ${'k'.repeat(300)}` }),
        ),
      );
      answers.forEach((answer, i) => {
        assert.equal(answer.status, 201);
        assert.equal(answer.headers['x-path'], `/r${round}-${i}`);
        assert.equal(answer.headers['x-auth'], `Bearer ${'k'.repeat(300)}`);
        assert.equal(answer.body.toString(), `body ${round}-${i}`);
      });
    }
  });

  test("bodies far beyond Node's default 64 KiB windows, both ways", async () => {
    handle = (stream) => stream.session.respond(stream, 200, [], Buffer.concat([...stream.body, ...stream.body]));
    const big = Buffer.alloc(300_000, 9);
    big.write('first');
    const answer = await request(client(), '/big', big);
    assert.equal(answer.body.length, 600_000);
    assert.ok(answer.body.equals(Buffer.concat([big, big])));
  });

  test('an empty answer, a 404, and a stream reset by the server', async () => {
    handle = (stream) => {
      const path = String(stream.headers[':path']);
      if (path === '/reset') stream.session.reset(stream, ErrorCode.INTERNAL_ERROR);
      else stream.session.respond(stream, path === '/empty' ? 204 : 404, [], path === '/empty' ? '' : 'missing');
    };
    const session = client();
    assert.equal((await request(session, '/empty')).status, 204);
    const missing = await request(session, '/nothing');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.toString(), 'missing');
    await assert.rejects(request(session, '/reset'), /NGHTTP2_INTERNAL_ERROR|RST_STREAM/);
  });

  test('more streams than SETTINGS_MAX_CONCURRENT_STREAMS are not all open at once', async () => {
    let concurrent = 0;
    let peak = 0;
    handle = (stream) => {
      concurrent++;
      peak = Math.max(peak, concurrent);
      setTimeout(() => {
        concurrent--;
        stream.session.respond(stream, 200, [], 'ok');
      }, 5);
    };
    const session = client();
    await request(session, '/warm'); // the server's SETTINGS are in
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => request(session, `/c${i}`)));
    assert.ok(answers.every((a) => a.status === 200));
    assert.ok(peak <= 4, `peak ${peak}`);
  });

  test('GOAWAY: earlier streams complete, later ones are refused, then the connection ends', async () => {
    const held: H2ServerStream[] = [];
    handle = (stream) => {
      held.push(stream);
      if (held.length === 2) {
        const [first, second] = held as [H2ServerStream, H2ServerStream];
        first.session.goaway(first.id);
        first.session.respond(first, 200, [], 'served');
        second.session.respond(second, 200, [], 'too late');
      }
    };
    const session = client();
    const closed = new Promise<void>((resolve) => session.once('close', () => resolve()));
    const [first, second] = await Promise.allSettled([request(session, '/g1'), request(session, '/g2')]);
    assert.equal(first.status, 'fulfilled');
    assert.equal(first.value.body.toString(), 'served');
    assert.equal(second.status, 'rejected', 'the stream above the GOAWAY was refused');
    await closed;
  });

  test('every opened stream is reported closed', async () => {
    handle = (stream) => stream.session.respond(stream, 200, [], '');
    await request(client(), '/count');
    assert.equal(closedStreams, opened);
  });

  test('a client that does not speak HTTP/2 is disconnected', async () => {
    const socket = tcpConnect(server.port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.resume(); // read, so the hang-up is seen
    socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
  });
});
