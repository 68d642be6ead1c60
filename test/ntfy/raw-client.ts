/**
 * A raw TCP client for black-box tests that decide what arrives in which packet: HTTP/1.1
 * answers (the head, chunks, a body) and WebSocket frames, and the masked frames a WebSocket
 * client sends.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { FRAME_TIMEOUT_MS, nextNotice } from './client.ts';

/** One TCP connection that reads HTTP/1.1 answers: the head, then chunks or a Content-Length body. */
export class RawClient {
  private received = Buffer.alloc(0);
  private waiters: Array<() => void> = [];
  closed = false;

  constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.notify();
    });
    socket.on('close', () => {
      this.closed = true;
      this.notify();
    });
    socket.on('error', () => undefined);
  }

  static open(port: number): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, noDelay: true }, () => resolve(new RawClient(socket)));
      socket.once('error', reject);
    });
  }

  private notify(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /** Wait until `take` finds what it wants in the unread bytes (it returns how many it used). */
  private async until<T>(take: (bytes: Buffer) => { value: T; used: number } | null, what: string): Promise<T> {
    const deadline = Date.now() + FRAME_TIMEOUT_MS;
    for (;;) {
      const found = take(this.received);
      if (found) {
        this.received = this.received.subarray(found.used);
        return found.value;
      }
      if (this.closed) throw new Error(`connection closed while waiting for ${what}`);
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`timed out waiting for ${what}`);
      await nextNotice(this.waiters, remaining);
    }
  }

  async head(): Promise<{ status: number; headers: Record<string, string> }> {
    return this.until((bytes) => {
      const end = bytes.indexOf('\r\n\r\n');
      if (end < 0) return null;
      const [statusLine = '', ...lines] = bytes.toString('latin1', 0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      return { value: { status: Number(statusLine.split(' ')[1]), headers }, used: end + 4 };
    }, 'the response head');
  }

  /** The next chunk of a chunked body, as text ('' for the last chunk). */
  async chunk(): Promise<string> {
    return this.until((bytes) => {
      const lineEnd = bytes.indexOf('\r\n');
      if (lineEnd < 0) return null;
      const size = parseInt(bytes.toString('latin1', 0, lineEnd), 16);
      if (bytes.length < lineEnd + 2 + size + 2) return null;
      return { value: bytes.toString('utf8', lineEnd + 2, lineEnd + 2 + size), used: lineEnd + 2 + size + 2 };
    }, 'a chunk');
  }

  async body(length: number): Promise<string> {
    return this.until((bytes) => (bytes.length >= length ? { value: bytes.toString('utf8', 0, length), used: length } : null), 'the body');
  }

  /** The next WebSocket frame from the server (which never masks, RFC 6455 §5.1). */
  async wsFrame(): Promise<{ fin: boolean; opcode: number; payload: Buffer }> {
    return this.until((bytes) => {
      if (bytes.length < 2) return null;
      assert.equal((bytes[1] as number) & 0x80, 0, 'server frames are not masked');
      let length = (bytes[1] as number) & 0x7f;
      let header = 2;
      if (length === 126) {
        if (bytes.length < 4) return null;
        length = bytes.readUInt16BE(2);
        header = 4;
      } else if (length === 127) {
        if (bytes.length < 10) return null;
        length = Number(bytes.readBigUInt64BE(2));
        header = 10;
      }
      if (bytes.length < header + length) return null;
      const first = bytes[0] as number;
      return {
        value: { fin: (first & 0x80) !== 0, opcode: first & 0x0f, payload: Buffer.from(bytes.subarray(header, header + length)) },
        used: header + length,
      };
    }, 'a WebSocket frame');
  }

  async untilClosed(): Promise<void> {
    await this.until((bytes) => (this.closed ? { value: undefined, used: bytes.length } : null), 'the close');
  }
}

export interface ClientFrameOptions {
  /** Default true. */
  fin?: boolean;
  /** Default true: clients must mask (RFC 6455 §5.3); false plays one that does not. */
  masked?: boolean;
  /** The three reserved bits, as a number 0–7 (default 0). */
  rsv?: number;
  /** The length written in the header (default the payload's). */
  length?: number;
}

/** A WebSocket frame as a client sends it: masked with a random key unless told otherwise. */
export function clientFrame(opcode: number, payload: Buffer | string, options: ClientFrameOptions = {}): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const length = options.length ?? body.length;
  const header: number[] = [((options.fin ?? true) ? 0x80 : 0) | ((options.rsv ?? 0) << 4) | opcode];
  const mask = options.masked === false ? 0 : 0x80;
  if (length < 126) header.push(mask | length);
  else if (length < 0x10000) header.push(mask | 126, length >> 8, length & 0xff);
  else header.push(mask | 127, 0, 0, 0, 0, (length >>> 24) & 0xff, (length >>> 16) & 0xff, (length >>> 8) & 0xff, length & 0xff);
  if (options.masked === false) return Buffer.concat([Buffer.from(header), body]);
  const key = randomBytes(4);
  const masked = Buffer.from(body.map((byte, i) => byte ^ (key[i % 4] as number)));
  return Buffer.concat([Buffer.from(header), key, masked]);
}
