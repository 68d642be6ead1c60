/**
 * Records when API keys are used (`StorePort.touchApiKeyUse`), for the console's API keys page:
 * at most one store write per key per {@link KEY_USE_WRITE_INTERVAL_MS} per process, so a key
 * sending thousands of requests a second costs the store one write a minute. The write is not
 * awaited by the request (a failing store never fails an authenticated request); a failed write
 * is logged at warn with the key's id only, and tried again on the key's next use.
 */
import type { Logger } from '../observability/logger.ts';
import type { StorePort } from '../store/port.ts';

/** Shortest time between two writes of one key's last use by one process. */
export const KEY_USE_WRITE_INTERVAL_MS = 60_000;
/** Keys remembered before the ones not written for an interval are forgotten (bounds the map). */
const MAX_REMEMBERED_KEYS = 10_000;

export class ApiKeyUseRecorder {
  /** Key id → when this process last wrote its use (ms, store clock). */
  private readonly written = new Map<string, number>();

  constructor(
    private readonly store: StorePort,
    private readonly logger: Logger,
    private readonly intervalMs = KEY_USE_WRITE_INTERVAL_MS,
  ) {}

  /** Note a use of key `keyId` now; writes it unless this process wrote it less than an interval ago. */
  record(keyId: string): void {
    const now = this.store.clock.nowMs();
    const last = this.written.get(keyId);
    if (last !== undefined && now - last < this.intervalMs) return;
    if (this.written.size >= MAX_REMEMBERED_KEYS) this.forgetOlderThan(now - this.intervalMs);
    this.written.set(keyId, now);
    this.store.touchApiKeyUse(keyId, now).catch((err: unknown) => {
      // The next use tries again.
      this.written.delete(keyId);
      this.logger.warn({ err, keyId }, 'could not record the use of an API key');
    });
  }

  private forgetOlderThan(cutoffMs: number): void {
    for (const [id, at] of this.written) if (at <= cutoffMs) this.written.delete(id);
  }
}
