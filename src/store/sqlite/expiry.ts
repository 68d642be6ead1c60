import type { Database, Statement } from 'better-sqlite3';

/**
 * Opportunistic cleanup of TTL rows (claims, cached profiles). Reads already treat an expired row
 * as absent; deleting them only keeps the file from growing, so it runs at most once per interval
 * and in bounded batches, piggybacked on the writes that create such rows.
 */

/** Least time between two cleanups of the same tables. */
export const EXPIRED_SWEEP_INTERVAL_MS = 60_000;
/** Most rows one cleanup deletes per table, so a backlog never stalls the operation it rides on. */
export const EXPIRED_SWEEP_BATCH_ROWS = 500;

const MS_PER_SECOND = 1000;

/** Expiry time of a record created at `nowMs` with a TTL in seconds. */
export function expiresAtMs(nowMs: number, ttlSecs: number): number {
  if (!Number.isFinite(ttlSecs) || ttlSecs <= 0) throw new RangeError(`ttlSecs must be a positive number, got ${ttlSecs}`);
  return nowMs + Math.round(ttlSecs * MS_PER_SECOND);
}

export class ExpiredRowSweeper {
  private readonly deletes: Statement<[number, number]>[];
  private nextSweepAtMs = 0;

  /** @param deleteStatements SQL taking `(nowMs, limit)` that deletes expired rows of one table. */
  constructor(db: Database, deleteStatements: readonly string[]) {
    this.deletes = deleteStatements.map((sql) => db.prepare<[number, number]>(sql));
  }

  /** Call inside the caller's transaction. */
  maybeSweep(nowMs: number): void {
    // A clock set backwards (tests, NTP steps) must not postpone cleanup indefinitely.
    if (nowMs < this.nextSweepAtMs && this.nextSweepAtMs - nowMs <= EXPIRED_SWEEP_INTERVAL_MS) return;
    for (const statement of this.deletes) statement.run(nowMs, EXPIRED_SWEEP_BATCH_ROWS);
    this.nextSweepAtMs = nowMs + EXPIRED_SWEEP_INTERVAL_MS;
  }
}
