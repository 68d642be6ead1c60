/**
 * Property-based tests of the WebSocket frame reader (`ws-frames.ts`) against what a client may
 * send (fast-check; fixed seed in `npm test`, longer under `npm run fuzz`): masking, every length
 * form up to 2^63, fragmentation with control frames between fragments, control frames over 125
 * bytes, invalid UTF-8. Whatever arrives, in whatever TCP split, the reader reports the frames or
 * fails with the RFC 6455 close code 1002, 1007 or 1009: never an exception, never more buffered
 * than one bounded frame.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FUZZ_TEST_OPTIONS, fuzzParameters } from '../../test/support/fuzz.ts';
import { WS_OPCODE, WsFrameReader, type WsFrameHandler } from './ws-frames.ts';

/** ntfy's read limit, as the server configures the reader. */
const MAX_PAYLOAD = 64;
/** Largest frame the reader may hold incomplete: the longest header, the mask, one bounded payload. */
const MAX_BUFFERED = 14 + Math.max(125, MAX_PAYLOAD);

type Event = ['message'] | ['ping', string] | ['pong'] | ['close', number | null] | ['fail', number];

function recorder(): { handler: WsFrameHandler; events: Event[] } {
  const events: Event[] = [];
  return {
    events,
    handler: {
      wsMessage: () => events.push(['message']),
      wsPing: (payload) => events.push(['ping', payload.toString('hex')]),
      wsPong: () => events.push(['pong']),
      wsClose: (code) => events.push(['close', code]),
      wsFail: (code) => events.push(['fail', code]),
    },
  };
}

interface RawFrame {
  fin?: boolean;
  rsv?: number;
  opcode: number;
  payload: Uint8Array;
  masked?: boolean;
  mask?: Uint8Array;
  /** Declare this length instead of the payload's (the payload is then not sent). */
  declaredLength?: bigint;
}

/** A client frame, masked unless told otherwise, its length in the shortest form (or the declared one in 64 bits). */
function encode(frame: RawFrame): Buffer {
  const masked = frame.masked ?? true;
  const length = frame.declaredLength ?? BigInt(frame.payload.length);
  const first = ((frame.fin ?? true) ? 0x80 : 0) | ((frame.rsv ?? 0) << 4) | frame.opcode;
  let header: Buffer;
  if (frame.declaredLength === undefined && length < 126n) header = Buffer.from([first, Number(length)]);
  else if (frame.declaredLength === undefined && length < 0x10000n) {
    header = Buffer.from([first, 126, 0, 0]);
    header.writeUInt16BE(Number(length), 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = first;
    header[1] = 127;
    header.writeBigUInt64BE(length, 2);
  }
  if (masked) header[1] = (header[1] as number) | 0x80;
  const mask = Buffer.from(frame.mask ?? [1, 2, 3, 4]);
  const body = frame.declaredLength === undefined ? Buffer.from(frame.payload) : Buffer.alloc(0);
  if (masked) for (let i = 0; i < body.length; i++) body[i] = (body[i] as number) ^ (mask[i & 3] as number);
  return Buffer.concat([header, masked ? mask : Buffer.alloc(0), body]);
}

function split(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const point of points) {
    chunks.push(bytes.subarray(from, point));
    from = point;
  }
  chunks.push(bytes.subarray(from));
  return chunks;
}

/** Feeds the chunks, checking the buffer bound after each; the events. */
function feed(chunks: readonly Buffer[]): Event[] {
  const reader = new WsFrameReader(MAX_PAYLOAD);
  const { handler, events } = recorder();
  for (const chunk of chunks) {
    reader.push(chunk, handler);
    assert.ok(reader.bufferedBytes <= MAX_BUFFERED, `buffered ${reader.bufferedBytes}`);
  }
  return events;
}

const maskArbitrary = fc.uint8Array({ minLength: 4, maxLength: 4 });
const controlArbitrary = fc.record({
  opcode: fc.constantFrom(WS_OPCODE.ping, WS_OPCODE.pong),
  payload: fc.uint8Array({ maxLength: 125 }),
  mask: maskArbitrary,
});

/** A data message within the limit (text is UTF-8), cut into fragments, with control frames between them. */
const messageArbitrary = fc
  .record({
    message: fc.oneof(
      fc.record({
        text: fc.constant(true),
        content: fc
          .string({ unit: 'grapheme', maxLength: 16 })
          .map((s) => Buffer.from(s, 'utf8'))
          .filter((b) => b.length <= MAX_PAYLOAD),
      }),
      fc.record({ text: fc.constant(false), content: fc.uint8Array({ maxLength: MAX_PAYLOAD }).map((b) => Buffer.from(b)) }),
    ),
    cuts: fc.array(fc.nat(), { maxLength: 3 }),
    between: fc.array(controlArbitrary, { maxLength: 2 }),
    mask: maskArbitrary,
  })
  .map(({ message, cuts, between, mask }) => {
    // A text message may be cut inside a character: UTF-8 is checked on the whole message.
    const fragments = split(message.content, cuts);
    const frames: RawFrame[] = [];
    const events: Event[] = [];
    fragments.forEach((fragment, i) => {
      const opcode = i > 0 ? WS_OPCODE.continuation : message.text ? WS_OPCODE.text : WS_OPCODE.binary;
      frames.push({ opcode, fin: i === fragments.length - 1, payload: fragment, mask });
      const control = between[i];
      if (control && i < fragments.length - 1) {
        frames.push(control);
        events.push(controlEvent(control));
      }
    });
    events.push(['message']);
    return { frames, events };
  });

function controlEvent(control: { opcode: number; payload: Uint8Array }): Event {
  return control.opcode === WS_OPCODE.ping ? ['ping', Buffer.from(control.payload).toString('hex')] : ['pong'];
}

const invalidUtf8 = fc.constantFrom([0xc3, 0x28], [0xff], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80]);

/** Something a client must not send, with the close code RFC 6455 gives it. */
const violationArbitrary: fc.Arbitrary<{ name: string; frames: readonly RawFrame[]; code: number }> = fc.oneof(
  fc.uint8Array({ maxLength: 20 }).map((payload) => ({
    name: 'an unmasked frame',
    frames: [{ opcode: WS_OPCODE.binary, payload, masked: false }],
    code: 1002,
  })),
  fc
    .integer({ min: 1, max: 7 })
    .map((rsv) => ({ name: `reserved bits ${rsv}`, frames: [{ opcode: WS_OPCODE.text, rsv, payload: Buffer.from('x') }], code: 1002 })),
  fc
    .constantFrom(3, 4, 5, 6, 7, 0xb, 0xc, 0xd, 0xe, 0xf)
    .map((opcode) => ({ name: `opcode ${opcode}`, frames: [{ opcode, payload: new Uint8Array() }], code: 1002 })),
  fc
    .tuple(fc.constantFrom(WS_OPCODE.ping, WS_OPCODE.pong, WS_OPCODE.close), fc.bigInt({ min: 126n, max: 2n ** 63n - 1n }))
    .map(([opcode, length]) => ({
      name: `a control frame of ${length} bytes`,
      frames: [{ opcode, payload: new Uint8Array(), declaredLength: length }],
      code: 1002,
    })),
  fc.constantFrom(WS_OPCODE.ping, WS_OPCODE.pong, WS_OPCODE.close).map((opcode) => ({
    name: `a fragmented control frame ${opcode}`,
    frames: [{ opcode, fin: false, payload: new Uint8Array() }],
    code: 1002,
  })),
  fc.constant({
    name: 'a continuation without a message',
    frames: [{ opcode: WS_OPCODE.continuation, payload: Buffer.from('x') }],
    code: 1002,
  }),
  fc.constant({
    name: 'a new message inside a fragmented one',
    frames: [
      { opcode: WS_OPCODE.text, fin: false, payload: Buffer.from('a') },
      { opcode: WS_OPCODE.text, payload: Buffer.from('b') },
    ],
    code: 1002,
  }),
  fc.bigInt({ min: BigInt(MAX_PAYLOAD) + 1n, max: 2n ** 63n - 1n }).map((length) => ({
    name: `a data frame of ${length} bytes`,
    frames: [{ opcode: WS_OPCODE.binary, payload: new Uint8Array(), declaredLength: length }],
    code: 1009,
  })),
  fc.bigInt({ min: 2n ** 63n, max: 2n ** 64n - 1n }).map((length) => ({
    name: `a length of ${length} (the top bit set)`,
    frames: [{ opcode: WS_OPCODE.binary, payload: new Uint8Array(), declaredLength: length }],
    code: 1002,
  })),
  fc.integer({ min: 1, max: MAX_PAYLOAD }).map((first) => ({
    name: `fragments adding up past the limit (${first} + ${MAX_PAYLOAD + 1 - first})`,
    frames: [
      { opcode: WS_OPCODE.binary, fin: false, payload: new Uint8Array(first) },
      { opcode: WS_OPCODE.continuation, payload: new Uint8Array(MAX_PAYLOAD + 1 - first) },
    ],
    code: 1009,
  })),
  fc.tuple(invalidUtf8, fc.boolean()).map(([bytes, fragmented]) => ({
    name: `a text message that is not UTF-8 (${Buffer.from(bytes).toString('hex')})`,
    frames: fragmented
      ? [
          { opcode: WS_OPCODE.text, fin: false, payload: Uint8Array.from(bytes.slice(0, 1)) },
          { opcode: WS_OPCODE.continuation, payload: Uint8Array.from(bytes.slice(1)) },
        ]
      : [{ opcode: WS_OPCODE.text, payload: Uint8Array.from(bytes) }],
    code: 1007,
  })),
  fc.integer({ min: 0, max: 255 }).map((byte) => ({
    name: 'a close with a one-byte body',
    frames: [{ opcode: WS_OPCODE.close, payload: Uint8Array.from([byte]) }],
    code: 1002,
  })),
  fc.constantFrom(0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535).map((code) => ({
    name: `a close with code ${code}`,
    frames: [{ opcode: WS_OPCODE.close, payload: Uint8Array.from([code >> 8, code & 0xff]) }],
    code: 1002,
  })),
  invalidUtf8.map((bytes) => ({
    name: 'a close reason that is not UTF-8',
    frames: [{ opcode: WS_OPCODE.close, payload: Uint8Array.from([0x03, 0xe8, ...bytes]) }],
    code: 1007,
  })),
);

describe('WebSocket frame reader (property-based)', () => {
  test('valid traffic (fragments, control frames between them) is reported exactly, in any TCP split', FUZZ_TEST_OPTIONS, () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            messageArbitrary,
            controlArbitrary.map((c) => ({ frames: [c], events: [controlEvent(c)] })),
          ),
          { maxLength: 6 },
        ),
        fc.array(fc.nat(), { maxLength: 12 }),
        (parts, cuts) => {
          const bytes = Buffer.concat(parts.flatMap((p) => p.frames.map(encode)));
          assert.deepEqual(
            feed(split(bytes, cuts)),
            parts.flatMap((p) => p.events),
          );
        },
      ),
      fuzzParameters(300),
    );
  });

  test('every violation after valid traffic fails with its close code (1002, 1007, 1009) and ends the reading', FUZZ_TEST_OPTIONS, () => {
    fc.assert(
      fc.property(
        fc.array(messageArbitrary, { maxLength: 3 }),
        violationArbitrary,
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.uint8Array({ maxLength: 40 }),
        (before, violation, cuts, trailing) => {
          const bytes = Buffer.concat([
            ...before.flatMap((p) => p.frames.map(encode)),
            ...violation.frames.map(encode),
            Buffer.from(trailing),
          ]);
          const events = feed(split(bytes, cuts));
          const expected = [...before.flatMap((p) => p.events), ['fail', violation.code]];
          assert.deepEqual(events, expected, violation.name);
        },
      ),
      fuzzParameters(400),
    );
  });

  test('a valid close is reported with its code, and nothing after it is read', FUZZ_TEST_OPTIONS, () => {
    fc.assert(
      fc.property(
        fc.option(
          fc.oneof(fc.integer({ min: 1000, max: 1003 }), fc.integer({ min: 1007, max: 1014 }), fc.integer({ min: 3000, max: 4999 })),
        ),
        fc.string({ unit: 'grapheme', maxLength: 20 }).filter((reason) => Buffer.byteLength(reason) <= 123),
        fc.uint8Array({ maxLength: 40 }),
        (code, reason, trailing) => {
          const payload =
            code === null ? new Uint8Array() : Buffer.concat([Buffer.from([code >> 8, code & 0xff]), Buffer.from(reason, 'utf8')]);
          const events = feed([encode({ opcode: WS_OPCODE.close, payload }), Buffer.from(trailing)]);
          assert.deepEqual(events, [['close', code]]);
        },
      ),
      fuzzParameters(200),
    );
  });

  test('random bytes: never an exception, at most one close or failure, and only 1002, 1007 or 1009', FUZZ_TEST_OPTIONS, () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), fc.array(fc.nat(), { maxLength: 16 }), (bytes, cuts) => {
        const events = feed(split(Buffer.from(bytes), cuts));
        const endings = events.filter((e) => e[0] === 'close' || e[0] === 'fail');
        assert.ok(endings.length <= 1);
        if (endings.length === 1) assert.equal(events.at(-1), endings[0], 'nothing is reported after the end');
        for (const event of events) if (event[0] === 'fail') assert.ok([1002, 1007, 1009].includes(event[1]), `code ${event[1]}`);
      }),
      fuzzParameters(500),
    );
  });
});
