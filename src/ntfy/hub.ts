/**
 * The pusher: the live subscriptions of this process and how they are fed.
 *
 * Each {@link Subscriber} holds a cursor (the position of the last message it was sent, or the
 * store head when it started with nothing to replay) and drains the store from it: read the next
 * messages of its topics after the cursor, write them, move the cursor, until a read is complete.
 * The store's topic queues are the only source of truth; nothing is removed on send. So:
 *
 * - a wake-up (the store's advisory {@link StorePort.onNtfyAppend}, fired in this process at once
 *   and from other processes over Redis pub/sub) only says "drain the subscribers of topic T
 *   now"; a drain already running is simply run once more;
 * - a periodic safety re-drain ({@link NtfyHub.run}) kicks every subscriber whose cursor is behind
 *   the store head, so a lost wake-up costs latency, never a message;
 * - a subscriber is registered before its first drain, so nothing committed after its cursor was
 *   chosen can slip between the replay and the live stream, and drains of one subscriber never
 *   overlap, so nothing is sent twice;
 * - a subscriber that does not read its socket is not read for either: drains wait until its
 *   buffer empties (the messages wait in the store), and one stalled for
 *   {@link SLOW_SUBSCRIBER_TIMEOUT_MS} is disconnected (it resumes with `since=` when it reconnects).
 */
import type { StorePort } from '../store/port.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { sleep } from '../roles/supervisor.ts';
import type { Scheduler, TimerHandle } from './scheduler.ts';
import { messageFrame, type Transport } from './wire.ts';

/** Messages read from the store per round trip of a drain. */
export const DRAIN_BATCH_SIZE = 500;
/** Bytes a subscriber may have buffered before its drain waits for the socket. */
export const SUBSCRIBER_HIGH_WATER_BYTES = 256 * 1024;
/** A subscriber that has not taken its buffered bytes for this long is disconnected. */
export const SLOW_SUBSCRIBER_TIMEOUT_MS = 15_000;
/** Delay before a drain that failed on a store error is tried again. */
export const DRAIN_RETRY_MS = 1_000;

/** Where a subscriber's frames go: an HTTP stream or a WebSocket. */
export interface FrameSink {
  write(frame: string): void;
  /** Bytes written but not yet taken by the OS. */
  readonly bufferedBytes: number;
  /** Resolves once the buffer has drained or the sink closed. */
  whenDrained(): Promise<void>;
  /** End the connection; idempotent. */
  close(): void;
  readonly closed: boolean;
  /** Called once when the connection ends, whoever ended it. */
  onClose(listener: () => void): void;
}

export interface NtfyHubDeps {
  store: StorePort;
  scheduler: Scheduler;
  logger: Logger;
  metrics: Metrics;
  safetyRedrainMs: number;
  /** Messages per read; {@link DRAIN_BATCH_SIZE} unless a test wants small batches. */
  drainBatchSize?: number;
}

/** One live subscription: a set of topics, a cursor and a sink. */
export class Subscriber {
  private draining = false;
  private again = false;
  private scheduled = false;
  private closedFlag = false;

  constructor(
    private readonly hub: NtfyHub,
    readonly topics: readonly string[],
    /** The topic list as requested, which `open` and `keepalive` events carry. */
    readonly topicLabel: string,
    readonly transport: Transport,
    private readonly sink: FrameSink,
    /** Position of the last message sent (or skipped by `since`); null replays from the start. */
    public cursor: string | null,
  ) {}

  get closed(): boolean {
    return this.closedFlag || this.sink.closed;
  }

  /** Drain soon (once per event-loop turn however many wake-ups arrive), or again after the running drain. */
  kick(): void {
    if (this.closed) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.drain();
    });
  }

  /** Send everything after the cursor; resolves when the store had nothing more. */
  async drain(): Promise<void> {
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = true;
    try {
      do {
        this.again = false;
        await this.drainOnce();
      } while (this.again && !this.closed);
    } catch (err) {
      this.hub.drainFailed(this, err);
    } finally {
      this.draining = false;
    }
  }

  close(): void {
    if (this.closedFlag) return;
    this.closedFlag = true;
    this.sink.close();
  }

  private async drainOnce(): Promise<void> {
    const { store, metrics } = this.hub.deps;
    for (;;) {
      if (this.closed) return;
      if (this.sink.bufferedBytes > SUBSCRIBER_HIGH_WATER_BYTES && !(await this.waitForSocket())) return;
      const result = await store.readNtfyMessages(this.topics, this.cursor, this.hub.batchSize);
      if (this.closed) return;
      for (const message of result.messages) this.sink.write(messageFrame(this.transport, message));
      if (result.messages.length > 0) metrics.ntfyDelivered.inc({ transport: this.transport }, result.messages.length);
      this.cursor = result.position;
      if (result.complete) return;
    }
  }

  /** False when the peer stalled past the timeout and was disconnected. */
  private async waitForSocket(): Promise<boolean> {
    let timer: TimerHandle | undefined;
    const stalled = new Promise<boolean>((resolve) => {
      timer = this.hub.deps.scheduler.after(SLOW_SUBSCRIBER_TIMEOUT_MS, () => resolve(false));
    });
    const drained = await Promise.race([this.sink.whenDrained().then(() => true), stalled]);
    timer?.cancel();
    if (!drained && !this.closed) {
      this.hub.deps.metrics.ntfySlowSubscribersDropped.inc();
      this.hub.deps.logger.info({ topics: this.topicLabel, transport: this.transport }, 'ntfy subscriber stopped reading; disconnected');
      this.close();
    }
    return drained && !this.closed;
  }
}

export class NtfyHub {
  /** Most topics have one subscriber (one phone); a Set only when there are more. */
  private readonly byTopic = new Map<string, Subscriber | Set<Subscriber>>();
  private readonly subscribers = new Set<Subscriber>();
  private stopListening: (() => void) | null = null;
  readonly batchSize: number;

  constructor(readonly deps: NtfyHubDeps) {
    this.batchSize = deps.drainBatchSize ?? DRAIN_BATCH_SIZE;
  }

  /** Subscribers open in this process. */
  get size(): number {
    return this.subscribers.size;
  }

  /**
   * Register a subscription and start draining it from `cursor`. The caller has written the
   * `open` event (and any `since=latest` messages) to `sink` already.
   */
  subscribe(topics: readonly string[], topicLabel: string, transport: Transport, sink: FrameSink, cursor: string | null): Subscriber {
    this.listen();
    const subscriber = new Subscriber(this, topics, topicLabel, transport, sink, cursor);
    this.subscribers.add(subscriber);
    for (const topic of topics) {
      const current = this.byTopic.get(topic);
      if (current === undefined) this.byTopic.set(topic, subscriber);
      else if (current instanceof Set) current.add(subscriber);
      else this.byTopic.set(topic, new Set([current, subscriber]));
    }
    this.deps.metrics.ntfySubscribers.inc({ transport });
    sink.onClose(() => this.remove(subscriber));
    subscriber.kick();
    return subscriber;
  }

  /** Hear the store's wake-ups (once). */
  listen(): void {
    this.stopListening ??= this.deps.store.onNtfyAppend((topic) => this.wake(topic));
  }

  /** Kick every subscriber of `topic`. */
  wake(topic: string): void {
    const entry = this.byTopic.get(topic);
    if (entry instanceof Set) for (const subscriber of entry) subscriber.kick();
    else entry?.kick();
  }

  /** One safety pass: kick every subscriber whose cursor is behind the store head. */
  async redrainBehind(): Promise<number> {
    const head = await this.deps.store.ntfyHeadId();
    if (head === null) return 0;
    let kicked = 0;
    for (const subscriber of this.subscribers) {
      if (subscriber.cursor === null || subscriber.cursor < head) {
        subscriber.kick();
        kicked += 1;
      }
    }
    return kicked;
  }

  /**
   * The pusher task: hear wake-ups and re-drain on the safety timer until `signal` aborts, then
   * close every subscription (so the HTTP server can close).
   */
  async run(signal: AbortSignal): Promise<void> {
    this.listen();
    while (!signal.aborted) {
      try {
        await sleep(this.deps.safetyRedrainMs, signal);
      } catch {
        break;
      }
      try {
        await this.redrainBehind();
      } catch (err) {
        this.deps.logger.warn({ err: (err as Error).message }, 'ntfy safety re-drain could not read the store head');
      }
    }
    this.close();
  }

  /** Stop hearing wake-ups and end every subscription. */
  close(): void {
    this.stopListening?.();
    this.stopListening = null;
    for (const subscriber of [...this.subscribers]) subscriber.close();
  }

  /** @internal A drain hit a store error: count it, and try again shortly (the safety pass would too). */
  drainFailed(subscriber: Subscriber, err: unknown): void {
    this.deps.metrics.ntfyDrainFailures.inc();
    this.deps.logger.warn({ topics: subscriber.topicLabel, err: (err as Error).message }, 'ntfy drain failed; retrying');
    this.deps.scheduler.after(DRAIN_RETRY_MS, () => subscriber.kick());
  }

  private remove(subscriber: Subscriber): void {
    if (!this.subscribers.delete(subscriber)) return;
    for (const topic of subscriber.topics) {
      const entry = this.byTopic.get(topic);
      if (entry === subscriber) this.byTopic.delete(topic);
      else if (entry instanceof Set) {
        entry.delete(subscriber);
        if (entry.size === 1) this.byTopic.set(topic, entry.values().next().value as Subscriber);
      }
    }
    this.deps.metrics.ntfySubscribers.dec({ transport: subscriber.transport });
  }
}
