/**
 * Schema and statements of like/repost coalescing on SQLite (`coalesce.ts` runs them). The tables
 * mirror seed 000's Redis keys one to one, so both adapters share one model (`port-coalesce.ts`):
 *
 * | table                   | Redis key                         |
 * |-------------------------|-----------------------------------|
 * | `coalesce_groups`       | `coalesce:g:{gid}`                |
 * | `coalesce_actors`       | `coalesce:hll:{gid}` (exact here) |
 * | `coalesce_dispositions` | `coalesce:disp:{event}:{recipient}` |
 * | `coalesce_outbox`       | `coalesce:due` and `coalesce:leases` (state `due` / `leased`) |
 * | `coalesce_throttle`     | `coalesce:throttle:{owner}`       |
 * | `coalesce_emitted`      | `coalesce:emitted:{owner}`        |
 *
 * Rows with an `expires_at_ms` (or `physical_expires_at_ms`) the clock has reached are absent to
 * every read, as a Redis key past its TTL is; the sweeper deletes them in the background. An
 * outbox row may outlive its group (a dangling due entry), as in Redis.
 */

/** Appended to the migrations list as one step. */
export const CREATE_COALESCE_TABLES = `
  -- One like/repost group (type, owner, target, bucket). Times in unix seconds except *_ms.
  CREATE TABLE coalesce_groups (
    group_id               TEXT PRIMARY KEY,
    type                   TEXT NOT NULL,
    owner                  TEXT NOT NULL,
    target                 TEXT NOT NULL,
    event_kind             INTEGER,
    due_at                 INTEGER NOT NULL,
    expires_at             INTEGER NOT NULL,
    immediate              INTEGER NOT NULL DEFAULT 0,
    pending                INTEGER NOT NULL DEFAULT 0,
    first_actor            TEXT,
    first_event            TEXT,
    last_at                INTEGER,
    ref_event_id           TEXT,
    ref_address            TEXT,
    ref_kind               TEXT,
    ref_author             TEXT,
    ref_dtag               TEXT,
    lease_token            TEXT,
    physical_expires_at_ms INTEGER NOT NULL
  );
  CREATE INDEX coalesce_groups_by_expiry ON coalesce_groups (physical_expires_at_ms);

  -- The distinct buffered actors of a group; deleted with it.
  CREATE TABLE coalesce_actors (
    group_id TEXT NOT NULL,
    actor    TEXT NOT NULL,
    PRIMARY KEY (group_id, actor)
  ) WITHOUT ROWID;

  -- 'i' (immediate) or 'b' (buffered) per (event, recipient), so a replay repeats the decision.
  CREATE TABLE coalesce_dispositions (
    event_id      TEXT NOT NULL,
    recipient     TEXT NOT NULL,
    disposition   TEXT NOT NULL CHECK (disposition IN ('i', 'b')),
    group_id      TEXT NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    PRIMARY KEY (event_id, recipient)
  );
  CREATE INDEX coalesce_dispositions_by_expiry ON coalesce_dispositions (expires_at_ms);

  -- score: when a 'due' group may be flushed, when a 'leased' group's lease expires (seconds).
  CREATE TABLE coalesce_outbox (
    group_id TEXT PRIMARY KEY,
    state    TEXT NOT NULL CHECK (state IN ('due', 'leased')),
    score    INTEGER NOT NULL
  );
  CREATE INDEX coalesce_outbox_by_score ON coalesce_outbox (state, score, group_id);

  CREATE TABLE coalesce_throttle (
    owner         TEXT PRIMARY KEY,
    tokens        REAL NOT NULL,
    ts_ms         INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL
  );
  CREATE INDEX coalesce_throttle_by_expiry ON coalesce_throttle (expires_at_ms);

  -- One row per emitted like/repost notification (an immediate's event id, a summary's group id).
  CREATE TABLE coalesce_emitted (
    owner         TEXT NOT NULL,
    member        TEXT NOT NULL,
    emitted_at    INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    PRIMARY KEY (owner, member)
  );
  CREATE INDEX coalesce_emitted_by_time ON coalesce_emitted (owner, emitted_at);
  CREATE INDEX coalesce_emitted_by_expiry ON coalesce_emitted (expires_at_ms);
`;

export const SELECT_DISPOSITION = `
  SELECT disposition, group_id FROM coalesce_dispositions
  WHERE event_id = ? AND recipient = ? AND expires_at_ms > ?`;
export const UPSERT_DISPOSITION = `
  INSERT INTO coalesce_dispositions (event_id, recipient, disposition, group_id, expires_at_ms)
  VALUES (@eventId, @recipient, @disposition, @groupId, @expiresAtMs)
  ON CONFLICT (event_id, recipient) DO UPDATE SET
    disposition = excluded.disposition, group_id = excluded.group_id, expires_at_ms = excluded.expires_at_ms`;

export const SELECT_GROUP = `SELECT * FROM coalesce_groups WHERE group_id = ?`;
export const COUNT_ACTORS = `SELECT count(*) AS n FROM coalesce_actors WHERE group_id = ?`;
export const DELETE_GROUP = `DELETE FROM coalesce_groups WHERE group_id = ?`;
export const DELETE_ACTORS = `DELETE FROM coalesce_actors WHERE group_id = ?`;
/** A new group, or the fields still missing on an existing one (Redis HSETNX). */
export const UPSERT_GROUP_FIELDS = `
  INSERT INTO coalesce_groups (group_id, type, owner, target, event_kind, due_at, expires_at,
    ref_event_id, ref_address, ref_kind, ref_author, ref_dtag, physical_expires_at_ms)
  VALUES (@groupId, @type, @owner, @target, @eventKind, @dueAt, @expiresAt,
    @refEventId, @refAddress, @refKind, @refAuthor, @refDTag, @physicalExpiresAtMs)
  ON CONFLICT (group_id) DO UPDATE SET
    ref_event_id = coalesce(ref_event_id, excluded.ref_event_id),
    ref_kind = CASE WHEN ref_address IS NULL THEN excluded.ref_kind ELSE ref_kind END,
    ref_author = CASE WHEN ref_address IS NULL THEN excluded.ref_author ELSE ref_author END,
    ref_dtag = CASE WHEN ref_address IS NULL THEN excluded.ref_dtag ELSE ref_dtag END,
    ref_address = coalesce(ref_address, excluded.ref_address)`;
export const COUNT_IMMEDIATE = `
  UPDATE coalesce_groups SET immediate = immediate + 1, physical_expires_at_ms = @physicalExpiresAtMs
  WHERE group_id = @groupId`;
export const COUNT_BUFFERED = `
  UPDATE coalesce_groups SET
    pending = pending + 1,
    first_actor = coalesce(first_actor, @actor),
    first_event = coalesce(first_event, @eventId),
    last_at = max(coalesce(last_at, 0), @createdAt),
    physical_expires_at_ms = @physicalExpiresAtMs
  WHERE group_id = @groupId`;
export const INSERT_ACTOR = `INSERT OR IGNORE INTO coalesce_actors (group_id, actor) VALUES (?, ?)`;
export const SET_LEASE = `UPDATE coalesce_groups SET lease_token = ? WHERE group_id = ?`;

export const SELECT_OUTBOX = `SELECT state FROM coalesce_outbox WHERE group_id = ?`;
/** Redis `ZADD NX`: an entry already there keeps its score. */
export const INSERT_OUTBOX_NX = `INSERT OR IGNORE INTO coalesce_outbox (group_id, state, score) VALUES (?, ?, ?)`;
export const UPSERT_OUTBOX = `
  INSERT INTO coalesce_outbox (group_id, state, score) VALUES (?, ?, ?)
  ON CONFLICT (group_id) DO UPDATE SET state = excluded.state, score = excluded.score`;
export const DELETE_OUTBOX = `DELETE FROM coalesce_outbox WHERE group_id = ?`;
export const DELETE_OUTBOX_IN_STATE = `DELETE FROM coalesce_outbox WHERE group_id = ? AND state = ?`;
export const SELECT_OUTBOX_UP_TO = `
  SELECT group_id FROM coalesce_outbox WHERE state = ? AND score <= ? ORDER BY score, group_id LIMIT ?`;
export const SELECT_OLDEST_DUE = `SELECT min(score) AS score FROM coalesce_outbox WHERE state = 'due'`;

export const SELECT_THROTTLE = `SELECT tokens, ts_ms FROM coalesce_throttle WHERE owner = ? AND expires_at_ms > ?`;
export const UPSERT_THROTTLE = `
  INSERT INTO coalesce_throttle (owner, tokens, ts_ms, expires_at_ms) VALUES (@owner, @tokens, @tsMs, @expiresAtMs)
  ON CONFLICT (owner) DO UPDATE SET tokens = excluded.tokens, ts_ms = excluded.ts_ms, expires_at_ms = excluded.expires_at_ms`;

export const TRIM_EMITTED = `DELETE FROM coalesce_emitted WHERE owner = ? AND emitted_at <= ?`;
export const COUNT_EMITTED = `SELECT count(*) AS n, min(emitted_at) AS oldest FROM coalesce_emitted WHERE owner = ? AND expires_at_ms > ?`;
export const HAS_EMITTED = `SELECT 1 FROM coalesce_emitted WHERE owner = ? AND member = ? AND expires_at_ms > ?`;
export const UPSERT_EMITTED = `
  INSERT INTO coalesce_emitted (owner, member, emitted_at, expires_at_ms) VALUES (?, ?, ?, ?)
  ON CONFLICT (owner, member) DO UPDATE SET emitted_at = excluded.emitted_at, expires_at_ms = excluded.expires_at_ms`;
/** The whole window shares one expiry, as a Redis key does: every emission extends it. */
export const EXTEND_EMITTED = `UPDATE coalesce_emitted SET expires_at_ms = ? WHERE owner = ?`;
export const DELETE_EMITTED = `DELETE FROM coalesce_emitted WHERE owner = ? AND member = ? AND expires_at_ms > ?`;

/** Sweeper statements `(nowMs, limit)`; actors go before their groups, which name them. */
export const SWEEP_STATEMENTS: readonly string[] = [
  `DELETE FROM coalesce_actors WHERE group_id IN (
     SELECT group_id FROM coalesce_groups WHERE physical_expires_at_ms <= ? ORDER BY physical_expires_at_ms, group_id LIMIT ?)`,
  `DELETE FROM coalesce_groups WHERE group_id IN (
     SELECT group_id FROM coalesce_groups WHERE physical_expires_at_ms <= ? ORDER BY physical_expires_at_ms, group_id LIMIT ?)`,
  `DELETE FROM coalesce_dispositions WHERE rowid IN (
     SELECT rowid FROM coalesce_dispositions WHERE expires_at_ms <= ? LIMIT ?)`,
  `DELETE FROM coalesce_throttle WHERE rowid IN (
     SELECT rowid FROM coalesce_throttle WHERE expires_at_ms <= ? LIMIT ?)`,
  `DELETE FROM coalesce_emitted WHERE rowid IN (
     SELECT rowid FROM coalesce_emitted WHERE expires_at_ms <= ? LIMIT ?)`,
];
