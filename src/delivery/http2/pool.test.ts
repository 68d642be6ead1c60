import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http2, { type Http2Server, type ServerHttp2Stream } from 'node:http2';
import { connect as connectTcp, createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { HTTP2_CLIENT_KINDS, Http2Pool, Http2RequestError, type Http2FailureReason } from './pool.ts';
import { startFcmFake, type FcmFake } from '../../../test/support/fcm-fake.ts';

interface EchoServer {
  url: string;
  server: Http2Server;
  peakStreams: number;
  /**
   * Hold every stream unanswered until this many are open at once, then answer them all (and
   * later ones as usual): a client's full concurrency is reached however slow the machine, so a
   * test can assert the exact peak. 0: no hold.
   */
  holdUntilStreams: number;
  sessions: number;
  /** Called per stream instead of the echo; return true when it answered (or chose not to). */
  override?: (stream: ServerHttp2Stream, path: string) => boolean;
  /** Resolves when a stream for `path` reaches the server (or already did). */
  waitForStream(path: string): Promise<void>;
  stop(): Promise<void>;
}

/** h2c server that answers `200 <path>` on the next turn, counting concurrent streams and sessions. */
async function startEchoServer(settings: http2.Settings = {}): Promise<EchoServer> {
  const server = http2.createServer({ settings });
  const live = new Set<http2.Http2Session>();
  let active = 0;
  const held: Array<() => void> = [];
  const seenPaths = new Set<string>();
  const pathWaiters = new Map<string, Array<() => void>>();
  const echo: EchoServer = {
    url: '',
    server,
    peakStreams: 0,
    holdUntilStreams: 0,
    sessions: 0,
    waitForStream: (path) =>
      seenPaths.has(path)
        ? Promise.resolve()
        : new Promise((resolve) => pathWaiters.set(path, [...(pathWaiters.get(path) ?? []), resolve])),
    stop: async () => {
      for (const session of live) session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  server.on('session', (session) => {
    echo.sessions++;
    live.add(session);
    session.on('close', () => live.delete(session));
  });
  server.on('stream', (stream, headers) => {
    stream.on('error', () => undefined);
    active++;
    echo.peakStreams = Math.max(echo.peakStreams, active);
    stream.on('close', () => active--);
    const path = String(headers[':path']);
    seenPaths.add(path);
    for (const wake of pathWaiters.get(path) ?? []) wake();
    pathWaiters.delete(path);
    stream.resume();
    if (echo.override?.(stream, path)) return;
    const answer = () =>
      setTimeout(() => {
        if (stream.destroyed) return;
        stream.respond({ ':status': 200 });
        stream.end(path);
      });
    if (echo.holdUntilStreams === 0) {
      answer();
      return;
    }
    held.push(answer);
    if (active < echo.holdUntilStreams) return;
    echo.holdUntilStreams = 0;
    for (const release of held.splice(0)) release();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  echo.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return echo;
}

/**
 * The tests whose server holds streams until the pool's full concurrency is open
 * (`holdUntilStreams`): a pool that never opens that many fails here, instead of holding the run
 * until the runner's own hang guard. Their requests take milliseconds; this is no speed bet.
 */
const HOLDING_TEST_TIMEOUT_MS = 60_000;

async function rejectsWith(promise: Promise<unknown>, reason: Http2FailureReason): Promise<Http2RequestError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof Http2RequestError, String(err));
    assert.equal(err.reason, reason, err.message);
    return err;
  }
  assert.fail(`expected a ${reason} failure`);
}

// Every pool semantic holds whichever HTTP/2 client the pool runs on (delivery.http2_client).
for (const client of HTTP2_CLIENT_KINDS) {
  describe(`Http2Pool (client: ${client})`, () => {
    let echo: EchoServer;
    const pools: Http2Pool[] = [];
    const pool = (options: Partial<ConstructorParameters<typeof Http2Pool>[0]> = {}): Http2Pool => {
      const created = new Http2Pool({ client, baseUrl: echo.url, ...options });
      pools.push(created);
      return created;
    };

    before(async () => {
      echo = await startEchoServer();
    });
    after(async () => {
      await Promise.all(pools.map((p) => p.close()));
      await echo.stop();
    });

    test('a request gets status, headers and body; the path prefix of the base URL is kept', async () => {
      const prefixed = pool({ baseUrl: `${echo.url}/prefix/` });
      const response = await prefixed.request({ method: 'POST', path: '/v1/x', body: 'hello' });
      assert.equal(response.status, 200);
      assert.equal(response.bodyText, '/prefix/v1/x');
    });

    test(
      'requests beyond the per-session stream limit open another session, up to maxSessions, then wait',
      { timeout: HOLDING_TEST_TIMEOUT_MS },
      async () => {
        echo.peakStreams = 0;
        echo.holdUntilStreams = 6;
        const sessionsBefore = echo.sessions;
        const limited = pool({ maxStreamsPerSession: 2, maxSessions: 3 });
        const responses = await Promise.all(Array.from({ length: 12 }, (_, i) => limited.request({ method: 'GET', path: `/r${i}` })));
        assert.deepEqual(
          responses.map((r) => r.bodyText),
          Array.from({ length: 12 }, (_, i) => `/r${i}`),
        );
        assert.equal(echo.sessions - sessionsBefore, 3);
        assert.equal(limited.sessionsOpened, 3);
        assert.equal(echo.peakStreams, 6, '3 sessions of 2 streams each, all busy at once, never more');
      },
    );

    test('one session never carries more streams than configured', { timeout: HOLDING_TEST_TIMEOUT_MS }, async () => {
      echo.peakStreams = 0;
      echo.holdUntilStreams = 4;
      const single = pool({ maxStreamsPerSession: 4, maxSessions: 1 });
      await Promise.all(Array.from({ length: 20 }, (_, i) => single.request({ method: 'GET', path: `/s${i}` })));
      assert.equal(echo.peakStreams, 4);
      assert.equal(single.sessionsOpened, 1);
    });

    test('a session the server closed is replaced on the next request', async () => {
      const reconnecting = pool();
      await reconnecting.request({ method: 'GET', path: '/first' });
      echo.override = (stream) => {
        stream.respond({ ':status': 200 });
        stream.end('bye');
        stream.session?.close();
        return true;
      };
      await reconnecting.request({ method: 'GET', path: '/closing' });
      echo.override = undefined;
      const after = await reconnecting.request({ method: 'GET', path: '/after' });
      assert.equal(after.bodyText, '/after');
      assert.equal(reconnecting.sessionsOpened, 2);
    });

    test('a hanging response fails with request_timeout and cancels the stream', async () => {
      echo.override = (_stream, path) => path === '/hang';
      const err = await rejectsWith(pool({ requestTimeoutMs: 100 }).request({ method: 'GET', path: '/hang' }), 'request_timeout');
      assert.match(err.message, /exceeded 100ms/);
      echo.override = undefined;
    });

    test('an abort signal cancels a request in flight, or one not yet sent', async () => {
      echo.override = (_stream, path) => path.startsWith('/hang');
      const abort = new AbortController();
      const inFlight = rejectsWith(pool().request({ method: 'GET', path: '/hang-abort', signal: abort.signal }), 'aborted');
      await echo.waitForStream('/hang-abort');
      abort.abort();
      await inFlight;
      await rejectsWith(pool().request({ method: 'GET', path: '/x', signal: AbortSignal.abort() }), 'aborted');
      echo.override = undefined;
    });

    test('close() fails waiting and later requests with pool_closed', async () => {
      echo.override = (_stream, path) => path.startsWith('/hang');
      const closing = pool({ maxStreamsPerSession: 1, maxSessions: 1 });
      const holding = rejectsWith(closing.request({ method: 'GET', path: '/hang-close' }), 'stream_error');
      const waiting = rejectsWith(closing.request({ method: 'GET', path: '/queued' }), 'pool_closed');
      await echo.waitForStream('/hang-close');
      await closing.close();
      await holding;
      await waiting;
      await rejectsWith(closing.request({ method: 'GET', path: '/late' }), 'pool_closed');
      echo.override = undefined;
    });

    test('a server advertising fewer concurrent streams is respected', { timeout: HOLDING_TEST_TIMEOUT_MS }, async () => {
      const narrow = await startEchoServer({ maxConcurrentStreams: 3 });
      try {
        const toNarrow = new Http2Pool({ client, baseUrl: narrow.url, maxSessions: 1 });
        await toNarrow.request({ method: 'GET', path: '/settings' }); // remote SETTINGS received
        narrow.peakStreams = 0;
        narrow.holdUntilStreams = 3;
        await Promise.all(Array.from({ length: 12 }, (_, i) => toNarrow.request({ method: 'GET', path: `/n${i}` })));
        assert.equal(narrow.peakStreams, 3, "the server's 3, on the pool's one session");
        await toNarrow.close();
      } finally {
        await narrow.stop();
      }
    });
  });

  describe(`Http2Pool connection failures (client: ${client})`, () => {
    let silent: TcpServer;
    const sockets = new Set<Socket>();

    before(async () => {
      // Accepts TCP but never speaks HTTP/2: the connect timeout has to fire.
      silent = createTcpServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
    });
    after(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });

    test('a refused connection is connect_failed', async () => {
      const refused = new Http2Pool({ client, baseUrl: 'http://127.0.0.1:1' });
      await rejectsWith(refused.request({ method: 'GET', path: '/' }), 'connect_failed');
      await refused.close();
    });

    test('a server that never completes the preface is connect_timeout', async () => {
      const port = (silent.address() as AddressInfo).port;
      const stuck = new Http2Pool({ client, baseUrl: `http://127.0.0.1:${port}`, connectTimeoutMs: 100 });
      const err = await rejectsWith(stuck.request({ method: 'GET', path: '/' }), 'connect_timeout');
      assert.match(err.message, /exceeded 100ms/);
      await stuck.close();
    });

    test('a non-http base URL is refused at construction', () => {
      assert.throws(() => new Http2Pool({ client, baseUrl: 'ftp://example.com' }), /must be http\(s\)/);
    });
  });

  describe(`Http2Pool and GOAWAY (client: ${client})`, () => {
    let fake: FcmFake;
    before(async () => {
      fake = await startFcmFake();
    });
    after(async () => {
      await fake.stop();
    });

    test('a stream refused by GOAWAY is retried once on a new session', async () => {
      const goawayPool = new Http2Pool({ client, baseUrl: fake.baseUrl });
      fake.script({ goaway: true });
      // No bearer: the fake answers 401, which proves the retried request reached a handler.
      const response = await goawayPool.request({ method: 'POST', path: '/v1/projects/fake-project/messages:send', body: '{}' });
      assert.equal(response.status, 401);
      assert.equal(goawayPool.sessionsOpened, 2);
      await goawayPool.close();
    });

    test('a second refusal is reported, not retried again', async () => {
      const goawayPool = new Http2Pool({ client, baseUrl: fake.baseUrl });
      fake.script({ goaway: true, times: 2 });
      await rejectsWith(goawayPool.request({ method: 'POST', path: '/v1/projects/fake-project/messages:send', body: '{}' }), 'refused');
      assert.equal(goawayPool.sessionsOpened, 2);
      await goawayPool.close();
    });
  });
}

// The header indexing hint is our client's (node:http2 keeps its own HPACK policy), so this is
// measured on `builtin` only: bytes from client to server through a counting TCP relay.
describe('Http2Pool path indexing (client: builtin)', () => {
  let echo: EchoServer;
  let relay: TcpServer;
  let relayUrl = '';
  let bytesToServer = 0;
  const sockets = new Set<Socket>();

  before(async () => {
    echo = await startEchoServer();
    const target = new URL(echo.url);
    relay = createTcpServer((client) => {
      const upstream = connectTcp(Number(target.port), target.hostname);
      sockets.add(client).add(upstream);
      client.on('data', (chunk: Buffer) => {
        bytesToServer += chunk.length;
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => client.write(chunk));
      const closeBoth = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('close', closeBoth).on('error', closeBoth);
      upstream.on('close', closeBoth).on('error', closeBoth);
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', () => resolve()));
    relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => relay.close(() => resolve()));
    await echo.stop();
  });

  /** Bytes the client sent for `count` requests, each to its own path, after one warm-up request. */
  async function bytesFor(pathIndexing: 'incremental' | 'without', count: number): Promise<number> {
    const pool = new Http2Pool({ client: 'builtin', baseUrl: relayUrl, maxSessions: 1 });
    // A provider token much larger than a path: once evicted from the 4 KiB table it goes out whole again.
    const authorization: [string, string] = ['authorization', `bearer ${'t'.repeat(2_000)}`];
    try {
      await pool.request({ method: 'GET', path: '/warm-up', headers: [authorization], pathIndexing });
      const before = bytesToServer;
      for (let i = 0; i < count; i++) {
        const token = i.toString(16).padStart(64, '0');
        const response = await pool.request({ method: 'GET', path: `/3/device/${token}`, headers: [authorization], pathIndexing });
        assert.equal(response.bodyText, `/3/device/${token}`);
      }
      return bytesToServer - before;
    } finally {
      await pool.close();
    }
  }

  test("paths sent 'without' indexing never evict the provider token from the HPACK table", async () => {
    const count = 100;
    const without = await bytesFor('without', count);
    const incremental = await bytesFor('incremental', count);
    // Without: per request a frame header, indexed fields and the path literal (~60 bytes), never the token.
    assert.ok(without < count * 100, `${without} bytes for ${count} requests with the path unindexed`);
    // Indexed paths push the token out of the table every ~20 requests, and it is sent again.
    assert.ok(incremental > without + 4 * 1_000, `${incremental} bytes indexed against ${without} unindexed`);
  });
});
