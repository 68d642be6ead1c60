/**
 * NIP-9a callback URLs and relay-POST receipts on SQLite (port-nip9a-callbacks.ts). A receipt is
 * absent once the store clock reaches its `expires_at_ms`, whether or not the row is gone yet;
 * taking one is a single upsert that only overwrites an expired row, in the same transaction as
 * the inbound enqueue it guards.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { Clock } from '../port.ts';
import type { Nip9aAcceptance, Nip9aCallback, Nip9aReceipt } from '../port-nip9a-callbacks.ts';
import type { IdleSweepPage } from '../port-inbox.ts';
import { ExpiredRowSweeper, expiresAtMs } from './expiry.ts';
import type { QueueTable } from './queues.ts';

/** Schema of the callback and receipt tables (one migration). */
export const CREATE_NIP9A_CALLBACK_TABLES = `
  -- One row per live callback URL; the URL's secret itself is never stored, only its SHA-256.
  CREATE TABLE nip9a_callbacks (
    id            TEXT PRIMARY KEY,
    secret_hash   TEXT NOT NULL UNIQUE,
    secret_hint   TEXT NOT NULL,
    owner         TEXT NOT NULL,
    relay         TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL
  );
  CREATE INDEX nip9a_callbacks_by_owner ON nip9a_callbacks (owner, created_at_ms);

  -- Relay POSTs already queued, per (callback, relay, event id), until expires_at_ms.
  CREATE TABLE nip9a_receipts (
    callback_id   TEXT NOT NULL,
    relay         TEXT NOT NULL,
    event_id      TEXT NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    PRIMARY KEY (callback_id, relay, event_id)
  );
  CREATE INDEX nip9a_receipts_by_expiry ON nip9a_receipts (expires_at_ms);
`;

/**
 * Issue 35: when a callback last received a relay POST (day resolution), so the janitor can delete
 * those idle for `nip9a.receiver.idle_callback_ttl_days`. Callbacks of an older file count as
 * received on the day of the upgrade, so none is deleted sooner than a whole TTL after it.
 */
export const ADD_NIP9A_CALLBACK_ACTIVITY = (upgradeDayMs: number): string => `
  ALTER TABLE nip9a_callbacks ADD COLUMN last_received_ms INTEGER NOT NULL DEFAULT 0;
  UPDATE nip9a_callbacks SET last_received_ms = MAX(created_at_ms, ${Math.trunc(upgradeDayMs)});
  CREATE INDEX nip9a_callbacks_by_last_received ON nip9a_callbacks (last_received_ms);
`;

const INSERT_CALLBACK = `
  INSERT INTO nip9a_callbacks (id, secret_hash, secret_hint, owner, relay, created_at_ms, last_received_ms)
  VALUES (@id, @secretHash, @secretHint, @owner, @relay, @createdAtMs, @createdAtMs)`;
const TOUCH_CALLBACK = `UPDATE nip9a_callbacks SET last_received_ms = @atMs WHERE id = @id AND last_received_ms < @atMs`;
const SELECT_IDLE = `SELECT id FROM nip9a_callbacks WHERE last_received_ms < ? ORDER BY last_received_ms, id LIMIT ?`;
const DELETE_CALLBACK = `DELETE FROM nip9a_callbacks WHERE id = ?`;

const CALLBACK_COLUMNS = `id, secret_hash, secret_hint, owner, relay, created_at_ms`;
const SELECT_BY_SECRET = `SELECT ${CALLBACK_COLUMNS} FROM nip9a_callbacks WHERE secret_hash = ?`;
const SELECT_BY_OWNER = `SELECT ${CALLBACK_COLUMNS} FROM nip9a_callbacks WHERE owner = ? ORDER BY created_at_ms, id`;
const DELETE_OWNED = `DELETE FROM nip9a_callbacks WHERE id = ? AND owner = ?`;

const TAKE_RECEIPT = `
  INSERT INTO nip9a_receipts (callback_id, relay, event_id, expires_at_ms)
  VALUES (@callbackId, @relay, @eventId, @expiresAtMs)
  ON CONFLICT (callback_id, relay, event_id) DO UPDATE SET expires_at_ms = excluded.expires_at_ms
  WHERE nip9a_receipts.expires_at_ms <= @nowMs`;

const DELETE_EXPIRED_RECEIPTS = `
  DELETE FROM nip9a_receipts WHERE rowid IN (
    SELECT rowid FROM nip9a_receipts WHERE expires_at_ms <= ? LIMIT ?)`;

interface CallbackRow {
  id: string;
  secret_hash: string;
  secret_hint: string;
  owner: string;
  relay: string;
  created_at_ms: number;
}

function fromRow(row: CallbackRow): Nip9aCallback {
  return {
    id: row.id,
    secretHash: row.secret_hash,
    secretHint: row.secret_hint,
    owner: row.owner,
    relay: row.relay,
    createdAtMs: row.created_at_ms,
  };
}

export class Nip9aCallbackTables {
  private readonly insertCallback: Statement<[Nip9aCallback]>;
  private readonly selectBySecret: Statement<[string], CallbackRow>;
  private readonly selectByOwner: Statement<[string], CallbackRow>;
  private readonly deleteOwned: Statement<[string, string]>;
  private readonly touchCallback: Statement<[{ id: string; atMs: number }]>;
  private readonly selectIdle: Statement<[number, number], { id: string }>;
  private readonly deleteCallback: Statement<[string]>;
  private readonly takeReceipt: Statement<[Nip9aReceipt & { expiresAtMs: number; nowMs: number }]>;
  private readonly sweeper: ExpiredRowSweeper;
  readonly accept: (ttlSecs: number, entries: ReadonlyArray<Nip9aAcceptance>) => boolean[];

  constructor(
    db: Database,
    private readonly clock: Clock,
    queues: QueueTable,
  ) {
    this.insertCallback = db.prepare(INSERT_CALLBACK);
    this.selectBySecret = db.prepare(SELECT_BY_SECRET);
    this.selectByOwner = db.prepare(SELECT_BY_OWNER);
    this.deleteOwned = db.prepare(DELETE_OWNED);
    this.takeReceipt = db.prepare(TAKE_RECEIPT);
    this.touchCallback = db.prepare(TOUCH_CALLBACK);
    this.selectIdle = db.prepare(SELECT_IDLE);
    this.deleteCallback = db.prepare(DELETE_CALLBACK);
    this.forgetIdle = db.transaction((idleBeforeMs: number, max: number): IdleSweepPage => {
      const idle = this.selectIdle.all(idleBeforeMs, max);
      for (const { id } of idle) this.deleteCallback.run(id);
      return { examined: idle.length, removed: idle.length };
    });
    this.sweeper = new ExpiredRowSweeper(db, [DELETE_EXPIRED_RECEIPTS]);
    // Each entry's receipt and enqueue are one savepoint: both or neither.
    const acceptOne = db.transaction((ttlSecs: number, entry: Nip9aAcceptance): boolean => {
      const nowMs = this.clock.nowMs();
      const taken = this.takeReceipt.run({ ...entry.receipt, expiresAtMs: expiresAtMs(nowMs, ttlSecs), nowMs }).changes > 0;
      if (taken) queues.insert('inbound', entry.item);
      return taken;
    });
    this.create = db.transaction((callback: Nip9aCallback) => this.insert(callback));
    this.revoke = db.transaction((owner: string, id: string): boolean => this.deleteOwned.run(id, owner).changes > 0);
    this.accept = db.transaction((ttlSecs: number, entries: ReadonlyArray<Nip9aAcceptance>): boolean[] => {
      this.sweeper.maybeSweep(this.clock.nowMs());
      return entries.map((entry) => acceptOne(ttlSecs, entry));
    });
  }

  /** Savepoints, so a failed write in the group's commit undoes only itself. */
  readonly create: (callback: Nip9aCallback) => void;
  readonly revoke: (owner: string, id: string) => boolean;
  readonly forgetIdle: (idleBeforeMs: number, max: number) => IdleSweepPage;

  touch(id: string, atMs: number): void {
    this.touchCallback.run({ id, atMs });
  }

  private insert(callback: Nip9aCallback): void {
    this.insertCallback.run({
      id: callback.id,
      secretHash: callback.secretHash,
      secretHint: callback.secretHint,
      owner: callback.owner,
      relay: callback.relay,
      createdAtMs: callback.createdAtMs,
    });
  }

  find(secretHash: string): Nip9aCallback | null {
    const row = this.selectBySecret.get(secretHash);
    return row ? fromRow(row) : null;
  }

  list(owner: string): Nip9aCallback[] {
    return this.selectByOwner.all(owner).map(fromRow);
  }
}
