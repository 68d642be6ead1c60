import type { Clock } from '../port.ts';
import type { Logger } from '../../observability/logger.ts';

/** How often the offset to the Redis server clock is re-measured. */
export const SERVER_CLOCK_SYNC_INTERVAL_MS = 10_000;

/** The one Redis command the clock needs; `Redis` from ioredis satisfies it. */
export interface RedisTimeSource {
  /** Redis `TIME`: `[unix seconds, microseconds]`, as strings or numbers. */
  time(): Promise<(string | number)[]>;
}

/**
 * The Redis server's clock, without a round trip per reading: the offset between `TIME` and the
 * process clock is measured at start and every {@link SERVER_CLOCK_SYNC_INTERVAL_MS}, and
 * `nowMs()` is the process clock plus that offset. Every replica sharing one Redis therefore
 * agrees on "now" to within a round trip, whatever their own clocks say.
 *
 * Readings never go backwards: a re-sync that lowers the offset holds the clock still until
 * process time catches up, so a lease or score computed from two readings stays ordered.
 */
export class RedisServerClock implements Clock {
  private offsetMs = 0;
  private lastReadingMs = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly source: RedisTimeSource,
    private readonly logger?: Logger,
    private readonly processNowMs: () => number = Date.now,
  ) {}

  nowMs(): number {
    const reading = Math.floor(this.processNowMs() + this.offsetMs);
    if (reading > this.lastReadingMs) this.lastReadingMs = reading;
    return this.lastReadingMs;
  }

  /** The current estimate of server time minus process time (ms). */
  get offset(): number {
    return this.offsetMs;
  }

  get running(): boolean {
    return this.timer !== undefined;
  }

  /** Measure the offset once; the midpoint of the round trip stands for the server's reading. */
  async sync(): Promise<void> {
    const sentAt = this.processNowMs();
    const [seconds, micros] = await this.source.time();
    const receivedAt = this.processNowMs();
    const serverMs = Number(seconds) * 1000 + Number(micros) / 1000;
    if (!Number.isFinite(serverMs)) throw new Error(`Redis TIME returned ${String(seconds)} ${String(micros)}`);
    this.offsetMs = serverMs - (sentAt + receivedAt) / 2;
  }

  /** Re-sync every `intervalMs` on an unref'd timer; a failed sync keeps the last offset. */
  start(intervalMs: number = SERVER_CLOCK_SYNC_INTERVAL_MS): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.sync().catch((error: unknown) => {
        this.logger?.warn({ err: error }, 'redis clock sync failed; keeping the last offset');
      });
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
