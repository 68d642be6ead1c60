/**
 * `GET /{topics}/ws`: ntfy's WebSocket subscription, on the HTTP server's `upgrade` event with
 * `ws` in no-server mode. Frames are the message JSON; the peer may only send control frames
 * (ntfy's 64-byte read limit), and any Origin is accepted, as in ntfy. A refused upgrade gets
 * only a status line, as ntfy writes it.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { nodeParamSource, visitorAddress, type NtfyContext } from './context.ts';
import { HTTP_STATUS_TEXT, NtfyError } from './errors.ts';
import { openWebSocketSink } from './sinks.ts';
import { pollMessages } from './since-cursor.ts';
import { prepareSubscription } from './subscribe.ts';
import { controlFrame, messageFrame } from './wire.ts';

/** ntfy's read limit: a subscriber has nothing to say beyond control frames. */
export const WS_MAX_PAYLOAD_BYTES = 64;

const WS_PATH = /^\/([^/]+)\/ws$/;

function refuse(socket: Duplex, status: number): void {
  if (socket.writable) socket.end(`HTTP/1.1 ${status} ${HTTP_STATUS_TEXT[status] ?? 'Error'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  else socket.destroy();
}

/**
 * Serve ntfy WebSockets on `server`. Upgrades to any other path are refused with 404, since no
 * other part of nostr-push upgrades connections.
 */
export function attachNtfyWebSockets(ctx: NtfyContext, server: Server): WebSocketServer {
  const wss = new WebSocketServer({ noServer: true, maxPayload: WS_MAX_PAYLOAD_BYTES, perMessageDeflate: false });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    handleUpgrade(ctx, wss, request, socket, head).catch((err: unknown) => {
      const status = err instanceof NtfyError ? err.http : 500;
      if (err instanceof NtfyError) ctx.metrics.ntfyRefused.inc({ code: String(err.code) });
      else ctx.logger.error({ err: (err as Error).message }, 'ntfy websocket upgrade failed');
      refuse(socket, status);
    });
  });
  return wss;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new NtfyError('TOPIC_INVALID');
  }
}

async function handleUpgrade(ctx: NtfyContext, wss: WebSocketServer, request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://upgrade.invalid');
  const match = WS_PATH.exec(url.pathname);
  const hub = ctx.hub;
  if (!match?.[1] || !hub) throw new NtfyError('NOT_FOUND');
  const forwarded = request.headers['x-forwarded-for'];
  const prepared = await prepareSubscription(ctx, {
    topicSegment: decodeSegment(match[1]),
    params: nodeParamSource(request, url),
    address: visitorAddress(request.socket.remoteAddress, Array.isArray(forwarded) ? forwarded.join(',') : forwarded, ctx.settings.behindProxy),
    authorization: request.headers.authorization,
  });
  if (socket.destroyed) {
    prepared.release();
    return;
  }
  wss.handleUpgrade(request, socket, head, (ws) => {
    const sink = openWebSocketSink(ws, {
      keepaliveIntervalMs: ctx.settings.keepaliveIntervalMs,
      timeoutMs: ctx.settings.websocketTimeoutMs,
      scheduler: ctx.scheduler,
    });
    sink.onClose(prepared.release);
    if (prepared.poll) {
      void (async () => {
        for await (const message of pollMessages(ctx.store, prepared.topics, prepared.start, hub.batchSize)) sink.write(messageFrame('ws', message));
        await sink.whenDrained();
        sink.close();
      })().catch(() => sink.close());
      return;
    }
    sink.write(controlFrame('ws', 'open', prepared.topicLabel, ctx.clock.nowMs()));
    for (const message of prepared.start.preload) sink.write(messageFrame('ws', message));
    hub.subscribe(prepared.topics, prepared.topicLabel, 'ws', sink, prepared.start.cursor);
  });
}
