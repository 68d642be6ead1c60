/**
 * The timers every open subscription holds, one {@link TimerList} per job (`timer-list.ts`: one
 * scheduler timer per interval instead of a Node timer per subscription).
 */
import type { NtfySettings } from './config.ts';
import type { Scheduler } from './scheduler.ts';
import type { ByteStreamSink } from './sinks.ts';
import { TimerList } from './timer-list.ts';
import type { WebSocketConnection } from './ws-sink.ts';

export interface SubscriptionTimers {
  /** A `keepalive` event on every HTTP stream, each `keepalive_interval_secs`. */
  readonly keepalives: TimerList<ByteStreamSink>;
  /** A ping on every WebSocket, as often. */
  readonly pings: TimerList<WebSocketConnection>;
  /** A WebSocket silent for `websocket_timeout_secs` is cut off; every frame from the peer re-arms it. */
  readonly deadlines: TimerList<WebSocketConnection>;
}

export function createSubscriptionTimers(
  scheduler: Scheduler,
  settings: Pick<NtfySettings, 'keepaliveIntervalMs' | 'websocketTimeoutMs'>,
): SubscriptionTimers {
  return {
    keepalives: new TimerList<ByteStreamSink>(scheduler, settings.keepaliveIntervalMs, true, (sink) => sink.sendKeepalive()),
    pings: new TimerList<WebSocketConnection>(scheduler, settings.keepaliveIntervalMs, true, (sink) => sink.sendPing()),
    deadlines: new TimerList<WebSocketConnection>(scheduler, settings.websocketTimeoutMs, false, (sink) => sink.cutOff()),
  };
}
