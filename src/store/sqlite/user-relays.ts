/**
 * User relay lists on SQLite (port-user-relays.ts): one row per (user, source), the newest list
 * of that source; the coverage read joins them to the users that have devices.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { Logger } from '../../observability/logger.ts';
import {
  isUserRelaySource,
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

  constructor(
    db: Database,
    private readonly logger: Logger,
  ) {
    this.upsert = db.prepare(UPSERT);
    this.selectMany = db.prepare(SELECT_MANY);
    this.selectCovered = db.prepare(SELECT_COVERED);
  }

  put(pubkey: string, list: UserRelayList): PutUserRelayListResult {
    const changes = this.upsert.run(pubkey, list.source, list.eventId, list.createdAt, JSON.stringify(list.relays)).changes;
    return changes > 0 ? 'stored' : 'stale';
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
