/**
 * Long-lived HTTP subscription streams (`GET /{topics}/json|sse|raw`) served on the bare socket.
 *
 * Node's HTTP server keeps, for as long as a response is open, the connection's parser, the
 * request and response objects, their stream states and a dozen bound listeners: about 7 KiB of
 * heap per open stream, which is most of what 10,000 idle phones cost. A stream needs none of it
 * once its headers are written. So the server's `connection` listener is wrapped: the first bytes
 * of a new connection are looked at, and a request that is plainly the start of a stream (see
 * {@link parseStreamRequest}; anything unusual is not) is answered here, on the socket, with
 * chunked frames written by {@link RawStreamSink}. Every other connection, and a stream request
 * with anything odd about it (a poll, HTTP/1.0, a header sent twice, an upgrade, a body,
 * pipelined bytes, headers split over several packets), goes to Node's HTTP server exactly as it
 * arrived, and from there to Hono as before.
 *
 * A stream answered here goes through the same checks as through Hono (`prepareSubscription`);
 * a refusal is ntfy's JSON error with `Connection: close`.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { NtfyContext } from './context.ts';
import { visitorAddress } from './context.ts';
import { HTTP_STATUS_TEXT, NtfyError } from './errors.ts';
import type { ParamSource } from './publish-params.ts';
import { readBoolParam } from './publish-params.ts';
import { destroySocket } from './sink-base.ts';
import { RawStreamSink } from './sinks.ts';
import { prepareSubscription } from './subscribe.ts';
import { controlFrame, type Transport } from './wire.ts';

/** A subscription stream request, as read from the first packet of a connection. */
export interface StreamRequest {
  /** The topic segment of the path, as sent (not percent-encoded: those go to Hono). */
  topicSegment: string;
  transport: Exclude<Transport, 'ws'>;
  /** The query string without `?` ('' when none). */
  query: string;
  /** Header names in lower case; each sent once. */
  headers: ReadonlyMap<string, string>;
}

/**
 * Bytes of a first packet looked at: a stream request from a phone is a few hundred bytes. A
 * longer one goes to Node's parser, which enforces its own limits.
 */
export const STREAM_REQUEST_MAX_BYTES = 8 * 1024;

const REQUEST_LINE = /^GET (\/[^ ]*) HTTP\/1\.1$/;
const STREAM_PATH = /^\/([^/%]+)\/(json|sse|raw)$/;
/** RFC 9110 token characters, a colon, optional whitespace, then a value without control characters. */
// eslint-disable-next-line no-control-regex -- excluding control characters from header values is the point.
const HEADER_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*([^\x00-\x08\x0a-\x1f\x7f]*?)[ \t]*$/;
/** Headers that mean the request is not a plain stream start: Node's parser handles those. */
const NOT_A_PLAIN_STREAM = new Set(['content-length', 'transfer-encoding', 'upgrade', 'expect']);

/**
 * The stream request in `packet` (a connection's first bytes), or null when it is not exactly a
 * complete, ordinary HTTP/1.1 stream start with nothing after its headers.
 */
export function parseStreamRequest(packet: Buffer): StreamRequest | null {
  if (packet.length > STREAM_REQUEST_MAX_BYTES) return null;
  const end = packet.indexOf('\r\n\r\n');
  if (end < 0 || end + 4 !== packet.length) return null;
  const lines = packet.toString('latin1', 0, end).split('\r\n');
  const requestLine = REQUEST_LINE.exec(lines[0] ?? '');
  if (!requestLine) return null;
  const target = requestLine[1] as string;
  const queryAt = target.indexOf('?');
  const path = STREAM_PATH.exec(queryAt < 0 ? target : target.slice(0, queryAt));
  if (!path) return null;
  const headers = new Map<string, string>();
  for (let i = 1; i < lines.length; i++) {
    const header = HEADER_LINE.exec(lines[i] as string);
    if (!header) return null;
    const name = (header[1] as string).toLowerCase();
    if (headers.has(name) || NOT_A_PLAIN_STREAM.has(name)) return null;
    headers.set(name, header[2] as string);
  }
  const request: StreamRequest = {
    topicSegment: path[1] as string,
    transport: path[2] as StreamRequest['transport'],
    query: queryAt < 0 ? '' : target.slice(queryAt + 1),
    headers,
  };
  // A poll ends at once; Node's response handles it (and keeps the connection for more requests).
  return readBoolParam(paramsOf(request), 'x-poll', 'poll', 'po') ? null : request;
}

function paramsOf(request: StreamRequest): ParamSource {
  let search: URLSearchParams | null = null;
  return {
    header: (name) => request.headers.get(name.toLowerCase()),
    query: (name) => {
      if (request.query === '') return undefined;
      search ??= new URLSearchParams(request.query);
      return search.get(name) ?? undefined;
    },
  };
}

type ConnectionListener = (this: Server, socket: Socket) => void;

/**
 * Wrap `server`'s connection listener (Node's HTTP one) so that stream requests arriving first on
 * a connection are served here. A connection that sends nothing within Node's `headersTimeout`
 * is handed to Node's server, which then applies its own timeouts to it.
 */
export function attachRawStreams(ctx: NtfyContext, server: Server): { close(): void } {
  const nodeListeners = server.listeners('connection') as ConnectionListener[];
  server.removeAllListeners('connection');
  /** Connections whose first bytes have not come yet (Node's server does not know them). */
  const waiting = new Set<Socket>();
  const handOff = (socket: Socket, first: Buffer | null) => {
    for (const listener of nodeListeners) listener.call(server, socket);
    // Node's parser now consumes the socket; the bytes already read reach it as they would have.
    if (first) socket.emit('data', first);
  };
  server.on('connection', (socket: Socket) => {
    waiting.add(socket);
    // Not socket.setTimeout: a cleared socket timeout stays referenced by the socket for its life.
    const silence = ctx.scheduler.after(server.headersTimeout, () => {
      settle();
      handOff(socket, null);
    });
    const settle = () => {
      waiting.delete(socket);
      silence.cancel();
      socket.removeListener('data', onFirst);
      socket.removeListener('close', settle);
    };
    const onFirst = (packet: Buffer) => {
      settle();
      let request: StreamRequest | null = null;
      try {
        request = parseStreamRequest(packet);
      } catch (err) {
        // Whatever this reader trips on, Node's parser answers properly.
        ctx.logger.warn({ err: (err as Error).message }, 'ntfy stream request not understood; handed to the HTTP server');
      }
      if (request) serveStream(ctx, socket, request);
      else handOff(socket, packet);
    };
    socket.on('data', onFirst);
    socket.on('close', settle);
  });
  return {
    // Streams end with the hub; connections that never spoke end here (server.close() would wait for them).
    close() {
      for (const socket of waiting) socket.destroy();
      waiting.clear();
    },
  };
}

function writeError(ctx: NtfyContext, socket: Socket, error: NtfyError): void {
  ctx.metrics.ntfyRefused.inc({ code: String(error.code) });
  const body = `${JSON.stringify(error.toJSON())}\n`;
  // The socket is paused (its half-open end would never be read): destroy it once the answer is out.
  socket.end(
    `HTTP/1.1 ${error.http} ${HTTP_STATUS_TEXT[error.http] ?? 'Error'}\r\nContent-Type: application/json\r\nAccess-Control-Allow-Origin: *\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}

function serveStream(ctx: NtfyContext, socket: Socket, request: StreamRequest): void {
  const hub = ctx.hub;
  // Nothing the client sends after its request means anything to a stream; RawStreamSink reads
  // on (to notice the disconnect) once the stream starts.
  socket.pause();
  socket.on('error', destroySocket);
  if (!hub) {
    writeError(ctx, socket, new NtfyError('SUBSCRIBE_NOT_SERVED'));
    return;
  }
  const params = paramsOf(request);
  prepareSubscription(ctx, {
    topicSegment: request.topicSegment,
    params,
    address: visitorAddress(socket.remoteAddress, request.headers.get('x-forwarded-for'), ctx.settings.behindProxy),
    authorization: request.headers.get('authorization'),
  }).then(
    (prepared) => {
      if (socket.destroyed) {
        prepared.release();
        return;
      }
      const sink = new RawStreamSink(socket, request.transport, prepared.topicLabel, ctx.clock, ctx.timers.keepalives);
      sink.write(controlFrame(request.transport, 'open', prepared.topicLabel, ctx.clock.nowMs()));
      for (const message of prepared.start.preload) sink.write(sink.frameOf(message));
      hub.subscribe(prepared.topics, prepared.topicLabel, request.transport, sink, prepared.start.cursor, prepared.release);
    },
    (err: unknown) => {
      if (err instanceof NtfyError) {
        ctx.logger.debug({ topics: request.topicSegment, code: err.code }, err.message);
        writeError(ctx, socket, err);
        return;
      }
      ctx.logger.error({ topics: request.topicSegment, err: (err as Error).message }, 'ntfy subscribe failed');
      writeError(ctx, socket, new NtfyError('INTERNAL'));
    },
  );
}
