/**
 * One open socket to one relay: the frames it reads, the subscriptions it holds, NIP-42 AUTH,
 * the startup replay and the live-flow watchdog. A session never outlives its socket; the
 * connection (relay-connection.ts) creates a new one for every connect.
 */
import type { NostrEvent } from '../nostr/event.ts';
import { frameText, machinePrefix, parseRelayFrame, peekEventFrame, type RelayFrame } from '../nostr/relay-frames.ts';
import { RelayAuth } from './relay-auth.ts';
import { replayHistory, type FetchEnd, type HistoryChannel } from './historical.ts';
import { classifyEvent, type EventIntake } from './intake.ts';
import { liveResumeSince, liveSubscriptions, withinTagFilter, type RelayFilter } from './subscriptions.ts';
import type { EventContext, SessionOptions, TimerHandle } from './types.ts';
import { LiveFlowWatchdog, type WatchdogAction } from './watchdog.ts';
import { STORE_RETRY_DELAYS_MS } from '../util/store-retry.ts';
import { SOCKET_OPEN, type SocketData } from '../nostr/relay-socket.ts';

/** Frames queued while the sink is busy before the socket is paused. */
export const FRAME_QUEUE_HIGH_WATER = 32;

/**
 * Waits before the inbound queue is asked again for an event it did not take
 * ({@link STORE_RETRY_DELAYS_MS}): asked again in place, the socket and its subscriptions are
 * kept, where a reconnect would wait out the connection's growing backoff (up to a minute) with
 * every event behind it. Only when every retry fails is the connection rebuilt, to fetch the
 * event again from the cursor.
 */
export const SINK_RETRY_DELAYS_MS: readonly number[] = STORE_RETRY_DELAYS_MS;

export type { SessionOptions, SessionPool } from './types.ts';

interface OpenSubscription {
  id: string;
  live: boolean;
  filter: RelayFilter;
  /** Closed by the relay with `auth-required:`; re-sent once AUTH is accepted. */
  awaitingAuth: boolean;
  onIntake(intake: EventIntake): void;
  onEnd(end: FetchEnd): void;
}

export class RelaySession implements HistoryChannel {
  private readonly subscriptions = new Map<string, OpenSubscription>();
  private readonly queue: string[] = [];
  private draining = false;
  private paused = false;
  private ended = false;
  private readonly auth: RelayAuth;
  private watchdog: LiveFlowWatchdog | null = null;
  private watchdogTimer: TimerHandle | null = null;
  private resubscribeTimer: TimerHandle | null = null;
  private readonly fetchTimers = new Set<TimerHandle>();
  private idleWaiters: Array<() => void> = [];
  /** Sink retries waiting out a delay ({@link pauseFor}); woken when the session ends. */
  private readonly pauseWakers = new Set<() => void>();

  constructor(private readonly options: SessionOptions) {
    this.auth = new RelayAuth(options);
  }

  get isAuthenticated(): boolean {
    return this.auth.authenticated;
  }

  /** Runs the replay (when asked) and then opens the live subscriptions. Never rejects. */
  async begin(): Promise<void> {
    const { replay, logger, relay } = this.options;
    try {
      if (replay !== null) {
        const result = await replayHistory(this, {
          relay,
          nowSecs: this.nowSecs(),
          processWindowDays: replay.processWindowDays,
          notifyListHistoryLimit: replay.notifyListHistoryLimit,
          pageTimeoutMs: replay.pageTimeoutMs,
          logger,
        });
        if (result === 'disconnected' || this.ended) return;
        this.options.onReplayDone();
      }
      await this.options.cursor.load();
      if (this.ended) return;
      this.watchdog = new LiveFlowWatchdog(this.options.watchdog, this.options.clock.nowMs());
      this.sendLiveSubscriptions();
      this.armWatchdog();
      logger.info({ relay }, 'live subscriptions open');
    } catch (error) {
      logger.error({ relay, err: error }, 'relay session failed to start its subscriptions');
      this.tearDown('session start failed');
    }
  }

  /** Feeds one `ws` message. Frames are handled strictly in order, one at a time. */
  receive(data: SocketData, isBinary: boolean): void {
    if (this.ended) return;
    if (isBinary) {
      this.protocolError('binary_frame');
      return;
    }
    this.queue.push(frameText(data));
    if (this.queue.length >= FRAME_QUEUE_HIGH_WATER && !this.paused) {
      this.paused = true;
      this.options.socket.pause();
    }
    if (!this.draining) void this.drain();
  }

  /** The socket is gone: stops timers and ends pending requests. Idempotent. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.queue.length = 0;
    const { timers } = this.options;
    if (this.watchdogTimer !== null) timers.clearTimeout(this.watchdogTimer);
    if (this.resubscribeTimer !== null) timers.clearTimeout(this.resubscribeTimer);
    for (const timer of this.fetchTimers) timers.clearTimeout(timer);
    this.fetchTimers.clear();
    for (const wake of [...this.pauseWakers]) wake();
    this.pauseWakers.clear();
    for (const subscription of [...this.subscriptions.values()]) subscription.onEnd({ end: 'disconnected' });
    this.subscriptions.clear();
    if (!this.draining) this.notifyIdle();
  }

  /** Resolves once no frame is being handled (the in-flight sink call, if any, has settled). */
  idle(): Promise<void> {
    if (!this.draining) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  // ---- HistoryChannel ----------------------------------------------------------------------

  fetch(id: string, filter: RelayFilter, onIntake: (intake: EventIntake) => void, timeoutMs: number): Promise<FetchEnd> {
    if (this.ended) return Promise.resolve({ end: 'disconnected' });
    return new Promise<FetchEnd>((resolve) => {
      const { timers } = this.options;
      let timer: TimerHandle;
      const onTimeout = (): void => {
        this.fetchTimers.delete(timer);
        if (this.subscriptions.get(id) !== subscription) return;
        // Frames queued behind a slow sink may hold the EOSE: our own backpressure is not the relay's delay.
        if (this.draining || this.queue.length > 0) {
          timer = timers.setTimeout(onTimeout, timeoutMs);
          this.fetchTimers.add(timer);
          return;
        }
        this.subscriptions.delete(id);
        this.send(['CLOSE', id]);
        resolve({ end: 'timeout' });
      };
      timer = timers.setTimeout(onTimeout, timeoutMs);
      this.fetchTimers.add(timer);
      const subscription: OpenSubscription = {
        id,
        live: false,
        filter,
        awaitingAuth: false,
        onIntake,
        onEnd: (end) => {
          timers.clearTimeout(timer);
          this.fetchTimers.delete(timer);
          resolve(end);
        },
      };
      this.subscriptions.set(id, subscription);
      this.send(['REQ', id, filter]);
    });
  }

  // ---- frames ------------------------------------------------------------------------------

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      for (let text = this.queue.shift(); text !== undefined && !this.ended; text = this.queue.shift()) {
        try {
          await this.handleText(text);
        } catch (error) {
          // A bug, not relay input: keep the connection, say so loudly.
          this.options.metrics.relayProtocolErrors.inc({ reason: 'handler_error' });
          this.options.logger.error({ relay: this.options.relay, err: error }, 'relay frame handler failed');
        }
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the socket can end while the handler awaits; tsc keeps the loop condition narrowing.
        if (this.paused && this.queue.length === 0 && !this.ended) {
          this.paused = false;
          this.options.socket.resume();
        }
      }
    } finally {
      this.draining = false;
      this.notifyIdle();
    }
  }

  private notifyIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private async handleText(text: string): Promise<void> {
    const receivedAtMs = this.options.clock.nowMs();
    const peek = peekEventFrame(text);
    if (peek !== null) {
      const subscription = this.subscriptions.get(peek.subscriptionId);
      if (subscription === undefined) {
        this.unknownSubscription(peek.subscriptionId);
        return;
      }
      if (subscription.live && peek.eventId !== null && this.options.pool.isSeen(peek.eventId)) {
        this.options.metrics.eventsReceived.inc();
        this.options.metrics.eventsDuplicate.inc();
        this.watchdog?.onLiveEvent(receivedAtMs);
        return;
      }
    }
    const frame = parseRelayFrame(text);
    if (frame.type === 'invalid') {
      this.protocolError(frame.reason);
      return;
    }
    await this.handleFrame(frame, receivedAtMs);
  }

  private async handleFrame(frame: RelayFrame, receivedAtMs: number): Promise<void> {
    const { logger, relay } = this.options;
    switch (frame.type) {
      case 'EVENT':
        return this.handleEvent(frame.subscriptionId, frame.event, receivedAtMs);
      case 'EOSE': {
        const subscription = this.subscriptions.get(frame.subscriptionId);
        if (subscription !== undefined && !subscription.live) {
          this.subscriptions.delete(subscription.id);
          this.send(['CLOSE', subscription.id]);
          subscription.onEnd({ end: 'eose' });
        }
        return;
      }
      case 'CLOSED':
        return this.handleClosed(frame.subscriptionId, frame.reason);
      case 'NOTICE':
        logger.info({ relay, notice: frame.message }, 'relay notice');
        return;
      case 'OK':
        return this.handleOk(frame.eventId, frame.accepted, frame.message);
      case 'AUTH':
        return this.authenticate(frame.challenge);
    }
  }

  private async handleEvent(subscriptionId: string, body: unknown, receivedAtMs: number): Promise<void> {
    const subscription = this.subscriptions.get(subscriptionId);
    if (subscription === undefined) {
      this.unknownSubscription(subscriptionId);
      return;
    }
    const { metrics, pool, relay } = this.options;
    metrics.eventsReceived.inc();
    const intake = await classifyEvent(body, Math.floor(receivedAtMs / 1000), {
      verifier: this.options.verifier,
      servicePubkey: this.options.servicePubkey,
      isSeen: (id) => pool.isSeen(id),
    });
    if (intake.outcome === 'invalid') {
      metrics.eventsInvalid.inc({ reason: intake.reason });
      this.options.throttle.warn(
        this.options.logger,
        `${relay}|event|${intake.reason}`,
        { relay, reason: intake.reason, detail: intake.message, id: intake.event?.id },
        'dropped invalid event from relay',
      );
    } else if (intake.outcome === 'duplicate') {
      metrics.eventsDuplicate.inc();
    } else if (intake.outcome === 'accept' && !withinTagFilter(intake.event, subscription.filter)) {
      // A user relay is anyone's server: what it sends beyond the filter we asked for is dropped.
      metrics.eventsInvalid.inc({ reason: 'off_filter' });
    } else if (intake.outcome === 'accept') {
      const context: EventContext = subscription.live ? 'live' : 'historical';
      const result = await this.deliverRetrying(intake.event, context, receivedAtMs);
      if (result === null) return;
      if (result === 'duplicate') metrics.eventsDuplicate.inc();
      else if (subscription.live) {
        this.options.cursor.noteAccepted(intake.event.created_at);
        this.options.onLiveEvent(this.options.clock.nowMs());
      }
    }
    if (subscription.live) {
      if (intake.outcome !== 'invalid') this.watchdog?.onLiveEvent(this.options.clock.nowMs());
    } else {
      subscription.onIntake(intake);
    }
  }

  /**
   * Hands an event to the pool, asking again after {@link SINK_RETRY_DELAYS_MS} while the sink
   * fails (frames queue behind it meanwhile, and the socket pauses at the high-water mark). Null
   * when it never took it: the session is torn down, or was ended while waiting.
   */
  private async deliverRetrying(event: NostrEvent, context: EventContext, receivedAtMs: number): Promise<'taken' | 'duplicate' | null> {
    const { metrics, pool, relay, logger } = this.options;
    for (let attempt = 0; ; attempt++) {
      try {
        return await pool.deliver(event, context, relay, receivedAtMs);
      } catch (error) {
        metrics.relaySinkFailures.inc({ relay });
        const delayMs = SINK_RETRY_DELAYS_MS[attempt];
        if (delayMs === undefined) {
          logger.error(
            { relay, id: event.id, attempts: attempt + 1, err: error },
            'the inbound queue did not take an event; reconnecting to fetch it again',
          );
          this.tearDown('sink failed');
          return null;
        }
        logger.warn(
          { relay, id: event.id, attempt: attempt + 1, retryInMs: delayMs, err: error },
          'the inbound queue did not take an event; asking again',
        );
        if (!(await this.pauseFor(delayMs))) return null;
      }
    }
  }

  /** Resolves true after `ms`, or false as soon as the session ends. */
  private pauseFor(ms: number): Promise<boolean> {
    if (this.ended) return Promise.resolve(false);
    const { timers } = this.options;
    return new Promise((resolve) => {
      const timer = timers.setTimeout(() => {
        this.fetchTimers.delete(timer);
        this.pauseWakers.delete(wake);
        resolve(!this.ended);
      }, ms);
      const wake = (): void => {
        timers.clearTimeout(timer);
        this.fetchTimers.delete(timer);
        resolve(false);
      };
      this.fetchTimers.add(timer);
      this.pauseWakers.add(wake);
    });
  }

  private handleClosed(subscriptionId: string, reason: string): void {
    const { logger, relay, metrics } = this.options;
    const subscription = this.subscriptions.get(subscriptionId);
    if (subscription === undefined) {
      logger.info({ relay, subscriptionId, reason }, 'relay closed a subscription we do not hold');
      return;
    }
    if (machinePrefix(reason) === 'auth-required' && !this.auth.authenticated) {
      // Not a failure of the relay: it wants AUTH first. The REQ goes again once AUTH is accepted.
      subscription.awaitingAuth = true;
      logger.info({ relay, subscriptionId }, 'relay requires AUTH for a subscription; re-sending after authenticating');
      return;
    }
    metrics.relayClosed.inc({ relay });
    if (!subscription.live) {
      this.subscriptions.delete(subscriptionId);
      subscription.onEnd({ end: 'closed', reason });
      return;
    }
    logger.warn({ relay, subscriptionId, reason }, 'relay closed a live subscription');
    if (this.watchdog !== null) this.act(this.watchdog.onClosed(subscriptionId, reason, this.options.clock.nowMs()));
  }

  private handleOk(eventId: string, accepted: boolean, message: string): void {
    if (!this.auth.settle(eventId, accepted, message)) return;
    let liveAwaiting = false;
    for (const subscription of this.subscriptions.values()) {
      if (!subscription.awaitingAuth) continue;
      subscription.awaitingAuth = false;
      if (subscription.live) liveAwaiting = true;
      else this.send(['REQ', subscription.id, subscription.filter]);
    }
    // Both live REQs go together, with `since` recomputed from the cursor.
    if (liveAwaiting) this.sendLiveSubscriptions();
  }

  private authenticate(challenge: string): void {
    const authEvent = this.auth.answer(challenge, this.nowSecs());
    if (authEvent) this.send(['AUTH', authEvent]);
  }

  // ---- live subscriptions and the watchdog -------------------------------------------------

  /**
   * Re-sends the live REQs whose filter changed (a REQ with a held id replaces it, NIP-01) and
   * CLOSEs those no longer asked for; unchanged ones keep running. Nothing before the live
   * subscriptions are open: they will be built from the current request set then.
   */
  resubscribeChanged(): void {
    if (!this.ended && this.watchdog !== null) this.sendLiveSubscriptions(true);
  }

  private sendLiveSubscriptions(onlyChanged = false): void {
    if (this.ended) return;
    const since = liveResumeSince(this.options.cursor.current, this.nowSecs());
    const requests = this.options.liveRequests?.(since) ?? liveSubscriptions(this.options.liveKinds, since);
    const wanted = new Set(requests.map((request) => request.id));
    for (const [id, subscription] of this.subscriptions) {
      if (!subscription.live || wanted.has(id)) continue;
      this.subscriptions.delete(id);
      this.send(['CLOSE', id]);
    }
    let sent = 0;
    for (const request of requests) {
      const held = this.subscriptions.get(request.id);
      if (onlyChanged && held?.live === true && !held.awaitingAuth && sameBesidesSince(held.filter, request.filter)) continue;
      this.subscriptions.set(request.id, {
        id: request.id,
        live: true,
        filter: request.filter,
        awaitingAuth: false,
        onIntake: () => {},
        onEnd: () => {},
      });
      this.send(['REQ', request.id, request.filter]);
      sent++;
    }
    if (sent > 0) this.options.onLiveRequestsSent?.(sent);
  }

  private armWatchdog(): void {
    if (this.ended || this.watchdog === null) return;
    const delay = Math.max(0, this.watchdog.deadlineMs - this.options.clock.nowMs());
    this.watchdogTimer = this.options.timers.setTimeout(() => this.onWatchdogTimer(), delay);
  }

  private onWatchdogTimer(): void {
    this.watchdogTimer = null;
    const watchdog = this.watchdog;
    if (this.ended || watchdog === null) return;
    const now = this.options.clock.nowMs();
    // Events moved the deadline since the timer was set: sleep until the new one.
    if (now < watchdog.deadlineMs) return this.armWatchdog();
    // Silence caused by our own backpressure is not the relay's: wait a full window more.
    if (this.draining || this.queue.length > 0) {
      watchdog.postpone(now);
      return this.armWatchdog();
    }
    this.act(watchdog.onSilence(now));
    this.armWatchdog();
  }

  private act(action: WatchdogAction): void {
    if (action.action === 'none') return;
    const { logger, relay, metrics } = this.options;
    metrics.relayRecoveries.inc({ relay, trigger: action.trigger, action: action.action });
    if (action.action === 'reconnect') {
      logger.error({ relay, why: action.why }, 'relay live flow did not recover; reconnecting');
      this.tearDown(action.why);
      return;
    }
    logger.warn({ relay, trigger: action.trigger, delayMs: action.delayMs }, 'resubscribing live subscriptions');
    if (this.resubscribeTimer !== null) this.options.timers.clearTimeout(this.resubscribeTimer);
    if (action.delayMs === 0) {
      this.resubscribeTimer = null;
      this.sendLiveSubscriptions();
      return;
    }
    this.resubscribeTimer = this.options.timers.setTimeout(() => {
      this.resubscribeTimer = null;
      this.sendLiveSubscriptions();
    }, action.delayMs);
  }

  // ---- helpers -----------------------------------------------------------------------------

  /** Ends the session at once (nothing more is read or sent) and has the connection drop the socket. */
  private tearDown(why: string): void {
    this.end();
    this.options.onTeardown(why);
  }

  private send(frame: unknown[]): void {
    const { socket } = this.options;
    if (this.ended || socket.readyState !== SOCKET_OPEN) return;
    try {
      socket.send(JSON.stringify(frame));
    } catch (error) {
      this.options.logger.warn({ relay: this.options.relay, err: error }, 'could not send to relay');
    }
  }

  private protocolError(reason: string): void {
    const { relay } = this.options;
    this.options.metrics.relayProtocolErrors.inc({ reason });
    this.options.throttle.warn(this.options.logger, `${relay}|frame|${reason}`, { relay, reason }, 'dropped malformed frame from relay');
  }

  private unknownSubscription(subscriptionId: string): void {
    // Normal right after a CLOSE (events already in flight), so counted but not warned about.
    this.options.metrics.relayProtocolErrors.inc({ reason: 'unknown_subscription' });
    this.options.logger.debug({ relay: this.options.relay, subscriptionId }, 'event for a subscription we do not hold');
  }

  private nowSecs(): number {
    return Math.floor(this.options.clock.nowMs() / 1000);
  }
}

/** Two filters equal but for `since` (a re-subscription moves `since` forward; that alone is no change). */
function sameBesidesSince(a: RelayFilter, b: RelayFilter): boolean {
  return JSON.stringify({ ...a, since: 0 }) === JSON.stringify({ ...b, since: 0 });
}
