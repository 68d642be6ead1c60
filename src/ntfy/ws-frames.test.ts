import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { clientFrame } from '../../test/ntfy/raw-client.ts';
import { encodeWsFrame, isSendableCloseCode, WS_OPCODE, wsClosePayload, WsFrameReader, type WsFrameHandler } from './ws-frames.ts';

const MAX = 64;

/** Records what the reader reports, in order. */
class Recorder implements WsFrameHandler {
  readonly events: string[] = [];
  wsMessage(): void {
    this.events.push('message');
  }
  wsPing(payload: Buffer): void {
    this.events.push(`ping ${payload.toString()}`);
  }
  wsPong(): void {
    this.events.push('pong');
  }
  wsClose(code: number | null): void {
    this.events.push(`close ${code}`);
  }
  wsFail(code: number, reason: string): void {
    this.events.push(`fail ${code} ${reason}`);
  }
}

function read(...chunks: Buffer[]): string[] {
  const reader = new WsFrameReader(MAX);
  const recorder = new Recorder();
  for (const chunk of chunks) reader.push(chunk, recorder);
  return recorder.events;
}

describe('WebSocket frames', () => {
  test('server frames: FIN, unmasked, each length form', () => {
    assert.deepEqual([...encodeWsFrame(WS_OPCODE.text, 'hi')], [0x81, 2, 0x68, 0x69]);
    assert.deepEqual([...encodeWsFrame(WS_OPCODE.ping, '')], [0x89, 0]);
    const medium = encodeWsFrame(WS_OPCODE.text, 'é'.repeat(100));
    assert.deepEqual([medium[0], medium[1], medium.readUInt16BE(2), medium.length], [0x81, 126, 200, 204]);
    const large = encodeWsFrame(WS_OPCODE.binary, Buffer.alloc(70_000, 7));
    assert.deepEqual(
      [large[0], large[1], large.readUInt32BE(2), large.readUInt32BE(6), large.length, large[10]],
      [0x82, 127, 0, 70_000, 70_010, 7],
    );
    assert.deepEqual([...wsClosePayload(1000, 'ok')], [0x03, 0xe8, 0x6f, 0x6b]);
    assert.equal(wsClosePayload(null).length, 0);
  });

  test('control frames and messages, in one chunk or split at every byte', () => {
    const stream = Buffer.concat([
      clientFrame(WS_OPCODE.ping, 'p1'),
      clientFrame(WS_OPCODE.text, 'hel', { fin: false }),
      clientFrame(WS_OPCODE.pong, ''),
      clientFrame(WS_OPCODE.continuation, 'lo ', { fin: false }),
      clientFrame(WS_OPCODE.ping, 'between fragments'),
      clientFrame(WS_OPCODE.continuation, '🙂'),
      clientFrame(WS_OPCODE.binary, Buffer.from([0xff, 0x00])),
      clientFrame(WS_OPCODE.close, wsClosePayload(1000, 'bye')),
      clientFrame(WS_OPCODE.ping, 'after the close'),
    ]);
    const expected = ['ping p1', 'pong', 'ping between fragments', 'message', 'message', 'close 1000'];
    assert.deepEqual(read(stream), expected);
    assert.deepEqual(read(...[...stream].map((byte) => Buffer.from([byte]))), expected, 'byte by byte');
    assert.deepEqual(read(clientFrame(WS_OPCODE.close, Buffer.alloc(0))), ['close null']);
  });

  test('the 16-bit length form, and messages up to the limit over fragments', () => {
    assert.deepEqual(read(clientFrame(WS_OPCODE.ping, 'x'.repeat(125))), [`ping ${'x'.repeat(125)}`]);
    assert.deepEqual(
      read(clientFrame(WS_OPCODE.text, 'a'.repeat(32), { fin: false }), clientFrame(WS_OPCODE.continuation, 'b'.repeat(32))),
      ['message'],
    );
    // A length in the 16-bit form although it would fit in 7 bits (RFC 6455 asks for the
    // shortest form; readers in practice accept either, and so does this one).
    const key = [1, 2, 3, 4];
    const sixteenBit = Buffer.from([0x81, 0x80 | 126, 0, 2, ...key, 0x6f ^ 1, 0x6b ^ 2]);
    assert.deepEqual(read(sixteenBit), ['message']);
    assert.deepEqual(
      read(clientFrame(WS_OPCODE.text, 'x'.repeat(200)).subarray(0, 4)),
      ['fail 1009 message too big'],
      'refused from a 16-bit length alone',
    );
  });

  test('protocol errors close with 1002, too-big messages 1009, bad UTF-8 1007; nothing is read after', () => {
    const cases: Array<[Buffer, string]> = [
      [clientFrame(WS_OPCODE.text, 'x', { masked: false }), 'fail 1002 unmasked client frame'],
      [clientFrame(WS_OPCODE.text, 'x', { rsv: 4 }), 'fail 1002 reserved bits set'],
      [clientFrame(0x3, 'x'), 'fail 1002 unknown opcode 3'],
      [clientFrame(0xb, 'x'), 'fail 1002 unknown opcode 11'],
      [clientFrame(WS_OPCODE.ping, 'x', { fin: false }), 'fail 1002 fragmented control frame'],
      [clientFrame(WS_OPCODE.ping, 'x'.repeat(126)), 'fail 1002 control frame over 125 bytes'],
      [clientFrame(WS_OPCODE.continuation, 'x'), 'fail 1002 continuation without a message'],
      [
        Buffer.concat([clientFrame(WS_OPCODE.text, 'x', { fin: false }), clientFrame(WS_OPCODE.text, 'y')]),
        'fail 1002 new message inside a fragmented one',
      ],
      [clientFrame(WS_OPCODE.text, 'x'.repeat(MAX + 1)), 'fail 1009 message too big'],
      [
        Buffer.concat([clientFrame(WS_OPCODE.text, 'x'.repeat(40), { fin: false }), clientFrame(WS_OPCODE.continuation, 'y'.repeat(40))]),
        'fail 1009 message too big',
      ],
      [clientFrame(WS_OPCODE.text, Buffer.from([0xc3, 0x28])), 'fail 1007 text message is not UTF-8'],
      [
        Buffer.concat([
          clientFrame(WS_OPCODE.text, Buffer.from([0xf0, 0x9f]), { fin: false }),
          clientFrame(WS_OPCODE.continuation, Buffer.from([0x99])),
        ]),
        'fail 1007 text message is not UTF-8',
      ],
      [clientFrame(WS_OPCODE.close, Buffer.from([0x03])), 'fail 1002 close frame with a one-byte body'],
      [clientFrame(WS_OPCODE.close, wsClosePayload(1005)), 'fail 1002 close code 1005 is not for the wire'],
      [clientFrame(WS_OPCODE.close, wsClosePayload(999)), 'fail 1002 close code 999 is not for the wire'],
      [clientFrame(WS_OPCODE.close, Buffer.concat([wsClosePayload(1000), Buffer.from([0xff])])), 'fail 1007 close reason is not UTF-8'],
    ];
    for (const [bytes, expected] of cases) assert.deepEqual(read(bytes, clientFrame(WS_OPCODE.ping, 'ignored')), [expected], expected);
  });

  test('a huge declared length is refused from the header, before any payload is buffered', () => {
    const header = clientFrame(WS_OPCODE.binary, Buffer.alloc(0), { length: 70_000 }).subarray(0, 10);
    assert.deepEqual(read(header), ['fail 1009 message too big']);
    const topBit = Buffer.from([0x82, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 1]);
    assert.deepEqual(read(topBit), ['fail 1002 payload length with its top bit set']);
  });

  test('close codes a peer may send', () => {
    for (const code of [1000, 1001, 1002, 1003, 1007, 1011, 1014, 3000, 4999]) assert.ok(isSendableCloseCode(code), String(code));
    for (const code of [0, 999, 1004, 1005, 1006, 1015, 2000, 2999, 5000]) assert.ok(!isSendableCloseCode(code), String(code));
  });
});
