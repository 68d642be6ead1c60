/**
 * The WebSocket server of `/ws` subscriptions (src/ntfy/websocket.ts, ws-sink.ts), black-box over
 * raw TCP, so the test writes exactly the bytes a client would and reads exactly what the server
 * sends: the opening handshake and its refusals, ping/pong, both close handshakes, protocol
 * errors, and bytes that arrive with the handshake. (Ordinary clients: `subscribe.test.ts`, with
 * the `ws` package as the client.) Over both servers: our own framing and the `ws` package.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { NTFY_WEBSOCKET_KINDS } from '../../src/config/defaults.ts';
import { WS_CLOSE_TIMEOUT_MS } from '../../src/ntfy/ws-sink.ts';
import { WS_OPCODE } from '../../src/ntfy/ws-frames.ts';
import { publish } from './client.ts';
import { startNtfyTestServer, type NtfyTestServer } from './harness.ts';
import { clientFrame, RawClient } from './raw-client.ts';

/** RFC 6455 §1.3's example key and the accept value it gives. */
const SAMPLE_KEY = 'dGhlIHNhbXBsZSBub25jZQ==';
const SAMPLE_ACCEPT = 's3pPLMBiTxaQ9kYGzzhZRbK+xOo=';

function upgrade(path: string, extra: string[] = [], overrides: Record<string, string | null> = {}): string {
  const headers: Record<string, string | null> = {
    Host: 'test',
    Upgrade: 'websocket',
    Connection: 'Upgrade',
    'Sec-WebSocket-Key': SAMPLE_KEY,
    'Sec-WebSocket-Version': '13',
    ...overrides,
  };
  const lines = Object.entries(headers)
    .filter((entry): entry is [string, string] => entry[1] !== null)
    .map(([name, value]) => `${name}: ${value}`);
  return `GET ${path} HTTP/1.1\r\n${[...lines, ...extra].map((line) => `${line}\r\n`).join('')}\r\n`;
}

const closeCode = (payload: Buffer) => (payload.length >= 2 ? payload.readUInt16BE(0) : null);

// One suite over both WebSocket servers (ntfy.websocket), as the store contract runs over both stores.
for (const websocket of NTFY_WEBSOCKET_KINDS) {
  describe(`ntfy WebSockets on the wire (ntfy.websocket: ${websocket})`, () => {
    let server: NtfyTestServer;
    let port: number;
    let topicNumber = 0;
    const freshTopic = () => `upWsWire${String(topicNumber++).padStart(6, '0')}`;
    before(async () => {
      server = await startNtfyTestServer({ config: { websocket } });
      port = Number(new URL(server.baseUrl).port);
    });
    after(() => server.close());

    /** A connection past the handshake and its `open` frame. */
    async function subscribed(topic: string, query = ''): Promise<RawClient> {
      const client = await RawClient.open(port);
      client.socket.write(upgrade(`/${topic}/ws${query}`));
      const { status } = await client.head();
      assert.equal(status, 101);
      return client;
    }

    test('the handshake: 101 with the accept key of RFC 6455, no extension or subprotocol; then unmasked text frames', async () => {
      const client = await RawClient.open(port);
      const topic = freshTopic();
      client.socket.write(upgrade(`/${topic}/ws`, ['Sec-WebSocket-Extensions: permessage-deflate', 'Sec-WebSocket-Protocol: chat']));
      const { status, headers } = await client.head();
      assert.deepEqual(
        [status, headers['upgrade'], headers['connection'], headers['sec-websocket-accept']],
        [101, 'websocket', 'Upgrade', SAMPLE_ACCEPT],
      );
      assert.equal(headers['sec-websocket-extensions'], undefined);
      assert.equal(headers['sec-websocket-protocol'], undefined);
      const open = await client.wsFrame();
      assert.deepEqual([open.fin, open.opcode], [true, WS_OPCODE.text]);
      assert.deepEqual((JSON.parse(open.payload.toString()) as { event: string }).event, 'open');
      const published = await publish(server.baseUrl, `/${topic}?up=1`, 'ü'.repeat(200));
      const frame = await client.wsFrame();
      assert.equal(frame.payload.toString(), `${JSON.stringify(published.body)}\n`, 'a 16-bit length frame, whole');
      client.socket.destroy();
    });

    test('refused handshakes: a bare status line (405, 400, 400 naming version 13), and no subscription slot taken', async () => {
      const limited = await startNtfyTestServer({ config: { websocket, visitor_exempt_hosts: [], visitor_subscription_limit: 1 } });
      const limitedPort = Number(new URL(limited.baseUrl).port);
      try {
        const attempts: Array<[string, number, string | undefined]> = [
          [upgrade('/upWsRefused01/ws', [], { 'Sec-WebSocket-Version': '8' }), 400, '13'],
          [upgrade('/upWsRefused01/ws', [], { 'Sec-WebSocket-Key': 'not a key' }), 400, undefined],
          [upgrade('/upWsRefused01/ws', [], { 'Sec-WebSocket-Key': null }), 400, undefined],
          [upgrade('/upWsRefused01/ws').replace(/^GET/, 'POST'), 405, undefined],
          [upgrade('/upWsRefused01/ws', [], { Upgrade: 'h2c' }), 400, undefined],
        ];
        for (const [request, expected, version] of attempts) {
          const client = await RawClient.open(limitedPort);
          client.socket.write(request);
          const { status, headers } = await client.head();
          assert.deepEqual([status, headers['sec-websocket-version']], [expected, version], request.split('\r\n').join(' | '));
          await client.untilClosed();
        }
        const client = await RawClient.open(limitedPort);
        client.socket.write(upgrade('/upWsRefused01/ws'));
        assert.equal((await client.head()).status, 101, 'the one slot is still free');
        client.socket.destroy();
      } finally {
        await limited.close();
      }
    });

    test('a ping is answered by a pong with its payload, also when it came in the handshake packet', async () => {
      const client = await RawClient.open(port);
      client.socket.write(Buffer.concat([Buffer.from(upgrade(`/${freshTopic()}/ws`)), clientFrame(WS_OPCODE.ping, 'early')]));
      assert.equal((await client.head()).status, 101);
      const frames = [await client.wsFrame(), await client.wsFrame()];
      const pong = frames.find((f) => f.opcode === WS_OPCODE.pong);
      assert.equal(pong?.payload.toString(), 'early');
      client.socket.write(clientFrame(WS_OPCODE.ping, 'later'));
      const second = await client.wsFrame();
      assert.deepEqual([second.opcode, second.payload.toString()], [WS_OPCODE.pong, 'later']);
      client.socket.destroy();
    });

    test('a close from the client is echoed with its code, then the server ends the connection and the subscription', async () => {
      const topic = freshTopic();
      const client = await subscribed(topic);
      await client.wsFrame();
      const held = server.ntfy.hub?.size ?? 0;
      client.socket.write(clientFrame(WS_OPCODE.close, Buffer.concat([Buffer.from([0x0f, 0xa0]), Buffer.from('bye')])));
      const close = await client.wsFrame();
      assert.deepEqual([close.opcode, closeCode(close.payload)], [WS_OPCODE.close, 4000]);
      await client.untilClosed();
      // Our framing ends the subscription as the close frame is read, `ws` once its socket has
      // closed (just after the client sees the end): wait for the hub, bounded only against a hang.
      const deadline = Date.now() + 10_000;
      while ((server.ntfy.hub?.size ?? 0) >= held && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
      assert.equal(server.ntfy.hub?.size, held - 1);
    });

    test('a close from the server (a poll that is done) waits for the client’s close, or cuts it off after the close timeout', async () => {
      const topic = freshTopic();
      const published = await publish(server.baseUrl, `/${topic}?up=1`, 'polled');
      for (const answers of [true, false]) {
        const client = await subscribed(topic, '?poll=1');
        const message = await client.wsFrame();
        assert.equal(message.payload.toString(), `${JSON.stringify(published.body)}\n`);
        const close = await client.wsFrame();
        assert.deepEqual([close.opcode, closeCode(close.payload)], [WS_OPCODE.close, 1000]);
        if (answers) {
          client.socket.end(clientFrame(WS_OPCODE.close, close.payload));
        } else {
          assert.equal(client.closed, false, 'the server waits for the client’s close');
          server.scheduler.advance(WS_CLOSE_TIMEOUT_MS);
        }
        await client.untilClosed();
      }
    });

    test('protocol errors are closed with their status: unmasked 1002, too big 1009, bad UTF-8 1007, fragmented control 1002', async () => {
      const cases: Array<[Buffer, number]> = [
        [clientFrame(WS_OPCODE.text, 'x', { masked: false }), 1002],
        [clientFrame(WS_OPCODE.text, 'x'.repeat(65)), 1009],
        [clientFrame(WS_OPCODE.text, Buffer.from([0xc3, 0x28])), 1007],
        [clientFrame(WS_OPCODE.ping, 'x', { fin: false }), 1002],
      ];
      for (const [frame, expected] of cases) {
        const client = await subscribed(freshTopic());
        await client.wsFrame();
        client.socket.write(frame);
        const close = await client.wsFrame();
        assert.deepEqual([close.opcode, closeCode(close.payload)], [WS_OPCODE.close, expected]);
        await client.untilClosed();
      }
    });

    test('fragmented messages within the limit and control frames between fragments are accepted; the stream goes on', async () => {
      const topic = freshTopic();
      const client = await subscribed(topic);
      await client.wsFrame();
      client.socket.write(
        Buffer.concat([
          clientFrame(WS_OPCODE.text, 'hello ', { fin: false }),
          clientFrame(WS_OPCODE.ping, 'mid'),
          clientFrame(WS_OPCODE.continuation, 'world'),
          clientFrame(WS_OPCODE.pong, ''),
        ]),
      );
      const pong = await client.wsFrame();
      assert.deepEqual([pong.opcode, pong.payload.toString()], [WS_OPCODE.pong, 'mid']);
      const published = await publish(server.baseUrl, `/${topic}?up=1`, 'still subscribed');
      assert.equal((await client.wsFrame()).payload.toString(), `${JSON.stringify(published.body)}\n`);
      client.socket.destroy();
    });
  });
}
