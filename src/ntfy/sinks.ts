/**
 * The two kinds of {@link FrameSink}: an HTTP stream (`/json`, `/sse`, `/raw`) written straight
 * to Node's response, and a WebSocket. Each owns its connection's timers:
 *
 * - HTTP streams send a `keepalive` event every `keepalive_interval_secs` (45 s; the Android
 *   app's read timeout is 77 s);
 * - WebSockets send a ping as often and are dropped after `websocket_timeout_secs` (60 s) with
 *   no pong, ping or frame from the peer, like ntfy's read deadline. Client pings are answered by
 *   `ws` itself. There are no JSON keepalive frames on WebSockets, as in ntfy.
 */
import type { ServerResponse } from 'node:http';
import type { WebSocket } from 'ws';
import type { Clock } from '../store/port.ts';
import type { FrameSink } from './hub.ts';
import type { Cancel, Scheduler } from './scheduler.ts';
import { CONTENT_TYPES, controlFrame } from './wire.ts';

/** WebSocket close code of a normal server-side close. */
const WS_NORMAL_CLOSE = 1000;

class CloseListeners {
  private listeners: Array<() => void> = [];
  private fired = false;

  add(listener: () => void): void {
    if (this.fired) listener();
    else this.listeners.push(listener);
  }

  fire(): void {
    if (this.fired) return;
    this.fired = true;
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener();
  }
}

export interface HttpStreamOptions {
  transport: 'json' | 'sse' | 'raw';
  topicLabel: string;
  keepaliveIntervalMs: number;
  scheduler: Scheduler;
  clock: Clock;
}

/** Response headers of every subscribe stream. */
export function streamHeaders(transport: 'json' | 'sse' | 'raw'): Record<string, string> {
  return {
    'Content-Type': CONTENT_TYPES[transport],
    'Access-Control-Allow-Origin': '*',
    'Cache-Control': 'no-cache',
    // Reverse proxies (nginx) must not buffer a stream.
    'X-Accel-Buffering': 'no',
  };
}

/** Start a stream on `outgoing` (status and headers are written here) with its keepalive timer. */
export function openHttpStream(outgoing: ServerResponse, options: HttpStreamOptions): FrameSink {
  const closeListeners = new CloseListeners();
  let closed = false;
  let drainWaiters: Array<() => void> = [];
  const releaseDrainWaiters = () => {
    const waiters = drainWaiters;
    drainWaiters = [];
    for (const waiter of waiters) waiter();
  };
  outgoing.writeHead(200, streamHeaders(options.transport));
  outgoing.socket?.setNoDelay(true);
  const stopKeepalive: Cancel = options.scheduler.every(options.keepaliveIntervalMs, () => {
    if (!closed) outgoing.write(controlFrame(options.transport, 'keepalive', options.topicLabel, options.clock.nowMs()));
  });
  const finish = () => {
    if (closed) return;
    closed = true;
    stopKeepalive();
    releaseDrainWaiters();
    closeListeners.fire();
  };
  outgoing.on('drain', releaseDrainWaiters);
  outgoing.once('close', finish);
  outgoing.once('error', finish);

  return {
    write(frame) {
      if (!closed) outgoing.write(frame);
    },
    get bufferedBytes() {
      return outgoing.writableLength;
    },
    whenDrained() {
      if (closed || outgoing.writableLength === 0) return Promise.resolve();
      return new Promise((resolve) => drainWaiters.push(resolve));
    },
    close() {
      if (closed) return;
      // A peer that is not reading would hold end() forever; cut it off instead.
      if (outgoing.writableLength > 0) outgoing.destroy();
      else outgoing.end();
      finish();
    },
    get closed() {
      return closed;
    },
    onClose(listener) {
      closeListeners.add(listener);
    },
  };
}

export interface WebSocketSinkOptions {
  keepaliveIntervalMs: number;
  timeoutMs: number;
  scheduler: Scheduler;
}

/** A sink over an open WebSocket, with its pings and its silence deadline. */
export function openWebSocketSink(ws: WebSocket, options: WebSocketSinkOptions): FrameSink {
  const closeListeners = new CloseListeners();
  let closed = false;
  let unsent = 0;
  let drainWaiters: Array<() => void> = [];
  const releaseDrainWaiters = () => {
    const waiters = drainWaiters;
    drainWaiters = [];
    for (const waiter of waiters) waiter();
  };

  let cancelDeadline: Cancel = () => undefined;
  const armDeadline = () => {
    cancelDeadline();
    cancelDeadline = options.scheduler.after(options.timeoutMs, () => ws.terminate());
  };
  armDeadline();
  ws.on('pong', armDeadline);
  ws.on('ping', armDeadline);
  ws.on('message', armDeadline);
  const stopPings = options.scheduler.every(options.keepaliveIntervalMs, () => {
    if (ws.readyState === ws.OPEN) ws.ping();
  });

  const finish = () => {
    if (closed) return;
    closed = true;
    stopPings();
    cancelDeadline();
    releaseDrainWaiters();
    closeListeners.fire();
  };
  ws.once('close', finish);
  ws.on('error', () => ws.terminate());

  return {
    write(frame) {
      if (closed || ws.readyState !== ws.OPEN) return;
      unsent += 1;
      ws.send(frame, () => {
        unsent -= 1;
        if (unsent === 0) releaseDrainWaiters();
      });
    },
    get bufferedBytes() {
      return ws.bufferedAmount;
    },
    whenDrained() {
      if (closed || unsent === 0) return Promise.resolve();
      return new Promise((resolve) => drainWaiters.push(resolve));
    },
    close() {
      if (closed) return;
      if (ws.bufferedAmount > 0) ws.terminate();
      else ws.close(WS_NORMAL_CLOSE);
      finish();
    },
    get closed() {
      return closed;
    },
    onClose(listener) {
      closeListeners.add(listener);
    },
  };
}
