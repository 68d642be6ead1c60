import type { Logger } from '../observability/logger.ts';
import type { Clock } from '../store/port.ts';
import type { RelayCursorStore, TimerHandle, Timers } from './types.ts';

/** A relay's cursor is written at most once per second: never one store write per event. */
export const CURSOR_FLUSH_INTERVAL_MS = 1_000;

export interface RelayCursorOptions {
  relay: string;
  store: RelayCursorStore;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  flushIntervalMs?: number;
}

/**
 * The resume point of one relay: the newest `created_at` of live events from it that the sink
 * took. Raised in memory as the sink resolves, written to the store in batches.
 */
export class RelayCursor {
  private stored: number | null = null;
  private loaded = false;
  private pending: number | null = null;
  private flushTimer: TimerHandle | null = null;
  private flushing: Promise<void> | null = null;
  private closed = false;
  private readonly flushIntervalMs: number;

  constructor(private readonly options: RelayCursorOptions) {
    this.flushIntervalMs = options.flushIntervalMs ?? CURSOR_FLUSH_INTERVAL_MS;
  }

  /** Reads the stored cursor once; later calls return the in-memory value. A store error is logged and read as "no cursor". */
  async load(): Promise<number | null> {
    if (!this.loaded) {
      try {
        this.stored = await this.options.store.getRelayCursor(this.options.relay);
        this.loaded = true;
      } catch (error) {
        this.options.logger.warn(
          { relay: this.options.relay, err: error },
          'could not read the relay cursor; resuming as if there were none',
        );
      }
    }
    return this.current;
  }

  /** The newest accepted created_at, stored or not yet stored. */
  get current(): number | null {
    if (this.pending === null) return this.stored;
    return this.stored === null ? this.pending : Math.max(this.stored, this.pending);
  }

  /**
   * Records a live event the sink took. A created_at in the future is clamped to now, so one event
   * dated next year cannot move the resume point past events still to come.
   */
  noteAccepted(createdAtSecs: number): void {
    const nowSecs = Math.floor(this.options.clock.nowMs() / 1000);
    const value = Math.min(createdAtSecs, nowSecs);
    const current = this.current;
    if (current !== null && value <= current) return;
    this.pending = value;
    if (this.flushTimer === null && !this.closed) {
      this.flushTimer = this.options.timers.setTimeout(() => {
        this.flushTimer = null;
        void this.flush();
      }, this.flushIntervalMs);
    }
  }

  /** Writes the pending value, if any. Never throws: a failed write is logged and retried later. */
  async flush(): Promise<void> {
    if (this.flushing !== null) await this.flushing;
    if (this.pending === null) return;
    const value = this.pending;
    this.flushing = (async () => {
      try {
        await this.options.store.advanceRelayCursor(this.options.relay, value);
        this.stored = this.stored === null ? value : Math.max(this.stored, value);
        if (this.pending !== null && this.pending <= value) this.pending = null;
      } catch (error) {
        this.options.logger.warn({ relay: this.options.relay, err: error }, 'could not store the relay cursor; will retry');
        if (this.flushTimer === null && !this.closed) {
          this.flushTimer = this.options.timers.setTimeout(() => {
            this.flushTimer = null;
            void this.flush();
          }, this.flushIntervalMs);
        }
      }
    })();
    try {
      await this.flushing;
    } finally {
      this.flushing = null;
    }
  }

  /** Stops the batching timer and writes what is pending. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.flushTimer !== null) {
      this.options.timers.clearTimeout(this.flushTimer);
      this.flushTimer = null;
    }
    await this.flush();
  }
}
