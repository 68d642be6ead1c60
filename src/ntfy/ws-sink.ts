/**
 * A {@link FrameSink} over a WebSocket on the bare socket (the handshake is `websocket.ts`'s,
 * the framing `ws-frames.ts`'s): each frame of the subscription is one text frame in one socket
 * write; the peer may only send control frames and messages of up to 64 bytes, which mean
 * nothing but that it is there.
 *
 * Timers, as ntfy's: a ping every `keepalive_interval_secs` (45 s), and a drop (no close frame:
 * the peer is gone or stuck) after `websocket_timeout_secs` (60 s) without a frame from the peer.
 * There are no JSON keepalive frames on WebSockets, as in ntfy.
 *
 * Closing (RFC 6455 §7): the side that closes sends a close frame and expects one back. When the
 * server closes (the subscription ends, a protocol error) it sends its close frame, half-closes
 * the TCP connection and destroys it when the peer's end arrives, or after
 * {@link WS_CLOSE_TIMEOUT_MS} without it; a peer that is not taking bytes is cut off at once
 * (its close frame would never get through). When the peer closes, its status code is echoed
 * and the connection ended. Pings are answered with a pong carrying their payload.
 */
import type { Socket } from 'node:net';
import type { Scheduler, TimerHandle } from './scheduler.ts';
import type { SubscriptionTimers } from './subscription-timers.ts';
import { destroySocket, onEmitterDrain, SinkBase, sinkOf, tagEmitter } from './sink-base.ts';
import { encodeWsFrame, WS_CLOSE, WS_OPCODE, wsClosePayload, WsFrameReader, type WsFrameHandler } from './ws-frames.ts';

/** How long a close handshake the server started may wait for the peer (the `ws` package waits as long). */
export const WS_CLOSE_TIMEOUT_MS = 30_000;

function onWsData(this: Socket, chunk: Buffer): void {
  (sinkOf(this) as WebSocketSink | undefined)?.received(chunk);
}

function onWsSocketClose(this: Socket): void {
  (sinkOf(this) as WebSocketSink | undefined)?.socketClosed();
}

/** What the server and the subscription timers hold of a WebSocket, whichever server serves it. */
export interface WebSocketConnection {
  /** The ping timer fired. */
  sendPing(): void;
  /** End the connection without a close frame. */
  cutOff(): void;
}

export interface WebSocketSinkOptions {
  /** Its pings and silence deadline. */
  timers: Pick<SubscriptionTimers, 'pings' | 'deadlines'>;
  /** For the close timeout (a short-lived timer). */
  scheduler: Scheduler;
  /** Largest message the peer may send (ntfy's read limit). */
  maxPayload: number;
  /** The server's open connections: the sink is in it until its socket closes. */
  open: Set<WebSocketConnection>;
}

export class WebSocketSink extends SinkBase implements WsFrameHandler, WebSocketConnection {
  /** Made on the first bytes from the peer (most send nothing but pongs). */
  private reader: WsFrameReader | null = null;
  /** A close frame went out: nothing else is sent. */
  private closeSent = false;
  private closeTimer: TimerHandle | null = null;
  private readonly deadline: TimerHandle;
  private readonly pingTimer: TimerHandle;
  private readonly scheduler: Scheduler;
  private readonly maxPayload: number;
  private readonly open: Set<WebSocketConnection>;

  /** Start serving `socket`, whose 101 answer has been written; `head` is what the peer sent after its request. */
  constructor(
    private readonly socket: Socket,
    options: WebSocketSinkOptions,
  ) {
    super(socket);
    this.scheduler = options.scheduler;
    this.maxPayload = options.maxPayload;
    this.open = options.open;
    this.open.add(this);
    tagEmitter(socket, this);
    socket.setNoDelay(true);
    socket.on('data', onWsData);
    socket.on('drain', onEmitterDrain);
    socket.on('close', onWsSocketClose);
    // The peer's end: after our close frame the handshake is over; without one it went away.
    socket.on('end', destroySocket);
    // Once (the upgrade handler may have registered this very listener already).
    socket.removeListener('error', destroySocket);
    socket.on('error', destroySocket);
    this.deadline = options.timers.deadlines.start(this);
    this.pingTimer = options.timers.pings.start(this);
  }

  write(frame: string): void {
    if (!this.ended && !this.closeSent) this.socket.write(encodeWsFrame(WS_OPCODE.text, frame));
  }

  protected endOutput(): void {
    this.sendClose(WS_CLOSE.normal, '');
  }

  /** @internal Bytes from the peer. */
  received(chunk: Buffer): void {
    (this.reader ??= new WsFrameReader(this.maxPayload)).push(chunk, this);
  }

  /** @internal The socket is gone (whoever ended it). */
  socketClosed(): void {
    this.open.delete(this);
    this.closeTimer?.cancel();
    this.closeTimer = null;
    this.finish();
  }

  // ---- WsFrameHandler: what the peer sent ---------------------------------------------------

  wsMessage(): void {
    this.peerActive();
  }

  wsPing(payload: Buffer): void {
    this.peerActive();
    if (!this.closeSent && !this.socket.destroyed) this.socket.write(encodeWsFrame(WS_OPCODE.pong, payload));
  }

  wsPong(): void {
    this.peerActive();
  }

  wsClose(code: number | null): void {
    // Our own close frame answered: the peer's end follows. Otherwise echo its code (§5.5.1).
    if (!this.closeSent) this.sendClose(code, '');
    this.finish();
  }

  wsFail(code: number, reason: string): void {
    this.sendClose(code, reason);
    this.finish();
  }

  // ---- timers ------------------------------------------------------------------------------

  protected stopTimers(): void {
    this.pingTimer.cancel();
    this.deadline.cancel();
  }

  private peerActive(): void {
    if (!this.ended) this.deadline.refresh();
  }

  /** @internal The ping timer fired. */
  sendPing(): void {
    if (!this.closeSent && !this.socket.destroyed) this.socket.write(encodeWsFrame(WS_OPCODE.ping, ''));
  }

  /** End the connection without a close frame (a silent peer, a server stopping, a close unanswered). */
  cutOff(): void {
    this.socket.destroy();
  }

  /** Send the close frame, half-close, and give the peer {@link WS_CLOSE_TIMEOUT_MS} to end its side. */
  private sendClose(code: number | null, reason: string): void {
    if (this.closeSent || this.socket.destroyed) return;
    this.closeSent = true;
    this.socket.end(encodeWsFrame(WS_OPCODE.close, wsClosePayload(code, reason)));
    this.closeTimer = this.scheduler.after(WS_CLOSE_TIMEOUT_MS, this.cutOff.bind(this));
  }
}
