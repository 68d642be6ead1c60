/**
 * A one-shot NIP-01 query: open a socket to each relay, send one REQ, collect the stored events
 * until EOSE (or CLOSED, an error, the socket closing, or the deadline), close. Used for profile
 * lookups, where a long-lived pool would be idle almost all the time.
 *
 * Untrusted output: events come back as the relay sent them (`unknown`); the caller runs
 * `parseEvent` and an `EventVerifier` on each.
 */
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import type { Logger } from '../observability/logger.ts';
import { frameText, MAX_RELAY_FRAME_BYTES, parseRelayFrame } from '../nostr/relay-frames.ts';
import { SOCKET_OPEN, type RelaySocket, type RelaySocketConstructor } from '../nostr/relay-socket.ts';

/**
 * Most events kept from one relay per query. Profile queries ask for `limit: 1`; a relay that
 * ignores the limit is cut off here instead of being read to the end.
 */
export const MAX_EVENTS_PER_RELAY = 16;

/** The NIP-01 filter fields one-shot queries use. */
export interface RelayFilter {
  ids?: string[];
  authors?: string[];
  kinds?: number[];
  limit?: number;
}

/**
 * Ask every relay in `relays` once and resolve, by `timeoutMs` at the latest, with every event
 * received (possibly from several relays, possibly duplicates). Never rejects: an unreachable or
 * misbehaving relay contributes nothing.
 */
export type RelayQueryFunction = (
  relays: readonly string[],
  filter: RelayFilter,
  timeoutMs: number,
  /** Told how each relay's query ended: `eose` when the relay said it sent all it has. */
  onRelayDone?: (relay: string, reason: string) => void,
) => Promise<unknown[]>;

export interface RelayQueryOptions {
  /** The WebSocket class; `ws` by default. Tests pass a scripted fake. */
  WebSocketImpl?: RelaySocketConstructor;
  /** Override of {@link MAX_EVENTS_PER_RELAY}. */
  maxEventsPerRelay?: number;
  /** Relay failures are logged at debug: a missing profile is not worth a warning. */
  logger?: Logger;
}

function subscriptionId(): string {
  return `q-${randomBytes(6).toString('hex')}`;
}

function queryOneRelay(
  url: string,
  filter: RelayFilter,
  deadline: AbortSignal,
  timeoutMs: number,
  options: Required<Pick<RelayQueryOptions, 'WebSocketImpl' | 'maxEventsPerRelay'>> & Pick<RelayQueryOptions, 'logger'>,
  onDone?: (relay: string, reason: string) => void,
): Promise<unknown[]> {
  return new Promise((resolve) => {
    const events: unknown[] = [];
    const subId = subscriptionId();
    let socket: RelaySocket | undefined;
    let finished = false;

    const finish = (reason: string): void => {
      if (finished) return;
      finished = true;
      deadline.removeEventListener('abort', onDeadline);
      if (reason !== 'eose') options.logger?.debug({ relay: url, reason, events: events.length }, 'one-shot relay query ended early');
      onDone?.(url, reason);
      try {
        if (socket?.readyState === SOCKET_OPEN) {
          socket.send(JSON.stringify(['CLOSE', subId]));
          socket.close(1000);
        } else {
          socket?.terminate();
        }
      } catch {
        // The socket is being torn down either way.
      }
      resolve(events);
    };
    const onDeadline = (): void => finish('timeout');

    if (deadline.aborted) {
      onDone?.(url, 'timeout');
      resolve(events);
      return;
    }
    deadline.addEventListener('abort', onDeadline);
    try {
      socket = new options.WebSocketImpl(url, { maxPayload: MAX_RELAY_FRAME_BYTES, handshakeTimeout: timeoutMs });
    } catch (error) {
      options.logger?.debug({ relay: url, err: error }, 'could not open a socket for a one-shot query');
      finish('connect_failed');
      return;
    }
    const opened = socket;
    opened.on('open', () => {
      if (!finished) opened.send(JSON.stringify(['REQ', subId, filter]));
    });
    opened.on('message', (data) => {
      if (finished) return;
      const frame = parseRelayFrame(frameText(data));
      if (frame.type === 'EVENT' && frame.subscriptionId === subId) {
        events.push(frame.event);
        if (events.length >= options.maxEventsPerRelay) finish('event_cap');
      } else if (frame.type === 'EOSE' && frame.subscriptionId === subId) {
        finish('eose');
      } else if (frame.type === 'CLOSED' && frame.subscriptionId === subId) {
        finish('closed');
      }
    });
    opened.on('error', (error) => {
      options.logger?.debug({ relay: url, err: error }, 'one-shot relay query socket error');
      finish('error');
    });
    opened.on('close', () => finish('socket_closed'));
  });
}

/** A {@link RelayQueryFunction} over real sockets (or the injected class). */
export function createRelayQuery(options: RelayQueryOptions = {}): RelayQueryFunction {
  const resolved = {
    WebSocketImpl: options.WebSocketImpl ?? WebSocket,
    maxEventsPerRelay: options.maxEventsPerRelay ?? MAX_EVENTS_PER_RELAY,
    logger: options.logger,
  };
  return async (relays, filter, timeoutMs, onRelayDone) => {
    const unique = [...new Set(relays)];
    if (unique.length === 0) return [];
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), timeoutMs);
    try {
      const perRelay = await Promise.all(
        unique.map((url) => queryOneRelay(url, filter, deadline.signal, timeoutMs, resolved, onRelayDone)),
      );
      return perRelay.flat();
    } finally {
      clearTimeout(timer);
    }
  };
}
