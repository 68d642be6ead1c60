/** The console's fleet view and sessions on SQLite (port-fleet.ts): heartbeats, samples, sessions. */
import type { Database, Statement } from 'better-sqlite3';
import type { Clock, Transport } from '../port.ts';
import type { ConsoleSession, FleetStore, MetricSample, NtfyTopicCount, ProcessHeartbeat, ProcessHeartbeatRecord } from '../port-fleet.ts';

export const CREATE_FLEET_TABLES = `
  -- A heartbeat is gone once the store clock reaches expires_at_ms, whether or not the row is.
  CREATE TABLE fleet_heartbeats (
    process_id    TEXT PRIMARY KEY,
    record        TEXT NOT NULL,
    seen_at_ms    INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL
  );
  -- values: JSON object series name → number.
  CREATE TABLE fleet_samples (
    process_id TEXT NOT NULL,
    at_ms      INTEGER NOT NULL,
    sample     TEXT NOT NULL,
    PRIMARY KEY (at_ms, process_id)
  );
  -- Keyed by the SHA-256 of the session id; the id itself is only in the browser's cookie.
  CREATE TABLE console_sessions (
    id_hash       TEXT PRIMARY KEY,
    csrf_token    TEXT NOT NULL,
    key_id        TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL
  );
`;

const TRANSPORTS: readonly Transport[] = ['fcm', 'apns', 'webpush', 'unifiedpush'];

interface HeartbeatRow {
  record: string;
  seen_at_ms: number;
}
interface SampleRow {
  process_id: string;
  at_ms: number;
  sample: string;
}
interface SessionRow {
  id_hash: string;
  csrf_token: string;
  key_id: string;
  created_at_ms: number;
  expires_at_ms: number;
}

/** The port's operations, synchronous (the store wraps them in promises and group commits). */
type Sync<T> = { [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R : T[K] };

export class FleetTables implements Sync<FleetStore> {
  private readonly upsertBeat: Statement<[string, string, number, number]>;
  private readonly purgeBeats: Statement<[number]>;
  private readonly selectBeats: Statement<[number], HeartbeatRow>;
  private readonly deleteBeat: Statement<[string, number]>;
  private readonly upsertSample: Statement<[string, number, string]>;
  private readonly purgeSamples: Statement<[number]>;
  private readonly selectSamples: Statement<[number], SampleRow>;
  private readonly countTokens: Statement<[], { transport: string; n: number }>;
  private readonly countNtfy: Statement<[number], NtfyTopicCount>;
  private readonly purgeSessions: Statement<[number]>;
  private readonly insertSession: Statement<[SessionRow]>;
  private readonly selectSession: Statement<[string, number], SessionRow>;
  private readonly deleteSession: Statement<[string, number]>;

  constructor(
    db: Database,
    private readonly clock: Clock,
  ) {
    this.upsertBeat = db.prepare(
      `INSERT INTO fleet_heartbeats (process_id, record, seen_at_ms, expires_at_ms) VALUES (?, ?, ?, ?)
       ON CONFLICT (process_id) DO UPDATE SET record = excluded.record, seen_at_ms = excluded.seen_at_ms, expires_at_ms = excluded.expires_at_ms`,
    );
    this.purgeBeats = db.prepare('DELETE FROM fleet_heartbeats WHERE expires_at_ms <= ?');
    this.selectBeats = db.prepare('SELECT record, seen_at_ms FROM fleet_heartbeats WHERE expires_at_ms > ? ORDER BY process_id');
    this.deleteBeat = db.prepare('DELETE FROM fleet_heartbeats WHERE process_id = ? AND expires_at_ms > ?');
    this.upsertSample = db.prepare(
      `INSERT INTO fleet_samples (process_id, at_ms, sample) VALUES (?, ?, ?)
       ON CONFLICT (at_ms, process_id) DO UPDATE SET sample = excluded.sample`,
    );
    this.purgeSamples = db.prepare('DELETE FROM fleet_samples WHERE at_ms < ?');
    this.selectSamples = db.prepare('SELECT process_id, at_ms, sample FROM fleet_samples WHERE at_ms >= ? ORDER BY at_ms, process_id');
    this.countTokens = db.prepare('SELECT transport, COUNT(*) AS n FROM devices GROUP BY transport');
    this.countNtfy = db.prepare('SELECT topic, COUNT(*) AS messages FROM ntfy_messages GROUP BY topic ORDER BY topic LIMIT ?');
    this.purgeSessions = db.prepare('DELETE FROM console_sessions WHERE expires_at_ms <= ?');
    this.insertSession = db.prepare(
      `INSERT INTO console_sessions (id_hash, csrf_token, key_id, created_at_ms, expires_at_ms)
       VALUES (@id_hash, @csrf_token, @key_id, @created_at_ms, @expires_at_ms) ON CONFLICT DO NOTHING`,
    );
    this.selectSession = db.prepare('SELECT * FROM console_sessions WHERE id_hash = ? AND expires_at_ms > ?');
    this.deleteSession = db.prepare('DELETE FROM console_sessions WHERE id_hash = ? AND expires_at_ms > ?');
  }

  writeHeartbeat(heartbeat: ProcessHeartbeat, ttlMs: number): void {
    const now = this.clock.nowMs();
    this.purgeBeats.run(now);
    this.upsertBeat.run(heartbeat.processId, JSON.stringify(heartbeat), now, now + ttlMs);
  }

  listHeartbeats(): ProcessHeartbeatRecord[] {
    return this.selectBeats
      .all(this.clock.nowMs())
      .map((row) => ({ ...(JSON.parse(row.record) as ProcessHeartbeat), lastSeenAtMs: row.seen_at_ms }));
  }

  removeHeartbeat(processId: string): boolean {
    return this.deleteBeat.run(processId, this.clock.nowMs()).changes === 1;
  }

  writeMetricSample(processId: string, values: Record<string, number>, retentionMs: number): void {
    const now = this.clock.nowMs();
    this.purgeSamples.run(now - retentionMs);
    this.upsertSample.run(processId, now, JSON.stringify(values));
  }

  readMetricSamples(sinceMs: number): MetricSample[] {
    return this.selectSamples.all(sinceMs).map((row) => ({
      processId: row.process_id,
      atMs: row.at_ms,
      values: JSON.parse(row.sample) as Record<string, number>,
    }));
  }

  countTokensByTransport(): Record<Transport, number> {
    const counts = Object.fromEntries(TRANSPORTS.map((t) => [t, 0])) as Record<Transport, number>;
    for (const row of this.countTokens.all())
      if ((TRANSPORTS as readonly string[]).includes(row.transport)) counts[row.transport as Transport] = row.n;
    return counts;
  }

  countNtfyMessagesByTopic(limit: number): NtfyTopicCount[] {
    return this.countNtfy.all(limit);
  }

  createConsoleSession(session: ConsoleSession): boolean {
    this.purgeSessions.run(this.clock.nowMs());
    return (
      this.insertSession.run({
        id_hash: session.idHash,
        csrf_token: session.csrfToken,
        key_id: session.keyId,
        created_at_ms: session.createdAtMs,
        expires_at_ms: session.expiresAtMs,
      }).changes === 1
    );
  }

  findConsoleSession(idHash: string): ConsoleSession | null {
    const row = this.selectSession.get(idHash, this.clock.nowMs());
    if (!row) return null;
    return {
      idHash: row.id_hash,
      csrfToken: row.csrf_token,
      keyId: row.key_id,
      createdAtMs: row.created_at_ms,
      expiresAtMs: row.expires_at_ms,
    };
  }

  deleteConsoleSession(idHash: string): boolean {
    return this.deleteSession.run(idHash, this.clock.nowMs()).changes === 1;
  }
}
