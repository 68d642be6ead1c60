/**
 * What the pool (`pool.ts`) needs of one HTTP/2 connection, so it can multiplex requests over
 * either client: our own ({@link Http2ClientConnection}, `connection.ts`) or `node:http2`
 * ({@link NodeHttp2Connection}, `node-connection.ts`). The pool's semantics (sessions, the stream
 * limit, GOAWAY, the refused-stream retry, deadlines) live in the pool and hold for both.
 *
 * Contract of an implementation:
 * - `ready` resolves on the server's first SETTINGS and rejects with `connect_failed` or
 *   `connect_timeout` (after `connectTimeoutMs`); `connected` turns true when it resolves.
 * - `request()` opens a stream and calls its callback exactly once: a response (status ≥ 200,
 *   headers, the body up to `maxResponseBodyBytes`) or an {@link Http2RequestError}. `refused`
 *   only when the server cannot have processed it (REFUSED_STREAM before any response, above a
 *   GOAWAY's last stream id, never written); it throws `refused` when the connection takes no
 *   new streams. The id it returns is the handle for `cancel()`, nothing more.
 * - `onUnusable` is called once, when the connection stops taking streams (GOAWAY, failure,
 *   close, `close()`); `onCapacity` whenever room for a stream may have appeared.
 * - `close()` lets the open streams finish, then ends the connection; `destroy()` ends it now,
 *   failing open streams with `stream_error`.
 */
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import type { Http2RequestError } from './errors.ts';
import type { HeaderField, HeaderMap } from './endpoint.ts';

/** `delivery.http2_client`: our HTTP/2 client, or `node:http2` (the standard fallback). */
export { HTTP2_CLIENT_KINDS, type Http2ClientKind } from '../../config/defaults.ts';

export interface Http2ClientResponse {
  status: number;
  /** Lowercase names, `:status` included; a repeated field is an array. */
  headers: HeaderMap;
  /** At most the connection's `maxResponseBodyBytes`; the rest is read and dropped. */
  body: Buffer;
}

export type StreamCallback = (error: Http2RequestError | null, response: Http2ClientResponse | null) => void;

export interface Http2ConnectionOptions {
  /** `http:` (h2c, prior knowledge) or `https:` (TLS, ALPN h2). */
  origin: URL;
  connectTimeoutMs: number;
  maxResponseBodyBytes: number;
  /** Extra TLS options (a test's CA); the server name and ALPN are set by the connection. */
  tls?: TlsConnectionOptions;
  /** The connection stopped taking new streams (GOAWAY, failure, close). Called once. */
  onUnusable: () => void;
  /** Room for more streams may have appeared (a stream ended, the peer raised its limit). */
  onCapacity: () => void;
}

export interface PoolConnection {
  readonly ready: Promise<void>;
  readonly connected: boolean;
  /** Connected, not going away, and under the peer's concurrent-stream limit. */
  readonly hasFreeStream: boolean;
  /** Still takes streams (it may not be connected yet). */
  readonly isUsable: boolean;
  readonly activeStreams: number;
  request(headers: readonly HeaderField[], body: Buffer | null, callback: StreamCallback): number;
  /** Ends a stream early (RST_STREAM CANCEL) and fails it with `error`; no-op for a finished one. */
  cancel(id: number, error: Http2RequestError): void;
  close(): void;
  destroy(): void;
  ref(): void;
  unref(): void;
  /** Resolves once the socket has closed. */
  closed(): Promise<void>;
}
