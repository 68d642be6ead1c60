/**
 * Subscription streams served on the bare socket (src/ntfy/raw-streams.ts), black-box over raw
 * TCP so the test decides what arrives in which packet: a stream that starts a connection is
 * answered on the socket (chunked, `Connection: close`), and everything else reaches Node's HTTP
 * server exactly as sent and is answered as before.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FRAME_TIMEOUT_MS, publish } from './client.ts';
import { startNtfyTestServer, type NtfyTestServer } from './harness.ts';
import { RawClient } from './raw-client.ts';

const KEEPALIVE_MS = 45_000;
/** Node's default `headersTimeout` (the harness does not change it). */
const HEADERS_TIMEOUT_MS = 60_000;

/** Resolves once `server` has accepted a connection (its own, fresh server: one client). */
async function untilAccepted(server: NtfyTestServer): Promise<void> {
  const deadline = Date.now() + FRAME_TIMEOUT_MS;
  while ((await new Promise<number>((resolve) => server.http.getConnections((_err, n) => resolve(n)))) < 1) {
    if (Date.now() > deadline) throw new Error('the server never saw the connection');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const get = (path: string, headers: string[] = []) =>
  `GET ${path} HTTP/1.1\r\nHost: test\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`;

describe('ntfy streams on the bare socket', () => {
  let server: NtfyTestServer;
  let port: number;
  before(async () => {
    server = await startNtfyTestServer();
    port = Number(new URL(server.baseUrl).port);
  });
  after(() => server.close());

  test('a stream that starts a connection is answered on the socket: chunked frames, open first, messages as published', async () => {
    const client = await RawClient.open(port);
    client.socket.write(get('/upRawStream0001,upRawStream0002/json'));
    const { status, headers } = await client.head();
    assert.equal(status, 200);
    assert.deepEqual(
      [
        headers['content-type'],
        headers['transfer-encoding'],
        headers['connection'],
        headers['access-control-allow-origin'],
        headers['x-accel-buffering'],
      ],
      ['application/x-ndjson; charset=utf-8', 'chunked', 'close', '*', 'no'],
    );
    const open = JSON.parse(await client.chunk()) as Record<string, unknown>;
    assert.deepEqual([open.event, open.topic], ['open', 'upRawStream0001,upRawStream0002']);
    const published = await publish(server.baseUrl, '/upRawStream0002?up=1', 'ü and more');
    assert.equal(await client.chunk(), `${JSON.stringify(published.body)}\n`);
    server.scheduler.advance(KEEPALIVE_MS);
    const keepalive = JSON.parse(await client.chunk()) as Record<string, unknown>;
    assert.deepEqual([keepalive.event, keepalive.topic], ['keepalive', 'upRawStream0001,upRawStream0002']);
    const before = server.ntfy.hub?.size ?? 0;
    client.socket.end();
    await client.untilClosed();
    const deadline = Date.now() + FRAME_TIMEOUT_MS;
    while ((server.ntfy.hub?.size ?? 0) >= before && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(server.ntfy.hub?.size, before - 1, 'the client closing ends the subscription');
  });

  test('closing the server ends a stream with the last chunk', async () => {
    const local = await startNtfyTestServer();
    const client = await RawClient.open(Number(new URL(local.baseUrl).port));
    client.socket.write(get('/upRawStream0003/sse'));
    await client.head();
    assert.match(await client.chunk(), /^event: open\ndata: \{/);
    await local.close();
    assert.equal(await client.chunk(), '', 'the terminating zero-length chunk');
    await client.untilClosed();
  });

  test('stopping the server ends a connection that never sent a byte (the server does not wait for it)', async () => {
    const local = await startNtfyTestServer();
    const client = await RawClient.open(Number(new URL(local.baseUrl).port));
    await untilAccepted(local);
    await local.close();
    await client.untilClosed();
  });

  test("a refused stream gets ntfy's JSON error and the connection closes", async () => {
    const client = await RawClient.open(port);
    client.socket.write(get('/upRawStream0004/json?since=yesterday-ish'));
    const { status, headers } = await client.head();
    assert.deepEqual([status, headers['content-type'], headers['connection']], [400, 'application/json', 'close']);
    const body = JSON.parse(await client.body(Number(headers['content-length']))) as Record<string, unknown>;
    assert.equal(body.code, 40008);
    await client.untilClosed();
  });

  test('a stream whose request is written in two parts is served all the same', async () => {
    // Whether the parts arrive as one packet (served on the socket) or two (left to Node's HTTP
    // server, see the unit tests of parseStreamRequest), the client sees the same stream.
    const client = await RawClient.open(port);
    const request = get('/upRawStream0005/json');
    client.socket.write(request.slice(0, 20));
    await new Promise((resolve) => setImmediate(resolve));
    client.socket.write(request.slice(20));
    const { status } = await client.head();
    assert.equal(status, 200);
    assert.equal((JSON.parse(await client.chunk()) as { event?: unknown }).event, 'open');
    const published = await publish(server.baseUrl, '/upRawStream0005?up=1', 'via node');
    assert.equal(await client.chunk(), `${JSON.stringify(published.body)}\n`);
    client.socket.destroy();
  });

  test("a publish and then a stream on one keep-alive connection: both answered by Node's HTTP server", async () => {
    const client = await RawClient.open(port);
    client.socket.write(`POST /upRawStream0006?up=1 HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n\r\nfirst`);
    const answer = await client.head();
    assert.equal(answer.status, 200);
    const first = JSON.parse(await client.body(Number(answer.headers['content-length']))) as Record<string, unknown>;
    client.socket.write(get('/upRawStream0006/json?since=all'));
    assert.equal((await client.head()).status, 200);
    assert.equal((JSON.parse(await client.chunk()) as { event?: unknown }).event, 'open');
    assert.deepEqual(JSON.parse(await client.chunk()), first);
    client.socket.destroy();
  });

  test("a connection silent for Node's headers timeout is handed to Node's HTTP server", async () => {
    const local = await startNtfyTestServer();
    try {
      const client = await RawClient.open(Number(new URL(local.baseUrl).port));
      // Until the server has accepted the connection, there is no silence to time.
      await untilAccepted(local);
      local.scheduler.advance(HEADERS_TIMEOUT_MS);
      client.socket.write(get('/upRawStream0008/json'));
      const { status, headers } = await client.head();
      assert.equal(status, 200);
      assert.notEqual(headers['connection'], 'close', 'answered by Node, not on the bare socket');
      client.socket.destroy();
    } finally {
      await local.close();
    }
  });

  test("a poll and garbage are Node's: the poll answers and ends, garbage gets 400", async () => {
    await publish(server.baseUrl, '/upRawStream0007?up=1', 'cached');
    const pollClient = await RawClient.open(port);
    pollClient.socket.write(get('/upRawStream0007/json?poll=1'));
    const { status, headers } = await pollClient.head();
    assert.equal(status, 200);
    assert.notEqual(headers['connection'], 'close');
    assert.equal((JSON.parse(await pollClient.chunk()) as { message?: unknown }).message, 'cached');
    assert.equal(await pollClient.chunk(), '');
    pollClient.socket.destroy();

    const garbage = await RawClient.open(port);
    garbage.socket.write('\x16\x03\x01 not http at all\r\n\r\n');
    assert.equal((await garbage.head()).status, 400);
    await garbage.untilClosed();
  });
});
