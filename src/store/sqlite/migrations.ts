import { CREATE_CAMPAIGN_TABLES } from './campaigns.ts';
import { CREATE_QUIET_HOURS_TABLES } from './quiet-hours.ts';
import type { Database } from 'better-sqlite3';
import { CREATE_THROTTLE_TABLE } from './throttle.ts';
import type { Logger } from '../../observability/logger.ts';
import { CREATE_COALESCE_TABLES } from './coalesce-sql.ts';
import { CREATE_BELL_TABLES } from './bells.ts';
import { CREATE_NTFY_TABLES } from './ntfy.ts';
import { CREATE_NTFY_SCHEDULED_TABLE } from './ntfy-scheduled.ts';
import { CREATE_VAPID_TABLE } from './vapid.ts';
import { ADD_API_KEY_LAST_USED, CREATE_API_KEY_TABLE } from './apikeys.ts';
import { CREATE_SEND_TABLES } from './sends.ts';
import { CREATE_DELIVERY_LOG_TABLES } from './delivery-log.ts';
import { CREATE_SOCIAL_FILTERS_TABLE } from './social-filters.ts';
import { ADD_INBOX_USER_ACTIVITY, CREATE_INBOX_TABLES } from './inbox.ts';
import { CREATE_CLIENT_QUOTA_TABLE } from './client-quotas.ts';
import { inboxActivityDayMs } from '../port-inbox.ts';
import { CREATE_USER_RELAY_LISTS_TABLE, CREATE_USER_RELAY_CHANGES_TABLE } from './user-relays.ts';
import { CREATE_NIP9A_GATEWAY_TABLES } from './nip9a-gateway.ts';
import { ADD_NIP9A_CALLBACK_ACTIVITY, CREATE_NIP9A_CALLBACK_TABLES } from './nip9a-callbacks.ts';
import { CREATE_FLEET_TABLES } from './fleet.ts';

/**
 * Schema migrations of the SQLite store.
 *
 * `schema_version` holds one row with the version the file is at. `migrations[n]` takes a file
 * from version n to n + 1; {@link migrate} applies the missing ones in order at open, each in its
 * own transaction together with its version bump, so a crash mid-upgrade leaves the file at the
 * last completed step. Never edit a published migration: append a new one.
 */
export interface Migration {
  /** One line for the log. */
  description: string;
  apply(db: Database): void;
}

const CREATE_SCHEMA_VERSION = `
  CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER NOT NULL
  )`;
const SELECT_SCHEMA_VERSION = `SELECT version FROM schema_version`;
const CLEAR_SCHEMA_VERSION = `DELETE FROM schema_version`;
const INSERT_SCHEMA_VERSION = `INSERT INTO schema_version (version) VALUES (?)`;

/** Version 0 → 1: every table of the first storage port. */
const CREATE_SCHEMA_V1 = `
  -- One row per device token; the token is the device's identity across transports.
  CREATE TABLE devices (
    token                   TEXT PRIMARY KEY,
    pubkey                  TEXT NOT NULL,
    transport               TEXT NOT NULL,
    endpoint                TEXT,
    p256dh                  TEXT,
    auth                    TEXT,
    timezone_offset_minutes INTEGER,
    activity_ms             INTEGER NOT NULL
  );
  CREATE INDEX devices_by_pubkey ON devices (pubkey);
  CREATE INDEX devices_by_activity ON devices (activity_ms);

  -- Claims are absent once the store clock reaches expires_at_ms, whether or not the row is gone yet.
  CREATE TABLE event_claims (
    event_id      TEXT PRIMARY KEY,
    expires_at_ms INTEGER NOT NULL
  );
  CREATE INDEX event_claims_by_expiry ON event_claims (expires_at_ms);

  CREATE TABLE recipient_claims (
    event_id      TEXT NOT NULL,
    recipient     TEXT NOT NULL,
    owner         TEXT NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    PRIMARY KEY (event_id, recipient)
  );
  CREATE INDEX recipient_claims_by_expiry ON recipient_claims (expires_at_ms);

  CREATE TABLE preferences (
    pubkey            TEXT PRIMARY KEY,
    kinds_json        TEXT NOT NULL,
    campaigns_enabled INTEGER NOT NULL
  );

  CREATE TABLE relay_cursors (
    relay_url  TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL
  );

  CREATE TABLE profile_cache (
    pubkey        TEXT PRIMARY KEY,
    name          TEXT,
    display_name  TEXT,
    expires_at_ms INTEGER NOT NULL
  );
  CREATE INDEX profile_cache_by_expiry ON profile_cache (expires_at_ms);

  -- due_at_ms is when the item next becomes leasable: its availability while ready, its lease
  -- expiry while leased (which is what makes an expired lease leasable again). Unused when dead.
  CREATE TABLE queue_items (
    queue        TEXT NOT NULL,
    id           TEXT NOT NULL,
    payload_json TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('ready', 'leased', 'dead')),
    due_at_ms    INTEGER NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    lease_token  TEXT,
    last_error   TEXT,
    dead_reason  TEXT,
    dead_at_ms   INTEGER,
    PRIMARY KEY (queue, id)
  );
  CREATE INDEX queue_items_due ON queue_items (queue, due_at_ms) WHERE state <> 'dead';
  CREATE INDEX queue_items_dead ON queue_items (queue, dead_at_ms) WHERE state = 'dead';
`;

function migrateFrom0(db: Database): void {
  db.exec(CREATE_SCHEMA_V1);
}

/** Version 1 → 2: per-recipient video coordinate decisions (a bell or mention already sent). */
const CREATE_VIDEO_RECORDS = `
  CREATE TABLE video_records (
    type          TEXT NOT NULL,
    owner         TEXT NOT NULL,
    d_tag         TEXT NOT NULL,
    recipient     TEXT NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    PRIMARY KEY (owner, d_tag, recipient, type)
  );
  CREATE INDEX video_records_by_expiry ON video_records (expires_at_ms);
`;

function migrateFrom1(db: Database): void {
  db.exec(CREATE_VIDEO_RECORDS);
}

/** Version 6 → 7: a device's APNs environment (1 = sandbox) and the key its payloads are encrypted to. */
const ADD_DEVICE_APNS_AND_ENCRYPTION = `
  ALTER TABLE devices ADD COLUMN apns_sandbox INTEGER;
  ALTER TABLE devices ADD COLUMN encrypt_to TEXT;
`;

/**
 * Version 8 → 9: priority lanes (each lane its own range of the due index, so a lease of one lane
 * never walks another's rows) and the failure times an operator sees on a dead letter. Items
 * already queued are in the normal lane, where an item enqueued without a lane goes.
 */
const ADD_QUEUE_LANES = `
  ALTER TABLE queue_items ADD COLUMN lane TEXT NOT NULL DEFAULT 'normal' CHECK (lane IN ('critical', 'normal', 'low'));
  ALTER TABLE queue_items ADD COLUMN first_failed_at_ms INTEGER;
  ALTER TABLE queue_items ADD COLUMN last_failed_at_ms INTEGER;
  DROP INDEX queue_items_due;
  CREATE INDEX queue_items_lane_due ON queue_items (queue, lane, due_at_ms) WHERE state <> 'dead';
  DROP INDEX queue_items_dead;
  CREATE INDEX queue_items_dead ON queue_items (queue, dead_at_ms, id) WHERE state = 'dead';
`;

/** A device's language (issue 15): a canonical BCP 47 tag, NULL for the default locale. */
const ADD_DEVICE_LOCALE = `ALTER TABLE devices ADD COLUMN locale TEXT;`;

// The state joins the due index so the queue gauges count unexpired leases from the index alone:
// a campaign's deferred items are ready rows with due times hours ahead, and reading each of
// their rows to learn it is not leased cost ~95 ms a sample at 80,000 of them. A lease already
// rewrites the entry (its due time changes), so the wider key adds no page writes.
const ADD_STATE_TO_QUEUE_DUE_INDEX = `
  DROP INDEX queue_items_lane_due;
  CREATE INDEX queue_items_lane_due ON queue_items (queue, lane, due_at_ms, state) WHERE state <> 'dead';
`;

/** An event claim's owner (issue 42); '' for the claims taken without one, and for every older row. */
const ADD_EVENT_CLAIM_OWNER = `ALTER TABLE event_claims ADD COLUMN owner TEXT NOT NULL DEFAULT '';`;

/** `migrations[n]` upgrades a file from version n to n + 1. */
export const migrations: readonly Migration[] = [
  { description: 'create devices, claims, preferences, relay cursors, profile cache and queues', apply: migrateFrom0 },
  { description: 'create video coordinate records', apply: migrateFrom1 },
  { description: 'create notify-list indexes, bell rate windows and the fan-out job queue', apply: (db) => db.exec(CREATE_BELL_TABLES) },
  { description: 'create ntfy topic messages and the id head', apply: (db) => db.exec(CREATE_NTFY_TABLES) },
  {
    description: 'create coalescing groups, actors, dispositions, outbox and recipient budgets',
    apply: (db) => db.exec(CREATE_COALESCE_TABLES),
  },
  { description: 'create the shared VAPID key table', apply: (db) => db.exec(CREATE_VAPID_TABLE) },
  {
    description: 'add the APNs sandbox flag and the encryptTo device key to devices',
    apply: (db) => db.exec(ADD_DEVICE_APNS_AND_ENCRYPTION),
  },
  {
    description: 'create the social filter table (kind 3083 mutes and onlyFollowing)',
    apply: (db) => db.exec(CREATE_SOCIAL_FILTERS_TABLE),
  },
  {
    description: 'create inbox counters, counted marks, known users, alert words and announcements',
    apply: (db) => db.exec(CREATE_INBOX_TABLES),
  },
  { description: 'queue lanes and failure times of queue items', apply: (db) => db.exec(ADD_QUEUE_LANES) },
  { description: 'create the NIP-9a gateway registrations and outcome record', apply: (db) => db.exec(CREATE_NIP9A_GATEWAY_TABLES) },
  { description: 'create NIP-9a callback URLs and relay-POST receipts', apply: (db) => db.exec(CREATE_NIP9A_CALLBACK_TABLES) },
  {
    description: 'create API keys, sends, idempotency records and the delivery log',
    apply: (db) => db.exec(CREATE_API_KEY_TABLE + CREATE_SEND_TABLES + CREATE_DELIVERY_LOG_TABLES),
  },
  { description: 'create the console tables: process heartbeats, metric samples, sessions', apply: (db) => db.exec(CREATE_FLEET_TABLES) },
  { description: "add the device's locale to devices", apply: (db) => db.exec(ADD_DEVICE_LOCALE) },
  { description: 'create the per-user push throttle windows', apply: (db) => db.exec(CREATE_THROTTLE_TABLE) },
  { description: 'create campaigns, campaign delivery claims and suppressions', apply: (db) => db.exec(CREATE_CAMPAIGN_TABLES) },
  { description: 'create quiet hours and their digest counts', apply: (db) => db.exec(CREATE_QUIET_HOURS_TABLES) },
  {
    description: 'the queue due index carries the state (lease counts without row reads)',
    apply: (db) => db.exec(ADD_STATE_TO_QUEUE_DUE_INDEX),
  },
  {
    description: 'event claims carry their owner (a retried step recognises its own claim)',
    apply: (db) => db.exec(ADD_EVENT_CLAIM_OWNER),
  },
  { description: 'create the schedule of delayed ntfy messages', apply: (db) => db.exec(CREATE_NTFY_SCHEDULED_TABLE) },
  {
    // Issue 35. Rows already there count as active on the day of the upgrade (the process clock:
    // a migration runs once, at open, before any store clock is read).
    description: 'storage that expires: inbox user activity, callback last-received times, per-client quotas',
    apply: (db) => {
      const upgradeDayMs = inboxActivityDayMs(Date.now());
      db.exec(ADD_INBOX_USER_ACTIVITY(upgradeDayMs) + ADD_NIP9A_CALLBACK_ACTIVITY(upgradeDayMs) + CREATE_CLIENT_QUOTA_TABLE);
    },
  },
  {
    description: "create the users' relay lists (kinds 10002 and 10050, registrations)",
    apply: (db) => db.exec(CREATE_USER_RELAY_LISTS_TABLE),
  },
  { description: "API keys' last use (the console's keys page)", apply: (db) => db.exec(ADD_API_KEY_LAST_USED) },
  {
    description: "create the log of users whose relay coverage changed (the listener's incremental refresh)",
    apply: (db) => db.exec(CREATE_USER_RELAY_CHANGES_TABLE),
  },
];

/** The version a file has after {@link migrate}. */
export const LATEST_SCHEMA_VERSION = migrations.length;

/** The version a database file is at; 0 for a fresh file. */
export function schemaVersion(db: Database): number {
  db.exec(CREATE_SCHEMA_VERSION);
  const row = db.prepare<[], { version: number }>(SELECT_SCHEMA_VERSION).get();
  return row?.version ?? 0;
}

/** Thrown when a file was written by a newer nostr-push than this one; it is never downgraded. */
export class SchemaTooNewError extends Error {
  constructor(
    readonly fileVersion: number,
    readonly supportedVersion: number,
  ) {
    super(`SQLite schema version ${fileVersion} is newer than this build supports (${supportedVersion})`);
    this.name = 'SchemaTooNewError';
  }
}

/**
 * Bring `db` to {@link LATEST_SCHEMA_VERSION}, logging each step. Returns the versions applied
 * (empty when the file was already current).
 */
export function migrate(db: Database, logger: Logger, list: readonly Migration[] = migrations): number[] {
  const latest = list.length;
  const applied: number[] = [];
  let version = schemaVersion(db);
  if (version > latest) throw new SchemaTooNewError(version, latest);
  const step = db.transaction((from: number) => {
    const migration = list[from];
    if (!migration) throw new Error(`no SQLite migration from version ${from}`);
    migration.apply(db);
    db.prepare(CLEAR_SCHEMA_VERSION).run();
    db.prepare(INSERT_SCHEMA_VERSION).run(from + 1);
  });
  while (version < latest) {
    logger.info({ from: version, to: version + 1, step: list[version]?.description }, 'sqlite schema migration');
    step(version);
    version += 1;
    applied.push(version);
  }
  return applied;
}
