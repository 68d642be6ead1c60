/**
 * Sends and idempotency records on SQLite (port-sends.ts). A send row is due while `due_at_ms`
 * is set (scheduled or started); each operation is one transaction, so claim and cancel cannot
 * both win.
 */
import type { Database, Statement } from 'better-sqlite3';
import { StoreError, StoreStatus } from '../errors.ts';
import type { Clock } from '../port.ts';
import type {
  CancelSendResult,
  ClaimedSend,
  CreateSendResult,
  IdempotencyClaim,
  NewSend,
  SendRecord,
  SendRequest,
  SendState,
} from '../port-sends.ts';
import { SEND_LANES } from '../port-sends.ts';
import { ExpiredRowSweeper, expiresAtMs } from './expiry.ts';

export const CREATE_SEND_TABLES = `
  -- One notification of the send API; due_at_ms is set while it is scheduled or started.
  CREATE TABLE sends (
    app_id        TEXT NOT NULL,
    id            TEXT NOT NULL,
    request_json  TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('scheduled', 'started', 'done', 'cancelled')),
    send_at_ms    INTEGER NOT NULL,
    created_at_ms INTEGER NOT NULL,
    next_offset   INTEGER NOT NULL DEFAULT 0,
    lane_rank     INTEGER NOT NULL,
    due_at_ms     INTEGER,
    expires_at_ms INTEGER NOT NULL,
    PRIMARY KEY (app_id, id)
  );
  -- lane_rank: 0 critical, 1 normal, 2 low; the most urgent lane's due sends are claimed first.
  CREATE INDEX sends_due ON sends (lane_rank, due_at_ms) WHERE due_at_ms IS NOT NULL;
  CREATE INDEX sends_by_expiry ON sends (expires_at_ms);

  -- Idempotency-Key records: absent once the store clock reaches expires_at_ms.
  CREATE TABLE send_idempotency (
    app_id        TEXT NOT NULL,
    key           TEXT NOT NULL,
    send_id       TEXT NOT NULL,
    request_hash  TEXT NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    PRIMARY KEY (app_id, key)
  );
  CREATE INDEX send_idempotency_by_expiry ON send_idempotency (expires_at_ms);
`;

interface SendRow {
  app_id: string;
  id: string;
  request_json: string;
  state: SendState;
  send_at_ms: number;
  created_at_ms: number;
  next_offset: number;
}

const COLUMNS = 'app_id, id, request_json, state, send_at_ms, created_at_ms, next_offset';
const SELECT_IDEMPOTENCY = `SELECT send_id, request_hash FROM send_idempotency WHERE app_id = ? AND key = ? AND expires_at_ms > ?`;
const UPSERT_IDEMPOTENCY = `
  INSERT INTO send_idempotency (app_id, key, send_id, request_hash, expires_at_ms) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (app_id, key) DO UPDATE SET
    send_id = excluded.send_id, request_hash = excluded.request_hash, expires_at_ms = excluded.expires_at_ms`;
const INSERT_SEND = `
  INSERT INTO sends (app_id, id, request_json, state, send_at_ms, created_at_ms, lane_rank, due_at_ms, expires_at_ms)
  VALUES (?, ?, ?, 'scheduled', ?, ?, ?, ?, ?)`;
const SELECT_SEND = `SELECT ${COLUMNS} FROM sends WHERE app_id = ? AND id = ? AND expires_at_ms > ?`;
const SELECT_DUE = `
  SELECT ${COLUMNS} FROM sends WHERE lane_rank = ? AND due_at_ms IS NOT NULL AND due_at_ms <= ? ORDER BY due_at_ms, app_id, id LIMIT 1`;
const LEASE_SEND = `UPDATE sends SET state = 'started', due_at_ms = ? WHERE app_id = ? AND id = ?`;
const ADVANCE_SEND = `
  UPDATE sends SET next_offset = ?, state = CASE WHEN ? THEN 'done' ELSE state END, due_at_ms = CASE WHEN ? THEN NULL ELSE ? END
  WHERE app_id = ? AND id = ? AND state IN ('scheduled', 'started')`;
const SELECT_STATE = `SELECT state FROM sends WHERE app_id = ? AND id = ? AND expires_at_ms > ?`;
const CANCEL_SEND = `UPDATE sends SET state = 'cancelled', due_at_ms = NULL WHERE app_id = ? AND id = ? AND state = 'scheduled'`;
const DELETE_EXPIRED = [
  `DELETE FROM sends WHERE rowid IN (SELECT rowid FROM sends WHERE expires_at_ms <= ? LIMIT ?)`,
  `DELETE FROM send_idempotency WHERE rowid IN (SELECT rowid FROM send_idempotency WHERE expires_at_ms <= ? LIMIT ?)`,
];

function fromRow(row: SendRow): SendRecord {
  let request: SendRequest;
  try {
    request = JSON.parse(row.request_json) as SendRequest;
  } catch {
    throw new StoreError(StoreStatus.Corrupt, 'getSend', `request of ${row.app_id}/${row.id} is not JSON`);
  }
  return {
    appId: row.app_id,
    id: row.id,
    request,
    sendAtMs: row.send_at_ms,
    state: row.state,
    createdAtMs: row.created_at_ms,
    offset: row.next_offset,
  };
}

export class SendTables {
  private readonly selectIdempotency: Statement<[string, string, number], { send_id: string; request_hash: string }>;
  private readonly upsertIdempotency: Statement<[string, string, string, string, number]>;
  private readonly insertSend: Statement<[string, string, string, number, number, number, number, number]>;
  private readonly selectSend: Statement<[string, string, number], SendRow>;
  private readonly selectDue: Statement<[number, number], SendRow>;
  private readonly leaseSend: Statement<[number, string, string]>;
  private readonly advance: Statement<[number, number, number, number, string, string]>;
  private readonly selectState: Statement<[string, string, number], { state: SendState }>;
  private readonly cancel: Statement<[string, string]>;
  private readonly sweeper: ExpiredRowSweeper;

  constructor(
    db: Database,
    private readonly clock: Clock,
  ) {
    this.selectIdempotency = db.prepare(SELECT_IDEMPOTENCY);
    this.upsertIdempotency = db.prepare(UPSERT_IDEMPOTENCY);
    this.insertSend = db.prepare(INSERT_SEND);
    this.selectSend = db.prepare(SELECT_SEND);
    this.selectDue = db.prepare(SELECT_DUE);
    this.leaseSend = db.prepare(LEASE_SEND);
    this.advance = db.prepare(ADVANCE_SEND);
    this.selectState = db.prepare(SELECT_STATE);
    this.cancel = db.prepare(CANCEL_SEND);
    this.sweeper = new ExpiredRowSweeper(db, DELETE_EXPIRED);
  }

  /** Call inside a transaction. */
  create(send: NewSend, recordTtlSecs: number, idempotency: IdempotencyClaim | null): CreateSendResult {
    const nowMs = this.clock.nowMs();
    this.sweeper.maybeSweep(nowMs);
    if (idempotency) {
      const held = this.selectIdempotency.get(send.appId, idempotency.key, nowMs);
      if (held) return { created: false, existingId: held.send_id, sameRequest: held.request_hash === idempotency.requestHash };
    }
    const expires = expiresAtMs(nowMs, recordTtlSecs);
    const rank = SEND_LANES.indexOf(send.request.priority);
    this.insertSend.run(send.appId, send.id, JSON.stringify(send.request), send.sendAtMs, nowMs, rank, send.sendAtMs, expires);
    if (idempotency) {
      this.upsertIdempotency.run(send.appId, idempotency.key, send.id, idempotency.requestHash, expiresAtMs(nowMs, idempotency.ttlSecs));
    }
    return { created: true };
  }

  get(appId: string, id: string): SendRecord | null {
    const row = this.selectSend.get(appId, id, this.clock.nowMs());
    return row ? fromRow(row) : null;
  }

  claimDue(leaseMs: number): ClaimedSend | null {
    const nowMs = this.clock.nowMs();
    let row: SendRow | undefined;
    for (let rank = 0; rank < SEND_LANES.length && !row; rank++) row = this.selectDue.get(rank, nowMs);
    if (!row) return null;
    const leaseExpiresAtMs = nowMs + leaseMs;
    this.leaseSend.run(leaseExpiresAtMs, row.app_id, row.id);
    return { send: { ...fromRow(row), state: 'started' }, leaseExpiresAtMs };
  }

  advanceTo(appId: string, id: string, nextOffset: number, done: boolean): boolean {
    const flag = done ? 1 : 0;
    return this.advance.run(nextOffset, flag, flag, this.clock.nowMs(), appId, id).changes === 1;
  }

  cancelSend(appId: string, id: string): CancelSendResult {
    const row = this.selectState.get(appId, id, this.clock.nowMs());
    if (!row) return 'not_found';
    if (row.state === 'cancelled') return 'cancelled';
    return this.cancel.run(appId, id).changes === 1 ? 'cancelled' : 'not_cancellable';
  }
}
