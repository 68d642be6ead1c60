/**
 * Timers of the ntfy server (keepalives, WebSocket pings and deadlines), behind an interface so
 * tests drive them with {@link ManualScheduler} instead of waiting 45 seconds.
 *
 * A timer is a small handle object rather than a cancel closure. (The timers every subscription
 * holds for hours, tens of thousands at a time, share one scheduler timer per interval:
 * `timer-list.ts`.)
 */

export interface TimerHandle {
  /** Stop the timer; calling it twice is harmless. */
  cancel(): void;
  /** Start the current wait over from now (a deadline pushed back, without a new timer). */
  refresh(): void;
}

export interface Scheduler {
  /** The scheduler's clock (whole ms, from an arbitrary origin): what its delays count on. */
  now(): number;
  /** Call `fn` every `intervalMs` until cancelled. */
  every(intervalMs: number, fn: () => void): TimerHandle;
  /** Call `fn` once after `delayMs` unless cancelled first. */
  after(delayMs: number, fn: () => void): TimerHandle;
}

class NodeTimer implements TimerHandle {
  constructor(
    private readonly timer: NodeJS.Timeout,
    private readonly repeating: boolean,
  ) {}

  cancel(): void {
    if (this.repeating) clearInterval(this.timer);
    else clearTimeout(this.timer);
  }

  refresh(): void {
    this.timer.refresh();
  }
}

/** Node timers, unref'd: a pending keepalive never keeps a stopping process alive. */
export const realScheduler: Scheduler = {
  // Whole milliseconds of the monotonic clock since the process started (small integers).
  now() {
    return Math.floor(performance.now());
  },
  every(intervalMs, fn) {
    return new NodeTimer(setInterval(fn, intervalMs).unref(), true);
  },
  after(delayMs, fn) {
    return new NodeTimer(setTimeout(fn, delayMs).unref(), false);
  },
};

class ManualTimer implements TimerHandle {
  constructor(
    private readonly owner: ManualScheduler,
    public dueMs: number,
    readonly delayMs: number,
    readonly repeating: boolean,
    readonly fn: () => void,
  ) {}

  cancel(): void {
    this.owner.remove(this);
  }

  refresh(): void {
    this.dueMs = this.owner.now() + this.delayMs;
  }
}

/** A scheduler whose time only moves with {@link advance}; callbacks run in due order. */
export class ManualScheduler implements Scheduler {
  private nowMs = 0;
  private readonly timers = new Set<ManualTimer>();

  every(intervalMs: number, fn: () => void): TimerHandle {
    return this.add(new ManualTimer(this, this.nowMs + intervalMs, intervalMs, true, fn));
  }

  after(delayMs: number, fn: () => void): TimerHandle {
    return this.add(new ManualTimer(this, this.nowMs + delayMs, delayMs, false, fn));
  }

  /** The scheduler's own time (ms since it was made). */
  now(): number {
    return this.nowMs;
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
      if (next.repeating) next.dueMs += Math.max(1, next.delayMs);
      else this.timers.delete(next);
      next.fn();
    }
    this.nowMs = target;
  }

  /** @internal */
  remove(timer: ManualTimer): void {
    this.timers.delete(timer);
  }

  private add(timer: ManualTimer): ManualTimer {
    this.timers.add(timer);
    return timer;
  }
}
