/**
 * `GET /{topics}/ws`: ntfy's WebSocket subscription, on the HTTP server's `upgrade` event. The
 * opening handshake (RFC 6455 §4.2) is checked here; then, as `ntfy.websocket` says, either
 * answered here and served by {@link WebSocketSink} on the bare socket with our own framing
 * (`builtin`, `ws-frames.ts`; why: see there), or handed to the `ws` package (`ws`, a
 * `noServer` server's `handleUpgrade`) and served by {@link WsPackageSink}. Both behave alike on
 * the wire; the suites in `test/ntfy/` run over both.
 *
 * As in ntfy: frames are the message JSON; the peer may only send control frames and messages of
 * up to 64 bytes (ntfy's read limit); any Origin is accepted; no extension (per-message deflate)
 * and no subprotocol is ever selected; a refused upgrade gets only a status line. The order of
 * checks: the path (404), the handshake itself (405, 400), then every check of a subscription
 * (`prepareSubscription`), so a malformed handshake never takes a visitor's subscription slot.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, Server } from 'node:http';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { nodeParamSource, visitorAddress, type NtfyContext } from './context.ts';
import { HTTP_STATUS_TEXT, NtfyError } from './errors.ts';
import { pollMessages } from './since-cursor.ts';
import { prepareSubscription } from './subscribe.ts';
import { controlFrame, messageFrame } from './wire.ts';
import { destroySocket } from './sink-base.ts';
import { WebSocketSink, type WebSocketConnection } from './ws-sink.ts';
import { WsPackageSink } from './ws-package-sink.ts';
import type { SinkBase } from './sink-base.ts';

/** ntfy's read limit: a subscriber has nothing to say beyond control frames. */
export const WS_MAX_PAYLOAD_BYTES = 64;

/** The GUID a server appends to the client's key (RFC 6455 §1.3). */
const WS_ACCEPT_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
/** A key is 16 random bytes in base64 (§4.1): 22 characters and `==`. */
const WS_KEY = /^[A-Za-z0-9+/]{22}==$/;
const WS_PATH = /^\/([^/]+)\/ws$/;

/** A refusal of the handshake itself, with the headers it needs. */
class HandshakeRefusal extends Error {
  constructor(
    readonly status: number,
    readonly headers = '',
  ) {
    super(`websocket handshake refused with ${status}`);
  }
}

function refuse(socket: Duplex, status: number, headers = ''): void {
  if (socket.writable)
    socket.end(`HTTP/1.1 ${status} ${HTTP_STATUS_TEXT[status] ?? 'Error'}\r\nConnection: close\r\n${headers}Content-Length: 0\r\n\r\n`);
  else socket.destroy();
}

function hasToken(header: string | undefined, token: string): boolean {
  return header !== undefined && header.split(',').some((part) => part.trim().toLowerCase() === token);
}

/** The `Sec-WebSocket-Accept` of a valid opening handshake (§4.2.1); throws {@link HandshakeRefusal}. */
export function websocketAccept(method: string | undefined, headers: IncomingHttpHeaders): string {
  if (method !== 'GET') throw new HandshakeRefusal(405);
  if (!hasToken(headers.upgrade, 'websocket') || !hasToken(headers.connection, 'upgrade')) throw new HandshakeRefusal(400);
  // §4.4: a version the server does not speak is answered with the one it does.
  if (headers['sec-websocket-version'] !== '13') throw new HandshakeRefusal(400, 'Sec-WebSocket-Version: 13\r\n');
  const key = headers['sec-websocket-key'];
  if (key === undefined || !WS_KEY.test(key)) throw new HandshakeRefusal(400);
  return createHash('sha1')
    .update(key + WS_ACCEPT_GUID)
    .digest('base64');
}

/**
 * Serve ntfy WebSockets on `server`. Upgrades to `foreignPaths` are left to their own handler (the
 * user API's hint socket); any other path is refused with 404. `close()` cuts every connection off
 * (a peer that never answers a close frame would hold the server's close for the close timeout).
 */
export function attachNtfyWebSockets(ctx: NtfyContext, server: Server, foreignPaths: ReadonlySet<string> = new Set()): { close(): void } {
  const open = new Set<WebSocketConnection>();
  const wsServer = ctx.settings.websocket === 'ws' ? wsPackageServer() : null;
  ctx.logger.info({ websocket: ctx.settings.websocket }, 'ntfy WebSocket server (ntfy.websocket)');
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (foreignPaths.has(new URL(request.url ?? '/', 'http://upgrade.invalid').pathname)) return;
    // Shared, and the very listener the sink registers: no closure per connection.
    socket.on('error', destroySocket);
    handleUpgrade(ctx, request, socket, head, open, wsServer).catch((err: unknown) => {
      if (err instanceof HandshakeRefusal) {
        refuse(socket, err.status, err.headers);
        return;
      }
      const status = err instanceof NtfyError ? err.http : 500;
      if (err instanceof NtfyError) ctx.metrics.ntfyRefused.inc({ code: String(err.code) });
      else ctx.logger.error({ err: (err as Error).message }, 'ntfy websocket upgrade failed');
      refuse(socket, status);
    });
  });
  return {
    close() {
      for (const sink of [...open]) sink.cutOff();
      open.clear();
    },
  };
}

/**
 * The `ws` package's server for `ntfy.websocket: ws`, as our handshake answers: no extension
 * (no per-message deflate), no subprotocol, messages of at most {@link WS_MAX_PAYLOAD_BYTES},
 * pings answered, the close handshake bounded by `ws-sink.ts`'s `WS_CLOSE_TIMEOUT_MS`; the server's
 * `close()` cuts connections off itself, so `ws` keeps no set of them.
 */
function wsPackageServer(): WebSocketServer {
  return new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: WS_MAX_PAYLOAD_BYTES,
    clientTracking: false,
    handleProtocols: () => false,
    autoPong: true,
    // Its close timeout is 30 s, as WS_CLOSE_TIMEOUT_MS (`@types/ws` has no `closeTimeout` to say so).
  });
}

/**
 * The WebSocket `ws` made of the connection, or null when it refused the handshake itself (it
 * answers within handleUpgrade, since no `verifyClient` makes it wait).
 */
function acceptWithWsPackage(server: WebSocketServer, request: IncomingMessage, socket: Socket, head: Buffer): WebSocket | null {
  const accepted: WebSocket[] = [];
  server.handleUpgrade(request, socket, head, (ws) => accepted.push(ws));
  return accepted[0] ?? null;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new NtfyError('TOPIC_INVALID');
  }
}

async function handleUpgrade(
  ctx: NtfyContext,
  request: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  open: Set<WebSocketConnection>,
  wsServer: WebSocketServer | null,
): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://upgrade.invalid');
  const match = WS_PATH.exec(url.pathname);
  const hub = ctx.hub;
  if (!match?.[1] || !hub || !(socket instanceof Socket)) throw new NtfyError('NOT_FOUND');
  const accept = websocketAccept(request.method, request.headers);
  const forwarded = request.headers['x-forwarded-for'];
  const prepared = await prepareSubscription(ctx, {
    topicSegment: decodeSegment(match[1]),
    params: nodeParamSource(request, url),
    address: visitorAddress(
      request.socket.remoteAddress,
      Array.isArray(forwarded) ? forwarded.join(',') : forwarded,
      ctx.settings.behindProxy,
    ),
    authorization: request.headers.authorization,
  });
  if (socket.destroyed) {
    prepared.release();
    return;
  }
  let sink: SinkBase;
  if (wsServer) {
    const accepted = acceptWithWsPackage(wsServer, request, socket, head);
    if (accepted === null) {
      prepared.release();
      return;
    }
    sink = new WsPackageSink(accepted, socket, { timers: ctx.timers, scheduler: ctx.scheduler, open });
  } else {
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    );
    const builtin = new WebSocketSink(socket, { timers: ctx.timers, scheduler: ctx.scheduler, maxPayload: WS_MAX_PAYLOAD_BYTES, open });
    if (head.length > 0) builtin.received(head);
    sink = builtin;
  }
  if (prepared.poll) {
    sink.onClose(prepared.release);
    void (async () => {
      for await (const message of pollMessages(ctx.store, prepared.topics, prepared.start, hub.batchSize))
        sink.write(messageFrame('ws', message));
      await sink.whenDrained();
      sink.close();
    })().catch(() => sink.close());
    return;
  }
  sink.write(controlFrame('ws', 'open', prepared.topicLabel, ctx.clock.nowMs()));
  for (const message of prepared.start.preload) sink.write(messageFrame('ws', message));
  hub.subscribe(prepared.topics, prepared.topicLabel, 'ws', sink, prepared.start.cursor, prepared.release);
}
