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
import { CLIENT_PREFACE, ErrorCode, Http2ConnectionError, MAX_STREAM_ID, Setting } from './frames.ts';
import { Http2Endpoint, type EndpointStream, type HeaderField, type HeaderMap } from './endpoint.ts';
import type { Http2ClientResponse, Http2ConnectionOptions, PoolConnection, StreamCallback } from './pool-connection.ts';

export type { HeaderField } from './endpoint.ts';
export type { Http2ClientResponse, Http2ConnectionOptions, StreamCallback } from './pool-connection.ts';

/** Receive window we give each stream: responses are small, so it never needs topping up in practice. */
export const STREAM_RECEIVE_WINDOW = 1024 * 1024;
/** Receive window of the whole connection, topped up whenever half of it is consumed. */
export const CONNECTION_RECEIVE_WINDOW = 16 * 1024 * 1024;
/** Bound on one decoded response header list (names + values + 32 per field). */
export const MAX_HEADER_LIST_OCTETS = 64 * 1024;

export type ResponseHeaders = HeaderMap;

interface ClientStream extends EndpointStream {
  callback: StreamCallback;
  /** Flush generation the HEADERS frame was queued in; once flushed, the server may have it. */
  generation: number;
  status: number;
  headers: ResponseHeaders;
  body: Buffer[];
  bodyBytes: number;
}

function openSocket(origin: URL, tlsOptions: TlsConnectionOptions | undefined): Socket {
  const port = Number(origin.port || (origin.protocol === 'https:' ? 443 : 80));
  const host = origin.hostname.replace(/^\[|\]$/g, '');
  const socket =
    origin.protocol === 'https:'
      ? tls.connect({ ...tlsOptions, host, port, servername: net.isIP(host) ? undefined : host, ALPNProtocols: ['h2'] })
      : net.connect({ host, port });
  socket.setNoDelay(true);
  return socket;
}

export class Http2ClientConnection extends Http2Endpoint<ClientStream> implements PoolConnection {
  /** Resolves on the server's first SETTINGS; rejects `connect_failed` or `connect_timeout`. */
  readonly ready: Promise<void>;
  connected = false;
  private usable = true;
  private nextStreamId = 1;
  private settleReady!: (error: Http2RequestError | null) => void;
  private readonly connectTimer: NodeJS.Timeout;

  constructor(private readonly options: Http2ConnectionOptions) {
    super(openSocket(options.origin, options.tls), {
      streamReceiveWindow: STREAM_RECEIVE_WINDOW,
      connectionReceiveWindow: CONNECTION_RECEIVE_WINDOW,
      maxHeaderListOctets: MAX_HEADER_LIST_OCTETS,
      extraSettings: [[Setting.ENABLE_PUSH, 0]],
    });
    this.ready = new Promise<void>((resolve, reject) => {
      this.settleReady = (error) => (error ? reject(error) : resolve());
    });
    // Settled by whichever request awaits it; an idle connection's failure must not be unhandled.
    this.ready.catch(() => undefined);
    const { origin } = options;
    this.connectTimer = setTimeout(() => {
      this.fail(new Http2RequestError('connect_timeout', `HTTP/2 connect to ${origin.origin} exceeded ${options.connectTimeoutMs}ms`));
    }, options.connectTimeoutMs);
    if (origin.protocol === 'https:') {
      this.socket.once('secureConnect', () => {
        if (!(this.socket instanceof tls.TLSSocket) || this.socket.alpnProtocol !== 'h2') {
          this.fail(new Http2RequestError('connect_failed', `${origin.origin} did not negotiate HTTP/2 (ALPN)`));
        }
      });
    }
    this.socket.on('data', (chunk: Buffer) => this.receive(chunk));
    this.socket.on('error', (err) =>
      this.fail(
        new Http2RequestError(
          this.connected ? 'stream_error' : 'connect_failed',
          `HTTP/2 connection to ${origin.origin} failed: ${err.message}`,
        ),
      ),
    );
    this.socket.on('close', () =>
      this.fail(new Http2RequestError(this.connected ? 'stream_error' : 'connect_failed', `HTTP/2 connection to ${origin.origin} closed`)),
    );
    this.queue(CLIENT_PREFACE);
    this.queueOpening();
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
      ...this.streamState(id),
      callback,
      generation: this.generation,
      status: 0,
      headers: {},
      body: [],
      bodyBytes: 0,
    };
    this.streams.set(id, stream);
    const hasBody = body !== null && body.length > 0;
    this.queueHeaders(id, headers, !hasBody);
    if (hasBody) this.queueBody(stream, body);
    return id;
  }

  /** Ends a stream early (RST_STREAM CANCEL) and fails it with `error`. No-op for a finished stream. */
  cancel(id: number, error: Http2RequestError): void {
    const stream = this.streams.get(id);
    if (!stream) return;
    this.queueReset(id, ErrorCode.CANCEL);
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

  // --- the server's side of the conversation ---

  protected isIdleStream(streamId: number): boolean {
    return streamId % 2 === 0 || streamId >= this.nextStreamId;
  }

  protected onStreamData(stream: ClientStream, data: Buffer, endStream: boolean): void {
    if (stream.status === 0) return this.streamFailure(stream, ErrorCode.PROTOCOL_ERROR, 'DATA before the response headers');
    if (stream.bodyBytes < this.options.maxResponseBodyBytes && data.length > 0) {
      const keep = Math.min(data.length, this.options.maxResponseBodyBytes - stream.bodyBytes);
      stream.body.push(keep === data.length ? data : data.subarray(0, keep));
      stream.bodyBytes += keep;
    }
    if (endStream) this.complete(stream);
  }

  protected onHeaderBlock(streamId: number, fields: HeaderMap, endStream: boolean): void {
    // Only a server opens streams by HEADERS, and this end never lets it (push is off).
    if (this.isIdleStream(streamId)) throw new Http2ConnectionError(ErrorCode.PROTOCOL_ERROR, `HEADERS on idle stream ${streamId}`);
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

  protected onStreamReset(stream: ClientStream, code: number): void {
    if (code === ErrorCode.REFUSED_STREAM && stream.status === 0) {
      this.finish(stream, new Http2RequestError('refused', 'stream refused by the server (REFUSED_STREAM)'));
    } else {
      this.finish(stream, new Http2RequestError('stream_error', `HTTP/2 stream reset with code ${code}`));
    }
  }

  protected onPeerSettings(first: boolean): void {
    if (first) {
      this.connected = true;
      clearTimeout(this.connectTimer);
      this.settleReady(null);
    }
    this.options.onCapacity();
  }

  protected onGoaway(lastStreamId: number, code: number): void {
    this.markUnusable();
    // Streams above the last one the server saw were never processed: safe to send elsewhere.
    for (const stream of [...this.streams.values()]) {
      if (stream.id > lastStreamId)
        this.finish(stream, new Http2RequestError('refused', `stream not processed: the server sent GOAWAY (code ${code})`));
    }
    if (this.streams.size === 0) this.shutdown();
  }

  protected onConnectionError(message: string): void {
    this.fail(new Http2RequestError('stream_error', message));
  }

  // --- ending streams and the connection ---

  private complete(stream: ClientStream): void {
    // A server may answer before reading the whole request (§8.1); the rest is not sent.
    if (stream.unsent) this.queueReset(stream.id, ErrorCode.NO_ERROR);
    const body = stream.body.length === 1 ? (stream.body[0] as Buffer) : Buffer.concat(stream.body);
    this.finish(stream, null, { status: stream.status, headers: stream.headers, body });
  }

  private streamFailure(stream: ClientStream, code: number, message: string): void {
    this.queueReset(stream.id, code);
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
    this.queueGoaway(0, ErrorCode.NO_ERROR);
    this.flush();
    this.destroyed = true;
    // Not waiting for the server's FIN: nothing more is expected from it, and a peer may keep
    // its half open indefinitely.
    this.socket.end(() => this.socket.destroy());
  }

  /** The connection is done for: every open stream fails, the socket is destroyed. */
  private fail(error: Http2RequestError): void {
    clearTimeout(this.connectTimer);
    if (!this.connected) this.settleReady(error);
    // Frames still queued never left this process: their streams were not processed.
    const unflushed = this.flushScheduled ? this.generation : -1;
    this.destroyed = true;
    this.markUnusable();
    const unsentError = new Http2RequestError('refused', `${error.message} before the request was sent`);
    for (const stream of [...this.streams.values()]) this.finish(stream, stream.generation === unflushed ? unsentError : error);
    this.socket.destroy();
  }
}
