/**
 * Timers of the ntfy server (keepalives, WebSocket pings and deadlines), behind an interface so
 * tests drive them with {@link ManualScheduler} instead of waiting 45 seconds.
 */

/** Cancels a scheduled callback; calling it twice is harmless. */
export type Cancel = () => void;

export interface Scheduler {
  /** Call `fn` every `intervalMs` until cancelled. */
  every(intervalMs: number, fn: () => void): Cancel;
  /** Call `fn` once after `delayMs` unless cancelled first. */
  after(delayMs: number, fn: () => void): Cancel;
}

/** Node timers, unref'd: a pending keepalive never keeps a stopping process alive. */
export const realScheduler: Scheduler = {
  every(intervalMs, fn) {
    const timer = setInterval(fn, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  },
  after(delayMs, fn) {
    const timer = setTimeout(fn, delayMs);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

interface ManualTimer {
  dueMs: number;
  intervalMs: number | null;
  fn: () => void;
  cancelled: boolean;
}

/** A scheduler whose time only moves with {@link advance}; callbacks run in due order. */
export class ManualScheduler implements Scheduler {
  private nowMs = 0;
  private readonly timers = new Set<ManualTimer>();

  every(intervalMs: number, fn: () => void): Cancel {
    return this.add({ dueMs: this.nowMs + intervalMs, intervalMs, fn, cancelled: false });
  }

  after(delayMs: number, fn: () => void): Cancel {
    return this.add({ dueMs: this.nowMs + delayMs, intervalMs: null, fn, cancelled: false });
  }

  /** Timers still scheduled. */
  get pending(): number {
    return this.timers.size;
  }

  /** Move time forward by `ms`, running every callback that falls due, in order. */
  advance(ms: number): void {
    const target = this.nowMs + ms;
    for (;;) {
      let next: ManualTimer | undefined;
      for (const timer of this.timers) if (timer.dueMs <= target && (!next || timer.dueMs < next.dueMs)) next = timer;
      if (!next) break;
      this.nowMs = next.dueMs;
      if (next.intervalMs === null) this.timers.delete(next);
      else next.dueMs += Math.max(1, next.intervalMs);
      next.fn();
    }
    this.nowMs = target;
  }

  private add(timer: ManualTimer): Cancel {
    this.timers.add(timer);
    return () => {
      timer.cancelled = true;
      this.timers.delete(timer);
    };
  }
}
