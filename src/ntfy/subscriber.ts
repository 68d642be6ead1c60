/**
 * One live ntfy subscription: a set of topics, a cursor, a sink, and the two ways messages reach
 * it (see `hub.ts` for the whole picture).
 *
 * - **Catching up**: it reads the store after its cursor until a read is complete. Meanwhile the
 *   hub already offers it every message of its topics, which it keeps in a bounded buffer; when
 *   the read completes at position P, the buffered messages after P follow and it goes live.
 *   The buffer starts before the read is issued, so every message is either in the read's
 *   snapshot or in the buffer (or both: ids at or below the cursor are dropped). A buffer that
 *   overflows is dropped and the subscriber reads once more, buffering afresh.
 * - **Live**: the hub offers each message as its append event arrives; it is written at once, with
 *   its frame serialised once for all subscribers (`MessageFrames`). No store read per message.
 *
 * A subscriber whose socket does not take its bytes (more than {@link SUBSCRIBER_HIGH_WATER_BYTES}
 * buffered) goes back to catching up, which first waits for the socket; one stalled for
 * {@link SLOW_SUBSCRIBER_TIMEOUT_MS} is disconnected (it resumes with `since=` when it reconnects).
 * Messages wait in the store meanwhile, never in memory.
 */
import type { NtfyMessage } from '../store/port-ntfy.ts';
import type { Scheduler, TimerHandle } from './scheduler.ts';
import { messageFrame, type MessageFrames, type Transport } from './wire.ts';

/** Messages read from the store per round trip of a catch-up. */
export const DRAIN_BATCH_SIZE = 500;
/** Bytes a subscriber may have buffered before it stops being written to and waits for its socket. */
export const SUBSCRIBER_HIGH_WATER_BYTES = 256 * 1024;
/** A subscriber that has not taken its buffered bytes for this long is disconnected. */
export const SLOW_SUBSCRIBER_TIMEOUT_MS = 15_000;
/** Delay before a catch-up that failed on a store error is tried again. */
export const DRAIN_RETRY_MS = 1_000;
/**
 * Messages a catching-up subscriber keeps while its read runs (references to messages the hub
 * holds anyway). Past it the buffer is dropped and the subscriber reads again: a long replay
 * under heavy traffic costs one more read, never unbounded memory.
 */
export const CATCH_UP_BUFFER_MESSAGES = 1_000;

/**
 * Told once when a sink's connection ends: a function, or an object whose `sinkClosed` is called
 * (a subscriber listens as itself: no closure per subscription).
 */
export type CloseListener = (() => void) | { sinkClosed(): void };

/** Tell `listener` that its sink closed. */
export function notifyClosed(listener: CloseListener): void {
  if (typeof listener === 'function') listener();
  else listener.sinkClosed();
}

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
  onClose(listener: CloseListener): void;
}

/** What a subscriber needs of its hub. */
export interface SubscriberHost {
  readonly batchSize: number;
  /** Messages kept while catching up ({@link CATCH_UP_BUFFER_MESSAGES} by default). */
  readonly catchUpBufferMessages: number;
  readonly scheduler: Scheduler;
  read(
    topics: readonly string[],
    afterId: string | null,
    limit: number,
  ): Promise<{ messages: NtfyMessage[]; position: string | null; complete: boolean }>;
  /** Count frames written (metrics). */
  delivered(transport: Transport, count: number): void;
  /** A catch-up read failed: count and log it. */
  catchUpFailed(subscriber: Subscriber, err: unknown): void;
  /** The peer stopped reading and was disconnected: count and log it. */
  droppedSlow(subscriber: Subscriber): void;
  /** The subscriber's connection ended: forget it. */
  removed(subscriber: Subscriber): void;
}

export class Subscriber {
  /** Live: written as the hub offers. Otherwise catching up. */
  private live = false;
  /** A catch-up is running (or waiting to retry). */
  private catchingUp = false;
  /** Messages offered during a catch-up; null when dropped (overflow), so the catch-up reads again. */
  private buffer: MessageFrames[] | null = null;
  private closedFlag = false;

  constructor(
    private readonly host: SubscriberHost,
    readonly topics: readonly string[],
    /** The topic list as requested, which `open` and `keepalive` events carry. */
    readonly topicLabel: string,
    readonly transport: Transport,
    private readonly sink: FrameSink,
    /** Position of the last message sent (or skipped by `since`); null replays from the start. */
    public cursor: string | null,
    /** Gives the visitor's connection slot back, once, when the connection ends. */
    private readonly release: () => void,
  ) {}

  /** @internal The sink's connection ended (whoever ended it); the hub listens for it as the sink's close listener. */
  sinkClosed(): void {
    this.closedFlag = true;
    this.buffer = null;
    this.host.removed(this);
    this.release();
  }

  get closed(): boolean {
    return this.closedFlag || this.sink.closed;
  }

  get isLive(): boolean {
    return this.live;
  }

  /** Start (or restart) catching up from the cursor; a catch-up already running carries on. */
  catchUp(): void {
    if (this.catchingUp || this.closed) return;
    this.live = false;
    this.catchingUp = true;
    this.buffer = [];
    void this.runCatchUp();
  }

  /**
   * Go live without catching up: the hub's feed covers everything after the cursor (`hub.ts`).
   * Only for a subscriber that never caught up.
   */
  goLive(): void {
    if (this.catchingUp || this.closed) return;
    this.live = true;
  }

  /**
   * The hub hands a message of one of this subscriber's topics, in id order. Live, it is written
   * now; catching up, it is buffered for after the read.
   */
  offer(frames: MessageFrames): void {
    if (this.closedFlag) return;
    const id = frames.message.id;
    const cursor = this.cursor;
    if (cursor !== null && id <= cursor) return;
    if (!this.live) {
      const buffer = this.buffer;
      if (buffer === null) return;
      if (buffer.length < this.host.catchUpBufferMessages) buffer.push(frames);
      else this.buffer = null;
      return;
    }
    if (this.sink.closed) return;
    if (this.sink.bufferedBytes > SUBSCRIBER_HIGH_WATER_BYTES) {
      // The message stays in the store; the catch-up reads it once the socket drains.
      this.catchUp();
      this.buffer?.push(frames);
      return;
    }
    this.sink.write(frames.frame(this.transport));
    this.cursor = id;
    this.host.delivered(this.transport, 1);
  }

  close(): void {
    if (this.closedFlag) return;
    this.closedFlag = true;
    this.buffer = null;
    this.sink.close();
  }

  private async runCatchUp(): Promise<void> {
    try {
      for (;;) {
        if (this.closed) return;
        if (this.sink.bufferedBytes > SUBSCRIBER_HIGH_WATER_BYTES && !(await this.waitForSocket())) return;
        const result = await this.host.read(this.topics, this.cursor, this.host.batchSize);
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- close() can run during the read; tsc keeps the narrowing from before it.
        if (this.closed) return;
        this.write(result.messages);
        if (result.position !== null && (this.cursor === null || result.position > this.cursor)) this.cursor = result.position;
        if (!result.complete) continue;
        const buffered = this.buffer;
        if (buffered === null) {
          // Offers were dropped while this read ran: read what followed it, buffering afresh.
          this.buffer = [];
          continue;
        }
        this.buffer = null;
        this.live = true;
        this.catchingUp = false;
        for (const message of buffered) this.offer(message);
        return;
      }
    } catch (err) {
      this.host.catchUpFailed(this, err);
      this.host.scheduler.after(DRAIN_RETRY_MS, () => {
        this.catchingUp = false;
        this.catchUp();
      });
    }
  }

  private write(messages: readonly NtfyMessage[]): void {
    for (const message of messages) this.sink.write(messageFrame(this.transport, message));
    if (messages.length > 0) this.host.delivered(this.transport, messages.length);
  }

  /** False when the peer stalled past the timeout and was disconnected. */
  private async waitForSocket(): Promise<boolean> {
    let timer: TimerHandle | undefined;
    const stalled = new Promise<boolean>((resolve) => {
      timer = this.host.scheduler.after(SLOW_SUBSCRIBER_TIMEOUT_MS, () => resolve(false));
    });
    const drained = await Promise.race([this.sink.whenDrained().then(() => true), stalled]);
    timer?.cancel();
    if (!drained && !this.closed) {
      this.host.droppedSlow(this);
      this.close();
    }
    return drained && !this.closed;
  }
}
