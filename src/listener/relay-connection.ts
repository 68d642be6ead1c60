/**
 * One relay for the life of the process: connect, run a session per socket, reconnect with
 * jittered exponential backoff when the socket goes away or the session gives up on it.
 */
import type { EventVerifier } from '../nostr/event.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Clock } from '../store/port.ts';
import { reconnectDelayMs, type BackoffPolicy } from './backoff.ts';
import { RelayCursor } from './cursor.ts';
import { MAX_RELAY_FRAME_BYTES } from '../nostr/relay-frames.ts';
import type { LogThrottle } from './log-throttle.ts';
import { RelaySession, type SessionOptions, type SessionPool } from './relay-session.ts';
import {
  RELAY_DISCONNECTS_KEPT,
  type RelayCursorStore,
  type RelayDisconnect,
  type RelayStatus,
  type TimerHandle,
  type Timers,
} from './types.ts';
import type { WatchdogOptions } from './watchdog.ts';
import { SOCKET_CLOSED, type RelaySocket, type RelaySocketConstructor, type RelaySocketOptions } from '../nostr/relay-socket.ts';

/** How long the opening handshake may take (10 s). */
export const CONNECT_TIMEOUT_MS = 10_000;
/** A session that lasted this long resets the backoff: the relay was healthy, this is a new failure (30 s). */
export const STABLE_SESSION_MS = 30_000;
/** How long stop() waits for the relay to acknowledge a close before cutting the socket (1 s). */
export const CLOSE_HANDSHAKE_TIMEOUT_MS = 1_000;

/** `ws`'s error code for a frame over `maxPayload`. */
const WS_ERR_FRAME_TOO_LARGE = 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH';

export interface RelayConnectionOptions {
  url: string;
  WebSocket: RelaySocketConstructor;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  metrics: Metrics;
  throttle: LogThrottle;
  verifier: EventVerifier;
  servicePubkey: string;
  serviceSecretKeyHex: string;
  liveKinds: readonly number[];
  /** See {@link SessionOptions.liveRequests}; absent for the configured relays. */
  liveRequests?: SessionOptions['liveRequests'];
  onLiveRequestsSent?: SessionOptions['onLiveRequestsSent'];
  /** Opens the socket; absent, `new WebSocket(url, options)`. User relays pass their address policy here. */
  connect?: (url: string, options: RelaySocketOptions) => RelaySocket;
  store: RelayCursorStore;
  pool: SessionPool;
  watchdog: WatchdogOptions;
  /** The startup replay; null for a relay that only carries live events (a user relay). */
  replay: { processWindowDays: number; notifyListHistoryLimit: number; pageTimeoutMs: number } | null;
  backoff: BackoffPolicy;
  cursorFlushIntervalMs?: number;
  connectTimeoutMs?: number;
}

export class RelayConnection {
  private stopping = false;
  private socket: RelaySocket | null = null;
  private session: RelaySession | null = null;
  private connected = false;
  private replayDone = false;
  private lastEventAt: number | null = null;
  private reconnects = 0;
  private lastError: string | null = null;
  private readonly disconnects: RelayDisconnect[] = [];
  private sleepTimer: TimerHandle | null = null;
  private wakeSleep: (() => void) | null = null;
  private firstAttempt!: () => void;
  private readonly firstAttemptDone = new Promise<void>((resolve) => (this.firstAttempt = resolve));
  private readonly cursor: RelayCursor;
  private runPromise: Promise<void> | null = null;

  constructor(private readonly options: RelayConnectionOptions) {
    // A relay without a replay has nothing historical to wait for.
    this.replayDone = options.replay === null;
    this.cursor = new RelayCursor({
      relay: options.url,
      store: options.store,
      clock: options.clock,
      timers: options.timers,
      logger: options.logger,
      ...(options.cursorFlushIntervalMs !== undefined ? { flushIntervalMs: options.cursorFlushIntervalMs } : {}),
    });
  }

  /**
   * Starts the connect loop. Resolves once the first connection attempt has succeeded or failed;
   * a relay that is down is retried in the background. `done` settles when the loop ends.
   */
  async start(): Promise<void> {
    this.runPromise ??= this.run();
    await Promise.race([this.firstAttemptDone, this.runPromise]);
  }

  /** Settles when the loop ends: resolves after stop(), rejects only on an internal error. */
  get done(): Promise<void> {
    return this.runPromise ?? Promise.resolve();
  }

  /** Closes the socket, cancels timers, waits for the in-flight event and writes the cursor. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.sleepTimer !== null) this.options.timers.clearTimeout(this.sleepTimer);
    this.wakeSleep?.();
    const session = this.session;
    const socket = this.socket;
    if (session !== null) {
      session.end();
      await session.idle();
    }
    if (socket !== null) await this.closeSocket(socket);
    await this.runPromise?.catch(() => {});
    await this.cursor.close();
  }

  /** The live filters changed: re-send those that did (see {@link RelaySession.resubscribeChanged}). */
  resubscribeChanged(): void {
    this.session?.resubscribeChanged();
  }

  status(): RelayStatus {
    return {
      url: this.options.url,
      connected: this.connected,
      authenticated: this.session?.isAuthenticated ?? false,
      historicalDone: this.replayDone,
      lastEventAt: this.lastEventAt,
      reconnects: this.reconnects,
      lastError: this.lastError,
      disconnects: [...this.disconnects],
    };
  }

  private async run(): Promise<void> {
    const { logger, metrics, url } = this.options;
    let failures = 0;
    while (!this.stopping) {
      const startedAt = this.options.clock.nowMs();
      const opened = await this.connectAndServe();
      this.firstAttempt();
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- stop() can run during the await; tsc keeps the loop condition's narrowing.
      if (this.stopping) break;
      this.disconnects.push({ atMs: this.options.clock.nowMs(), error: this.lastError });
      if (this.disconnects.length > RELAY_DISCONNECTS_KEPT) this.disconnects.shift();
      if (opened && this.options.clock.nowMs() - startedAt >= STABLE_SESSION_MS) failures = 0;
      const delay = reconnectDelayMs(failures, this.options.backoff);
      failures++;
      logger.info({ relay: url, delayMs: delay, reason: this.lastError }, 'reconnecting to relay');
      await this.sleep(delay);
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- stop() can run during the sleep; tsc keeps the earlier narrowing.
      if (this.stopping) break;
      this.reconnects++;
      metrics.relayReconnects.inc({ relay: url });
    }
  }

  /** One socket's life. Resolves when it is closed; true if it ever opened. */
  private connectAndServe(): Promise<boolean> {
    const { url, logger, metrics } = this.options;
    return new Promise<boolean>((resolve) => {
      let socket: RelaySocket;
      try {
        const socketOptions = { maxPayload: MAX_RELAY_FRAME_BYTES, handshakeTimeout: this.options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS };
        socket = this.options.connect ? this.options.connect(url, socketOptions) : new this.options.WebSocket(url, socketOptions);
      } catch (error) {
        this.lastError = error instanceof Error ? error.message : String(error);
        logger.error({ relay: url, err: error }, 'cannot open a socket to relay');
        resolve(false);
        return;
      }
      this.socket = socket;
      let opened = false;
      let settled = false;
      const finish = (): void => {
        if (settled) return;
        settled = true;
        this.session?.end();
        this.session = null;
        this.socket = null;
        if (this.connected) metrics.relayConnections.set({ relay: url }, 0);
        this.connected = false;
        resolve(opened);
      };

      socket.on('open', () => {
        if (this.stopping) {
          socket.terminate();
          return;
        }
        opened = true;
        this.connected = true;
        metrics.relayConnections.set({ relay: url }, 1);
        logger.info({ relay: url }, 'connected to relay');
        this.firstAttempt();
        const session = this.createSession(socket);
        this.session = session;
        void session.begin();
      });
      socket.on('message', (data, isBinary) => this.session?.receive(data, isBinary));
      socket.on('error', (error: Error & { code?: string }) => {
        if (error.code === WS_ERR_FRAME_TOO_LARGE) {
          metrics.relayProtocolErrors.inc({ reason: 'frame_too_large' });
          logger.warn({ relay: url, maxBytes: MAX_RELAY_FRAME_BYTES }, 'relay sent a frame over the size limit; reconnecting');
        } else if (!this.stopping) {
          logger.warn({ relay: url, err: error.message }, 'relay socket error');
        }
        this.lastError = error.message;
        // An open socket always follows an error with 'close'; a handshake failure may not.
        if (!opened) finish();
      });
      socket.on('close', (code) => {
        if (!this.stopping && opened) {
          this.lastError ??= `closed with code ${code}`;
          logger.warn({ relay: url, code }, 'relay connection closed');
        }
        finish();
      });
    });
  }

  private createSession(socket: RelaySocket): RelaySession {
    const o = this.options;
    return new RelaySession({
      relay: o.url,
      socket,
      clock: o.clock,
      timers: o.timers,
      logger: o.logger,
      metrics: o.metrics,
      throttle: o.throttle,
      verifier: o.verifier,
      servicePubkey: o.servicePubkey,
      serviceSecretKeyHex: o.serviceSecretKeyHex,
      liveKinds: o.liveKinds,
      ...(o.liveRequests ? { liveRequests: o.liveRequests } : {}),
      ...(o.onLiveRequestsSent ? { onLiveRequestsSent: o.onLiveRequestsSent } : {}),
      cursor: this.cursor,
      pool: o.pool,
      watchdog: o.watchdog,
      replay: this.replayDone ? null : o.replay,
      onReplayDone: () => {
        this.replayDone = true;
      },
      onLiveEvent: (nowMs) => {
        this.lastEventAt = nowMs;
        this.lastError = null;
      },
      onTeardown: (why) => {
        this.lastError = why;
        socket.terminate();
      },
    });
  }

  private async closeSocket(socket: RelaySocket): Promise<void> {
    if (socket.readyState === SOCKET_CLOSED) return;
    await new Promise<void>((resolve) => {
      const timer = this.options.timers.setTimeout(() => {
        socket.terminate();
        resolve();
      }, CLOSE_HANDSHAKE_TIMEOUT_MS);
      socket.on('close', () => {
        this.options.timers.clearTimeout(timer);
        resolve();
      });
      try {
        socket.close(1000, 'shutting down');
      } catch {
        socket.terminate();
      }
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wakeSleep = resolve;
      this.sleepTimer = this.options.timers.setTimeout(() => {
        this.sleepTimer = null;
        this.wakeSleep = null;
        resolve();
      }, ms);
    });
  }
}
