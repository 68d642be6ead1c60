/**
 * Contracts shared by the listener's modules and by whoever wires the listener in (the
 * composition root, /health, doctor).
 */
import type { EventVerifier, NostrEvent } from '../nostr/event.ts';
import type { RelaySocket } from '../nostr/relay-socket.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Clock, StorePort } from '../store/port.ts';
import type { RelayCursor } from './cursor.ts';
import type { LogThrottle } from './log-throttle.ts';
import type { SubscriptionRequest } from './subscriptions.ts';
import type { WatchdogOptions } from './watchdog.ts';

/**
 * Where an event came from. `historical` events come from the startup replay (control events
 * within the process window, notify lists); they are applied but never push. `live` events come
 * from the live subscriptions.
 */
export type EventContext = 'historical' | 'live';

/** One verified, deduplicated event handed to the rest of the service. */
export interface AcceptedEvent {
  event: NostrEvent;
  context: EventContext;
  /** URL of the relay that delivered it first (as configured). */
  relay: string;
  /** When the frame was read, in the listener clock's milliseconds. */
  receivedAtMs: number;
}

/**
 * The listener's output. The composition root wires it to the inbound queue (enqueue with
 * id = event.id).
 *
 * The listener awaits every call and reads nothing more from that relay's socket while it is
 * pending (backpressure), so a slow sink slows the relays down instead of filling memory. A
 * rejection means "not taken": the id is forgotten (so a redelivery is accepted), the relay's
 * cursor is not advanced for it, and that relay's connection is re-established with backoff, whose
 * resubscription (cursor minus overlap) asks for the event again.
 */
export type EventSink = (accepted: AcceptedEvent) => Promise<void>;

/** The part of the store the listener uses: one cursor per relay URL. */
export type RelayCursorStore = Pick<StorePort, 'getRelayCursor' | 'advanceRelayCursor'>;

/** Per-relay state for /health and `doctor`. */
export interface RelayStatus {
  url: string;
  /** The socket is open. */
  connected: boolean;
  /** The relay answered our NIP-42 challenge reply with OK true on the current connection. */
  authenticated: boolean;
  /** The startup replay (control events and notify lists) has run to its end on this relay. */
  historicalDone: boolean;
  /** When the last event from this relay was accepted (milliseconds), or null. */
  lastEventAt: number | null;
  /** Reconnect attempts since the process started (the first connection is not counted). */
  reconnects: number;
  /** Why the last connection ended or failed, or null. */
  lastError: string | null;
  /**
   * The latest connections that ended or failed, oldest first, at most
   * {@link RELAY_DISCONNECTS_KEPT}: when, and why. Absent where a relay source keeps none.
   */
  disconnects?: RelayDisconnect[];
}

/** One connection to a relay that ended or failed (the console's reconnect history). */
export interface RelayDisconnect {
  atMs: number;
  error: string | null;
}

/** Disconnects a relay connection remembers: enough to see a flapping relay's pattern, small in a heartbeat. */
export const RELAY_DISCONNECTS_KEPT = 10;

/**
 * An opaque timer handle, as returned by {@link Timers.setTimeout}: Node's Timeout object, or a
 * fake's number. Never null, so that `TimerHandle | null` can mean "no timer armed".
 */
export type TimerHandle = object | number;

/** Timer functions; injected so tests can control them. */
export interface Timers {
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export const systemTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** What the pool (listener.ts) offers a session. */
export interface SessionPool {
  isSeen(id: string): boolean;
  /** Dedupes across relays and hands the event to the sink; 'duplicate' if another relay won the race. Rejects when the sink does. */
  deliver(event: NostrEvent, context: EventContext, relay: string, receivedAtMs: number): Promise<'taken' | 'duplicate'>;
}

export interface SessionOptions {
  relay: string;
  socket: RelaySocket;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  metrics: Metrics;
  throttle: LogThrottle;
  verifier: EventVerifier;
  servicePubkey: string;
  serviceSecretKeyHex: string;
  liveKinds: readonly number[];
  /**
   * The live REQs for a `since`, when they are not the configured relays' ({@link liveSubscriptions}
   * of `liveKinds`): a user relay's `#p` filters, which change as its users do ({@link resubscribeChanged}).
   */
  liveRequests?: (since: number) => SubscriptionRequest[];
  /** Told how many live REQs were just sent (the user relays' REQ count). */
  onLiveRequestsSent?: (count: number) => void;
  cursor: RelayCursor;
  pool: SessionPool;
  watchdog: WatchdogOptions;
  /** Run the startup replay before the live subscriptions. */
  replay: { processWindowDays: number; notifyListHistoryLimit: number; pageTimeoutMs: number } | null;
  /** The replay ran to its end (it is not repeated on later connections). */
  onReplayDone(): void;
  /** A live event was taken from this relay. */
  onLiveEvent(nowMs: number): void;
  /** The session gives up on the socket; the connection tears it down and reconnects with backoff. */
  onTeardown(why: string): void;
}
