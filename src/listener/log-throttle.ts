import type { Logger } from '../observability/logger.ts';
import type { Clock } from '../store/port.ts';

/** One warn line per key per 10 s; a hostile relay can send thousands of bad frames a second. */
export const WARN_LOG_INTERVAL_MS = 10_000;

interface KeyState {
  lastLoggedMs: number;
  suppressed: number;
}

/**
 * Rate-limits repetitive warn logs by key (e.g. `relay|reason`). The first line of a key in each
 * interval is written, with `suppressed` saying how many of that key were dropped since the last.
 */
export class LogThrottle {
  private readonly keys = new Map<string, KeyState>();

  constructor(
    private readonly clock: Clock,
    private readonly intervalMs: number = WARN_LOG_INTERVAL_MS,
  ) {}

  warn(logger: Logger, key: string, fields: Record<string, unknown>, message: string): void {
    const now = this.clock.nowMs();
    const state = this.keys.get(key);
    if (state !== undefined && now - state.lastLoggedMs < this.intervalMs) {
      state.suppressed++;
      return;
    }
    const suppressed = state?.suppressed ?? 0;
    this.keys.set(key, { lastLoggedMs: now, suppressed: 0 });
    logger.warn(suppressed > 0 ? { ...fields, suppressed } : fields, message);
  }
}
