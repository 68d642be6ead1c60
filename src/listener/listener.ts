/**
 * The relay listener: a pool of relay connections feeding one sink, with cross-relay dedupe.
 *
 * @example
 * const listener = createListener({
 *   relays: ['wss://relay.example'], servicePubkey, serviceSecretKeyHex,
 *   liveKinds: [7, 1111, 16], store, verifier: await createEventVerifier(), logger, metrics,
 *   sink: async ({ event }) => { await inbound.enqueue(event.id, event); },
 * });
 * await listener.start(); // every relay tried once; down relays keep retrying in the background
 */
import { WebSocket as WsWebSocket } from 'ws';
import type { EventVerifier, NostrEvent } from '../nostr/event.ts';
import { isHexPubkey } from '../nostr/tags.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Clock } from '../store/port.ts';
import { systemClock } from '../util/clock.ts';
import { RECONNECT_INITIAL_BACKOFF_MS, RECONNECT_MAX_BACKOFF_MS } from './backoff.ts';
import { HISTORY_PAGE_TIMEOUT_MS } from './historical.ts';
import { LogThrottle } from './log-throttle.ts';
import { RelayConnection, type RelayConnectionOptions } from './relay-connection.ts';
import { connectUserRelay } from './user-relay-socket.ts';
import { UserRelayManager, type UserRelayManagerOptions, type UserRelaySummary } from './user-relays.ts';
import type { SessionPool } from './relay-session.ts';
import { SeenIds, DEFAULT_SEEN_IDS_CAPACITY } from './seen-ids.ts';
import { normalizeLiveKinds } from './subscriptions.ts';
import { systemTimers, type EventContext, type EventSink, type RelayCursorStore, type RelayStatus, type Timers } from './types.ts';
import { CLOSED_RECOVERY_GRACE_MS, MAX_CLOSED_RECOVERIES_PER_WINDOW, RATE_LIMIT_RECOVERY_BACKOFF_MS } from './watchdog.ts';
import type { RelaySocketConstructor } from '../nostr/relay-socket.ts';

/** Control events older than this are not replayed at startup (days). */
export const DEFAULT_PROCESS_WINDOW_DAYS = 7;
/** Page size of the startup notify-list replay. */
export const DEFAULT_NOTIFY_LIST_HISTORY_LIMIT = 5_000;
/** A relay silent on the live subscriptions this long is resubscribed, then reconnected (seconds). */
export const DEFAULT_EVENT_SILENCE_TIMEOUT_SECS = 300;

/**
 * Silence window of a user relay's watchdog (1 h) when the configured one is shorter: a relay
 * read by a handful of users is quiet for long stretches, and resubscribing it every few minutes
 * would only cost REQs.
 */
export const USER_RELAY_SILENCE_TIMEOUT_MS = 3_600_000;

/** Knobs with production defaults; tests shorten them instead of sleeping. */
export interface ListenerTuning {
  closedRecoveryGraceMs?: number;
  rateLimitBackoffMs?: number;
  maxClosedRecoveriesPerWindow?: number;
  historyPageTimeoutMs?: number;
  reconnectInitialBackoffMs?: number;
  reconnectMaxBackoffMs?: number;
  /** Jitter source, uniform in [0, 1). */
  random?: () => number;
  cursorFlushIntervalMs?: number;
  seenIdsCapacity?: number;
  connectTimeoutMs?: number;
}

export interface ListenerOptions {
  /** ws:// or wss:// URLs; duplicates are ignored. */
  relays: readonly string[];
  /** Hex pubkey of the service; its own events are skipped. */
  servicePubkey: string;
  /** Hex secret key of the service, to answer NIP-42 challenges. */
  serviceSecretKeyHex: string;
  /** Kinds of the live-events subscription; the control kinds are always added. */
  liveKinds: readonly number[];
  processWindowDays?: number;
  notifyListHistoryLimit?: number;
  /** Silence window of the watchdog, in seconds (fractions allowed). */
  eventSilenceTimeoutSecs?: number;
  store: RelayCursorStore;
  sink: EventSink;
  verifier: EventVerifier;
  logger: Logger;
  metrics: Metrics;
  clock?: Clock;
  timers?: Timers;
  /** WebSocket class; `ws` by default. */
  WebSocket?: RelaySocketConstructor;
  tuning?: ListenerTuning;
  /** Users' own relays (issue 36, `user-relays.ts`); absent when `nostr.user_relays.enabled` is off. */
  userRelays?: UserRelayListenerOptions;
}

/** What the listener needs to watch users' relays; the rest it shares with the configured relays. */
export type UserRelayListenerOptions = Pick<
  UserRelayManagerOptions,
  'store' | 'kinds' | 'giftWraps' | 'maxPubkeysPerFilter' | 'maxConnections' | 'refreshMs' | 'policy' | 'fullReadIntervalMs'
>;

export interface Listener {
  /** Resolves once every relay had its first connection attempt; never fails because a relay is down. */
  start(): Promise<void>;
  /** Closes every socket, clears timers, waits for in-flight events and writes the cursors. */
  stop(): Promise<void>;
  status(): RelayStatus[];
  /** The user relays (issue 36); null when they are off. */
  userRelays(): UserRelaySummary | null;
  /** Resolves after stop(); rejects only on an unrecoverable internal error. */
  readonly done: Promise<void>;
}

/** A listener option that cannot work. */
export class ListenerConfigError extends Error {
  override readonly name = 'ListenerConfigError';
}

function normalizeRelays(relays: readonly string[]): string[] {
  if (relays.length === 0) throw new ListenerConfigError('at least one relay URL is required');
  const out: string[] = [];
  for (const relay of relays) {
    let url: URL;
    try {
      url = new URL(relay);
    } catch {
      throw new ListenerConfigError(`not a URL: ${relay}`);
    }
    if (url.protocol !== 'ws:' && url.protocol !== 'wss:') throw new ListenerConfigError(`relay URL must be ws:// or wss://: ${relay}`);
    if (!out.includes(relay)) out.push(relay);
  }
  return out;
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new ListenerConfigError(`${name} must be a positive number, got ${value}`);
  return value;
}

export function createListener(options: ListenerOptions): Listener {
  const relays = normalizeRelays(options.relays);
  if (!isHexPubkey(options.servicePubkey)) throw new ListenerConfigError('servicePubkey must be 64 lowercase hex');
  const tuning = options.tuning ?? {};
  const clock = options.clock ?? systemClock;
  const timers = options.timers ?? systemTimers;
  const { logger, metrics, sink } = options;

  const { kinds, skipped } = normalizeLiveKinds(options.liveKinds);
  if (skipped.length > 0) logger.warn({ skipped }, 'ignoring live kinds that are not NIP-01 kinds (integers 0..65535)');

  const silenceTimeoutMs =
    positive('eventSilenceTimeoutSecs', options.eventSilenceTimeoutSecs ?? DEFAULT_EVENT_SILENCE_TIMEOUT_SECS) * 1000;
  const replay = {
    processWindowDays: positive('processWindowDays', options.processWindowDays ?? DEFAULT_PROCESS_WINDOW_DAYS),
    notifyListHistoryLimit: Math.floor(
      positive('notifyListHistoryLimit', options.notifyListHistoryLimit ?? DEFAULT_NOTIFY_LIST_HISTORY_LIMIT),
    ),
    pageTimeoutMs: tuning.historyPageTimeoutMs ?? HISTORY_PAGE_TIMEOUT_MS,
  };

  const seen = new SeenIds(tuning.seenIdsCapacity ?? DEFAULT_SEEN_IDS_CAPACITY);
  const pool: SessionPool = {
    isSeen: (id) => seen.has(id),
    async deliver(event: NostrEvent, context: EventContext, relay: string, receivedAtMs: number) {
      // Marked before the await so a copy arriving from another relay meanwhile is dropped.
      if (seen.has(event.id)) return 'duplicate';
      seen.add(event.id);
      try {
        await sink({ event, context, relay, receivedAtMs });
      } catch (error) {
        seen.delete(event.id);
        throw error;
      }
      return 'taken';
    },
  };

  const throttle = new LogThrottle(clock);
  const watchdog = {
    silenceTimeoutMs,
    closedGraceMs: tuning.closedRecoveryGraceMs ?? CLOSED_RECOVERY_GRACE_MS,
    maxClosedRecoveries: tuning.maxClosedRecoveriesPerWindow ?? MAX_CLOSED_RECOVERIES_PER_WINDOW,
    rateLimitBackoffMs: tuning.rateLimitBackoffMs ?? RATE_LIMIT_RECOVERY_BACKOFF_MS,
  };
  const connectionOf = (
    url: string,
    extra: Pick<RelayConnectionOptions, 'replay' | 'liveRequests' | 'onLiveRequestsSent' | 'connect' | 'watchdog'>,
  ) =>
    new RelayConnection({
      url,
      WebSocket: options.WebSocket ?? WsWebSocket,
      clock,
      timers,
      logger,
      metrics,
      throttle,
      verifier: options.verifier,
      servicePubkey: options.servicePubkey,
      serviceSecretKeyHex: options.serviceSecretKeyHex,
      liveKinds: kinds,
      store: options.store,
      pool,
      backoff: {
        initialMs: tuning.reconnectInitialBackoffMs ?? RECONNECT_INITIAL_BACKOFF_MS,
        maxMs: tuning.reconnectMaxBackoffMs ?? RECONNECT_MAX_BACKOFF_MS,
        random: tuning.random ?? Math.random,
      },
      ...(tuning.cursorFlushIntervalMs !== undefined ? { cursorFlushIntervalMs: tuning.cursorFlushIntervalMs } : {}),
      ...(tuning.connectTimeoutMs !== undefined ? { connectTimeoutMs: tuning.connectTimeoutMs } : {}),
      ...extra,
    });
  const connections = relays.map((url) => connectionOf(url, { replay, watchdog }));

  const userRelayOptions = options.userRelays;
  const userRelays =
    userRelayOptions === undefined
      ? null
      : new UserRelayManager({
          ...userRelayOptions,
          configuredRelays: relays,
          timers,
          clock,
          logger: logger.child({ userRelays: true }),
          metrics,
          createConnection: (url, liveRequests, onLiveRequestsSent) =>
            connectionOf(url, {
              replay: null,
              liveRequests,
              onLiveRequestsSent,
              connect: (socketUrl, socketOptions) => connectUserRelay(socketUrl, socketOptions, userRelayOptions.policy),
              // A user relay may carry nothing for its few users for hours: silence is no fault there.
              watchdog: { ...watchdog, silenceTimeoutMs: Math.max(silenceTimeoutMs, USER_RELAY_SILENCE_TIMEOUT_MS) },
            }),
        });

  let resolveDone!: () => void;
  let rejectDone!: (error: unknown) => void;
  const done = new Promise<void>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  // The supervisor attaches its own handlers; this one only keeps an unsupervised listener from
  // turning a rejection into a process crash before anyone looks.
  done.catch(() => {});
  let started = false;

  return {
    async start() {
      if (started) return;
      started = true;
      await Promise.all(connections.map((connection) => connection.start()));
      // After the configured relays: their events flow while the user relays' sockets open.
      await userRelays?.start();
      Promise.all(connections.map((connection) => connection.done)).then(resolveDone, (error: unknown) => {
        logger.error({ err: error }, 'relay listener failed');
        rejectDone(error);
      });
      logger.info({ relays, kinds }, 'relay listener started');
    },
    async stop() {
      await Promise.all([...connections.map((connection) => connection.stop()), userRelays?.stop()]);
      if (!started) resolveDone();
    },
    status: () => connections.map((connection) => connection.status()),
    userRelays: () => userRelays?.summary() ?? null,
    done,
  };
}
