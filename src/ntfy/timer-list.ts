/**
 * Many timers of one interval on one scheduler timer: every stream's keepalive, every WebSocket's
 * ping and silence deadline.
 *
 * Why: each idle subscription held a Node timer per job (the `Timeout` object, its handle and
 * its bound callback, some 260 bytes) for hours, and 10,000 subscriptions held 10,000–20,000 of
 * them. Timers that share an interval fall due in the order they were armed, so they can wait in
 * one list: arming appends to the tail, firing takes from the head, and the list keeps a single
 * scheduler timer for its head. A timer here is one small node (about 32 bytes); cancelling and
 * re-arming ({@link ListTimer.refresh}, a deadline pushed back) unlink it in constant time.
 *
 * Timing is exact to the millisecond of the {@link Scheduler}'s clock: a timer armed at `t` fires
 * at `t + intervalMs` (later if the process is busy); a repeating one is then armed again from the
 * time it fired.
 */
import type { Scheduler, TimerHandle } from './scheduler.ts';

/** One timer of a {@link TimerList}, for one target. */
export class ListTimer<T> implements TimerHandle {
  /** @internal */ prev: ListTimer<T> | null = null;
  /** @internal */ next: ListTimer<T> | null = null;
  /** @internal When it falls due (the scheduler's clock); -1 while not armed. */
  dueMs = -1;

  constructor(
    private readonly list: TimerList<T>,
    readonly target: T,
  ) {}

  cancel(): void {
    this.list.unlink(this);
  }

  /** Arm it again from now (also after it was cancelled). */
  refresh(): void {
    this.list.unlink(this);
    this.list.append(this);
  }
}

export class TimerList<T> {
  private head: ListTimer<T> | null = null;
  private tail: ListTimer<T> | null = null;
  /** The scheduler timer for the head, or null when none is set. */
  private wake: TimerHandle | null = null;
  /** {@link run} is going through the due timers (it sets the next wake itself). */
  private running = false;
  private readonly onWake = this.run.bind(this);

  /**
   * @param fire called with a timer's target when it falls due
   * @param repeating arm each timer again when it fires (keepalives, pings), or only once (deadlines)
   */
  constructor(
    private readonly scheduler: Scheduler,
    readonly intervalMs: number,
    private readonly repeating: boolean,
    private readonly fire: (target: T) => void,
  ) {}

  /** A timer for `target`, armed from now. */
  start(target: T): ListTimer<T> {
    const timer = new ListTimer(this, target);
    this.append(timer);
    return timer;
  }

  /** Timers armed (tests and diagnostics). */
  get size(): number {
    let count = 0;
    for (let timer = this.head; timer !== null; timer = timer.next) count += 1;
    return count;
  }

  /** @internal Arm `timer` at the tail: due one interval from now, so no earlier than any other. */
  append(timer: ListTimer<T>): void {
    timer.dueMs = this.scheduler.now() + this.intervalMs;
    timer.prev = this.tail;
    timer.next = null;
    if (this.tail === null) this.head = timer;
    else this.tail.next = timer;
    this.tail = timer;
    this.schedule();
  }

  /** @internal Disarm `timer` (a no-op when it is not armed). */
  unlink(timer: ListTimer<T>): void {
    if (timer.dueMs < 0) return;
    if (timer.prev === null) this.head = timer.next;
    else timer.prev.next = timer.next;
    if (timer.next === null) this.tail = timer.prev;
    else timer.next.prev = timer.prev;
    timer.prev = null;
    timer.next = null;
    timer.dueMs = -1;
  }

  /**
   * Keep one scheduler timer, for the head. The head only ever gets later (timers are appended
   * at the tail), so a wake already set is never later than the head: it fires, finds what is
   * due, and sets the next one.
   */
  private schedule(): void {
    if (this.wake !== null || this.running || this.head === null) return;
    this.wake = this.scheduler.after(Math.max(0, this.head.dueMs - this.scheduler.now()), this.onWake);
  }

  private run(): void {
    this.wake = null;
    this.running = true;
    const now = this.scheduler.now();
    try {
      for (let timer = this.head; timer !== null && timer.dueMs <= now; timer = this.head) {
        this.unlink(timer);
        // Armed again before its target runs, so the target may cancel it.
        if (this.repeating) this.append(timer);
        this.fire(timer.target);
      }
    } finally {
      this.running = false;
      this.schedule();
    }
  }
}
