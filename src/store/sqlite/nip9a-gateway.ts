/**
 * The NIP-9a gateway's storage on SQLite (port-nip9a-gateway.ts): one row per registration
 * address with its relays in a side table (per-relay totals are an index count), a one-row change
 * counter, and the outcome record trimmed by count and age on every insert. Every write is one
 * transaction function, so it is atomic inside the store's group commit.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { Clock } from '../port.ts';
import type {
  Nip9aDeliveryRef,
  Nip9aDeliveryState,
  Nip9aRegistrationLimits,
  PutNip9aRegistrationResult,
  StoredNip9aRegistration,
} from '../port-nip9a-gateway.ts';

/** Schema of the gateway tables (one migration). */
export const CREATE_NIP9A_GATEWAY_TABLES = `
  -- One row per NIP-9a registration address (pubkey, d): the version in force.
  CREATE TABLE nip9a_registrations (
    pubkey     TEXT NOT NULL,
    d_tag      TEXT NOT NULL,
    event_id   TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    event_json TEXT NOT NULL,
    PRIMARY KEY (pubkey, d_tag)
  );
  -- The relays each registration watches: the per-author-per-relay and watched-relay counts.
  CREATE TABLE nip9a_registration_relays (
    pubkey TEXT NOT NULL,
    d_tag  TEXT NOT NULL,
    relay  TEXT NOT NULL,
    PRIMARY KEY (pubkey, d_tag, relay)
  );
  CREATE INDEX nip9a_registration_relays_by_relay ON nip9a_registration_relays (relay);
  -- One row: raised by every change, polled by gateways to reload.
  CREATE TABLE nip9a_registrations_version (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
    version   INTEGER NOT NULL
  );
  INSERT INTO nip9a_registrations_version (singleton, version) VALUES (1, 0);
  -- Terminal delivery outcomes (dedup), bounded by count and age. AUTOINCREMENT: rowids never
  -- reused, so the newest N rows are the N highest rowids (the count trim is a range delete).
  CREATE TABLE nip9a_outcomes (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    key            TEXT NOT NULL UNIQUE,
    recorded_at_ms INTEGER NOT NULL
  );
  CREATE INDEX nip9a_outcomes_by_time ON nip9a_outcomes (recorded_at_ms);
`;

interface RegistrationRow {
  pubkey: string;
  d_tag: string;
  event_id: string;
  created_at: number;
  event_json: string;
  relays: string;
}

const SELECT_COLUMNS = `
  SELECT r.pubkey, r.d_tag, r.event_id, r.created_at, r.event_json,
    (SELECT json_group_array(relay) FROM nip9a_registration_relays x WHERE x.pubkey = r.pubkey AND x.d_tag = r.d_tag) AS relays
  FROM nip9a_registrations r`;

function toStored(row: RegistrationRow): StoredNip9aRegistration {
  return {
    pubkey: row.pubkey,
    d: row.d_tag,
    eventId: row.event_id,
    createdAt: row.created_at,
    relays: (JSON.parse(row.relays) as string[]).sort(),
    eventJson: row.event_json,
  };
}

export class Nip9aGatewayTables {
  private readonly selectOne: Statement<[string, string], RegistrationRow>;
  private readonly selectByAuthor: Statement<[string], RegistrationRow>;
  private readonly selectAll: Statement<[], RegistrationRow>;
  private readonly countByAuthor: Statement<[string, string], { n: number }>;
  private readonly countByAuthorRelay: Statement<[string, string, string], { n: number }>;
  private readonly watchedByOthers: Statement<[string, string, string], { n: number }>;
  private readonly countWatchedRelays: Statement<[], { n: number }>;
  private readonly upsert: Statement<[string, string, string, number, string]>;
  private readonly deleteRow: Statement<[string, string]>;
  private readonly deleteRelays: Statement<[string, string]>;
  private readonly insertRelay: Statement<[string, string, string]>;
  private readonly bumpVersion: Statement;
  private readonly selectVersion: Statement<[], { version: number }>;
  private readonly insertOutcome: Statement<[string, number]>;
  private readonly selectDeliveryState: Statement<[string, number, string, string], { recorded: number; event_id: string | null }>;
  private readonly trimOutcomesByAge: Statement<[number]>;
  private readonly trimOutcomesBelowId: Statement<[number | bigint]>;
  private readonly put: (registration: StoredNip9aRegistration, limits: Nip9aRegistrationLimits) => PutNip9aRegistrationResult;
  private readonly remove: (pubkey: string, d: string, eventId: string | undefined) => boolean;
  private readonly record: (keys: readonly string[], maxEntries: number, maxAgeMs: number) => boolean[];

  constructor(
    db: Database,
    private readonly clock: Clock,
  ) {
    this.selectOne = db.prepare(`${SELECT_COLUMNS} WHERE r.pubkey = ? AND r.d_tag = ?`);
    this.selectByAuthor = db.prepare(`${SELECT_COLUMNS} WHERE r.pubkey = ?`);
    this.selectAll = db.prepare(SELECT_COLUMNS);
    this.countByAuthor = db.prepare(`SELECT count(*) AS n FROM nip9a_registrations WHERE pubkey = ? AND d_tag <> ?`);
    this.countByAuthorRelay = db.prepare(
      `SELECT count(*) AS n FROM nip9a_registration_relays WHERE pubkey = ? AND relay = ? AND d_tag <> ?`,
    );
    this.watchedByOthers = db.prepare(
      `SELECT EXISTS (SELECT 1 FROM nip9a_registration_relays WHERE relay = ? AND NOT (pubkey = ? AND d_tag = ?)) AS n`,
    );
    // An index-only scan of the relay index, run only when a write would add a relay.
    this.countWatchedRelays = db.prepare(`SELECT count(DISTINCT relay) AS n FROM nip9a_registration_relays`);
    this.upsert = db.prepare(`
      INSERT INTO nip9a_registrations (pubkey, d_tag, event_id, created_at, event_json) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (pubkey, d_tag) DO UPDATE SET
        event_id = excluded.event_id, created_at = excluded.created_at, event_json = excluded.event_json`);
    this.deleteRow = db.prepare(`DELETE FROM nip9a_registrations WHERE pubkey = ? AND d_tag = ?`);
    this.deleteRelays = db.prepare(`DELETE FROM nip9a_registration_relays WHERE pubkey = ? AND d_tag = ?`);
    this.insertRelay = db.prepare(`INSERT OR IGNORE INTO nip9a_registration_relays (pubkey, d_tag, relay) VALUES (?, ?, ?)`);
    this.bumpVersion = db.prepare(`UPDATE nip9a_registrations_version SET version = version + 1 WHERE singleton = 1`);
    this.selectVersion = db.prepare(`SELECT version FROM nip9a_registrations_version WHERE singleton = 1`);
    this.insertOutcome = db.prepare(`INSERT OR IGNORE INTO nip9a_outcomes (key, recorded_at_ms) VALUES (?, ?)`);
    this.selectDeliveryState = db.prepare(`
      SELECT (SELECT count(*) FROM nip9a_outcomes WHERE key = ? AND recorded_at_ms > ?) AS recorded,
        (SELECT event_id FROM nip9a_registrations WHERE pubkey = ? AND d_tag = ?) AS event_id`);
    this.trimOutcomesByAge = db.prepare(`DELETE FROM nip9a_outcomes WHERE recorded_at_ms <= ?`);
    // Rows are inserted with ever larger rowids and only the oldest are ever deleted, so the newest
    // N are exactly those above the new row's rowid minus N: a range delete, not a walk of N rows.
    this.trimOutcomesBelowId = db.prepare(`DELETE FROM nip9a_outcomes WHERE id <= ?`);

    this.put = db.transaction((registration: StoredNip9aRegistration, limits: Nip9aRegistrationLimits): PutNip9aRegistrationResult => {
      const { pubkey, d } = registration;
      const current = this.selectOne.get(pubkey, d);
      if (current) {
        const newer =
          registration.createdAt > current.created_at ||
          (registration.createdAt === current.created_at && registration.eventId < current.event_id);
        if (!newer) return { outcome: 'stale', currentEventId: current.event_id };
      }
      if ((this.countByAuthor.get(pubkey, d)?.n ?? 0) >= limits.perAuthor) return { outcome: 'author_limit' };
      for (const relay of registration.relays) {
        if ((this.countByAuthorRelay.get(pubkey, relay, d)?.n ?? 0) >= limits.perAuthorPerRelay)
          return { outcome: 'author_relay_limit', relay };
      }
      const watched = (relay: string): boolean => (this.watchedByOthers.get(relay, pubkey, d)?.n ?? 0) > 0;
      const adds = registration.relays.filter((relay) => !watched(relay));
      if (adds.length > 0) {
        // Relays only the replaced version holds are freed by this write.
        const freed = current ? (JSON.parse(current.relays) as string[]).filter((relay) => !watched(relay)).length : 0;
        const after = (this.countWatchedRelays.get()?.n ?? 0) - freed + adds.length;
        if (after > limits.maxWatchedRelays) return { outcome: 'watched_relays_limit', relay: adds[0] as string };
      }
      this.upsert.run(pubkey, d, registration.eventId, registration.createdAt, registration.eventJson);
      this.deleteRelays.run(pubkey, d);
      for (const relay of registration.relays) this.insertRelay.run(pubkey, d, relay);
      this.bumpVersion.run();
      return current ? { outcome: 'replaced', previousEventId: current.event_id } : { outcome: 'stored' };
    });
    this.remove = db.transaction((pubkey: string, d: string, eventId: string | undefined): boolean => {
      const current = this.selectOne.get(pubkey, d);
      if (!current || (eventId !== undefined && current.event_id !== eventId)) return false;
      this.deleteRow.run(pubkey, d);
      this.deleteRelays.run(pubkey, d);
      this.bumpVersion.run();
      return true;
    });
    this.record = db.transaction((keys: readonly string[], maxEntries: number, maxAgeMs: number): boolean[] => {
      const now = this.clock.nowMs();
      this.trimOutcomesByAge.run(now - maxAgeMs);
      let newest: bigint | null = null;
      const recorded: boolean[] = [];
      for (const key of keys) {
        const inserted = this.insertOutcome.run(key, now);
        recorded.push(inserted.changes > 0);
        if (inserted.changes > 0) newest = BigInt(inserted.lastInsertRowid);
      }
      // One trim for the whole call: the same rows go as with a trim after each insert.
      if (newest !== null) this.trimOutcomesBelowId.run(newest - BigInt(maxEntries));
      return recorded;
    });
  }

  putRegistration(registration: StoredNip9aRegistration, limits: Nip9aRegistrationLimits): PutNip9aRegistrationResult {
    return this.put(registration, limits);
  }

  deleteRegistration(pubkey: string, d: string, eventId?: string): boolean {
    return this.remove(pubkey, d, eventId);
  }

  getRegistration(pubkey: string, d: string): StoredNip9aRegistration | null {
    const row = this.selectOne.get(pubkey, d);
    return row ? toStored(row) : null;
  }

  listRegistrations(pubkey: string): StoredNip9aRegistration[] {
    return this.selectByAuthor.all(pubkey).map(toStored);
  }

  listAllRegistrations(): StoredNip9aRegistration[] {
    return this.selectAll.all().map(toStored);
  }

  version(): number {
    return this.selectVersion.get()?.version ?? 0;
  }

  recordOutcomes(keys: readonly string[], maxEntries: number, maxAgeMs: number): boolean[] {
    return keys.length === 0 ? [] : this.record(keys, maxEntries, maxAgeMs);
  }

  deliveryStates(entries: readonly Nip9aDeliveryRef[], maxAgeMs: number): Nip9aDeliveryState[] {
    const after = this.clock.nowMs() - maxAgeMs;
    return entries.map((entry) => {
      const row = this.selectDeliveryState.get(entry.key, after, entry.pubkey, entry.d);
      return { outcomeRecorded: (row?.recorded ?? 0) > 0, registrationEventId: row?.event_id ?? null };
    });
  }
}
