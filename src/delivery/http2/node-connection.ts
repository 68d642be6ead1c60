/**
 * One HTTP/2 client connection through `node:http2` (`delivery.http2_client: node`): the standard
 * fallback of our own client (`connection.ts`), behind the same {@link PoolConnection} contract,
 * so the pool's semantics (sessions, stream limits, GOAWAY, the refused-stream retry, deadlines)
 * are the same whichever runs. It costs more CPU per request (docs/benchmarks.md) and is there so
 * an operator can switch our own stack off without a release.
 *
 * Mapping onto `node:http2`:
 * - `ready` is the session's first `remoteSettings` (the server's SETTINGS), as for our client;
 * - a stream closed with REFUSED_STREAM before its response, or above a GOAWAY's last stream id
 *   (nghttp2 closes those with REFUSED_STREAM too, and the `goaway` event names the id), or never
 *   given an id (its HEADERS never left), fails `refused`; every other early end `stream_error`;
 * - a `'never'`-indexed field (a secret) goes out in `http2.sensitiveHeaders`; `'without'` is a
 *   compression hint `node:http2` has no per-field switch for, so nghttp2 decides.
 */
import http2, { type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import { Http2RequestError } from './errors.ts';
import type { HeaderField, HeaderMap } from './endpoint.ts';
import { CONNECTION_RECEIVE_WINDOW, MAX_HEADER_LIST_OCTETS, STREAM_RECEIVE_WINDOW } from './connection.ts';
import type { Http2ConnectionOptions, PoolConnection, StreamCallback } from './pool-connection.ts';

const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM } = http2.constants;

interface NodeStreamState {
  stream: ClientHttp2Stream;
  callback: StreamCallback;
  status: number;
  headers: HeaderMap;
  body: Buffer[];
  bodyBytes: number;
  done: boolean;
}

export class NodeHttp2Connection implements PoolConnection {
  readonly ready: Promise<void>;
  connected = false;
  private usable = true;
  private readonly session: ClientHttp2Session;
  private readonly streams = new Map<number, NodeStreamState>();
  private nextHandle = 1;
  private settleReady!: (error: Http2RequestError | null) => void;
  private readonly connectTimer: NodeJS.Timeout;
  private sessionClosed = false;
  private readonly closeWaiters: Array<() => void> = [];

  constructor(private readonly options: Http2ConnectionOptions) {
    const { origin } = options;
    this.ready = new Promise<void>((resolve, reject) => {
      this.settleReady = (error) => (error ? reject(error) : resolve());
    });
    // Settled by whichever request awaits it; an idle connection's failure must not be unhandled.
    this.ready.catch(() => undefined);
    this.session = http2.connect(origin.origin, {
      ...(origin.protocol === 'https:' ? options.tls : {}),
      // Our client's SETTINGS: no push, the same stream window and header list bound.
      settings: { enablePush: false, initialWindowSize: STREAM_RECEIVE_WINDOW, maxHeaderListSize: MAX_HEADER_LIST_OCTETS },
    });
    this.connectTimer = setTimeout(() => {
      this.fail(new Http2RequestError('connect_timeout', `HTTP/2 connect to ${origin.origin} exceeded ${options.connectTimeoutMs}ms`));
    }, options.connectTimeoutMs);
    this.session.once('connect', () => this.session.setLocalWindowSize(CONNECTION_RECEIVE_WINDOW));
    this.session.on('remoteSettings', () => {
      if (!this.connected) {
        this.connected = true;
        clearTimeout(this.connectTimer);
        this.settleReady(null);
      }
      this.options.onCapacity();
    });
    this.session.on('goaway', (code: number, lastStreamId: number) => this.onGoaway(code, lastStreamId));
    this.session.on('error', (err: Error) =>
      this.fail(
        new Http2RequestError(
          this.connected ? 'stream_error' : 'connect_failed',
          `HTTP/2 connection to ${origin.origin} failed: ${err.message}`,
        ),
      ),
    );
    this.session.on('close', () => {
      this.sessionClosed = true;
      this.fail(new Http2RequestError(this.connected ? 'stream_error' : 'connect_failed', `HTTP/2 connection to ${origin.origin} closed`));
      for (const wake of this.closeWaiters.splice(0)) wake();
    });
  }

  get hasFreeStream(): boolean {
    return this.usable && this.connected && this.streams.size < this.peerMaxStreams;
  }

  get isUsable(): boolean {
    return this.usable;
  }

  get activeStreams(): number {
    return this.streams.size;
  }

  /** Streams the peer lets us have open at once (unbounded until its SETTINGS say). */
  private get peerMaxStreams(): number {
    return this.session.remoteSettings.maxConcurrentStreams ?? Number.POSITIVE_INFINITY;
  }

  request(fields: readonly HeaderField[], body: Buffer | null, callback: StreamCallback): number {
    if (!this.usable || this.session.destroyed || this.session.closed)
      throw new Http2RequestError('refused', 'the HTTP/2 connection takes no new streams');
    const headers: OutgoingHttpHeaders & { [http2.sensitiveHeaders]?: string[] } = {};
    const sensitive: string[] = [];
    for (const [name, value, indexing] of fields) {
      const existing = headers[name];
      headers[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [String(existing), value];
      if (indexing === 'never') sensitive.push(name);
    }
    if (sensitive.length > 0) headers[http2.sensitiveHeaders] = sensitive;
    const hasBody = body !== null && body.length > 0;
    let stream: ClientHttp2Stream;
    try {
      stream = this.session.request(headers, { endStream: !hasBody });
    } catch (err) {
      // The session refused to open it (closing, out of stream ids): nothing left this process.
      throw new Http2RequestError('refused', `the HTTP/2 connection takes no new streams: ${(err as Error).message}`);
    }
    const handle = this.nextHandle++;
    const state: NodeStreamState = { stream, callback, status: 0, headers: {}, body: [], bodyBytes: 0, done: false };
    this.streams.set(handle, state);
    stream.on('response', (responseHeaders: IncomingHttpHeaders) => {
      state.status = Number(responseHeaders[':status']);
      state.headers = toHeaderMap(responseHeaders);
    });
    stream.on('data', (chunk: Buffer) => {
      const room = this.options.maxResponseBodyBytes - state.bodyBytes;
      if (room <= 0) return;
      const keep = chunk.length <= room ? chunk : chunk.subarray(0, room);
      state.body.push(keep);
      state.bodyBytes += keep.length;
    });
    stream.on('end', () => {
      if (state.status >= 200) {
        const responseBody = state.body.length === 1 ? (state.body[0] as Buffer) : Buffer.concat(state.body);
        this.finish(handle, null, { status: state.status, headers: state.headers, body: responseBody });
      }
    });
    // Stream errors are reported through 'close' and its rstCode; an unlistened 'error' would throw.
    stream.on('error', () => undefined);
    stream.on('close', () => {
      if (state.done) return;
      const refusedByServer = stream.rstCode === NGHTTP2_REFUSED_STREAM && state.status === 0;
      if (refusedByServer || stream.id === undefined)
        this.finish(handle, new Http2RequestError('refused', 'stream refused by the server (REFUSED_STREAM)'));
      else if (state.status >= 200 && stream.rstCode === 0) {
        const responseBody = state.body.length === 1 ? (state.body[0] as Buffer) : Buffer.concat(state.body);
        this.finish(handle, null, { status: state.status, headers: state.headers, body: responseBody });
      } else this.finish(handle, new Http2RequestError('stream_error', `HTTP/2 stream reset with code ${stream.rstCode}`));
    });
    if (hasBody) stream.end(body);
    return handle;
  }

  cancel(handle: number, error: Http2RequestError): void {
    const state = this.streams.get(handle);
    if (!state) return;
    this.finish(handle, error);
    state.stream.close(NGHTTP2_CANCEL);
  }

  close(): void {
    this.markUnusable();
    if (!this.session.closed && !this.session.destroyed) this.session.close();
  }

  destroy(): void {
    this.fail(new Http2RequestError('stream_error', 'the HTTP/2 connection was closed by this client'));
  }

  ref(): void {
    this.session.ref();
  }

  unref(): void {
    this.session.unref();
  }

  closed(): Promise<void> {
    if (this.sessionClosed) return Promise.resolve();
    return new Promise((resolve) => this.closeWaiters.push(resolve));
  }

  private onGoaway(code: number, lastStreamId: number): void {
    this.markUnusable();
    // Streams above the last one the server saw were never processed: safe to send elsewhere.
    for (const [handle, state] of [...this.streams]) {
      const id = state.stream.id;
      if (id === undefined || id > lastStreamId)
        this.finish(handle, new Http2RequestError('refused', `stream not processed: the server sent GOAWAY (code ${code})`));
    }
    // Let the streams the server did take finish, then end the session.
    if (!this.session.closed && !this.session.destroyed) this.session.close();
  }

  private finish(handle: number, error: Http2RequestError | null, response: Parameters<StreamCallback>[1] = null): void {
    const state = this.streams.get(handle);
    if (!state || state.done) return;
    state.done = true;
    this.streams.delete(handle);
    state.callback(error, response);
    if (this.usable) this.options.onCapacity();
  }

  private markUnusable(): void {
    if (!this.usable) return;
    this.usable = false;
    this.options.onUnusable();
  }

  /** The connection is done for: every open stream fails, the session is destroyed. */
  private fail(error: Http2RequestError): void {
    clearTimeout(this.connectTimer);
    if (!this.connected) this.settleReady(error);
    this.markUnusable();
    const unsentError = new Http2RequestError('refused', `${error.message} before the request was sent`);
    for (const [handle, state] of [...this.streams]) this.finish(handle, state.stream.id === undefined ? unsentError : error);
    if (!this.session.destroyed) this.session.destroy();
  }
}

/** `node:http2`'s response headers as our {@link HeaderMap}: strings, a repeated field an array. */
function toHeaderMap(headers: Readonly<Record<string, string | string[] | number | undefined>>): HeaderMap {
  const map: HeaderMap = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    map[name] = Array.isArray(value) ? value : String(value);
  }
  return map;
}
