/**
 * HTTP/2 framing (RFC 9113 §4, §6): the constants, building frames, and reading them from a byte
 * stream. Everything above this (streams, flow control, HPACK) lives in `connection.ts` and
 * `hpack.ts`; this module knows only the 9-octet frame header and the fixed-layout payloads.
 */

export const FRAME_HEADER_OCTETS = 9;

export const FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

export const Flag = {
  END_STREAM: 0x1,
  /** SETTINGS and PING acknowledgements share bit 0 with END_STREAM. */
  ACK: 0x1,
  END_HEADERS: 0x4,
  PADDED: 0x8,
  PRIORITY: 0x20,
} as const;

/** RFC 9113 §7. */
export const ErrorCode = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  SETTINGS_TIMEOUT: 0x4,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  CONNECT_ERROR: 0xa,
  ENHANCE_YOUR_CALM: 0xb,
  INADEQUATE_SECURITY: 0xc,
  HTTP_1_1_REQUIRED: 0xd,
} as const;

export const Setting = {
  HEADER_TABLE_SIZE: 0x1,
  ENABLE_PUSH: 0x2,
  MAX_CONCURRENT_STREAMS: 0x3,
  INITIAL_WINDOW_SIZE: 0x4,
  MAX_FRAME_SIZE: 0x5,
  MAX_HEADER_LIST_SIZE: 0x6,
} as const;

/** What a client sends before its first frame (§3.4). */
export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
/** SETTINGS_MAX_FRAME_SIZE before a peer says otherwise, and the smallest it may say (§6.5.2). */
export const DEFAULT_MAX_FRAME_SIZE = 16_384;
/** Largest SETTINGS_MAX_FRAME_SIZE a peer may announce. */
export const MAX_ALLOWED_FRAME_SIZE = 2 ** 24 - 1;
/** Flow-control window of a new stream and of the connection before any SETTINGS (§6.9.2). */
export const DEFAULT_INITIAL_WINDOW_SIZE = 65_535;
/** Largest flow-control window (§6.9.1). */
export const MAX_WINDOW_SIZE = 2 ** 31 - 1;
/** SETTINGS_HEADER_TABLE_SIZE before a peer says otherwise. */
export const DEFAULT_HEADER_TABLE_SIZE = 4_096;
/** Largest stream identifier (31 bits). */
export const MAX_STREAM_ID = 2 ** 31 - 1;

/** A protocol violation that ends the connection with GOAWAY(code). */
export class Http2ConnectionError extends Error {
  override readonly name = 'Http2ConnectionError';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export interface Frame {
  type: number;
  flags: number;
  streamId: number;
  /**
   * A view into the chunk that carried it (Node never reuses a socket's chunks, so the view may be
   * kept), or into a buffer assembled for a frame that spanned chunks.
   */
  payload: Buffer;
}

/** Writes a frame header into `out` at `offset`. */
export function writeFrameHeader(out: Buffer, offset: number, length: number, type: number, flags: number, streamId: number): void {
  out[offset] = (length >>> 16) & 0xff;
  out[offset + 1] = (length >>> 8) & 0xff;
  out[offset + 2] = length & 0xff;
  out[offset + 3] = type;
  out[offset + 4] = flags;
  out.writeUInt32BE(streamId & MAX_STREAM_ID, offset + 5);
}

/** One whole frame in a fresh buffer. */
export function encodeFrame(type: number, flags: number, streamId: number, payload?: Uint8Array): Buffer {
  const length = payload?.length ?? 0;
  const out = Buffer.allocUnsafe(FRAME_HEADER_OCTETS + length);
  writeFrameHeader(out, 0, length, type, flags, streamId);
  if (payload) out.set(payload, FRAME_HEADER_OCTETS);
  return out;
}

export function encodeSettings(entries: ReadonlyArray<readonly [number, number]>): Buffer {
  const payload = Buffer.allocUnsafe(entries.length * 6);
  entries.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, i * 6);
    payload.writeUInt32BE(value, i * 6 + 2);
  });
  return encodeFrame(FrameType.SETTINGS, 0, 0, payload);
}

export const SETTINGS_ACK: Buffer = encodeFrame(FrameType.SETTINGS, Flag.ACK, 0);

export function encodeWindowUpdate(streamId: number, increment: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(increment, 0);
  return encodeFrame(FrameType.WINDOW_UPDATE, 0, streamId, payload);
}

export function encodeRstStream(streamId: number, code: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(code, 0);
  return encodeFrame(FrameType.RST_STREAM, 0, streamId, payload);
}

export function encodeGoaway(lastStreamId: number, code: number, debug = ''): Buffer {
  const debugBytes = Buffer.from(debug, 'utf8');
  const payload = Buffer.allocUnsafe(8 + debugBytes.length);
  payload.writeUInt32BE(lastStreamId, 0);
  payload.writeUInt32BE(code, 4);
  debugBytes.copy(payload, 8);
  return encodeFrame(FrameType.GOAWAY, 0, 0, payload);
}

/** The settings a peer's SETTINGS frame carries, validated as §6.5.2 requires. */
export function decodeSettings(frame: Frame): Array<[number, number]> {
  if (frame.streamId !== 0) throw new Http2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'SETTINGS on a stream');
  if (frame.flags & Flag.ACK) {
    if (frame.payload.length !== 0) throw new Http2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'SETTINGS ACK with a payload');
    return [];
  }
  if (frame.payload.length % 6 !== 0) throw new Http2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'SETTINGS length is not a multiple of 6');
  const entries: Array<[number, number]> = [];
  for (let at = 0; at < frame.payload.length; at += 6) {
    const id = frame.payload.readUInt16BE(at);
    const value = frame.payload.readUInt32BE(at + 2);
    if (id === Setting.ENABLE_PUSH && value > 1)
      throw new Http2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'SETTINGS_ENABLE_PUSH must be 0 or 1');
    if (id === Setting.INITIAL_WINDOW_SIZE && value > MAX_WINDOW_SIZE) {
      throw new Http2ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1');
    }
    if (id === Setting.MAX_FRAME_SIZE && (value < DEFAULT_MAX_FRAME_SIZE || value > MAX_ALLOWED_FRAME_SIZE)) {
      throw new Http2ConnectionError(ErrorCode.PROTOCOL_ERROR, `SETTINGS_MAX_FRAME_SIZE out of range: ${value}`);
    }
    entries.push([id, value]);
  }
  return entries;
}

/**
 * The data of a DATA or HEADERS payload without its padding (and, for HEADERS with the PRIORITY
 * flag, without the 5 priority octets, which this client ignores).
 */
export function unpaddedPayload(frame: Frame): Buffer {
  let start = 0;
  let end = frame.payload.length;
  if (frame.flags & Flag.PADDED) {
    if (end < 1) throw new Http2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'padded frame without a pad length');
    end -= frame.payload[0] as number;
    start = 1;
  }
  if (frame.type === FrameType.HEADERS && frame.flags & Flag.PRIORITY) start += 5;
  if (end < start) throw new Http2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'padding longer than the frame');
  return frame.payload.subarray(start, end);
}

/**
 * Splits a byte stream into frames. Frames wholly inside one chunk are handed out as views into
 * it (no copy); only a frame that spans chunks is assembled.
 */
export class FrameReader {
  private pending: Buffer | null = null;

  /** @param maxFrameSize our SETTINGS_MAX_FRAME_SIZE: a longer frame is a FRAME_SIZE_ERROR. */
  constructor(private readonly maxFrameSize: number = DEFAULT_MAX_FRAME_SIZE) {}

  /** Octets of an incomplete frame held: never more than a frame header and `maxFrameSize` (the fuzz tests check it). */
  get bufferedOctets(): number {
    return this.pending?.length ?? 0;
  }

  /** Feeds `chunk`; calls `onFrame` for every complete frame. Throws {@link Http2ConnectionError}. */
  push(chunk: Buffer, onFrame: (frame: Frame) => void): void {
    let buffer = chunk;
    if (this.pending) {
      buffer = Buffer.concat([this.pending, chunk]);
      this.pending = null;
    }
    let at = 0;
    while (buffer.length - at >= FRAME_HEADER_OCTETS) {
      const length = ((buffer[at] as number) << 16) | ((buffer[at + 1] as number) << 8) | (buffer[at + 2] as number);
      if (length > this.maxFrameSize) {
        throw new Http2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, `frame of ${length} octets exceeds ${this.maxFrameSize}`);
      }
      const end = at + FRAME_HEADER_OCTETS + length;
      if (end > buffer.length) break;
      onFrame({
        type: buffer[at + 3] as number,
        flags: buffer[at + 4] as number,
        streamId: buffer.readUInt32BE(at + 5) & MAX_STREAM_ID,
        payload: buffer.subarray(at + FRAME_HEADER_OCTETS, end),
      });
      at = end;
    }
    if (at < buffer.length) this.pending = buffer.subarray(at);
  }
}
