/**
 * A {@link FrameSink} over a WebSocket served by the `ws` package (`ntfy.websocket: ws`): the
 * standard fallback of our own framing (`ws-sink.ts`), with the same behaviour seen from the peer.
 *
 * - Each frame of the subscription is one text message.
 * - Timers are the same {@link SubscriptionTimers} lists as the built-in sink's: a ping every
 *   `keepalive_interval_secs`, a drop (no close frame) after `websocket_timeout_secs` without a
 *   frame from the peer (a message, a ping or a pong re-arms it).
 * - `ws` answers pings with a pong carrying their payload, echoes a peer's close code, and closes
 *   a protocol error with 1002, 1007 or 1009 (its receiver enforces what `ws-frames.ts` does:
 *   masking, reserved bits, control frames, UTF-8, `maxPayload` for data messages).
 * - When the server closes, `ws` sends the close frame and waits for the peer's; the close
 *   timeout is armed on our scheduler too ({@link WS_CLOSE_TIMEOUT_MS}, so tests drive it), and a
 *   peer that is not taking bytes is cut off at once (its close frame would never get through).
 *
 * The output {@link SinkBase} watches for back-pressure is the raw socket under the WebSocket,
 * which is what `ws` writes to.
 */
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import type { Scheduler, TimerHandle } from './scheduler.ts';
import type { SubscriptionTimers } from './subscription-timers.ts';
import { onEmitterDrain, SinkBase, tagEmitter } from './sink-base.ts';
import { WS_CLOSE } from './ws-frames.ts';
import { WS_CLOSE_TIMEOUT_MS, type WebSocketConnection } from './ws-sink.ts';

export interface WsPackageSinkOptions {
  /** Its pings and silence deadline. */
  timers: Pick<SubscriptionTimers, 'pings' | 'deadlines'>;
  /** For the close timeout. */
  scheduler: Scheduler;
  /** The server's open connections: the sink is in it until its WebSocket closes. */
  open: Set<WebSocketConnection>;
}

export class WsPackageSink extends SinkBase implements WebSocketConnection {
  private closeSent = false;
  private closeTimer: TimerHandle | null = null;
  private readonly deadline: TimerHandle;
  private readonly pingTimer: TimerHandle;
  private readonly scheduler: Scheduler;
  private readonly open: Set<WebSocketConnection>;

  /** Serve `ws`, just accepted by `ws`'s `handleUpgrade` on `socket`. */
  constructor(
    private readonly ws: WebSocket,
    private readonly socket: Socket,
    options: WsPackageSinkOptions,
  ) {
    super(socket);
    this.scheduler = options.scheduler;
    this.open = options.open;
    this.open.add(this);
    tagEmitter(socket, this);
    socket.on('drain', onEmitterDrain);
    const peerActive = (): void => {
      if (!this.ended) this.deadline.refresh();
    };
    ws.on('message', peerActive);
    ws.on('ping', peerActive);
    ws.on('pong', peerActive);
    // A protocol error: `ws` has already sent its close frame with the status; nothing more goes out.
    ws.on('error', () => {
      this.closeSent = true;
      this.finish();
    });
    ws.on('close', () => {
      this.open.delete(this);
      this.closeTimer?.cancel();
      this.closeTimer = null;
      this.finish();
    });
    this.deadline = options.timers.deadlines.start(this);
    this.pingTimer = options.timers.pings.start(this);
  }

  write(frame: string): void {
    if (!this.ended && !this.closeSent) this.ws.send(frame);
  }

  protected endOutput(): void {
    if (this.closeSent || this.socket.destroyed) return;
    this.closeSent = true;
    this.ws.close(WS_CLOSE.normal);
    this.closeTimer = this.scheduler.after(WS_CLOSE_TIMEOUT_MS, this.cutOff.bind(this));
  }

  protected stopTimers(): void {
    this.pingTimer.cancel();
    this.deadline.cancel();
  }

  /** @internal The ping timer fired. */
  sendPing(): void {
    if (!this.closeSent && !this.socket.destroyed) this.ws.ping();
  }

  /** End the connection without a close frame (a silent peer, a server stopping, a close unanswered). */
  cutOff(): void {
    this.ws.terminate();
  }
}
