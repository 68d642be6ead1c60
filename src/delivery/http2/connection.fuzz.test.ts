/**
 * Property-based tests of our HTTP/2 client connection against a hostile server, on loopback TCP
 * (fast-check; fixed seed in `npm test`, longer under `npm run fuzz`).
 *
 * A session with `node:http2` is recorded once (what the server sent our client for one request);
 * each run replays it from a raw TCP server, mutated or with a protocol violation inserted, and
 * reads what the client sends back. Properties: the request always settles with a response or an
 * {@link Http2RequestError} (never an uncaught exception), every GOAWAY the client sends carries
 * a code it is meant to use, and each kind of violation is answered with its RFC 9113 code.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import net, { type AddressInfo, type Server, type Socket } from 'node:net';
import fc from 'fast-check';
import { FUZZ_TEST_OPTIONS, fuzzParameters } from '../../../test/support/fuzz.ts';
import { CLIENT_PREFACE, encodeFrame, ErrorCode, Flag, FrameReader, FrameType, Setting, type Frame } from './frames.ts';
import { Http2Pool, Http2RequestError } from './pool.ts';

const SEND_PATH = '/v1/projects/fuzz/messages:send';

/** Whole frames, each as its bytes. */
function frameBytes(bytes: Buffer): Buffer[] {
  const frames: Buffer[] = [];
  new FrameReader(2 ** 24 - 1).push(bytes, (frame) => frames.push(encodeFrame(frame.type, frame.flags, frame.streamId, frame.payload)));
  return frames;
}

/** What a node:http2 server sends our client for one request: its first SETTINGS, then the rest. */
async function recordSession(): Promise<{ settings: Buffer; rest: Buffer[] }> {
  const server = http2.createServer();
  server.on('stream', (stream) => {
    stream.respond({ ':status': 200, 'content-type': 'application/json; charset=UTF-8', 'x-request-id': 'r-1', vary: 'origin' });
    stream.end(JSON.stringify({ name: 'projects/fuzz/messages/0:1234567890' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const upstreamPort = (server.address() as AddressInfo).port;
  const downstream: Buffer[] = [];
  const proxy = net.createServer((client) => {
    const upstream = net.connect(upstreamPort, '127.0.0.1');
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      downstream.push(chunk);
      client.write(chunk);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const pool = new Http2Pool({ baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` });
  try {
    const response = await pool.request({ method: 'POST', path: SEND_PATH, body: '{}' });
    assert.equal(response.status, 200);
  } finally {
    await pool.close();
    proxy.close();
    server.close();
  }
  const [settings, ...rest] = frameBytes(Buffer.concat(downstream));
  assert.ok(settings && settings[3] === FrameType.SETTINGS, 'the recording starts with the server SETTINGS');
  return { settings, rest };
}

interface ExchangeResult {
  /** The response status, or why the request failed. */
  outcome: number | string;
  /** Codes of the GOAWAY frames the client sent. */
  goaways: number[];
}

/**
 * A raw server for one exchange at a time: it sends `settings`, waits for the client's request
 * HEADERS, sends `response`, and ends its side; it reports the frames the client sent.
 */
class ScriptedServer {
  private readonly server: Server;
  private script: { settings: Buffer; response: Buffer; done: (frames: Frame[]) => void } | null = null;
  port = 0;

  constructor() {
    this.server = net.createServer((socket) => this.serve(socket));
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  async exchange(settings: Buffer, response: Buffer): Promise<ExchangeResult> {
    const clientFrames = new Promise<Frame[]>((resolve) => (this.script = { settings, response, done: resolve }));
    const pool = new Http2Pool({ baseUrl: `http://127.0.0.1:${this.port}` });
    let outcome: number | string;
    try {
      outcome = (await pool.request({ method: 'POST', path: SEND_PATH, body: '{"message":{}}' })).status;
    } catch (err) {
      // Anything but the pool's one error type fails the property.
      if (!(err instanceof Http2RequestError)) throw err;
      outcome = err.reason;
    }
    const frames = await clientFrames;
    await pool.close();
    return { outcome, goaways: frames.filter((f) => f.type === FrameType.GOAWAY).map((f) => f.payload.readUInt32BE(4)) };
  }

  private serve(socket: Socket): void {
    const script = this.script;
    if (!script) {
      socket.destroy();
      return;
    }
    const frames: Frame[] = [];
    const reader = new FrameReader(2 ** 24 - 1);
    let prefaceLeft = CLIENT_PREFACE.length;
    let responded = false;
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      const skipped = Math.min(prefaceLeft, chunk.length);
      prefaceLeft -= skipped;
      reader.push(chunk.subarray(skipped), (frame) => frames.push({ ...frame, payload: Buffer.from(frame.payload) }));
      if (!responded && frames.some((f) => f.type === FrameType.HEADERS)) {
        responded = true;
        socket.end(script.response);
      }
    });
    socket.on('close', () => script.done(frames));
    socket.write(script.settings);
  }
}

/** The codes our client's GOAWAY may carry: NO_ERROR on a graceful close, or the peer's violation. */
const CLIENT_GOAWAY_CODES = new Set<number>([
  ErrorCode.NO_ERROR,
  ErrorCode.PROTOCOL_ERROR,
  ErrorCode.FLOW_CONTROL_ERROR,
  ErrorCode.FRAME_SIZE_ERROR,
  ErrorCode.COMPRESSION_ERROR,
  ErrorCode.ENHANCE_YOUR_CALM,
]);

const settingsFrame = (entries: Array<[number, number]>, streamId = 0): Buffer => {
  const payload = Buffer.alloc(entries.length * 6);
  entries.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, i * 6);
    payload.writeUInt32BE(value, i * 6 + 2);
  });
  return encodeFrame(FrameType.SETTINGS, 0, streamId, payload);
};

/** A protocol violation a server could commit, with the GOAWAY code RFC 9113 gives it. */
const violationArbitrary: fc.Arbitrary<{ name: string; bytes: Buffer; code: number }> = fc.oneof(
  fc.integer({ min: 16_385, max: 2 ** 24 - 1 }).map((length) => ({
    name: `a ${length}-octet frame`,
    bytes: Buffer.from([(length >>> 16) & 0xff, (length >>> 8) & 0xff, length & 0xff, FrameType.DATA, 0, 0, 0, 0, 1]),
    code: ErrorCode.FRAME_SIZE_ERROR,
  })),
  fc.integer({ min: 1, max: 40 }).map((length) => ({
    name: `SETTINGS of ${length * 6 + 1} octets`,
    bytes: encodeFrame(FrameType.SETTINGS, 0, 0, Buffer.alloc(length * 6 + 1)),
    code: ErrorCode.FRAME_SIZE_ERROR,
  })),
  fc.integer({ min: 1, max: 2 ** 31 - 1 }).map((streamId) => ({
    name: 'SETTINGS on a stream',
    bytes: settingsFrame([], streamId),
    code: ErrorCode.PROTOCOL_ERROR,
  })),
  fc.integer({ min: 2 ** 31, max: 2 ** 32 - 1 }).map((value) => ({
    name: `SETTINGS_INITIAL_WINDOW_SIZE ${value}`,
    bytes: settingsFrame([[Setting.INITIAL_WINDOW_SIZE, value]]),
    code: ErrorCode.FLOW_CONTROL_ERROR,
  })),
  fc.oneof(fc.integer({ min: 0, max: 16_383 }), fc.integer({ min: 2 ** 24, max: 2 ** 32 - 1 })).map((value) => ({
    name: `SETTINGS_MAX_FRAME_SIZE ${value}`,
    bytes: settingsFrame([[Setting.MAX_FRAME_SIZE, value]]),
    code: ErrorCode.PROTOCOL_ERROR,
  })),
  fc.integer({ min: 0, max: 20 }).map((length) => ({
    name: `PING of ${length === 8 ? 9 : length} octets`,
    bytes: encodeFrame(FrameType.PING, 0, 0, Buffer.alloc(length === 8 ? 9 : length)),
    code: ErrorCode.FRAME_SIZE_ERROR,
  })),
  fc.constant({
    name: 'WINDOW_UPDATE of 0 on the connection',
    bytes: encodeFrame(FrameType.WINDOW_UPDATE, 0, 0, Buffer.alloc(4)),
    code: ErrorCode.PROTOCOL_ERROR,
  }),
  // Even ids are the server's own, which it may never open towards a client that disabled push.
  fc.integer({ min: 1, max: 2 ** 30 - 1 }).map((half) => ({
    name: `DATA on idle stream ${half * 2}`,
    bytes: encodeFrame(FrameType.DATA, 0, half * 2, Buffer.from('x')),
    code: ErrorCode.PROTOCOL_ERROR,
  })),
  fc.constant({
    name: 'PUSH_PROMISE although push is off',
    bytes: encodeFrame(FrameType.PUSH_PROMISE, Flag.END_HEADERS, 1, Buffer.from([0, 0, 0, 2, 0x82])),
    code: ErrorCode.PROTOCOL_ERROR,
  }),
  fc.constant({
    name: 'CONTINUATION without a header block',
    bytes: encodeFrame(FrameType.CONTINUATION, Flag.END_HEADERS, 1, Buffer.from([0x88])),
    code: ErrorCode.PROTOCOL_ERROR,
  }),
  fc.constantFrom([0x80], [0xff, 0xff, 0xff, 0xff, 0x0f], [0x40, 0x85, 0xff, 0xff, 0xff, 0xff, 0xff], [0x3f, 0xe2, 0x1f]).map((block) => ({
    name: `HEADERS with the undecodable block ${Buffer.from(block).toString('hex')}`,
    bytes: encodeFrame(FrameType.HEADERS, Flag.END_HEADERS, 1, Buffer.from(block)),
    code: ErrorCode.COMPRESSION_ERROR,
  })),
  fc.integer({ min: 17, max: 24 }).map((frames) => ({
    name: `a header block of ${frames} × 16 KiB in CONTINUATION frames`,
    bytes: Buffer.concat([
      encodeFrame(FrameType.HEADERS, 0, 1, Buffer.alloc(16_384, 0x88)),
      ...Array.from({ length: frames - 1 }, () => encodeFrame(FrameType.CONTINUATION, 0, 1, Buffer.alloc(16_384, 0x88))),
    ]),
    code: ErrorCode.ENHANCE_YOUR_CALM,
  })),
);

describe('our HTTP/2 client against a hostile server (property-based, loopback)', () => {
  const server = new ScriptedServer();
  let recording: { settings: Buffer; rest: Buffer[] };

  before(async () => {
    recording = await recordSession();
    await server.start();
  });
  after(() => server.stop());

  test('the recorded session replayed unchanged gives the response', async () => {
    const result = await server.exchange(recording.settings, Buffer.concat(recording.rest));
    assert.equal(result.outcome, 200);
    assert.deepEqual(
      result.goaways.filter((code) => code !== ErrorCode.NO_ERROR),
      [],
    );
  });

  test(
    'mutated and random server bytes: the request settles, the client survives, its GOAWAY codes are its own',
    FUZZ_TEST_OPTIONS,
    async () => {
      const mutation = fc.oneof(
        fc
          .array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 })
          .map((flips) => ({ flips, cut: null })),
        fc.nat().map((cut) => ({ flips: [] as Array<[number, number]>, cut })),
      );
      await fc.assert(
        fc.asyncProperty(fc.oneof(mutation, fc.uint8Array({ minLength: 1, maxLength: 600 })), async (change) => {
          let response: Buffer;
          if (change instanceof Uint8Array) response = Buffer.from(change);
          else {
            response = Buffer.from(Buffer.concat(recording.rest));
            for (const [at, byte] of change.flips) response[at % response.length] = byte;
            if (change.cut !== null) response = response.subarray(0, change.cut % (response.length + 1));
          }
          const result = await server.exchange(recording.settings, response);
          for (const code of result.goaways) assert.ok(CLIENT_GOAWAY_CODES.has(code), `GOAWAY code ${code}`);
        }),
        fuzzParameters(40),
      );
    },
  );

  test('each protocol violation, anywhere in the session, is answered with GOAWAY and its RFC 9113 code', FUZZ_TEST_OPTIONS, async () => {
    await fc.assert(
      fc.asyncProperty(violationArbitrary, fc.nat(), async (violation, at) => {
        const position = at % (recording.rest.length + 1);
        const frames = [...recording.rest.slice(0, position), violation.bytes, ...recording.rest.slice(position)];
        const result = await server.exchange(recording.settings, Buffer.concat(frames));
        const errors = result.goaways.filter((code) => code !== ErrorCode.NO_ERROR);
        assert.deepEqual(errors, [violation.code], `${violation.name} at frame ${position}: GOAWAY ${JSON.stringify(result.goaways)}`);
      }),
      fuzzParameters(40),
    );
  });
});
