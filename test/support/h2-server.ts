/**
 * A small HTTP/2 server (h2c, prior knowledge) on the same framing, HPACK and flow control as our
 * client (`src/delivery/http2/endpoint.ts`), for the loopback FCM fake.
 *
 * Why not `node:http2`: in a benchmark the fake shares the two cores with the service, and Node's
 * server spent ~110 µs of CPU per push (a stream object, header objects, one write per frame);
 * a provider's CPU is not ours in production, so the fake should cost as little of it as it can.
 * Both ends sharing our HTTP/2 code could hide a bug they agree on, so each is also tested against
 * Node's nghttp2: the client in `src/delivery/http2/connection.test.ts`, this server with Node's
 * client in `h2-server.test.ts`.
 */
import net, { type AddressInfo, type Server, type Socket } from 'node:net';
import { CLIENT_PREFACE, ErrorCode, Setting } from '../../src/delivery/http2/frames.ts';
import { Http2Endpoint, type EndpointStream, type HeaderField, type HeaderMap } from '../../src/delivery/http2/endpoint.ts';

export type { HeaderMap } from '../../src/delivery/http2/endpoint.ts';

/** One request stream as the fake's handlers see it. */
export interface H2ServerStream extends EndpointStream {
  readonly session: H2ServerSession;
  /** The request's header fields, pseudo-headers included. */
  headers: HeaderMap;
  body: Buffer[];
  /** False once answered or reset (by either side). */
  open: boolean;
}

export interface H2ServerHandlers {
  /** A new connection. */
  onSession?(session: H2ServerSession): void;
  /** A stream's request headers arrived (its body may follow). Answer or reset here, or later. */
  onStream?(stream: H2ServerStream): void;
  /** A stream's request is complete (END_STREAM). */
  onRequest(stream: H2ServerStream): void;
  /** A stream ended: answered, reset by either side, or its connection closed. */
  onStreamClosed?(stream: H2ServerStream): void;
}

export interface H2ServerOptions {
  /** Our SETTINGS_MAX_CONCURRENT_STREAMS; streams beyond it are refused. */
  maxConcurrentStreams: number;
}

/** Receive windows: requests are small; these are never the bottleneck. */
const STREAM_RECEIVE_WINDOW = 1024 * 1024;
const CONNECTION_RECEIVE_WINDOW = 16 * 1024 * 1024;
const MAX_HEADER_LIST_OCTETS = 64 * 1024;

export class H2ServerSession extends Http2Endpoint<H2ServerStream> {
  private prefaceSeen = 0;
  private highestStreamId = 0;
  /** After our GOAWAY: streams above this id are refused. */
  private goawayLastStreamId: number | null = null;
  private closed = false;

  constructor(
    socket: Socket,
    private readonly handlers: H2ServerHandlers,
    private readonly maxConcurrentStreams: number,
  ) {
    super(socket, {
      streamReceiveWindow: STREAM_RECEIVE_WINDOW,
      connectionReceiveWindow: CONNECTION_RECEIVE_WINDOW,
      maxHeaderListOctets: MAX_HEADER_LIST_OCTETS,
      extraSettings: [[Setting.MAX_CONCURRENT_STREAMS, maxConcurrentStreams]],
    });
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.receiveWithPreface(chunk));
    socket.on('error', () => this.closeAll());
    socket.on('close', () => this.closeAll());
    this.queueOpening();
  }

  get openStreams(): number {
    return this.streams.size;
  }

  /** Answers `stream`: headers (`:status` first) and the whole body, ending the stream. */
  respond(stream: H2ServerStream, status: number, headers: readonly HeaderField[], body: string | Buffer): void {
    if (!stream.open || this.destroyed) return;
    stream.open = false;
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    this.queueHeaders(stream.id, [[':status', String(status)], ...headers], bytes.length === 0);
    if (bytes.length > 0) this.queueBody(stream, bytes);
    else this.end(stream);
  }

  /** RST_STREAM(code). */
  reset(stream: H2ServerStream, code: number): void {
    if (!this.streams.has(stream.id)) return;
    this.queueReset(stream.id, code);
    this.end(stream);
  }

  /** GOAWAY: streams up to `lastStreamId` are still served, later ones refused. */
  goaway(lastStreamId: number, code: number = ErrorCode.NO_ERROR): void {
    this.goawayLastStreamId = lastStreamId;
    this.queueGoaway(lastStreamId, code);
  }

  destroy(): void {
    this.destroyed = true;
    this.socket.destroy();
    this.closeAll();
  }

  protected override onBodyQueued(stream: H2ServerStream): void {
    this.end(stream);
  }

  protected isIdleStream(streamId: number): boolean {
    return streamId % 2 === 0 || streamId > this.highestStreamId;
  }

  protected onHeaderBlock(streamId: number, fields: HeaderMap, endStream: boolean): void {
    const existing = this.streams.get(streamId);
    if (existing) {
      // Trailers end the request.
      if (endStream) this.requestComplete(existing);
      return;
    }
    if (streamId % 2 === 0 || streamId <= this.highestStreamId) return; // a stream already ended
    this.highestStreamId = streamId;
    const refuse =
      (this.goawayLastStreamId !== null && streamId > this.goawayLastStreamId) || this.streams.size >= this.maxConcurrentStreams;
    if (refuse) return this.queueReset(streamId, ErrorCode.REFUSED_STREAM);
    const stream: H2ServerStream = { ...this.streamState(streamId), session: this, headers: fields, body: [], open: true };
    this.streams.set(streamId, stream);
    this.handlers.onStream?.(stream);
    if (endStream && this.streams.has(streamId)) this.requestComplete(stream);
  }

  protected onStreamData(stream: H2ServerStream, data: Buffer, endStream: boolean): void {
    if (data.length > 0) stream.body.push(data);
    if (endStream) this.requestComplete(stream);
  }

  protected onStreamReset(stream: H2ServerStream): void {
    this.end(stream);
  }

  protected onPeerSettings(): void {}

  protected onGoaway(): void {}

  protected onConnectionError(): void {
    this.destroy();
  }

  private requestComplete(stream: H2ServerStream): void {
    if (stream.open) this.handlers.onRequest(stream);
  }

  private end(stream: H2ServerStream): void {
    stream.open = false;
    if (!this.streams.delete(stream.id)) return;
    this.handlers.onStreamClosed?.(stream);
    if (this.goawayLastStreamId !== null && this.streams.size === 0) {
      // Like a real server: once the streams before the GOAWAY are done, hang up.
      this.flush();
      this.socket.end(() => this.socket.destroy());
    }
  }

  private receiveWithPreface(chunk: Buffer): void {
    if (this.prefaceSeen < CLIENT_PREFACE.length) {
      const take = Math.min(chunk.length, CLIENT_PREFACE.length - this.prefaceSeen);
      if (!chunk.subarray(0, take).equals(CLIENT_PREFACE.subarray(this.prefaceSeen, this.prefaceSeen + take))) {
        this.destroy(); // not HTTP/2 with prior knowledge
        return;
      }
      this.prefaceSeen += take;
      chunk = chunk.subarray(take);
      if (chunk.length === 0) return;
    }
    this.receive(chunk);
  }

  private closeAll(): void {
    if (this.closed) return;
    this.closed = true;
    this.destroyed = true;
    for (const stream of [...this.streams.values()]) this.end(stream);
  }
}

export interface H2Server {
  port: number;
  sessions: Set<H2ServerSession>;
  close(): Promise<void>;
}

export async function startH2Server(handlers: H2ServerHandlers, options: H2ServerOptions): Promise<H2Server> {
  const sessions = new Set<H2ServerSession>();
  const server: Server = net.createServer((socket) => {
    const session = new H2ServerSession(socket, handlers, options.maxConcurrentStreams);
    sessions.add(session);
    socket.on('close', () => sessions.delete(session));
    handlers.onSession?.(session);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    sessions,
    close: async () => {
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
