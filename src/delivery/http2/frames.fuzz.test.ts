/**
 * Property-based tests of our HTTP/2 frame reader and HPACK decoder against hostile bytes
 * (fast-check; fixed seed in `npm test`, longer under `npm run fuzz`: `test/support/fuzz.ts`).
 * The connection-level properties (GOAWAY codes on a socket) are in `connection.fuzz.test.ts`.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import fc from 'fast-check';
import { FUZZ_TEST_OPTIONS, fuzzParameters } from '../../../test/support/fuzz.ts';
import {
  DEFAULT_MAX_FRAME_SIZE,
  encodeFrame,
  ErrorCode,
  FRAME_HEADER_OCTETS,
  FrameReader,
  Http2ConnectionError,
  type Frame,
} from './frames.ts';
import { HpackDecoder, HpackEncoder, HpackError, STATIC_TABLE } from './hpack.ts';

/** `bytes` cut at `cuts` (positions, any order, duplicates allowed) into consecutive chunks. */
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

/** Frames as a reader hands them out, copied so later chunks cannot change them. */
function readAll(reader: FrameReader, chunks: readonly Buffer[]): { frames: Frame[]; error: unknown; peakBuffered: number } {
  const frames: Frame[] = [];
  let peakBuffered = 0;
  try {
    for (const chunk of chunks) {
      reader.push(chunk, (frame) => frames.push({ ...frame, payload: Buffer.from(frame.payload) }));
      peakBuffered = Math.max(peakBuffered, reader.bufferedOctets);
    }
    return { frames, error: null, peakBuffered };
  } catch (err) {
    return { frames, error: err, peakBuffered };
  }
}

const frameArbitrary = fc.record({
  type: fc.integer({ min: 0, max: 255 }),
  flags: fc.integer({ min: 0, max: 255 }),
  streamId: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  payload: fc.uint8Array({ maxLength: 300 }),
});

describe('HTTP/2 frame reader (property-based)', () => {
  test('well-formed frames come out whole and unchanged however the stream is split', FUZZ_TEST_OPTIONS, () => {
    fc.assert(
      fc.property(fc.array(frameArbitrary, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 20 }), (frames, cuts) => {
        const bytes = Buffer.concat(frames.map((f) => encodeFrame(f.type, f.flags, f.streamId, f.payload)));
        const { frames: read, error } = readAll(new FrameReader(), split(bytes, cuts));
        assert.equal(error, null);
        assert.deepEqual(
          read.map((f) => [f.type, f.flags, f.streamId, [...f.payload]]),
          frames.map((f) => [f.type, f.flags, f.streamId, [...f.payload]]),
        );
      }),
      fuzzParameters(300),
    );
  });

  test('random bytes: frames or a FRAME_SIZE_ERROR, never another exception, never more buffered than one frame', FUZZ_TEST_OPTIONS, () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 4096 }),
        fc.array(fc.nat(), { maxLength: 16 }),
        fc.integer({ min: 16, max: DEFAULT_MAX_FRAME_SIZE }),
        (bytes, cuts, maxFrameSize) => {
          const { frames, error, peakBuffered } = readAll(new FrameReader(maxFrameSize), split(Buffer.from(bytes), cuts));
          if (error !== null) {
            assert.ok(error instanceof Http2ConnectionError, inspect(error));
            assert.equal(error.code, ErrorCode.FRAME_SIZE_ERROR);
          }
          for (const frame of frames) assert.ok(frame.payload.length <= maxFrameSize);
          assert.ok(peakBuffered < FRAME_HEADER_OCTETS + maxFrameSize, `buffered ${peakBuffered}`);
        },
      ),
      fuzzParameters(300),
    );
  });

  test('a length over our SETTINGS_MAX_FRAME_SIZE is refused from its header alone, before its payload arrives', FUZZ_TEST_OPTIONS, () => {
    fc.assert(
      fc.property(fc.integer({ min: DEFAULT_MAX_FRAME_SIZE + 1, max: 2 ** 24 - 1 }), fc.integer({ min: 0, max: 255 }), (length, type) => {
        const header = Buffer.from([(length >>> 16) & 0xff, (length >>> 8) & 0xff, length & 0xff, type, 0, 0, 0, 0, 1]);
        const { error } = readAll(new FrameReader(), [header]);
        assert.ok(error instanceof Http2ConnectionError);
        assert.equal(error.code, ErrorCode.FRAME_SIZE_ERROR);
      }),
      fuzzParameters(100),
    );
  });
});

/** Header fields as the HPACK encoder takes them: lowercase token names, latin1 values. */
const fieldArbitrary = fc.tuple(
  fc.oneof(fc.constantFrom(...STATIC_TABLE.map(([name]) => name)), fc.stringMatching(/^[a-z0-9-]{1,20}$/)),
  fc.oneof(
    fc.constantFrom('', '200', 'application/json', 'gzip, deflate'),
    fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 60 }),
  ),
  fc.constantFrom('incremental' as const, 'without' as const, 'never' as const),
);

/** Decodes, reporting the fields, the octets they count for, and what was thrown. */
function decodeAll(decoder: HpackDecoder, block: Uint8Array): { fields: Array<[string, string]>; listOctets: number; error: unknown } {
  const fields: Array<[string, string]> = [];
  let listOctets = 0;
  try {
    decoder.decode(block, (name, value) => {
      fields.push([name, value]);
      listOctets += name.length + value.length + 32;
    });
    return { fields, listOctets, error: null };
  } catch (err) {
    return { fields, listOctets, error: err };
  }
}

describe('HPACK decoder (property-based)', () => {
  test('what our encoder writes decodes to the same fields, block after block (the dynamic tables in step)', FUZZ_TEST_OPTIONS, () => {
    fc.assert(
      fc.property(fc.array(fc.array(fieldArbitrary, { maxLength: 10 }), { maxLength: 6 }), (blocks) => {
        const encoder = new HpackEncoder();
        const decoder = new HpackDecoder();
        for (const fields of blocks) {
          const { fields: decoded, error } = decodeAll(decoder, encoder.encode(fields));
          assert.equal(error, null);
          assert.deepEqual(
            decoded,
            fields.map(([name, value]) => [name, value]),
          );
        }
      }),
      fuzzParameters(200),
    );
  });

  test(
    'random and mutated blocks: fields or an HpackError, never another exception; tables and lists within their bounds',
    FUZZ_TEST_OPTIONS,
    () => {
      const mutatedBlock = fc
        .tuple(
          fc.array(fieldArbitrary, { minLength: 1, maxLength: 8 }),
          fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }),
        )
        .map(([fields, flips]) => {
          const block = Buffer.from(new HpackEncoder().encode(fields));
          for (const [at, byte] of flips) block[at % block.length] = byte;
          return block;
        });
      fc.assert(
        fc.property(
          fc.oneof(fc.uint8Array({ maxLength: 512 }), mutatedBlock),
          fc.integer({ min: 0, max: 4096 }),
          fc.integer({ min: 64, max: 8192 }),
          (block, maxTableSize, maxHeaderListSize) => {
            const decoder = new HpackDecoder(maxTableSize, maxHeaderListSize);
            const { listOctets, error } = decodeAll(decoder, block);
            if (error !== null) assert.ok(error instanceof HpackError, inspect(error));
            // Never more than the configured header list size is handed out, nor kept in the table.
            assert.ok(listOctets <= maxHeaderListSize, `${listOctets} > ${maxHeaderListSize}`);
            assert.ok(decoder.tableSize <= maxTableSize, `table ${decoder.tableSize} > ${maxTableSize}`);
          },
        ),
        fuzzParameters(500),
      );
    },
  );

  test('a dynamic table size update above our SETTINGS_HEADER_TABLE_SIZE is a compression error', FUZZ_TEST_OPTIONS, () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4096 }), fc.integer({ min: 1, max: 100_000 }), (limit, over) => {
        // A size update (001xxxxx) with the value in a 5-bit prefix integer (RFC 7541 §5.1).
        const value = limit + over;
        const octets = [0x20 | Math.min(value, 31)];
        if (value >= 31) {
          let rest = value - 31;
          while (rest >= 128) {
            octets.push((rest % 128) | 0x80);
            rest = Math.floor(rest / 128);
          }
          octets.push(rest);
        }
        const { error } = decodeAll(new HpackDecoder(limit), Uint8Array.from(octets));
        assert.ok(error instanceof HpackError);
      }),
      fuzzParameters(100),
    );
  });
});
