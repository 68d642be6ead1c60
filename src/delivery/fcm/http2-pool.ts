/**
 * A small pool of long-lived `node:http2` client sessions to one origin (the FCM API).
 *
 * Policy:
 * - Each session carries at most {@link MAX_STREAMS_PER_SESSION} streams (or fewer if the server
 *   advertises a lower `SETTINGS_MAX_CONCURRENT_STREAMS`). When every session is full another one
 *   is opened, up to {@link DEFAULT_MAX_SESSIONS}; beyond that requests wait in FIFO order for a
 *   free stream. One batch of FCM's concurrency (100) therefore fits one session, and concurrent
 *   batches spread over a few connections instead of queueing behind each other.
 * - A session that receives GOAWAY, errors or closes leaves the pool at once; the next request
 *   opens a fresh one. Streams the server refused (REFUSED_STREAM after GOAWAY, or a session that
 *   was already going away when the stream was created) were never processed, so such a request
 *   is retried once on another session. Any other failure is reported, never retried: the server
 *   may have acted on it.
 * - `http://` origins speak HTTP/2 with prior knowledge (h2c), for loopback fakes.
 * - Sessions are unref'd while idle, so an idle pool never keeps the process alive.
 */
import http2, { type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';

/** Streams one session may carry at once (FCM's own limit, and firebase-admin's `peerMaxConcurrentStreams`). */
export const MAX_STREAMS_PER_SESSION = 100;
/** Sessions the pool opens before requests start to wait for a free stream. */
export const DEFAULT_MAX_SESSIONS = 8;
/** Time to establish a session: TCP, TLS and the server's first SETTINGS frame. */
export const CONNECT_TIMEOUT_MS = 10_000;
/** Time from opening a stream to the end of the response. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** How long close() waits for each session's socket to close. */
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
}

export interface Http2Request {
  method: 'GET' | 'POST';
  /** Path below the base URL, starting with `/`. */
  path: string;
  headers?: Record<string, string>;
  body?: string;
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
  headers: IncomingHttpHeaders;
  bodyText: string;
}

/** Why a request produced no response. */
export type Http2FailureReason = 'connect_failed' | 'connect_timeout' | 'request_timeout' | 'deadline' | 'aborted' | 'stream_error' | 'refused' | 'pool_closed';

export class Http2RequestError extends Error {
  override readonly name = 'Http2RequestError';
  constructor(
    readonly reason: Http2FailureReason,
    message: string,
  ) {
    super(message);
  }
}

interface PooledSession {
  session: ClientHttp2Session;
  /** Resolves once the server's SETTINGS arrived; rejects with an {@link Http2RequestError}. */
  ready: Promise<void>;
  /** Streams reserved on this session, including ones waiting for `ready`. */
  active: number;
  /** False once the session got GOAWAY, failed or closed: it takes no new streams. */
  usable: boolean;
  /** True once the server's first SETTINGS arrived (what {@link ready} waits for). */
  connected: boolean;
}

export class Http2Pool {
  private readonly origin: string;
  private readonly pathPrefix: string;
  private readonly maxStreamsPerSession: number;
  private readonly maxSessions: number;
  private readonly connectTimeoutMs: number;
  private readonly requestTimeoutMs: number;
  private sessions: PooledSession[] = [];
  /** Every session not yet closed, pooled or draining, so close() can end them all. */
  private readonly openSessions = new Set<ClientHttp2Session>();
  private readonly waiters: Array<() => void> = [];
  /**
   * Cancellers of the requests in flight under each caller signal. Callers share one long-lived
   * signal (a role's shutdown), so the pool listens once per signal instead of once per request;
   * the weak map lets a short-lived signal and its listener go together.
   */
  private readonly abortGroups = new WeakMap<AbortSignal, Set<() => void>>();
  private closed = false;
  /** Sessions opened over the pool's life (tests and diagnostics). */
  sessionsOpened = 0;

  constructor(options: Http2PoolOptions) {
    const url = new URL(options.baseUrl);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`HTTP/2 base URL must be http(s): ${options.baseUrl}`);
    this.origin = url.origin;
    this.pathPrefix = url.pathname.replace(/\/+$/, '');
    this.maxStreamsPerSession = options.maxStreamsPerSession ?? MAX_STREAMS_PER_SESSION;
    this.maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
    this.connectTimeoutMs = options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
    this.requestTimeoutMs = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  }

  /** Send one request. Rejects only with {@link Http2RequestError}. */
  request(request: Http2Request): Promise<Http2Response> {
    // The common case opens its stream without a wait: a connected session has a free stream.
    const usable = !this.closed && !request.signal?.aborted && (request.deadlineMs === undefined || Date.now() < request.deadlineMs);
    const pooled = usable ? this.sessionWithFreeStream() : null;
    if (!pooled?.connected) return this.requestWaiting(request, 1);
    this.take(pooled);
    return this.send(pooled, request, 1);
  }

  /** {@link request} when a stream has to be waited for, or a session connected first. */
  private async requestWaiting(request: Http2Request, attempt: number): Promise<Http2Response> {
    const pooled = await this.acquire(request.signal, request.deadlineMs);
    try {
      await pooled.ready;
    } catch (err) {
      this.release(pooled);
      throw err;
    }
    return this.send(pooled, request, attempt);
  }

  /**
   * Send on a stream reserved on `pooled` and give the stream back. A refused stream was never
   * processed, so the first attempt is retried once on another session; any other failure is
   * reported, since the server may have acted on it.
   */
  private send(pooled: PooledSession, request: Http2Request, attempt: number): Promise<Http2Response> {
    let response: Promise<Http2Response>;
    try {
      if (request.signal?.aborted) throw new Http2RequestError('aborted', 'request aborted before it was sent');
      response = this.readResponse(this.openStream(pooled, request), request);
    } catch (err) {
      response = Promise.reject(err);
    }
    return response.then(
      (answer) => {
        this.release(pooled);
        return answer;
      },
      (err: unknown) => {
        this.release(pooled);
        if (err instanceof Http2RequestError && err.reason === 'refused') {
          // The RST_STREAM can arrive before the GOAWAY that explains it: never retry on the same session.
          this.retire(pooled);
          if (attempt === 1) return this.requestWaiting(request, 2);
        }
        throw err;
      },
    );
  }

  /** Live sessions in the pool (draining ones excluded). */
  get sessionCount(): number {
    return this.sessions.length;
  }

  /**
   * End every session; requests in flight fail with `stream_error`, waiting ones with
   * `pool_closed`. Waits up to {@link CLOSE_GRACE_MS} for the sockets to close: a session that
   * already closed gracefully (after GOAWAY) keeps its socket until the peer hangs up, and that
   * socket is unref'd, so it can never hold the process open.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.wakeAll();
    this.sessions = [];
    const closing = [...this.openSessions].map(
      (session) =>
        new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, CLOSE_GRACE_MS);
          timer.unref();
          session.once('close', () => {
            clearTimeout(timer);
            resolve();
          });
          session.unref();
          session.destroy();
        }),
    );
    await Promise.all(closing);
  }

  private async acquire(signal: AbortSignal | undefined, deadlineMs: number | undefined): Promise<PooledSession> {
    for (;;) {
      if (this.closed) throw new Http2RequestError('pool_closed', 'the HTTP/2 pool is closed');
      if (signal?.aborted) throw new Http2RequestError('aborted', 'request aborted before it was sent');
      if (deadlineMs !== undefined && Date.now() >= deadlineMs) throw deadlineError();
      const pooled = this.sessionWithFreeStream() ?? (this.sessions.length < this.maxSessions ? this.connect() : null);
      if (pooled) {
        this.take(pooled);
        return pooled;
      }
      await this.waitForFreeStream(signal, deadlineMs);
    }
  }

  /** Reserve a stream on `pooled`; a session with streams reserved keeps the process alive. */
  private take(pooled: PooledSession): void {
    pooled.active++;
    if (pooled.active === 1) pooled.session.ref();
  }

  private release(pooled: PooledSession): void {
    pooled.active--;
    if (pooled.active === 0 && !pooled.session.destroyed) pooled.session.unref();
    this.waiters.shift()?.();
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

  private sessionWithFreeStream(): PooledSession | null {
    for (const pooled of this.sessions) {
      if (!pooled.usable) continue;
      const remoteLimit = pooled.session.remoteSettings?.maxConcurrentStreams ?? Number.POSITIVE_INFINITY;
      if (pooled.active < Math.min(this.maxStreamsPerSession, remoteLimit)) return pooled;
    }
    return null;
  }

  private connect(): PooledSession {
    const session = http2.connect(this.origin, { settings: { enablePush: false } });
    this.sessionsOpened++;
    this.openSessions.add(session);
    const pooled: PooledSession = { session, ready: Promise.resolve(), active: 0, usable: true, connected: false };
    pooled.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Http2RequestError('connect_timeout', `HTTP/2 connect to ${this.origin} exceeded ${this.connectTimeoutMs}ms`));
        session.destroy();
      }, this.connectTimeoutMs);
      // 'connect' only means TCP (or TLS) is up; the server's first SETTINGS frame proves it
      // speaks HTTP/2 and tells us its stream limit before we open streams.
      session.once('remoteSettings', () => {
        clearTimeout(timer);
        pooled.connected = true;
        resolve();
      });
      session.once('close', () => {
        clearTimeout(timer);
        reject(new Http2RequestError('connect_failed', `HTTP/2 session to ${this.origin} closed before it connected`));
      });
      session.on('error', (err: Error) => {
        clearTimeout(timer);
        reject(new Http2RequestError('connect_failed', `HTTP/2 connect to ${this.origin} failed: ${err.message}`));
      });
    });
    // Settled by whichever request awaits it; an idle session's failure must not be unhandled.
    pooled.ready.catch(() => undefined);
    const retire = (): void => this.retire(pooled);
    session.on('goaway', retire);
    session.on('close', () => {
      this.openSessions.delete(session);
      retire();
    });
    session.on('error', retire);
    session.on('remoteSettings', () => this.wakeAll()); // a raised stream limit frees slots
    session.unref();
    this.sessions.push(pooled);
    return pooled;
  }

  /** Take a session out of rotation; its open streams finish or fail on their own. */
  private retire(pooled: PooledSession): void {
    if (!pooled.usable) return;
    pooled.usable = false;
    this.sessions = this.sessions.filter((candidate) => candidate !== pooled);
    if (!pooled.session.closed && !pooled.session.destroyed) pooled.session.close();
    this.wakeAll();
  }

  private wakeAll(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Open the request's stream; a session that no longer takes streams is retired (`refused`: nothing was sent). */
  private openStream(pooled: PooledSession, request: Http2Request): ClientHttp2Stream {
    try {
      return pooled.session.request({ ':method': request.method, ':path': this.pathPrefix + request.path, ...request.headers });
    } catch (err) {
      // ERR_HTTP2_GOAWAY_SESSION / ERR_HTTP2_INVALID_SESSION: nothing left this process.
      this.retire(pooled);
      throw new Http2RequestError('refused', `session refused a new stream: ${(err as Error).message}`);
    }
  }

  private readResponse(stream: ClientHttp2Stream, request: Http2Request): Promise<Http2Response> {
    return new Promise<Http2Response>((resolve, reject) => {
      let status: number | undefined;
      let headers: IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      let bodyBytes = 0;
      let settled = false;
      let streamError: Error | undefined;

      const settle = (outcome: { response: Http2Response } | { error: Http2RequestError }): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        unwatchAbort?.();
        if ('response' in outcome) resolve(outcome.response);
        else reject(outcome.error);
      };
      const cancel = (error: Http2RequestError): void => {
        settle({ error });
        if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_CANCEL);
      };
      // One timer: the request bound, or the caller's deadline when that comes first.
      const untilDeadlineMs = request.deadlineMs === undefined ? Number.POSITIVE_INFINITY : request.deadlineMs - Date.now();
      const timer =
        untilDeadlineMs < this.requestTimeoutMs
          ? setTimeout(() => cancel(deadlineError()), Math.max(0, untilDeadlineMs))
          : setTimeout(() => cancel(new Http2RequestError('request_timeout', `HTTP/2 request exceeded ${this.requestTimeoutMs}ms`)), this.requestTimeoutMs);
      const unwatchAbort = request.signal ? this.onAbort(request.signal, () => cancel(new Http2RequestError('aborted', 'request aborted'))) : undefined;

      stream.on('response', (responseHeaders) => {
        headers = responseHeaders;
        status = Number(responseHeaders[':status']);
      });
      stream.on('data', (chunk: Buffer) => {
        if (bodyBytes >= MAX_RESPONSE_BODY_BYTES) return;
        chunks.push(chunk);
        bodyBytes += chunk.length;
      });
      stream.on('end', () => {
        if (status === undefined) return; // 'close' reports it
        const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
        const bodyText = body.subarray(0, MAX_RESPONSE_BODY_BYTES).toString('utf8');
        settle({ response: { status, headers, bodyText } });
      });
      stream.on('error', (err: Error) => {
        streamError = err;
      });
      stream.on('close', () => {
        if (settled) return;
        if (stream.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM && status === undefined) {
          settle({ error: new Http2RequestError('refused', 'stream refused by the server (GOAWAY)') });
          return;
        }
        const detail = streamError?.message ?? `stream closed with code ${stream.rstCode ?? 'unknown'}`;
        settle({ error: new Http2RequestError('stream_error', `HTTP/2 stream failed: ${detail}`) });
      });

      stream.end(request.body);
    });
  }
}

function deadlineError(): Http2RequestError {
  return new Http2RequestError('deadline', 'the request ran past its deadline');
}
