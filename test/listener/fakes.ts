/**
 * Test doubles for the listener: manual timers, an in-memory cursor store, a recording sink, a
 * fake socket. Shared by the unit tests in src/listener/ and the relay tests in test/listener/.
 */
import { createLogger, type Logger } from '../../src/observability/logger.ts';
import type { AcceptedEvent, EventSink, RelayCursorStore, TimerHandle, Timers } from '../../src/listener/types.ts';
import { ManualClock } from '../../src/util/clock.ts';
import type { RelaySocket, SocketData } from '../../src/nostr/relay-socket.ts';

export function silentLogger(): Logger {
  return createLogger({ level: 'silent' });
}

const FAKE_TIMERS_MAX_FIRINGS = 10_000;

/** Timers driven by a ManualClock: nothing fires until `advance`. */
export class FakeTimers implements Timers {
  private nextId = 1;
  private readonly pending = new Map<number, { at: number; callback: () => void }>();

  constructor(readonly clock: ManualClock = new ManualClock()) {}

  setTimeout(callback: () => void, ms: number): TimerHandle {
    const id = this.nextId++;
    this.pending.set(id, { at: this.clock.nowMs() + Math.max(0, ms), callback });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.pending.delete(handle as number);
  }

  get count(): number {
    return this.pending.size;
  }

  /** Moves the clock forward, firing every timer that falls due, in time order. */
  advance(ms: number): void {
    const target = this.clock.nowMs() + ms;
    for (let fired = 0; ; fired++) {
      // A timer that keeps re-arming itself at zero delay is a bug in the code under test.
      if (fired > FAKE_TIMERS_MAX_FIRINGS) throw new Error(`more than ${FAKE_TIMERS_MAX_FIRINGS} timers fired in one advance`);
      let dueId: number | undefined;
      let dueAt = Infinity;
      for (const [id, timer] of this.pending) {
        if (timer.at <= target && timer.at < dueAt) {
          dueId = id;
          dueAt = timer.at;
        }
      }
      if (dueId === undefined) break;
      const timer = this.pending.get(dueId);
      this.pending.delete(dueId);
      this.clock.set(dueAt);
      timer?.callback();
    }
    this.clock.set(target);
  }
}

/** An in-memory cursor store that counts writes and can be made to fail. */
export class MemoryCursorStore implements RelayCursorStore {
  readonly cursors = new Map<string, number>();
  writes = 0;
  failReads = false;
  failWrites = false;

  async getRelayCursor(relayUrl: string): Promise<number | null> {
    if (this.failReads) throw new Error('store down');
    return this.cursors.get(relayUrl) ?? null;
  }

  async advanceRelayCursor(relayUrl: string, createdAt: number): Promise<void> {
    if (this.failWrites) throw new Error('store down');
    this.writes++;
    const current = this.cursors.get(relayUrl);
    if (current === undefined || createdAt > current) this.cursors.set(relayUrl, createdAt);
  }
}

/** Records what the listener hands on; tests wait on it instead of sleeping. */
export class RecordingSink {
  readonly accepted: AcceptedEvent[] = [];
  private waiters: Array<() => void> = [];
  private gate: Promise<void> | null = null;
  private openGate: (() => void) | null = null;
  /** Calls currently inside the sink. */
  inFlight = 0;
  /** When set, the next calls reject with it. */
  failWith: Error | null = null;

  readonly sink: EventSink = async (accepted) => {
    this.inFlight++;
    try {
      if (this.gate !== null) await this.gate;
      if (this.failWith !== null) throw this.failWith;
      this.accepted.push(accepted);
      for (const waiter of [...this.waiters]) waiter();
    } finally {
      this.inFlight--;
    }
  };

  ids(): string[] {
    return this.accepted.map((a) => a.event.id);
  }

  /** Makes every sink call wait until `release()`. */
  block(): void {
    this.gate = new Promise((resolve) => (this.openGate = resolve));
  }

  release(): void {
    this.openGate?.();
    this.gate = null;
    this.openGate = null;
  }

  waitFor(predicate: (accepted: readonly AcceptedEvent[]) => boolean, timeoutMs = 5_000): Promise<void> {
    if (predicate(this.accepted)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`sink condition not met within ${timeoutMs} ms; got ${this.accepted.length} events`));
      }, timeoutMs);
      const waiter = (): void => {
        if (!predicate(this.accepted)) return;
        clearTimeout(timer);
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        resolve();
      };
      this.waiters.push(waiter);
    });
  }

  waitForId(id: string, timeoutMs?: number): Promise<void> {
    return this.waitFor((accepted) => accepted.some((a) => a.event.id === id), timeoutMs);
  }
}

/**
 * Polls a condition every few milliseconds; for state with no event to wait on (status fields,
 * a relay's bookkeeping). The timeout only bounds a failing test.
 */
export async function waitUntil(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000, what = 'condition'): Promise<void> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A socket that records what is sent and lets a test feed frames. */
export class FakeSocket implements RelaySocket {
  readyState = 1;
  readonly sent: unknown[][] = [];
  pauses = 0;
  resumes = 0;
  terminated = false;
  private messageListener: ((data: SocketData, isBinary: boolean) => void) | null = null;

  send(data: string): void {
    this.sent.push(JSON.parse(data) as unknown[]);
  }
  close(): void {
    this.readyState = 3;
  }
  terminate(): void {
    this.terminated = true;
    this.readyState = 3;
  }
  pause(): void {
    this.pauses++;
  }
  resume(): void {
    this.resumes++;
  }
  on(event: string, listener: (...args: never[]) => void): this {
    if (event === 'message') this.messageListener = listener as unknown as (data: SocketData, isBinary: boolean) => void;
    return this;
  }

  /** Frames of one type that were sent, e.g. `sentOf('REQ')`. */
  sentOf(type: string): unknown[][] {
    return this.sent.filter((frame) => frame[0] === type);
  }
}
