import type { Database, Statement } from 'better-sqlite3';
import { StoreError, StoreStatus } from '../errors.ts';
import type { CachedProfile, Clock, Preferences } from '../port.ts';
import { ExpiredRowSweeper, expiresAtMs } from './expiry.ts';

/** Small keyed records: notification preferences, relay cursors and the kind-0 profile cache. */

const SELECT_PREFERENCES = `SELECT kinds_json, campaigns_enabled FROM preferences WHERE pubkey = ?`;
/** The preference categories of many pubkeys in one statement (`?` is a JSON array of pubkeys). */
const SELECT_KINDS_OF_MANY = `SELECT pubkey, kinds_json FROM preferences WHERE pubkey IN (SELECT value FROM json_each(?))`;
const UPSERT_PREFERENCES = `
  INSERT INTO preferences (pubkey, kinds_json, campaigns_enabled) VALUES (@pubkey, @kindsJson, @campaignsEnabled)
  ON CONFLICT (pubkey) DO UPDATE SET kinds_json = excluded.kinds_json, campaigns_enabled = excluded.campaigns_enabled`;

const SELECT_RELAY_CURSOR = `SELECT created_at FROM relay_cursors WHERE relay_url = ?`;
/** Cursors only move forward: replays and slow relays deliver older events after newer ones. */
const ADVANCE_RELAY_CURSOR = `
  INSERT INTO relay_cursors (relay_url, created_at) VALUES (?, ?)
  ON CONFLICT (relay_url) DO UPDATE SET created_at = max(relay_cursors.created_at, excluded.created_at)`;

const SELECT_PROFILE = `SELECT pubkey, name, display_name FROM profile_cache WHERE pubkey = ? AND expires_at_ms > ?`;
const UPSERT_PROFILE = `
  INSERT INTO profile_cache (pubkey, name, display_name, expires_at_ms) VALUES (@pubkey, @name, @displayName, @expiresAtMs)
  ON CONFLICT (pubkey) DO UPDATE SET
    name = excluded.name, display_name = excluded.display_name, expires_at_ms = excluded.expires_at_ms`;
const DELETE_EXPIRED_PROFILES = `
  DELETE FROM profile_cache WHERE rowid IN (
    SELECT rowid FROM profile_cache WHERE expires_at_ms <= ? LIMIT ?)`;

interface PreferencesRow {
  kinds_json: string;
  campaigns_enabled: number;
}

interface ProfileRow {
  pubkey: string;
  name: string | null;
  display_name: string | null;
}

interface ProfileParams {
  pubkey: string;
  name: string | null;
  displayName: string | null;
  expiresAtMs: number;
}

function parseKinds(pubkey: string, json: string): number[] {
  let kinds: unknown;
  try {
    kinds = JSON.parse(json);
  } catch {
    throw new StoreError(StoreStatus.Corrupt, 'getPreferences', `kinds of ${pubkey} are not JSON`);
  }
  if (!Array.isArray(kinds) || !kinds.every((kind): kind is number => typeof kind === 'number')) {
    throw new StoreError(StoreStatus.Corrupt, 'getPreferences', `kinds of ${pubkey} are not a number array`);
  }
  return kinds;
}

function toProfile(row: ProfileRow): CachedProfile {
  const profile: CachedProfile = { pubkey: row.pubkey };
  if (row.name !== null) profile.name = row.name;
  if (row.display_name !== null) profile.display_name = row.display_name;
  return profile;
}

export class RecordTables {
  private readonly selectPreferences: Statement<[string], PreferencesRow>;
  private readonly selectKindsOfMany: Statement<[string], { pubkey: string; kinds_json: string }>;
  private readonly upsertPreferences: Statement<[{ pubkey: string; kindsJson: string; campaignsEnabled: number }]>;
  private readonly selectRelayCursor: Statement<[string], { created_at: number }>;
  private readonly advanceRelayCursor: Statement<[string, number]>;
  private readonly selectProfile: Statement<[string, number], ProfileRow>;
  private readonly upsertProfile: Statement<[ProfileParams]>;
  private readonly profileSweeper: ExpiredRowSweeper;

  readonly setPreferences: (pubkey: string, preferences: Preferences) => void;
  readonly advanceCursor: (relayUrl: string, createdAt: number) => void;
  readonly cacheProfile: (profile: CachedProfile, ttlSecs: number) => void;

  constructor(
    db: Database,
    private readonly clock: Clock,
  ) {
    this.selectPreferences = db.prepare(SELECT_PREFERENCES);
    this.selectKindsOfMany = db.prepare(SELECT_KINDS_OF_MANY);
    this.upsertPreferences = db.prepare(UPSERT_PREFERENCES);
    this.selectRelayCursor = db.prepare(SELECT_RELAY_CURSOR);
    this.advanceRelayCursor = db.prepare(ADVANCE_RELAY_CURSOR);
    this.selectProfile = db.prepare(SELECT_PROFILE);
    this.upsertProfile = db.prepare(UPSERT_PROFILE);
    this.profileSweeper = new ExpiredRowSweeper(db, [DELETE_EXPIRED_PROFILES]);

    this.setPreferences = db.transaction((pubkey: string, preferences: Preferences): void => {
      this.upsertPreferences.run({
        pubkey,
        kindsJson: JSON.stringify(preferences.kinds),
        campaignsEnabled: preferences.campaignsEnabled ? 1 : 0,
      });
    });

    this.advanceCursor = db.transaction((relayUrl: string, createdAt: number): void => {
      if (!Number.isSafeInteger(createdAt)) throw new RangeError(`created_at must be an integer, got ${createdAt}`);
      this.advanceRelayCursor.run(relayUrl, createdAt);
    });

    this.cacheProfile = db.transaction((profile: CachedProfile, ttlSecs: number): void => {
      const nowMs = this.clock.nowMs();
      this.profileSweeper.maybeSweep(nowMs);
      this.upsertProfile.run({
        pubkey: profile.pubkey,
        name: profile.name ?? null,
        displayName: profile.display_name ?? null,
        expiresAtMs: expiresAtMs(nowMs, ttlSecs),
      });
    });
  }

  /**
   * The preference categories of many pubkeys; a pubkey that set none is absent, and one whose
   * stored categories do not parse is reported to `unreadable` and absent too (the defaults apply).
   */
  preferenceKindsOfMany(pubkeys: readonly string[], unreadable: (pubkey: string, err: Error) => void): Map<string, number[]> {
    const kinds = new Map<string, number[]>();
    for (const row of this.selectKindsOfMany.all(JSON.stringify(pubkeys))) {
      try {
        kinds.set(row.pubkey, parseKinds(row.pubkey, row.kinds_json));
      } catch (err) {
        unreadable(row.pubkey, err as Error);
      }
    }
    return kinds;
  }

  getPreferences(pubkey: string): Preferences | null {
    const row = this.selectPreferences.get(pubkey);
    if (!row) return null;
    return { kinds: parseKinds(pubkey, row.kinds_json), campaignsEnabled: row.campaigns_enabled === 1 };
  }

  getCursor(relayUrl: string): number | null {
    return this.selectRelayCursor.get(relayUrl)?.created_at ?? null;
  }

  getProfile(pubkey: string): CachedProfile | null {
    const row = this.selectProfile.get(pubkey, this.clock.nowMs());
    return row ? toProfile(row) : null;
  }
}
