/** API keys on SQLite (port-apikeys.ts): one row per key, unique on id and on hash. */
import type { Database, Statement } from 'better-sqlite3';
import type { Clock } from '../port.ts';
import type { ApiKeyRecord, ApiKeyRole, NewApiKey } from '../port-apikeys.ts';

export const CREATE_API_KEY_TABLE = `
  -- Only the SHA-256 of a key is stored, never the key.
  CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY,
    app_id        TEXT NOT NULL,
    role          TEXT NOT NULL CHECK (role IN ('send', 'admin')),
    hash          TEXT NOT NULL UNIQUE,
    prefix        TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    revoked_at_ms INTEGER
  );
  CREATE INDEX api_keys_by_app ON api_keys (app_id, created_at_ms);
`;

/** Issue 38: when each key was last used (null until recorded). */
export const ADD_API_KEY_LAST_USED = `
  ALTER TABLE api_keys ADD COLUMN last_used_at_ms INTEGER;
`;

interface ApiKeyRow {
  id: string;
  app_id: string;
  role: ApiKeyRole;
  hash: string;
  prefix: string;
  created_at_ms: number;
  revoked_at_ms: number | null;
  last_used_at_ms: number | null;
}

const COLUMNS = 'id, app_id, role, hash, prefix, created_at_ms, revoked_at_ms, last_used_at_ms';
const INSERT = `INSERT INTO api_keys (id, app_id, role, hash, prefix, created_at_ms) VALUES (@id, @appId, @role, @hash, @prefix, @nowMs)
  ON CONFLICT DO NOTHING`;
const SELECT_LIVE_BY_HASH = `SELECT ${COLUMNS} FROM api_keys WHERE hash = ? AND revoked_at_ms IS NULL`;
const SELECT_OF_APP = `SELECT ${COLUMNS} FROM api_keys WHERE app_id = ? ORDER BY created_at_ms, id`;
const SELECT_ALL = `SELECT ${COLUMNS} FROM api_keys ORDER BY created_at_ms, id`;
const REVOKE = `UPDATE api_keys SET revoked_at_ms = ? WHERE id = ? AND revoked_at_ms IS NULL`;
// MAX() of SQLite with a NULL argument is NULL: the first use replaces the NULL.
const TOUCH = `UPDATE api_keys SET last_used_at_ms = MAX(COALESCE(last_used_at_ms, @atMs), @atMs) WHERE id = @id`;

function fromRow(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    appId: row.app_id,
    role: row.role,
    hash: row.hash,
    prefix: row.prefix,
    createdAtMs: row.created_at_ms,
    revokedAtMs: row.revoked_at_ms,
    lastUsedAtMs: row.last_used_at_ms,
  };
}

export class ApiKeyTable {
  private readonly insert: Statement<[NewApiKey & { nowMs: number }]>;
  private readonly selectLive: Statement<[string], ApiKeyRow>;
  private readonly selectOfApp: Statement<[string], ApiKeyRow>;
  private readonly selectAll: Statement<[], ApiKeyRow>;
  private readonly revokeKey: Statement<[number, string]>;
  private readonly touchUse: Statement<[{ id: string; atMs: number }]>;

  constructor(
    db: Database,
    private readonly clock: Clock,
  ) {
    this.insert = db.prepare(INSERT);
    this.selectLive = db.prepare(SELECT_LIVE_BY_HASH);
    this.selectOfApp = db.prepare(SELECT_OF_APP);
    this.selectAll = db.prepare(SELECT_ALL);
    this.revokeKey = db.prepare(REVOKE);
    this.touchUse = db.prepare(TOUCH);
  }

  create(key: NewApiKey): boolean {
    const { id, appId, role, hash, prefix } = key;
    return this.insert.run({ id, appId, role, hash, prefix, nowMs: this.clock.nowMs() }).changes === 1;
  }

  findByHash(hash: string): ApiKeyRecord | null {
    const row = this.selectLive.get(hash);
    return row ? fromRow(row) : null;
  }

  list(appId: string | null): ApiKeyRecord[] {
    return (appId === null ? this.selectAll.all() : this.selectOfApp.all(appId)).map(fromRow);
  }

  revoke(id: string): boolean {
    return this.revokeKey.run(this.clock.nowMs(), id).changes === 1;
  }

  touch(id: string, atMs: number): boolean {
    return this.touchUse.run({ id, atMs }).changes === 1;
  }
}
