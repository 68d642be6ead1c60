/**
 * The per-user push throttle on SQLite (port-throttle.ts): a row per (user, window), swept once
 * it is two windows old (piggybacked on the writes, like the other TTL rows).
 */
import type { Database, Statement } from 'better-sqlite3';
import type { Clock } from '../port.ts';
import { throttleWindowStartMs, type ThrottleDecision, type ThrottleWindow } from '../port-throttle.ts';
import { ExpiredRowSweeper } from './expiry.ts';

/** Schema of the throttle windows (one migration). */
export const CREATE_THROTTLE_TABLE = `
  -- Pushes let through and withheld per user and throttle window (start in ms, store clock).
  CREATE TABLE throttle_windows (
    pubkey          TEXT    NOT NULL,
    window_start_ms INTEGER NOT NULL,
    pushed          INTEGER NOT NULL DEFAULT 0,
    withheld        INTEGER NOT NULL DEFAULT 0,
    expires_at_ms   INTEGER NOT NULL,
    PRIMARY KEY (pubkey, window_start_ms)
  ) WITHOUT ROWID;
  CREATE INDEX throttle_windows_by_expiry ON throttle_windows (expires_at_ms);
`;

/** Windows a row outlives its start by: its own, then one more so it is readable to the end. */
const WINDOWS_KEPT = 2;

const SELECT_WINDOW = `SELECT pushed, withheld FROM throttle_windows WHERE pubkey = ? AND window_start_ms = ?`;
const UPSERT_PUSHED = `
  INSERT INTO throttle_windows (pubkey, window_start_ms, pushed, expires_at_ms) VALUES (@pubkey, @startMs, 1, @expiresAtMs)
  ON CONFLICT (pubkey, window_start_ms) DO UPDATE SET pushed = pushed + 1`;
const UPSERT_WITHHELD = `
  INSERT INTO throttle_windows (pubkey, window_start_ms, withheld, expires_at_ms) VALUES (@pubkey, @startMs, 1, @expiresAtMs)
  ON CONFLICT (pubkey, window_start_ms) DO UPDATE SET withheld = withheld + 1`;
const DELETE_EXPIRED = `
  DELETE FROM throttle_windows WHERE (pubkey, window_start_ms) IN (
    SELECT pubkey, window_start_ms FROM throttle_windows WHERE expires_at_ms <= ? LIMIT ?)`;

interface WindowParams {
  pubkey: string;
  startMs: number;
  expiresAtMs: number;
}

export class ThrottleTable {
  private readonly selectWindow: Statement<[string, number], { pushed: number; withheld: number }>;
  private readonly upsertPushed: Statement<[WindowParams]>;
  private readonly upsertWithheld: Statement<[WindowParams]>;
  private readonly sweeper: ExpiredRowSweeper;

  /** Call inside a transaction (the store's group commit). */
  readonly take: (pubkey: string, limit: number, windowSecs: number) => ThrottleDecision;

  constructor(
    db: Database,
    private readonly clock: Clock,
  ) {
    this.selectWindow = db.prepare(SELECT_WINDOW);
    this.upsertPushed = db.prepare(UPSERT_PUSHED);
    this.upsertWithheld = db.prepare(UPSERT_WITHHELD);
    this.sweeper = new ExpiredRowSweeper(db, [DELETE_EXPIRED]);
    this.take = db.transaction((pubkey: string, limit: number, windowSecs: number): ThrottleDecision => {
      const nowMs = this.clock.nowMs();
      const startMs = throttleWindowStartMs(nowMs, windowSecs);
      const before = this.selectWindow.get(pubkey, startMs) ?? { pushed: 0, withheld: 0 };
      const allowed = before.pushed < limit;
      const params = { pubkey, startMs, expiresAtMs: startMs + WINDOWS_KEPT * windowSecs * 1000 };
      (allowed ? this.upsertPushed : this.upsertWithheld).run(params);
      this.sweeper.maybeSweep(nowMs);
      const pushed = before.pushed + (allowed ? 1 : 0);
      const withheld = before.withheld + (allowed ? 0 : 1);
      return { allowed, window: { startMs, pushed, withheld } };
    });
  }

  read(pubkey: string, windowSecs: number): ThrottleWindow {
    const startMs = throttleWindowStartMs(this.clock.nowMs(), windowSecs);
    const row = this.selectWindow.get(pubkey, startMs);
    return { startMs, pushed: row?.pushed ?? 0, withheld: row?.withheld ?? 0 };
  }
}
