import type { Clock } from '../store/port.ts';

/** The process clock. */
export const systemClock: Clock = { nowMs: () => Date.now() };

/** A clock that only moves when told to; for tests and benchmarks. */
export class ManualClock implements Clock {
  constructor(private currentMs: number = Date.UTC(2026, 0, 1)) {}

  nowMs(): number {
    return this.currentMs;
  }

  advance(ms: number): void {
    this.currentMs += ms;
  }

  set(ms: number): void {
    this.currentMs = ms;
  }
}

export function unixSeconds(clock: Clock): number {
  return Math.floor(clock.nowMs() / 1000);
}
