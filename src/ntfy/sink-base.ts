/**
 * What every {@link FrameSink} shares (`sinks.ts`, `ws-sink.ts`): close listeners and drain
 * waiters kept lazily, and event listeners that are shared module-level functions finding their
 * sink through a property of the emitter, so a connection costs no closure per listener (under
 * tsx every named closure also carries a 256-byte property store). An idle subscription is
 * mostly its sink, and tens of thousands of them are held at once.
 */
import type { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import { notifyClosed, type CloseListener, type FrameSink } from './subscriber.ts';

const SINK = Symbol('ntfy sink');
type Tagged = { [SINK]?: SinkBase };

/** Make `emitter`'s shared listeners ({@link onEmitterEnd}, …) act on `sink`. */
export function tagEmitter(emitter: object, sink: SinkBase): void {
  (emitter as Tagged)[SINK] = sink;
}

/** The sink an emitter was tagged with. */
export function sinkOf(emitter: unknown): SinkBase | undefined {
  return (emitter as Tagged)[SINK];
}

/** Shared `close`/`error` listener: the connection ended. */
export function onEmitterEnd(this: unknown): void {
  sinkOf(this)?.finish();
}

/** Shared `drain` listener. */
export function onEmitterDrain(this: unknown): void {
  sinkOf(this)?.releaseDrainWaiters();
}

/** Shared listener that destroys the socket it is called on (its `error`, a peer's `end`). */
export function destroySocket(this: Socket): void {
  this.destroy();
}

/**
 * A sink writing to `output`: back-pressure read off it, a close that ends it the way the sink's
 * framing says (or cuts off a peer that is not reading), close listeners and drain waiters kept
 * lazily (most sinks never need more than one of each).
 */
export abstract class SinkBase implements FrameSink {
  protected ended = false;
  /** The first close listener (a sink usually has one: its subscriber), then any others. */
  private closeListener: CloseListener | null = null;
  private moreCloseListeners: CloseListener[] | null = null;
  private drainWaiters: Array<() => void> | null = null;

  constructor(protected readonly output: Writable) {}

  abstract write(frame: string): void;
  /** End the output the way the framing says (the last chunk, a close frame). */
  protected abstract endOutput(): void;
  protected abstract stopTimers(): void;

  /** Bytes written but not yet taken by the OS. */
  get bufferedBytes(): number {
    return this.output.writableLength;
  }

  protected get congested(): boolean {
    return this.output.writableLength > 0;
  }

  close(): void {
    if (this.ended) return;
    // A peer that is not reading would hold the end (and a WebSocket's close frame) forever: cut it off instead.
    if (this.output.writableLength > 0) this.output.destroy();
    else this.endOutput();
    this.finish();
  }

  get closed(): boolean {
    return this.ended;
  }

  whenDrained(): Promise<void> {
    if (this.ended || !this.congested) return Promise.resolve();
    return new Promise((resolve) => (this.drainWaiters ??= []).push(resolve));
  }

  onClose(listener: CloseListener): void {
    if (this.ended) notifyClosed(listener);
    else if (this.closeListener === null) this.closeListener = listener;
    else (this.moreCloseListeners ??= []).push(listener);
  }

  /** @internal */
  releaseDrainWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = null;
    if (waiters) for (const waiter of waiters) waiter();
  }

  /** @internal Mark the sink ended (once) and tell everyone. */
  finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.stopTimers();
    this.releaseDrainWaiters();
    const first = this.closeListener;
    const more = this.moreCloseListeners;
    this.closeListener = null;
    this.moreCloseListeners = null;
    if (first) notifyClosed(first);
    if (more) for (const listener of more) notifyClosed(listener);
  }
}
