/**
 * WebSocket framing (RFC 6455 §5) for the server side of ntfy's `/ws` subscriptions: frames the
 * server sends, and a reader for what the client sends.
 *
 * Why our own: a subscription only ever sends text frames and pings and reads control frames
 * (ntfy's read limit is 64 bytes), while the `ws` package keeps, per connection, a WebSocket, a
 * Receiver that is itself a Writable stream, a Sender, their listeners and bound functions: about
 * 3.5 KiB of heap per idle subscription, most of what 10,000 of them cost. The reader here keeps
 * a few fields per connection and buffers at most one control frame.
 *
 * What the reader enforces (each a close with the status RFC 6455 §7.4.1 gives it):
 * - every client frame is masked (§5.1), reserved bits are clear (§5.2; no extension is ever
 *   negotiated), the opcode is known: otherwise 1002;
 * - control frames are not fragmented and carry at most 125 bytes (§5.5): otherwise 1002;
 * - a continuation frame continues a fragmented message and a new message does not start inside
 *   one (§5.4), control frames may come between fragments: otherwise 1002;
 * - a data message (all its fragments) is at most `maxPayload` bytes: otherwise 1009, decided
 *   from the frame lengths before any payload is buffered;
 * - a text message is valid UTF-8 (§8.1), and so is a close reason: otherwise 1007;
 * - a close frame has no body or a valid status code and reason (§5.5.1, §7.4): otherwise 1002.
 * After a close frame or a failure the reader ignores everything else.
 */
import { isUtf8 } from 'node:buffer';

export const WS_OPCODE = { continuation: 0x0, text: 0x1, binary: 0x2, close: 0x8, ping: 0x9, pong: 0xa } as const;

/** Close status codes (RFC 6455 §7.4.1) the server sends. */
export const WS_CLOSE = { normal: 1000, protocolError: 1002, invalidPayload: 1007, tooBig: 1009 } as const;

/** Largest payload of a control frame (§5.5). */
const MAX_CONTROL_PAYLOAD = 125;
const FIN = 0x80;
const RSV_BITS = 0x70;
const MASKED = 0x80;

/** A server frame: FIN set, unmasked (§5.1), the payload in the shortest length form. */
export function encodeWsFrame(opcode: number, payload: string | Buffer): Buffer {
  const length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
  const header = length < 126 ? 2 : length < 0x10000 ? 4 : 10;
  const frame = Buffer.allocUnsafe(header + length);
  frame[0] = FIN | opcode;
  if (length < 126) {
    frame[1] = length;
  } else if (length < 0x10000) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeUInt32BE(Math.floor(length / 0x1_0000_0000), 2);
    frame.writeUInt32BE(length >>> 0, 6);
  }
  if (typeof payload === 'string') frame.write(payload, header, 'utf8');
  else payload.copy(frame, header);
  return frame;
}

/** A close frame's payload: the status code, then the reason in UTF-8 (at most 123 bytes). */
export function wsClosePayload(code: number | null, reason = ''): Buffer {
  if (code === null) return Buffer.alloc(0);
  const payload = Buffer.allocUnsafe(2 + Buffer.byteLength(reason));
  payload.writeUInt16BE(code, 0);
  payload.write(reason, 2, 'utf8');
  return payload;
}

/**
 * Status codes a peer may send in a close frame (§7.4): those defined or registered for use on
 * the wire (1004–1006 and 1015 are not), and the ranges for libraries and applications.
 */
export function isSendableCloseCode(code: number): boolean {
  return (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999);
}

/** What a connection does with what its peer sent. */
export interface WsFrameHandler {
  /** A complete data message arrived (its content means nothing to a subscription). */
  wsMessage(): void;
  /** A ping: answer it with a pong carrying the same payload (§5.5.2). */
  wsPing(payload: Buffer): void;
  wsPong(): void;
  /** A valid close frame: `code` null when it had no body. Nothing is read after it. */
  wsClose(code: number | null): void;
  /** The peer broke the protocol: close with `code`. Nothing is read after it. */
  wsFail(code: number, reason: string): void;
}

/** Reads a client's frames as they arrive, in any split over TCP packets. */
export class WsFrameReader {
  /** Bytes of a frame not complete yet (at most a header and one bounded payload). */
  private pending: Buffer | null = null;
  /** Opcode of the fragmented message in progress, 0 when none. */
  private messageOpcode = 0;
  private messageBytes = 0;
  /** Fragments of a text message in progress, for its UTF-8 check. */
  private textParts: Buffer[] | null = null;
  private done = false;

  constructor(private readonly maxPayload: number) {}

  /** Bytes of an incomplete frame held: at most a header, a mask and one bounded payload (the fuzz tests check it). */
  get bufferedBytes(): number {
    return this.pending?.length ?? 0;
  }

  push(chunk: Buffer, handler: WsFrameHandler): void {
    if (this.done) return;
    const data = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
    this.pending = null;
    let offset = 0;
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- frameAt() sets done on a protocol error; tsc keeps the field's earlier narrowing.
    while (!this.done) {
      const used = this.frameAt(data, offset, handler);
      if (used === 0) break;
      offset += used;
    }
    // A copy, so the rest of a large chunk is not kept alive by a few bytes of it.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- frameAt() sets done on a protocol error; tsc keeps the field's earlier narrowing.
    if (!this.done && offset < data.length) this.pending = Buffer.from(data.subarray(offset));
  }

  /** Handle the frame at `offset`; the bytes it took, or 0 when it is not complete yet. */
  private frameAt(data: Buffer, offset: number, handler: WsFrameHandler): number {
    const available = data.length - offset;
    if (available < 2) return 0;
    const first = data[offset] as number;
    const second = data[offset + 1] as number;
    const fin = (first & FIN) !== 0;
    const opcode = first & 0x0f;
    const control = opcode >= WS_OPCODE.close;
    if ((first & RSV_BITS) !== 0) return this.fail(handler, WS_CLOSE.protocolError, 'reserved bits set');
    if (!isKnownOpcode(opcode)) return this.fail(handler, WS_CLOSE.protocolError, `unknown opcode ${opcode}`);
    if ((second & MASKED) === 0) return this.fail(handler, WS_CLOSE.protocolError, 'unmasked client frame');
    if (control && !fin) return this.fail(handler, WS_CLOSE.protocolError, 'fragmented control frame');
    let length = second & 0x7f;
    let header = 2;
    if (length === 126) {
      if (available < 4) return 0;
      length = data.readUInt16BE(offset + 2);
      header = 4;
    } else if (length === 127) {
      if (available < 10) return 0;
      const high = data.readUInt32BE(offset + 2);
      // The most significant bit must be 0 (§5.2); anything this long is refused below anyway.
      if (high > 0x7fff_ffff) return this.fail(handler, WS_CLOSE.protocolError, 'payload length with its top bit set');
      length = high * 0x1_0000_0000 + data.readUInt32BE(offset + 6);
      header = 10;
    }
    if (control && length > MAX_CONTROL_PAYLOAD) return this.fail(handler, WS_CLOSE.protocolError, 'control frame over 125 bytes');
    if (!control) {
      if (opcode === WS_OPCODE.continuation && this.messageOpcode === 0)
        return this.fail(handler, WS_CLOSE.protocolError, 'continuation without a message');
      if (opcode !== WS_OPCODE.continuation && this.messageOpcode !== 0)
        return this.fail(handler, WS_CLOSE.protocolError, 'new message inside a fragmented one');
      if (this.messageBytes + length > this.maxPayload) return this.fail(handler, WS_CLOSE.tooBig, 'message too big');
    }
    const size = header + 4 + length;
    if (available < size) return 0;
    const payload = unmask(data, offset + header, length);
    if (control) this.control(opcode, payload, handler);
    else this.data(opcode, fin, payload, handler);
    return size;
  }

  private control(opcode: number, payload: Buffer, handler: WsFrameHandler): void {
    if (opcode === WS_OPCODE.ping) handler.wsPing(payload);
    else if (opcode === WS_OPCODE.pong) handler.wsPong();
    else this.close(payload, handler);
  }

  private close(payload: Buffer, handler: WsFrameHandler): void {
    if (payload.length === 0) {
      this.done = true;
      handler.wsClose(null);
      return;
    }
    if (payload.length === 1) {
      this.fail(handler, WS_CLOSE.protocolError, 'close frame with a one-byte body');
      return;
    }
    const code = payload.readUInt16BE(0);
    if (!isSendableCloseCode(code)) {
      this.fail(handler, WS_CLOSE.protocolError, `close code ${code} is not for the wire`);
      return;
    }
    if (!isUtf8(payload.subarray(2))) {
      this.fail(handler, WS_CLOSE.invalidPayload, 'close reason is not UTF-8');
      return;
    }
    this.done = true;
    handler.wsClose(code);
  }

  private data(opcode: number, fin: boolean, payload: Buffer, handler: WsFrameHandler): void {
    if (opcode !== WS_OPCODE.continuation) this.messageOpcode = opcode;
    this.messageBytes += payload.length;
    if (this.messageOpcode === WS_OPCODE.text) (this.textParts ??= []).push(payload);
    if (!fin) return;
    const text = this.textParts;
    this.messageOpcode = 0;
    this.messageBytes = 0;
    this.textParts = null;
    if (text !== null && !isUtf8(text.length === 1 ? (text[0] as Buffer) : Buffer.concat(text))) {
      this.fail(handler, WS_CLOSE.invalidPayload, 'text message is not UTF-8');
      return;
    }
    handler.wsMessage();
  }

  private fail(handler: WsFrameHandler, code: number, reason: string): 0 {
    this.done = true;
    this.pending = null;
    this.textParts = null;
    handler.wsFail(code, reason);
    return 0;
  }
}

function isKnownOpcode(opcode: number): boolean {
  return opcode <= WS_OPCODE.binary || (opcode >= WS_OPCODE.close && opcode <= WS_OPCODE.pong);
}

/** The payload at `start`, unmasked with the 4-byte key before it (§5.3), as a new buffer. */
function unmask(data: Buffer, keyAt: number, length: number): Buffer {
  const start = keyAt + 4;
  const payload = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) payload[i] = (data[start + i] as number) ^ (data[keyAt + (i & 3)] as number);
  return payload;
}
