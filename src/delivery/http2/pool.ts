/**
 * A small pool of long-lived HTTP/2 connections (a {@link PoolConnection}) to one origin
 * (the FCM API; APNs next).
 *
 * Policy:
 * - Each connection carries at most {@link MAX_STREAMS_PER_SESSION} streams (or fewer if the
 *   server advertises a lower `SETTINGS_MAX_CONCURRENT_STREAMS`). When every connection is full
 *   another one is opened, up to {@link DEFAULT_MAX_SESSIONS}; beyond that requests wait in FIFO
 *   order for a free stream. One batch of FCM's concurrency (100) therefore fits one connection,
 *   and concurrent batches spread over a few instead of queueing behind each other.
 * - A connection that receives GOAWAY, fails or closes leaves the pool at once; the next request
 *   opens a fresh one. A request the server never processed (`refused`: REFUSED_STREAM, above a
 *   GOAWAY's last stream id, or never written) is retried once on another connection. Any other
 *   failure is reported, never retried: the server may have acted on it.
 * - `http://` origins speak HTTP/2 with prior knowledge (h2c), for loopback fakes.
 * - Connections are unref'd while idle, so an idle pool never keeps the process alive.
 * - `client` picks the connection under the pool (`delivery.http2_client`): our own HTTP/2
 *   client (`connection.ts`, the default) or `node:http2` (`node-connection.ts`). Everything
 *   above is the pool's and holds for both; transports take a pool and never see the difference.
 */
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { Http2ClientConnection, type HeaderField, type Http2ClientResponse, type ResponseHeaders } from './connection.ts';
import { Http2RequestError } from './errors.ts';
import { NodeHttp2Connection } from './node-connection.ts';
import type { Http2ClientKind } from '../../config/defaults.ts';
import type { Http2ConnectionOptions, PoolConnection } from './pool-connection.ts';
import type { FieldIndexing } from './hpack.ts';

export { Http2RequestError, type Http2FailureReason } from './errors.ts';
export type { ResponseHeaders } from './connection.ts';
export { HTTP2_CLIENT_KINDS, type Http2ClientKind } from './pool-connection.ts';

/** Streams one connection may carry at once (FCM's own limit, and firebase-admin's `peerMaxConcurrentStreams`). */
export const MAX_STREAMS_PER_SESSION = 100;
/** Connections the pool opens before requests start to wait for a free stream. */
export const DEFAULT_MAX_SESSIONS = 8;
/** Time to establish a connection: TCP, TLS and the server's first SETTINGS frame. */
export const CONNECT_TIMEOUT_MS = 10_000;
/** Time from opening a stream to the end of the response. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** How long close() waits for each connection's socket to close. */
export const CLOSE_GRACE_MS = 1_000;
/** Response bodies are read up to this size; FCM's error bodies are well under 4 KiB. */
export const MAX_RESPONSE_BODY_BYTES = 64 * 1024;

export interface Http2PoolOptions {
  /** Origin, optionally with a path prefix: `https://fcm.googleapis.com`, `http://127.0.0.1:9000`. */
  baseUrl: string;
  maxStreamsPerSession?: number;
  maxSessions?: number;
  connectTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** Extra TLS options for `https:` origins (a test's CA). */
  tls?: TlsConnectionOptions;
  /** The HTTP/2 client under the pool (`delivery.http2_client`); default `builtin`. */
  client?: Http2ClientKind;
}

export interface Http2Request {
  method: 'GET' | 'POST';
  /** Path below the base URL, starting with `/`. */
  path: string;
  /**
   * Header fields after the pseudo-headers, lowercase names. A third element `'without'` keeps a
   * field that changes with every request out of the HPACK table; `'never'` marks a secret.
   */
  headers?: readonly HeaderField[];
  /**
   * How `:path` enters the HPACK table; default `incremental`. `'without'` for a path that differs
   * with every request (APNs' `/3/device/{token}`): indexed, each would take ~110 bytes of the
   * 4 KiB table and soon evict the fields worth keeping there, the provider token first, which
   * then goes out in full (and Huffman-coded) again.
   */
  pathIndexing?: FieldIndexing;
  body?: string | Buffer;
  /** Aborting cancels the stream (or the wait for one). */
  signal?: AbortSignal;
  /**
   * Absolute time (ms since the epoch) by which the whole request, the wait for a free stream
   * included, must be done; past it the request fails with `deadline`. The caller's operation
   * bound travels as a number so a send costs no timer or AbortController of its own.
   */
  deadlineMs?: number;
}

export interface Http2Response {
  status: number;
  headers: ResponseHeaders;
  bodyText: string;
}

export class Http2Pool {
  private readonly origin: URL;
  private readonly authority: string;
  private readonly scheme: string;
  private readonly pathPrefix: string;
  private readonly maxStreamsPerSession: number;
  private readonly maxSessions: number;
  private readonly connectTimeoutMs: number;
  private readonly requestTimeoutMs: number;
  private readonly tls: TlsConnectionOptions | undefined;
  /** Which HTTP/2 client the pool's connections are (`delivery.http2_client`). */
  readonly client: Http2ClientKind;
  private sessions: PoolConnection[] = [];
  /** Every connection not yet closed, pooled or draining, so close() can end them all. */
  private readonly openSessions = new Set<PoolConnection>();
  private readonly waiters: Array<() => void> = [];
  /**
   * Cancellers of the requests in flight under each caller signal. Callers share one long-lived
   * signal (a role's shutdown), so the pool listens once per signal instead of once per request;
   * the weak map lets a short-lived signal and its listener go together.
   */
  private readonly abortGroups = new WeakMap<AbortSignal, Set<() => void>>();
  private closed = false;
  /** Connections opened over the pool's life (tests and diagnostics). */
  sessionsOpened = 0;

  constructor(options: Http2PoolOptions) {
    const url = new URL(options.baseUrl);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`HTTP/2 base URL must be http(s): ${options.baseUrl}`);
    this.origin = new URL(url.origin);
    this.authority = url.host;
    this.scheme = url.protocol.slice(0, -1);
    this.pathPrefix = url.pathname.replace(/\/+$/, '');
    this.maxStreamsPerSession = options.maxStreamsPerSession ?? MAX_STREAMS_PER_SESSION;
    this.maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
    this.connectTimeoutMs = options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
    this.requestTimeoutMs = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
    this.tls = options.tls;
    this.client = options.client ?? 'builtin';
  }

  /** Send one request. Rejects only with {@link Http2RequestError}. */
  request(request: Http2Request): Promise<Http2Response> {
    // The common case opens its stream without a wait: a connected session has a free stream.
    const usable = !this.closed && !request.signal?.aborted && (request.deadlineMs === undefined || Date.now() < request.deadlineMs);
    const connection = usable ? this.sessionWithFreeStream() : null;
    if (!connection?.connected) return this.requestWaiting(request, 1);
    return this.send(connection, request, 1);
  }

  /** {@link request} when a stream has to be waited for, or a connection connected first. */
  private async requestWaiting(request: Http2Request, attempt: number): Promise<Http2Response> {
    for (;;) {
      const connection = await this.acquire(request.signal, request.deadlineMs);
      await connection.ready;
      // Others may have taken the streams while this one waited for the connection.
      if (connection.hasFreeStream && connection.activeStreams < this.maxStreamsPerSession) return this.send(connection, request, attempt);
    }
  }

  /**
   * Send on `connection`. A refused stream was never processed, so the first attempt is retried
   * once on another connection; any other failure is reported, since the server may have acted on it.
   */
  private send(connection: PoolConnection, request: Http2Request, attempt: number): Promise<Http2Response> {
    return this.exchange(connection, request).catch((err: unknown) => {
      if (err instanceof Http2RequestError && err.reason === 'refused') {
        // The RST_STREAM can arrive before the GOAWAY that explains it: never retry on the same connection.
        this.retire(connection);
        if (attempt === 1) return this.requestWaiting(request, 2);
      }
      throw err;
    });
  }

  private exchange(connection: PoolConnection, request: Http2Request): Promise<Http2Response> {
    return new Promise<Http2Response>((resolve, reject) => {
      if (request.signal?.aborted) {
        reject(new Http2RequestError('aborted', 'request aborted before it was sent'));
        return;
      }
      let streamId = -1;
      const fields: HeaderField[] = [
        [':method', request.method],
        [':scheme', this.scheme],
        [':authority', this.authority],
        [':path', this.pathPrefix + request.path, request.pathIndexing ?? 'incremental'],
      ];
      if (request.headers) fields.push(...request.headers);
      const body = request.body === undefined ? null : typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body;
      // One timer: the request bound, or the caller's deadline when that comes first.
      const untilDeadlineMs = request.deadlineMs === undefined ? Number.POSITIVE_INFINITY : request.deadlineMs - Date.now();
      const timer =
        untilDeadlineMs < this.requestTimeoutMs
          ? setTimeout(() => connection.cancel(streamId, deadlineError()), Math.max(0, untilDeadlineMs))
          : setTimeout(
              () =>
                connection.cancel(streamId, new Http2RequestError('request_timeout', `HTTP/2 request exceeded ${this.requestTimeoutMs}ms`)),
              this.requestTimeoutMs,
            );
      const unwatchAbort = request.signal
        ? this.onAbort(request.signal, () => connection.cancel(streamId, new Http2RequestError('aborted', 'request aborted')))
        : undefined;
      const settle = (error: Http2RequestError | null, response: Http2ClientResponse | null): void => {
        clearTimeout(timer);
        unwatchAbort?.();
        if (connection.activeStreams === 0) connection.unref();
        if (error || !response) reject(error ?? new Http2RequestError('stream_error', 'no response'));
        else resolve({ status: response.status, headers: response.headers, bodyText: response.body.toString('utf8') });
      };
      try {
        if (connection.activeStreams === 0) connection.ref();
        streamId = connection.request(fields, body, settle);
      } catch (err) {
        settle(err instanceof Http2RequestError ? err : new Http2RequestError('stream_error', (err as Error).message), null);
      }
    });
  }

  /** Live connections in the pool (draining ones excluded). */
  get sessionCount(): number {
    return this.sessions.length;
  }

  /**
   * End every connection; requests in flight fail with `stream_error`, waiting ones with
   * `pool_closed`. Waits up to {@link CLOSE_GRACE_MS} for the sockets to close.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.wakeAll();
    this.sessions = [];
    const closing = [...this.openSessions].map((connection) => {
      connection.destroy();
      return Promise.race([connection.closed(), new Promise<void>((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref())]);
    });
    await Promise.all(closing);
  }

  private async acquire(signal: AbortSignal | undefined, deadlineMs: number | undefined): Promise<PoolConnection> {
    for (;;) {
      if (this.closed) throw new Http2RequestError('pool_closed', 'the HTTP/2 pool is closed');
      if (signal?.aborted) throw new Http2RequestError('aborted', 'request aborted before it was sent');
      if (deadlineMs !== undefined && Date.now() >= deadlineMs) throw deadlineError();
      const connection =
        this.sessionWithFreeStream() ?? this.connectingSession() ?? (this.sessions.length < this.maxSessions ? this.connect() : null);
      if (connection) return connection;
      await this.waitForFreeStream(signal, deadlineMs);
    }
  }

  /** Wait for a released stream; abort and the deadline end the wait too (acquire() then throws). */
  private waitForFreeStream(signal: AbortSignal | undefined, deadlineMs: number | undefined): Promise<void> {
    return new Promise((resolve) => {
      const stopWaiting = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', giveUp);
        resolve();
      };
      const giveUp = (): void => {
        const index = this.waiters.indexOf(stopWaiting);
        if (index >= 0) this.waiters.splice(index, 1);
        stopWaiting();
      };
      const timer = deadlineMs === undefined ? undefined : setTimeout(giveUp, Math.max(0, deadlineMs - Date.now()));
      signal?.addEventListener('abort', giveUp, { once: true });
      this.waiters.push(stopWaiting);
    });
  }

  /** Run `cancel` when `signal` aborts; returns the unregistration. */
  private onAbort(signal: AbortSignal, cancel: () => void): () => void {
    let group = this.abortGroups.get(signal);
    if (!group) {
      const members = new Set<() => void>();
      group = members;
      this.abortGroups.set(signal, members);
      signal.addEventListener(
        'abort',
        () => {
          for (const member of [...members]) member();
          members.clear();
        },
        { once: true },
      );
    }
    group.add(cancel);
    const members = group;
    return () => members.delete(cancel);
  }

  private sessionWithFreeStream(): PoolConnection | null {
    for (const connection of this.sessions) {
      if (connection.hasFreeStream && connection.activeStreams < this.maxStreamsPerSession) return connection;
    }
    return null;
  }

  /**
   * A connection still connecting, with room for the requests already waiting on it: a burst
   * waits for one handshake instead of opening a connection per request.
   */
  private connectingSession(): PoolConnection | null {
    for (const connection of this.sessions) {
      if (connection.isUsable && !connection.connected && this.pendingOn(connection) < this.maxStreamsPerSession) {
        this.pendingConnects.set(connection, this.pendingOn(connection) + 1);
        return connection;
      }
    }
    return null;
  }

  /** Requests that chose a connection while it was connecting (cleared once it connects). */
  private readonly pendingConnects = new Map<PoolConnection, number>();

  private pendingOn(connection: PoolConnection): number {
    return this.pendingConnects.get(connection) ?? 0;
  }

  private connect(): PoolConnection {
    this.sessionsOpened++;
    const options: Http2ConnectionOptions = {
      origin: this.origin,
      connectTimeoutMs: this.connectTimeoutMs,
      maxResponseBodyBytes: MAX_RESPONSE_BODY_BYTES,
      tls: this.tls,
      onUnusable: () => this.retire(connection),
      onCapacity: () => this.wakeOne(),
    };
    const connection: PoolConnection = this.client === 'node' ? new NodeHttp2Connection(options) : new Http2ClientConnection(options);
    this.openSessions.add(connection);
    this.pendingConnects.set(connection, 1);
    void connection.ready.then(
      () => this.pendingConnects.delete(connection),
      () => this.pendingConnects.delete(connection),
    );
    void connection.closed().then(() => {
      this.openSessions.delete(connection);
      this.retire(connection);
    });
    connection.unref();
    this.sessions.push(connection);
    return connection;
  }

  /** Take a connection out of rotation; its open streams finish or fail on their own. */
  private retire(connection: PoolConnection): void {
    const index = this.sessions.indexOf(connection);
    if (index < 0) return;
    this.sessions.splice(index, 1);
    this.pendingConnects.delete(connection);
    connection.close();
    this.wakeAll();
  }

  private wakeOne(): void {
    this.waiters.shift()?.();
  }

  private wakeAll(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }
}

function deadlineError(): Http2RequestError {
  return new Http2RequestError('deadline', 'the request ran past its deadline');
}
