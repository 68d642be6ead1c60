/**
 * The pusher: the live subscriptions of this process and how they are fed.
 *
 * The store's topic queues are the only source of truth; nothing is removed on send. The hub
 * follows the store's append events ({@link StorePort.onNtfyAppend}), each carrying the message
 * and the id allocated before it, and keeps a **feed position**: every message of a topic held
 * here (one with a subscriber) with an id up to it has been offered to that topic's subscribers.
 *
 * - An event whose `previousId` is the feed position continues the chain: its message is offered
 *   to the subscribers of its topic (serialised once per frame format, shared by all of them) and
 *   the position moves to it. This is the whole per-message cost: no store read, no timer.
 * - An event that does not continue the chain means appends were missed (another process on the
 *   same SQLite file, a Redis pub/sub reconnect): the hub **bridges** with one read of every held
 *   topic after the feed position, offers what it finds, and moves the position to the read's.
 *   Events heard meanwhile are queued (bounded; past the bound, the hub bridges again) and then
 *   followed, those the read covered skipped.
 * - A periodic safety check ({@link NtfyHub.run}) bridges when the store head is past the feed
 *   position, so a lost event at the end of a burst costs latency, never a message.
 * - A new subscriber catches up from its own cursor with store reads while the hub already offers
 *   it its topics' messages, which it buffers; then it goes live (see `subscriber.ts`). It is
 *   registered before its first read, so nothing committed after its cursor can slip between
 *   the replay and the live stream, and ids at or below its cursor are never sent twice.
 * - A new subscriber whose cursor is at or past the feed position (the common `since=none`
 *   subscription: its cursor is the store head, which the feed has reached) goes live at once,
 *   without a read: every message after the feed position is yet to be followed or bridged,
 *   and it is offered to the subscribers registered by then. (Not while a sync or bridge read
 *   runs: that read's topics were taken before this subscriber's.) An idle phone's subscription
 *   then costs the store one shared head read and nothing else.
 *
 * - Until the first sync has learned the position (after the store confirmed it hears appends,
 *   `ntfyAppendsHeard`: a Redis subscription takes a round trip to be confirmed), a new subscriber
 *   is parked, and the sync starts its catch-up once both are done. A read begun earlier could
 *   miss a message committed after it whose event was never heard, for good: the head read then
 *   counts that message as followed, so no safety check would bridge to it.
 *
 * Why this is complete: a message is either committed before a subscriber's catch-up read is
 * issued (so it is in that read), or after it, in which case its event reaches the hub after the
 * subscriber registered and is offered to it, or is missed and then bridged (the bridge reads every
 * topic held at its start; a subscriber registered later reads a later snapshot itself).
 */
import type { NtfyAppendEvent, NtfyMessage } from '../store/port-ntfy.ts';
import type { StorePort } from '../store/port.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Scheduler } from './scheduler.ts';
import {
  CATCH_UP_BUFFER_MESSAGES,
  DRAIN_BATCH_SIZE,
  DRAIN_RETRY_MS,
  Subscriber,
  type FrameSink,
  type SubscriberHost,
} from './subscriber.ts';
import { releaseNothing } from './visitor.ts';
import { MessageFrames, type Transport } from './wire.ts';
import { sleep } from '../util/async.ts';

export {
  CATCH_UP_BUFFER_MESSAGES,
  DRAIN_BATCH_SIZE,
  DRAIN_RETRY_MS,
  SLOW_SUBSCRIBER_TIMEOUT_MS,
  SUBSCRIBER_HIGH_WATER_BYTES,
  Subscriber,
  type FrameSink,
} from './subscriber.ts';

/**
 * Append events kept while a bridge read runs. Past it they are dropped and the hub bridges once
 * more afterwards: memory stays bounded however long a read takes under load.
 */
export const FEED_QUEUE_EVENTS = 10_000;

export interface NtfyHubDeps {
  store: StorePort;
  scheduler: Scheduler;
  logger: Logger;
  metrics: Metrics;
  safetyRedrainMs: number;
  /** Messages per read; {@link DRAIN_BATCH_SIZE} unless a test wants small batches. */
  drainBatchSize?: number;
  /** {@link FEED_QUEUE_EVENTS} unless a test wants a small bound. */
  feedQueueEvents?: number;
  /** {@link CATCH_UP_BUFFER_MESSAGES} unless a test wants a small bound. */
  catchUpBufferMessages?: number;
}

/** Counters bound to their label once: `inc` with a label object hashes the labels on every call. */
type DeliveredCounters = Record<Transport, { inc(value: number): void }>;

export class NtfyHub implements SubscriberHost {
  /** Most topics have one subscriber (one phone); a Set only when there are more. */
  private readonly byTopic = new Map<string, Subscriber | Set<Subscriber>>();
  private readonly subscribers = new Set<Subscriber>();
  /** Subscribers registered before the first sync ended, started by it ({@link subscribe}). */
  private readonly parked = new Set<Subscriber>();
  private stopListening: (() => void) | null = null;
  private closed = false;
  /** See the module comment; null until the first sync, or while the store has never had a message. */
  private position: string | null = null;
  /** The first sync has set {@link position} (null then means the store had no message). */
  private positionKnown = false;
  /** A sync or bridge read is running: events wait in {@link queued}. */
  private syncing = false;
  /** Events heard while syncing, in order; null when too many came and were dropped. */
  private queued: NtfyAppendEvent[] | null = [];
  private readonly deliveredBy: DeliveredCounters;
  private readonly feedQueueEvents: number;
  readonly batchSize: number;
  readonly catchUpBufferMessages: number;
  readonly scheduler: Scheduler;

  constructor(readonly deps: NtfyHubDeps) {
    this.batchSize = deps.drainBatchSize ?? DRAIN_BATCH_SIZE;
    this.feedQueueEvents = deps.feedQueueEvents ?? FEED_QUEUE_EVENTS;
    this.catchUpBufferMessages = deps.catchUpBufferMessages ?? CATCH_UP_BUFFER_MESSAGES;
    this.scheduler = deps.scheduler;
    const counter = deps.metrics.ntfyDelivered;
    this.deliveredBy = { json: counter.labels('json'), sse: counter.labels('sse'), raw: counter.labels('raw'), ws: counter.labels('ws') };
  }

  /** Subscribers open in this process. */
  get size(): number {
    return this.subscribers.size;
  }

  /** The feed position (tests and diagnostics). */
  get feedPosition(): string | null {
    return this.position;
  }

  /** Live subscriptions per topic in this process (the console's ntfy page, through the heartbeat). */
  topicSubscriberCounts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const [topic, held] of this.byTopic) counts[topic] = held instanceof Set ? held.size : 1;
    return counts;
  }

  /**
   * Register a subscription and start it catching up from `cursor`. The caller has written the
   * `open` event (and any `since=latest` messages) to `sink` already. `release` runs once when
   * the connection ends (the visitor's subscription slot).
   */
  subscribe(
    topics: readonly string[],
    topicLabel: string,
    transport: Transport,
    sink: FrameSink,
    cursor: string | null,
    release: () => void = releaseNothing,
  ): Subscriber {
    const subscriber = new Subscriber(this, topics, topicLabel, transport, sink, cursor, release);
    if (this.closed) {
      // A subscription prepared while the server was stopping.
      sink.onClose(subscriber);
      subscriber.close();
      return subscriber;
    }
    this.listen();
    this.subscribers.add(subscriber);
    for (const topic of topics) {
      const current = this.byTopic.get(topic);
      if (current === undefined) this.byTopic.set(topic, subscriber);
      else if (current instanceof Set) current.add(subscriber);
      else this.byTopic.set(topic, new Set([current, subscriber]));
    }
    this.deps.metrics.ntfySubscribers.inc({ transport });
    // Registered first: a sink that is already closed calls back at once.
    sink.onClose(subscriber);
    // Before the first sync the store may not yet tell us of appends (a Redis subscription still
    // being confirmed): a catch-up read now could miss a message committed after it and never
    // heard. Parked, it starts once the sync has seen appends heard and the head read.
    if (!this.positionKnown) this.parked.add(subscriber);
    else if (this.feedCovers(cursor)) subscriber.goLive();
    else subscriber.catchUp();
    return subscriber;
  }

  /**
   * True when the feed will offer every message after `cursor` to a subscriber registered now
   * (see the module comment): the position is known, no sync or bridge read is running, and
   * nothing after the cursor has been followed yet.
   */
  private feedCovers(cursor: string | null): boolean {
    if (!this.positionKnown || this.syncing) return false;
    const position = this.position;
    return position === null || (cursor !== null && cursor >= position);
  }

  /** Hear the store's append events and learn the feed position (once). */
  listen(): void {
    if (this.stopListening) return;
    this.stopListening = this.deps.store.onNtfyAppend((event) => this.hear(event));
    this.sync();
  }

  /**
   * One safety check: bridge when the store head is past the feed position (events were lost
   * with nothing after them to reveal it). True when it bridged.
   */
  async safetyCheck(): Promise<boolean> {
    if (this.syncing) return false;
    const head = await this.deps.store.ntfyHeadId();
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a bridge can start during the await; tsc keeps the narrowing from before it.
    if (head === null || this.syncing || (this.position !== null && head <= this.position)) return false;
    this.bridge();
    return true;
  }

  /**
   * The pusher task: hear events and run the safety check on its timer until `signal` aborts,
   * then close every subscription (so the HTTP server can close).
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
        await this.safetyCheck();
      } catch (err) {
        this.deps.logger.warn({ err: (err as Error).message }, 'ntfy safety check could not read the store head');
      }
    }
    this.close();
  }

  /** Stop hearing events and end every subscription, for good. */
  close(): void {
    this.closed = true;
    this.stopListening?.();
    this.stopListening = null;
    for (const subscriber of [...this.subscribers]) subscriber.close();
  }

  // ---- SubscriberHost ----------------------------------------------------------------------

  read(topics: readonly string[], afterId: string | null, limit: number) {
    return this.deps.store.readNtfyMessages(topics, afterId, limit);
  }

  delivered(transport: Transport, count: number): void {
    this.deliveredBy[transport].inc(count);
  }

  catchUpFailed(subscriber: Subscriber, err: unknown): void {
    this.deps.metrics.ntfyDrainFailures.inc();
    this.deps.logger.warn({ topics: subscriber.topicLabel, err: (err as Error).message }, 'ntfy catch-up read failed; retrying');
  }

  droppedSlow(subscriber: Subscriber): void {
    this.deps.metrics.ntfySlowSubscribersDropped.inc();
    this.deps.logger.info(
      { topics: subscriber.topicLabel, transport: subscriber.transport },
      'ntfy subscriber stopped reading; disconnected',
    );
  }

  // ---- the feed ----------------------------------------------------------------------------

  private hear(event: NtfyAppendEvent): void {
    if (this.syncing) {
      const queued = this.queued;
      if (queued === null) return;
      if (queued.length < this.feedQueueEvents) queued.push(event);
      else this.queued = null;
      return;
    }
    this.follow(event);
  }

  private follow(event: NtfyAppendEvent): void {
    const { message, previousId } = event;
    const position = this.position;
    if (position !== null && message.id <= position) return;
    if (previousId !== position && this.byTopic.size > 0) {
      // Missed appends: the bridge read covers this message too (it is committed).
      this.bridge();
      return;
    }
    // Nothing held, or the chain continues.
    this.position = message.id;
    this.offer(message);
  }

  private offer(message: NtfyMessage): void {
    const entry = this.byTopic.get(message.topic);
    // expiresMs 0: a message never stored (`Cache: no`), live only.
    if (entry === undefined || (message.expiresMs !== 0 && message.expiresMs <= this.deps.store.clock.nowMs())) return;
    const frames = new MessageFrames(message);
    if (entry instanceof Set) for (const subscriber of entry) subscriber.offer(frames);
    else entry.offer(frames);
  }

  /**
   * Learn the feed position from the store head (at start; events heard meanwhile wait), once
   * appends are heard: a head read earlier could count a message whose event was never heard.
   * Then start the subscribers parked meanwhile, with catch-up reads that begin after both.
   */
  private sync(): void {
    this.runExclusive(
      async () => {
        await this.deps.store.ntfyAppendsHeard();
        const head = await this.deps.store.ntfyHeadId();
        if (this.position === null || (head !== null && head > this.position)) this.position = head;
        this.positionKnown = true;
        const parked = [...this.parked];
        this.parked.clear();
        for (const subscriber of parked) subscriber.catchUp();
      },
      () => this.sync(),
    );
  }

  /** Read every held topic after the feed position and offer what is there. */
  private bridge(): void {
    this.runExclusive(
      async () => {
        this.deps.metrics.ntfyFeedBridges.inc();
        for (;;) {
          const topics = [...this.byTopic.keys()];
          if (topics.length === 0) {
            this.position = await this.deps.store.ntfyHeadId();
            return;
          }
          const result = await this.deps.store.readNtfyMessages(topics, this.position, this.batchSize);
          for (const message of result.messages) this.offer(message);
          this.position = result.position;
          if (result.complete) return;
        }
      },
      () => this.bridge(),
    );
  }

  /**
   * Run a sync or bridge read with events queued meanwhile, then follow the queue. On a store
   * error, `retry` runs after {@link DRAIN_RETRY_MS}, events queueing (or overflowing) until then.
   */
  private runExclusive(read: () => Promise<void>, retry: () => void): void {
    if (this.syncing) return;
    this.syncing = true;
    this.queued = [];
    read().then(
      () => {
        this.syncing = false;
        const queued = this.queued;
        this.queued = [];
        // Dropped events: bridge what came after the read.
        if (queued === null) this.bridge();
        // A gap in the queue starts another bridge, which covers the rest of the queue too.
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- follow() can start a bridge; tsc keeps the narrowing from before the loop.
        else for (let i = 0; i < queued.length && !this.syncing; i++) this.follow(queued[i] as NtfyAppendEvent);
      },
      (err: unknown) => {
        this.deps.metrics.ntfyDrainFailures.inc();
        this.deps.logger.warn({ err: (err as Error).message }, 'ntfy feed read failed; retrying');
        this.scheduler.after(DRAIN_RETRY_MS, () => {
          this.syncing = false;
          if (this.stopListening) retry();
        });
      },
    );
  }

  removed(subscriber: Subscriber): void {
    this.parked.delete(subscriber);
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
