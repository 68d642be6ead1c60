/**
 * One HTTP/2 client connection (RFC 9113) over TCP (h2c with prior knowledge, for loopback
 * fakes) or TLS with ALPN `h2`: streams, flow control in both directions, HPACK, SETTINGS, PING,
 * GOAWAY and RST_STREAM. It is what `pool.ts` multiplexes requests over; it has no opinion on
 * timeouts or retries, which are the pool's.
 *
 * Why our own and not `node:http2`: a provider push is a small request and a small response, and
 * Node's client spends most of its ~100 µs per request on the machinery around a stream (a Duplex
 * stream object, async-resource bookkeeping, header objects converted twice, one write per
 * frame). Here a request is one object and one callback; the frames of every request made in one
 * event-loop turn leave in a single socket write; and a header list sent before (the FCM path,
 * content type and bearer) is a few octets of indexes.
 *
 * The server never learns our unanswered streams' fate from us except by RST_STREAM(CANCEL); a
 * stream whose frames never left this process, or that the server refused (REFUSED_STREAM, or
 * above a GOAWAY's last stream id), fails `refused`, which callers may safely retry.
 */
import net, { type Socket } from 'node:net';
import tls, { type ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { Http2RequestError } from './errors.ts';
import {
  CLIENT_PREFACE,
  DEFAULT_INITIAL_WINDOW_SIZE,
  DEFAULT_MAX_FRAME_SIZE,
  ErrorCode,
  Flag,
  FRAME_HEADER_OCTETS,
  FrameReader,
  FrameType,
  Http2ConnectionError,
  MAX_STREAM_ID,
  MAX_WINDOW_SIZE,
  SETTINGS_ACK,
  Setting,
  decodeSettings,
  encodeFrame,
  encodeGoaway,
  encodeRstStream,
  encodeSettings,
  encodeWindowUpdate,
  unpaddedPayload,
  writeFrameHeader,
  type Frame,
} from './frames.ts';
import { HpackDecoder, HpackEncoder, HpackError, type FieldIndexing } from './hpack.ts';

/** Receive window we give each stream: responses are small, so it never needs topping up in practice. */
export const STREAM_RECEIVE_WINDOW = 1024 * 1024;
/** Receive window of the whole connection, topped up whenever half of it is consumed. */
export const CONNECTION_RECEIVE_WINDOW = 16 * 1024 * 1024;
/** Bound on one response's header block across CONTINUATION frames. */
export const MAX_HEADER_BLOCK_OCTETS = 256 * 1024;
/** Bound on one decoded response header list (names + values + 32 per field). */
export const MAX_HEADER_LIST_OCTETS = 64 * 1024;

export type HeaderField = readonly [name: string, value: string, indexing?: FieldIndexing];
export type ResponseHeaders = Record<string, string | string[]>;

export interface Http2ClientResponse {
  status: number;
  /** Lowercase names, `:status` included; a repeated field is an array. */
  headers: ResponseHeaders;
  /** At most the connection's `maxResponseBodyBytes`; the rest is read and dropped. */
  body: Buffer;
}

export type StreamCallback = (error: Http2RequestError | null, response: Http2ClientResponse | null) => void;

export interface Http2ConnectionOptions {
  /** `http:` (h2c, prior knowledge) or `https:` (TLS, ALPN h2). */
  origin: URL;
  connectTimeoutMs: number;
  maxResponseBodyBytes: number;
  /** Extra TLS options (a test's CA); the server name and ALPN are set here. */
  tls?: TlsConnectionOptions;
  /** The connection stopped taking new streams (GOAWAY, failure, close). Called once. */
  onUnusable: () => void;
  /** Room for more streams may have appeared (a stream ended, the peer raised its limit). */
  onCapacity: () => void;
}

interface ClientStream {
  id: number;
  callback: StreamCallback;
  /** Flush generation the HEADERS frame was queued in; once flushed, the server may have it. */
  generation: number;
  status: number;
  headers: ResponseHeaders;
  body: Buffer[];
  bodyBytes: number;
  sendWindow: number;
  receiveConsumed: number;
  /** Request body not yet sent for want of flow-control window. */
  unsent: Buffer | null;
}

export class Http2ClientConnection {
  /** Resolves on the server's first SETTINGS; rejects `connect_failed` or `connect_timeout`. */
  readonly ready: Promise<void>;
  connected = false;
  private usable = true;
  private readonly socket: Socket;
  private readonly reader = new FrameReader(DEFAULT_MAX_FRAME_SIZE);
  private readonly encoder = new HpackEncoder();
  private readonly decoder = new HpackDecoder(undefined, MAX_HEADER_LIST_OCTETS);
  private readonly streams = new Map<number, ClientStream>();
  /** Streams waiting for send window, oldest first. */
  private blocked: ClientStream[] = [];
  private nextStreamId = 1;
  private peerMaxStreams = Number.POSITIVE_INFINITY;
  private peerInitialWindow = DEFAULT_INITIAL_WINDOW_SIZE;
  private peerMaxFrameSize = DEFAULT_MAX_FRAME_SIZE;
  private connectionSendWindow = DEFAULT_INITIAL_WINDOW_SIZE;
  private connectionReceiveConsumed = 0;
  /** A header block arriving in CONTINUATION frames: its stream, END_STREAM flag and parts. */
  private continuation: { streamId: number; endStream: boolean; parts: Buffer[]; octets: number } | null = null;
  private outbox: Buffer[] = [];
  private flushScheduled = false;
  private generation = 0;
  private destroyed = false;
  private settleReady!: (error: Http2RequestError | null) => void;
  private readonly connectTimer: NodeJS.Timeout;

  constructor(private readonly options: Http2ConnectionOptions) {
    this.ready = new Promise<void>((resolve, reject) => {
      this.settleReady = (error) => (error ? reject(error) : resolve());
    });
    // Settled by whichever request awaits it; an idle connection's failure must not be unhandled.
    this.ready.catch(() => undefined);
    const { origin } = options;
    const port = Number(origin.port || (origin.protocol === 'https:' ? 443 : 80));
    const host = origin.hostname.replace(/^\[|\]$/g, '');
    this.socket =
      origin.protocol === 'https:'
        ? tls.connect({ ...options.tls, host, port, servername: net.isIP(host) ? undefined : host, ALPNProtocols: ['h2'] })
        : net.connect({ host, port });
    this.socket.setNoDelay(true);
    this.connectTimer = setTimeout(() => {
      this.fail(new Http2RequestError('connect_timeout', `HTTP/2 connect to ${origin.origin} exceeded ${options.connectTimeoutMs}ms`));
    }, options.connectTimeoutMs);
    if (origin.protocol === 'https:') {
      this.socket.once('secureConnect', () => {
        if ((this.socket as tls.TLSSocket).alpnProtocol !== 'h2') {
          this.fail(new Http2RequestError('connect_failed', `${origin.origin} did not negotiate HTTP/2 (ALPN)`));
        }
      });
    }
    this.socket.on('data', (chunk: Buffer) => this.receive(chunk));
    this.socket.on('error', (err) => this.fail(new Http2RequestError(this.connected ? 'stream_error' : 'connect_failed', `HTTP/2 connection to ${origin.origin} failed: ${err.message}`)));
    this.socket.on('close', () => this.fail(new Http2RequestError(this.connected ? 'stream_error' : 'connect_failed', `HTTP/2 connection to ${origin.origin} closed`)));
    this.queue(CLIENT_PREFACE);
    this.queue(encodeSettings([[Setting.ENABLE_PUSH, 0], [Setting.INITIAL_WINDOW_SIZE, STREAM_RECEIVE_WINDOW], [Setting.MAX_HEADER_LIST_SIZE, MAX_HEADER_LIST_OCTETS]]));
    this.queue(encodeWindowUpdate(0, CONNECTION_RECEIVE_WINDOW - DEFAULT_INITIAL_WINDOW_SIZE));
  }

  /** Whether a new stream may be opened now (connected, not going away, a stream id left, under the peer's limit). */
  get hasFreeStream(): boolean {
    return this.usable && this.connected && this.streams.size < this.peerMaxStreams;
  }

  /** Whether the connection still takes streams (it may not be connected yet). */
  get isUsable(): boolean {
    return this.usable;
  }

  /** Streams the peer lets us have open at once (unbounded until its SETTINGS say). */
  get streamLimit(): number {
    return this.peerMaxStreams;
  }

  get activeStreams(): number {
    return this.streams.size;
  }

  /**
   * Opens a stream and queues its request; `callback` is called exactly once. Returns the stream
   * id (for {@link cancel}). Throws `refused` when the connection takes no new streams.
   */
  request(headers: readonly HeaderField[], body: Buffer | null, callback: StreamCallback): number {
    if (!this.usable || this.destroyed) throw new Http2RequestError('refused', 'the HTTP/2 connection takes no new streams');
    const id = this.nextStreamId;
    this.nextStreamId += 2;
    if (this.nextStreamId > MAX_STREAM_ID) this.markUnusable();
    const stream: ClientStream = {
      id,
      callback,
      generation: this.generation,
      status: 0,
      headers: {},
      body: [],
      bodyBytes: 0,
      sendWindow: this.peerInitialWindow,
      receiveConsumed: 0,
      unsent: null,
    };
    this.streams.set(id, stream);
    const block = this.encoder.encode(headers);
    const hasBody = body !== null && body.length > 0;
    this.queueHeaderBlock(id, block, !hasBody);
    if (hasBody) {
      stream.unsent = body;
      this.sendData(stream);
      if (stream.unsent) this.blocked.push(stream);
    }
    return id;
  }

  /** Ends a stream early (RST_STREAM CANCEL) and fails it with `error`. No-op for a finished stream. */
  cancel(id: number, error: Http2RequestError): void {
    const stream = this.streams.get(id);
    if (!stream) return;
    this.queue(encodeRstStream(id, ErrorCode.CANCEL));
    this.finish(stream, error);
  }

  /** Takes no new streams; once the open ones end, says GOAWAY and closes. */
  close(): void {
    this.markUnusable();
    if (this.streams.size === 0) this.shutdown();
  }

  /** Closes now: open streams fail (`refused` if they never left, `stream_error` otherwise). */
  destroy(): void {
    this.fail(new Http2RequestError('stream_error', 'the HTTP/2 connection was closed by this client'));
  }

  ref(): void {
    this.socket.ref();
  }

  unref(): void {
    this.socket.unref();
  }

  /** Resolves once the socket has closed. */
  closed(): Promise<void> {
    if (this.socket.closed) return Promise.resolve();
    return new Promise((resolve) => this.socket.once('close', () => resolve()));
  }

  // --- sending ---

  private queue(frame: Buffer): void {
    if (this.destroyed) return;
    this.outbox.push(frame);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** One write for everything queued this turn. */
  private flush(): void {
    this.flushScheduled = false;
    if (this.destroyed || this.outbox.length === 0) return;
    const frames = this.outbox;
    this.outbox = [];
    this.generation++;
    this.socket.write(frames.length === 1 ? (frames[0] as Buffer) : Buffer.concat(frames));
  }

  private queueHeaderBlock(id: number, block: Buffer, endStream: boolean): void {
    const endFlag = endStream ? Flag.END_STREAM : 0;
    if (block.length <= this.peerMaxFrameSize) {
      const frame = Buffer.allocUnsafe(FRAME_HEADER_OCTETS + block.length);
      writeFrameHeader(frame, 0, block.length, FrameType.HEADERS, Flag.END_HEADERS | endFlag, id);
      block.copy(frame, FRAME_HEADER_OCTETS);
      this.queue(frame);
      return;
    }
    for (let at = 0; at < block.length; at += this.peerMaxFrameSize) {
      const part = block.subarray(at, at + this.peerMaxFrameSize);
      const last = at + this.peerMaxFrameSize >= block.length;
      const type = at === 0 ? FrameType.HEADERS : FrameType.CONTINUATION;
      this.queue(encodeFrame(type, (at === 0 ? endFlag : 0) | (last ? Flag.END_HEADERS : 0), id, part));
    }
  }

  /** Sends as much of the stream's unsent body as both windows allow. */
  private sendData(stream: ClientStream): void {
    let unsent = stream.unsent;
    while (unsent !== null) {
      const room = Math.min(this.connectionSendWindow, stream.sendWindow, this.peerMaxFrameSize);
      if (room <= 0) break;
      const size = Math.min(room, unsent.length);
      const last = size === unsent.length;
      const frame = Buffer.allocUnsafe(FRAME_HEADER_OCTETS + size);
      writeFrameHeader(frame, 0, size, FrameType.DATA, last ? Flag.END_STREAM : 0, stream.id);
      unsent.copy(frame, FRAME_HEADER_OCTETS, 0, size);
      this.queue(frame);
      this.connectionSendWindow -= size;
      stream.sendWindow -= size;
      unsent = last ? null : unsent.subarray(size);
    }
    stream.unsent = unsent;
  }

  private resumeBlocked(): void {
    if (this.blocked.length === 0) return;
    const still: ClientStream[] = [];
    for (const stream of this.blocked) {
      if (!this.streams.has(stream.id)) continue;
      this.sendData(stream);
      if (stream.unsent) still.push(stream);
    }
    this.blocked = still;
  }

  // --- receiving ---

  private receive(chunk: Buffer): void {
    try {
      this.reader.push(chunk, (frame) => this.handleFrame(frame));
    } catch (err) {
      if (err instanceof Http2ConnectionError) this.protocolFailure(err);
      else if (err instanceof HpackError) this.protocolFailure(new Http2ConnectionError(ErrorCode.COMPRESSION_ERROR, err.message));
      else throw err;
    }
  }

  private handleFrame(frame: Frame): void {
    if (this.destroyed) return;
    if (this.continuation && (frame.type !== FrameType.CONTINUATION || frame.streamId !== this.continuation.streamId)) {
      throw new Http2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'expected CONTINUATION of a header block');
    }
    switch (frame.type) {
      case FrameType.DATA:
        return this.onData(frame);
      case FrameType.HEADERS:
        return this.onHeaders(frame);
      case FrameType.CONTINUATION:
        return this.onContinuation(frame);
      case FrameType.RST_STREAM:
        return this.onRstStream(frame);
      case FrameType.SETTINGS:
        return this.onSettings(frame);
      case FrameType.PING:
        return this.onPing(frame);
      case FrameType.GOAWAY:
        return this.onGoaway(frame);
      case FrameType.WINDOW_UPDATE:
        return this.onWindowUpdate(frame);
      case FrameType.PUSH_PROMISE:
        throw new Http2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'PUSH_PROMISE although push is disabled');
      case FrameType.PRIORITY:
        if (frame.payload.length !== 5) throw new Http2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'PRIORITY of the wrong length');
        return;
      default:
        return; // Unknown frame types are ignored (§4.1, §5.5).
    }
  }

  /** A frame for a stream we never opened is a connection error; one for a finished stream is ignored. */
  private streamFor(frame: Frame): ClientStream | undefined {
    if (frame.streamId === 0) throw new Http2ConnectionError(ErrorCode.PROTOCOL_ERROR, `frame type ${frame.type} on stream 0`);
    if (frame.streamId % 2 === 0 || frame.streamId >= this.nextStreamId) {
      throw new Http2ConnectionError(ErrorCode.PROTOCOL_ERROR, `frame type ${frame.type} on idle stream ${frame.streamId}`);
    }
    return this.streams.get(frame.streamId);
  }

  private onData(frame: Frame): void {
    const stream = this.streamFor(frame);
    // Flow control counts the whole payload, padding included, whatever became of the stream.
    this.connectionReceiveConsumed += frame.payload.length;
    if (this.connectionReceiveConsumed >= CONNECTION_RECEIVE_WINDOW / 2) {
      this.queue(encodeWindowUpdate(0, this.connectionReceiveConsumed));
      this.connectionReceiveConsumed = 0;
    }
    if (!stream) return;
    if (stream.status === 0) return this.streamFailure(stream, ErrorCode.PROTOCOL_ERROR, 'DATA before the response headers');
    const data = unpaddedPayload(frame);
    if (stream.bodyBytes < this.options.maxResponseBodyBytes && data.length > 0) {
      const keep = Math.min(data.length, this.options.maxResponseBodyBytes - stream.bodyBytes);
      stream.body.push(keep === data.length ? data : data.subarray(0, keep));
      stream.bodyBytes += keep;
    }
    if (frame.flags & Flag.END_STREAM) return this.complete(stream);
    stream.receiveConsumed += frame.payload.length;
    if (stream.receiveConsumed >= STREAM_RECEIVE_WINDOW / 2) {
      this.queue(encodeWindowUpdate(stream.id, stream.receiveConsumed));
      stream.receiveConsumed = 0;
    }
  }

  private onHeaders(frame: Frame): void {
    this.streamFor(frame);
    const fragment = unpaddedPayload(frame);
    const endStream = (frame.flags & Flag.END_STREAM) !== 0;
    if (frame.flags & Flag.END_HEADERS) return this.onHeaderBlock(frame.streamId, fragment, endStream);
    this.continuation = { streamId: frame.streamId, endStream, parts: [fragment], octets: fragment.length };
  }

  private onContinuation(frame: Frame): void {
    const pending = this.continuation;
    if (!pending) throw new Http2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'CONTINUATION without a header block');
    pending.parts.push(frame.payload);
    pending.octets += frame.payload.length;
    if (pending.octets > MAX_HEADER_BLOCK_OCTETS) throw new Http2ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, `header block over ${MAX_HEADER_BLOCK_OCTETS} octets`);
    if ((frame.flags & Flag.END_HEADERS) === 0) return;
    this.continuation = null;
    this.onHeaderBlock(pending.streamId, Buffer.concat(pending.parts), pending.endStream);
  }

  private onHeaderBlock(streamId: number, block: Buffer, endStream: boolean): void {
    // Decoded even for a finished stream: the decoder's table must stay in step with the server's.
    const fields: ResponseHeaders = {};
    this.decoder.decode(block, (name, value) => {
      const previous = fields[name];
      if (previous === undefined) fields[name] = value;
      else if (Array.isArray(previous)) previous.push(value);
      else fields[name] = [previous, value];
    });
    const stream = this.streams.get(streamId);
    if (!stream) return;
    if (stream.status === 0) {
      const statusText = fields[':status'];
      const status = typeof statusText === 'string' && /^[1-5]\d\d$/.test(statusText) ? Number(statusText) : 0;
      if (status === 0) return this.streamFailure(stream, ErrorCode.PROTOCOL_ERROR, 'response without a valid :status');
      if (status < 200) {
        // An informational response; the final one follows on the same stream.
        if (endStream) return this.streamFailure(stream, ErrorCode.PROTOCOL_ERROR, 'stream ended after an informational response');
        return;
      }
      stream.status = status;
      stream.headers = fields;
    } else if (!endStream) {
      return this.streamFailure(stream, ErrorCode.PROTOCOL_ERROR, 'trailers without END_STREAM');
    }
    if (endStream) this.complete(stream);
  }

  private onRstStream(frame: Frame): void {
    if (frame.payload.length !== 4) throw new Http2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'RST_STREAM of the wrong length');
    const stream = this.streamFor(frame);
    if (!stream) return;
    const code = frame.payload.readUInt32BE(0);
    if (code === ErrorCode.REFUSED_STREAM && stream.status === 0) {
      this.finish(stream, new Http2RequestError('refused', 'stream refused by the server (REFUSED_STREAM)'));
    } else {
      this.finish(stream, new Http2RequestError('stream_error', `HTTP/2 stream reset by the server with code ${code}`));
    }
  }

  private onSettings(frame: Frame): void {
    const entries = decodeSettings(frame);
    if (frame.flags & Flag.ACK) return;
    for (const [id, value] of entries) {
      if (id === Setting.HEADER_TABLE_SIZE) this.encoder.setPeerMaxTableSize(value);
      else if (id === Setting.MAX_CONCURRENT_STREAMS) this.peerMaxStreams = value;
      else if (id === Setting.MAX_FRAME_SIZE) this.peerMaxFrameSize = value;
      else if (id === Setting.INITIAL_WINDOW_SIZE) {
        const delta = value - this.peerInitialWindow;
        this.peerInitialWindow = value;
        for (const stream of this.streams.values()) {
          stream.sendWindow += delta;
          if (stream.sendWindow > MAX_WINDOW_SIZE) throw new Http2ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'a stream window grew past 2^31-1');
        }
      }
    }
    this.queue(SETTINGS_ACK);
    if (!this.connected) {
      this.connected = true;
      clearTimeout(this.connectTimer);
      this.settleReady(null);
    }
    this.resumeBlocked();
    this.options.onCapacity();
  }

  private onPing(frame: Frame): void {
    if (frame.streamId !== 0) throw new Http2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'PING on a stream');
    if (frame.payload.length !== 8) throw new Http2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'PING of the wrong length');
    if ((frame.flags & Flag.ACK) === 0) this.queue(encodeFrame(FrameType.PING, Flag.ACK, 0, frame.payload));
  }

  private onGoaway(frame: Frame): void {
    if (frame.streamId !== 0) throw new Http2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'GOAWAY on a stream');
    if (frame.payload.length < 8) throw new Http2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'GOAWAY too short');
    const lastStreamId = frame.payload.readUInt32BE(0) & MAX_STREAM_ID;
    const code = frame.payload.readUInt32BE(4);
    this.markUnusable();
    // Streams above the last one the server saw were never processed: safe to send elsewhere.
    for (const stream of [...this.streams.values()]) {
      if (stream.id > lastStreamId) this.finish(stream, new Http2RequestError('refused', `stream not processed: the server sent GOAWAY (code ${code})`));
    }
    if (this.streams.size === 0) this.shutdown();
  }

  private onWindowUpdate(frame: Frame): void {
    if (frame.payload.length !== 4) throw new Http2ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'WINDOW_UPDATE of the wrong length');
    const increment = frame.payload.readUInt32BE(0) & MAX_WINDOW_SIZE;
    if (frame.streamId === 0) {
      if (increment === 0) throw new Http2ConnectionError(ErrorCode.PROTOCOL_ERROR, 'WINDOW_UPDATE of 0 for the connection');
      this.connectionSendWindow += increment;
      if (this.connectionSendWindow > MAX_WINDOW_SIZE) throw new Http2ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'connection window past 2^31-1');
    } else {
      const stream = this.streamFor(frame);
      if (!stream) return;
      if (increment === 0) return this.streamFailure(stream, ErrorCode.PROTOCOL_ERROR, 'WINDOW_UPDATE of 0');
      stream.sendWindow += increment;
      if (stream.sendWindow > MAX_WINDOW_SIZE) return this.streamFailure(stream, ErrorCode.FLOW_CONTROL_ERROR, 'stream window past 2^31-1');
    }
    this.resumeBlocked();
  }

  // --- ending streams and the connection ---

  private complete(stream: ClientStream): void {
    // A server may answer before reading the whole request (§8.1); the rest is not sent.
    if (stream.unsent) this.queue(encodeRstStream(stream.id, ErrorCode.NO_ERROR));
    const body = stream.body.length === 1 ? (stream.body[0] as Buffer) : Buffer.concat(stream.body);
    this.finish(stream, null, { status: stream.status, headers: stream.headers, body });
  }

  private streamFailure(stream: ClientStream, code: number, message: string): void {
    this.queue(encodeRstStream(stream.id, code));
    this.finish(stream, new Http2RequestError('stream_error', `HTTP/2 protocol error on a stream: ${message}`));
  }

  private finish(stream: ClientStream, error: Http2RequestError | null, response: Http2ClientResponse | null = null): void {
    if (!this.streams.delete(stream.id)) return;
    stream.unsent = null;
    stream.callback(error, response);
    if (!this.usable && this.streams.size === 0) this.shutdown();
    else this.options.onCapacity();
  }

  private markUnusable(): void {
    if (!this.usable) return;
    this.usable = false;
    this.options.onUnusable();
  }

  /** Graceful end: GOAWAY(NO_ERROR), then close the socket once written. */
  private shutdown(): void {
    if (this.destroyed) return;
    this.queue(encodeGoaway(0, ErrorCode.NO_ERROR));
    this.flush();
    this.destroyed = true;
    // Not waiting for the server's FIN: nothing more is expected from it, and a peer may keep
    // its half open indefinitely.
    this.socket.end(() => this.socket.destroy());
  }

  private protocolFailure(error: Http2ConnectionError): void {
    this.queue(encodeGoaway(0, error.code, error.message));
    this.flush();
    this.fail(new Http2RequestError('stream_error', `HTTP/2 protocol error from the server: ${error.message}`));
  }

  /** The connection is done for: every open stream fails, the socket is destroyed. */
  private fail(error: Http2RequestError): void {
    clearTimeout(this.connectTimer);
    if (!this.connected) this.settleReady(error);
    // Frames still in the outbox never left this process: their streams were not processed.
    const unflushed = this.flushScheduled ? this.generation : -1;
    this.destroyed = true;
    this.outbox = [];
    this.markUnusable();
    const unsentError = new Http2RequestError('refused', `${error.message} before the request was sent`);
    for (const stream of [...this.streams.values()]) this.finish(stream, stream.generation === unflushed ? unsentError : error);
    this.socket.destroy();
  }
}
