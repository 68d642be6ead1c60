/**
 * User relay lists on SQLite (port-user-relays.ts): one row per (user, source), the newest list
 * of that source; the coverage read joins them to the users that have devices. Changes are one
 * row per user in `user_relay_changes` (the time of their latest), which the listener follows.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { Logger } from '../../observability/logger.ts';
import type { Clock } from '../port.ts';
import {
  isUserRelaySource,
  USER_RELAY_CHANGE_RETENTION_MS,
  type UserRelayChange,
  noUserRelayLists,
  rankRelayCoverage,
  type PutUserRelayListResult,
  type RelayCoverage,
  type UserRelayList,
  type UserRelayLists,
} from '../port-user-relays.ts';

/** Schema of the user relay list table (one migration). */
export const CREATE_USER_RELAY_LISTS_TABLE = `
  -- A user's newest relay list of each source (kind 10002 read relays, kind 10050 DM relays,
  -- a registration's relays), replaced only by a newer one (NIP-01: created_at, then lower id).
  CREATE TABLE user_relay_lists (
    pubkey      TEXT NOT NULL,
    source      TEXT NOT NULL,
    event_id    TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    relays_json TEXT NOT NULL,
    PRIMARY KEY (pubkey, source)
  ) WITHOUT ROWID;
`;

/** Schema of the change log the listener follows (one migration). */
export const CREATE_USER_RELAY_CHANGES_TABLE = `
  -- Users whose relay coverage changed (a list stored, a device come or gone), each once with
  -- the time of the latest change (ms, store clock); trimmed after a day.
  CREATE TABLE user_relay_changes (
    pubkey     TEXT PRIMARY KEY,
    changed_ms INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX user_relay_changes_by_time ON user_relay_changes (changed_ms);
`;

const NOTE_CHANGE = `
  INSERT INTO user_relay_changes (pubkey, changed_ms) VALUES (?, ?)
  ON CONFLICT (pubkey) DO UPDATE SET changed_ms = MAX(changed_ms, excluded.changed_ms)`;
const TRIM_CHANGES = `DELETE FROM user_relay_changes WHERE changed_ms < ?`;
const SELECT_CHANGES = `
  SELECT pubkey, changed_ms FROM user_relay_changes WHERE changed_ms > ? ORDER BY changed_ms, pubkey LIMIT ?`;
// Users with a device and neither a 10002 nor a 10050 list, in pubkey order from a cursor.
const SELECT_WITHOUT_LISTS = `
  SELECT DISTINCT d.pubkey FROM devices d
  WHERE d.pubkey > ?
    AND NOT EXISTS (SELECT 1 FROM user_relay_lists u WHERE u.pubkey = d.pubkey AND u.source IN ('nip65', 'dm'))
  ORDER BY d.pubkey LIMIT ?`;

// The WHERE of the upsert is NIP-01's replaceable rule; a row it refuses reports no change.
const UPSERT = `
  INSERT INTO user_relay_lists (pubkey, source, event_id, created_at, relays_json) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (pubkey, source) DO UPDATE SET
    event_id = excluded.event_id, created_at = excluded.created_at, relays_json = excluded.relays_json
  WHERE excluded.created_at > user_relay_lists.created_at
     OR (excluded.created_at = user_relay_lists.created_at AND excluded.event_id < user_relay_lists.event_id)`;
const SELECT_MANY = `
  SELECT pubkey, source, event_id, created_at, relays_json FROM user_relay_lists
  WHERE pubkey IN (SELECT value FROM json_each(?))`;
const SELECT_COVERED = `
  SELECT pubkey, source, event_id, created_at, relays_json FROM user_relay_lists
  WHERE pubkey IN (SELECT DISTINCT pubkey FROM devices)`;

interface Row {
  pubkey: string;
  source: string;
  event_id: string;
  created_at: number;
  relays_json: string;
}

export class UserRelayTable {
  private readonly upsert: Statement<[string, string, string, number, string]>;
  private readonly selectMany: Statement<[string], Row>;
  private readonly selectCovered: Statement<[], Row>;
  private readonly noteChange: Statement<[string, number]>;
  private readonly trimChanges: Statement<[number]>;
  private readonly selectChanges: Statement<[number, number], { pubkey: string; changed_ms: number }>;
  private readonly selectWithoutLists: Statement<[string, number], { pubkey: string }>;

  constructor(
    db: Database,
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {
    this.upsert = db.prepare(UPSERT);
    this.selectMany = db.prepare(SELECT_MANY);
    this.selectCovered = db.prepare(SELECT_COVERED);
    this.noteChange = db.prepare(NOTE_CHANGE);
    this.trimChanges = db.prepare(TRIM_CHANGES);
    this.selectChanges = db.prepare(SELECT_CHANGES);
    this.selectWithoutLists = db.prepare(SELECT_WITHOUT_LISTS);
  }

  /** Run inside a transaction (the store's group commit): the list and its change row together. */
  put(pubkey: string, list: UserRelayList): PutUserRelayListResult {
    const changes = this.upsert.run(pubkey, list.source, list.eventId, list.createdAt, JSON.stringify(list.relays)).changes;
    if (changes === 0) return 'stale';
    this.note([pubkey]);
    return 'stored';
  }

  note(pubkeys: readonly string[]): void {
    const nowMs = this.clock.nowMs();
    for (const pubkey of pubkeys) this.noteChange.run(pubkey, nowMs);
    this.trimChanges.run(nowMs - USER_RELAY_CHANGE_RETENTION_MS);
  }

  changesSince(sinceMs: number, limit: number): UserRelayChange[] {
    if (limit <= 0) return [];
    const fromMs = Math.max(sinceMs, this.clock.nowMs() - USER_RELAY_CHANGE_RETENTION_MS - 1);
    return this.selectChanges.all(fromMs, limit).map((row) => ({ pubkey: row.pubkey, changedMs: row.changed_ms }));
  }

  /** The cursor is the last pubkey of the previous page ('' before the first). */
  withoutLists(cursor: string | null, limit: number): { pubkeys: string[]; cursor: string | null } {
    if (limit <= 0) return { pubkeys: [], cursor: null };
    const pubkeys = this.selectWithoutLists.all(cursor ?? '', limit).map((row) => row.pubkey);
    return { pubkeys, cursor: pubkeys.length < limit ? null : (pubkeys[pubkeys.length - 1] ?? null) };
  }

  getMany(pubkeys: readonly string[]): UserRelayLists[] {
    if (pubkeys.length === 0) return [];
    const byPubkey = this.group(this.selectMany.all(JSON.stringify(pubkeys)));
    return pubkeys.map((pubkey) => byPubkey.get(pubkey) ?? noUserRelayLists());
  }

  coverage(): RelayCoverage[] {
    const byPubkey = this.group(this.selectCovered.all());
    return rankRelayCoverage([...byPubkey].map(([pubkey, lists]) => ({ pubkey, lists })));
  }

  private group(rows: Row[]): Map<string, UserRelayLists> {
    const byPubkey = new Map<string, UserRelayLists>();
    for (const row of rows) {
      if (!isUserRelaySource(row.source)) continue;
      const relays = safeJson(row.relays_json);
      const list =
        Array.isArray(relays) && relays.every((r): r is string => typeof r === 'string')
          ? { source: row.source, eventId: row.event_id, createdAt: row.created_at, relays }
          : null;
      if (list === null) {
        this.logger.warn({ pubkey: row.pubkey, source: row.source }, 'unreadable user relay list; ignored');
        continue;
      }
      let lists = byPubkey.get(row.pubkey);
      if (lists === undefined) {
        lists = noUserRelayLists();
        byPubkey.set(row.pubkey, lists);
      }
      lists[row.source] = list;
    }
    return byPubkey;
  }
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return null;
  }
}
