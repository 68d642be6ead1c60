/**
 * The shared VAPID key on SQLite (port-vapid.ts): one row, inserted only when there is none, in
 * the same IMMEDIATE transaction that reads it back, so every process on the file gets one pair.
 */
import type { Database } from 'better-sqlite3';
import type { StoredVapidKeys } from '../port-vapid.ts';

/** Schema of the VAPID key table (one migration). */
export const CREATE_VAPID_TABLE = `
  -- At most one row: the fleet's VAPID key pair, base64url.
  CREATE TABLE vapid_keys (
    singleton   INTEGER PRIMARY KEY CHECK (singleton = 1),
    public_key  TEXT NOT NULL,
    private_key TEXT NOT NULL
  );
`;

const INSERT_IF_ABSENT = `
  INSERT INTO vapid_keys (singleton, public_key, private_key) VALUES (1, @publicKey, @privateKey)
  ON CONFLICT (singleton) DO NOTHING`;
const SELECT_KEYS = `SELECT public_key, private_key FROM vapid_keys WHERE singleton = 1`;

/** Called once per process start, so its statements are prepared per call. */
export function claimSqliteVapidKeys(db: Database, candidate: StoredVapidKeys): StoredVapidKeys {
  const insert = db.prepare<[StoredVapidKeys]>(INSERT_IF_ABSENT);
  const select = db.prepare<[], { public_key: string; private_key: string }>(SELECT_KEYS);
  const claim = db.transaction(() => {
    insert.run({ publicKey: candidate.publicKey, privateKey: candidate.privateKey });
    return select.get();
  });
  const row = claim.immediate();
  if (!row) throw new Error('claimVapidKeys: the VAPID key row is missing right after it was inserted');
  return { publicKey: row.public_key, privateKey: row.private_key };
}
