/** The delivery log on SQLite (port-delivery-log.ts): one row per entry, day counters for open rates. */
import type { Database, Statement } from 'better-sqlite3';
import type { Clock } from '../port.ts';
import {
  DELIVERY_STATS_DAY_MS,
  deliveryStatsDay,
  deliveryStatsIncrements,
  type DeliveryLogEntry,
  type DeliveryLogQuery,
  type DeliveryStatus,
  type NewDeliveryLogEntry,
  type TypeOpenRate,
} from '../port-delivery-log.ts';

export const CREATE_DELIVERY_LOG_TABLES = `
  -- seq orders entries of one millisecond as they were appended.
  CREATE TABLE delivery_log (
    seq                 INTEGER PRIMARY KEY AUTOINCREMENT,
    app_id              TEXT NOT NULL,
    at_ms               INTEGER NOT NULL,
    notification_id     TEXT NOT NULL,
    recipient           TEXT NOT NULL,
    type                TEXT NOT NULL,
    status              TEXT NOT NULL,
    transport           TEXT,
    token_prefix        TEXT,
    provider_message_id TEXT,
    error               TEXT,
    latency_ms          INTEGER
  );
  CREATE INDEX delivery_log_by_time ON delivery_log (app_id, at_ms, seq);
  CREATE INDEX delivery_log_by_recipient ON delivery_log (app_id, recipient, at_ms, seq);
  CREATE INDEX delivery_log_by_notification ON delivery_log (app_id, notification_id, seq);

  -- Open-rate counters per UTC day (day = floor(ms / 86,400,000)) and type.
  CREATE TABLE delivery_stats (
    app_id TEXT NOT NULL,
    day    INTEGER NOT NULL,
    type   TEXT NOT NULL,
    sent   INTEGER NOT NULL DEFAULT 0,
    opened INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (app_id, day, type)
  );
`;

interface LogRow {
  app_id: string;
  at_ms: number;
  notification_id: string;
  recipient: string;
  type: string;
  status: DeliveryStatus;
  transport: string | null;
  token_prefix: string | null;
  provider_message_id: string | null;
  error: string | null;
  latency_ms: number | null;
}

const COLUMNS = 'app_id, at_ms, notification_id, recipient, type, status, transport, token_prefix, provider_message_id, error, latency_ms';
const INSERT = `INSERT INTO delivery_log (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const BUMP_STATS = `
  INSERT INTO delivery_stats (app_id, day, type, sent, opened) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (app_id, day, type) DO UPDATE SET sent = sent + excluded.sent, opened = opened + excluded.opened`;
const SELECT_BY_TIME = `SELECT ${COLUMNS} FROM delivery_log WHERE app_id = ? AND at_ms >= ? ORDER BY at_ms, seq LIMIT ?`;
const SELECT_BY_RECIPIENT = `SELECT ${COLUMNS} FROM delivery_log WHERE app_id = ? AND recipient = ? AND at_ms >= ? ORDER BY at_ms, seq LIMIT ?`;
const SELECT_BY_NOTIFICATION = `
  SELECT ${COLUMNS} FROM delivery_log WHERE app_id = ? AND notification_id = ? AND at_ms >= ? ORDER BY seq LIMIT ?`;
const SWEEP = `DELETE FROM delivery_log WHERE seq IN (SELECT seq FROM delivery_log WHERE app_id = ? AND at_ms < ? ORDER BY at_ms LIMIT ?)`;
const SWEEP_STATS = `DELETE FROM delivery_stats WHERE app_id = ? AND day < ?`;
const OPEN_RATES = `
  SELECT type, sum(sent) AS sent, sum(opened) AS opened FROM delivery_stats WHERE app_id = ? AND day >= ? GROUP BY type ORDER BY type`;

function fromRow(row: LogRow): DeliveryLogEntry {
  const entry: DeliveryLogEntry = {
    appId: row.app_id,
    notificationId: row.notification_id,
    recipient: row.recipient,
    type: row.type,
    status: row.status,
    atMs: row.at_ms,
  };
  if (row.transport !== null) entry.transport = row.transport;
  if (row.token_prefix !== null) entry.tokenPrefix = row.token_prefix;
  if (row.provider_message_id !== null) entry.providerMessageId = row.provider_message_id;
  if (row.error !== null) entry.error = row.error;
  if (row.latency_ms !== null) entry.latencyMs = row.latency_ms;
  return entry;
}

type InsertParams = [
  string,
  number,
  string,
  string,
  string,
  string,
  string | null,
  string | null,
  string | null,
  string | null,
  number | null,
];

export class DeliveryLogTables {
  private readonly insert: Statement<InsertParams>;
  private readonly bump: Statement<[string, number, string, number, number]>;
  private readonly byTime: Statement<[string, number, number], LogRow>;
  private readonly byRecipient: Statement<[string, string, number, number], LogRow>;
  private readonly byNotification: Statement<[string, string, number, number], LogRow>;
  private readonly sweepRows: Statement<[string, number, number]>;
  private readonly sweepStats: Statement<[string, number]>;
  private readonly openRates: Statement<[string, number], TypeOpenRate>;

  constructor(
    db: Database,
    private readonly clock: Clock,
  ) {
    this.insert = db.prepare(INSERT);
    this.bump = db.prepare(BUMP_STATS);
    this.byTime = db.prepare(SELECT_BY_TIME);
    this.byRecipient = db.prepare(SELECT_BY_RECIPIENT);
    this.byNotification = db.prepare(SELECT_BY_NOTIFICATION);
    this.sweepRows = db.prepare(SWEEP);
    this.sweepStats = db.prepare(SWEEP_STATS);
    this.openRates = db.prepare(OPEN_RATES);
  }

  /** Call inside a transaction. */
  append(entries: readonly NewDeliveryLogEntry[]): void {
    const nowMs = this.clock.nowMs();
    for (const e of entries) {
      this.insert.run(
        e.appId,
        nowMs,
        e.notificationId,
        e.recipient,
        e.type,
        e.status,
        e.transport ?? null,
        e.tokenPrefix ?? null,
        e.providerMessageId ?? null,
        e.error ?? null,
        e.latencyMs === undefined ? null : Math.round(e.latencyMs),
      );
    }
    const day = deliveryStatsDay(nowMs);
    for (const inc of deliveryStatsIncrements(entries)) this.bump.run(inc.appId, day, inc.type, inc.sent, inc.opened);
  }

  read(appId: string, query: DeliveryLogQuery): DeliveryLogEntry[] {
    const since = query.sinceMs ?? 0;
    const rows =
      query.notificationId !== undefined
        ? this.byNotification.all(appId, query.notificationId, since, query.limit)
        : query.recipient !== undefined
          ? this.byRecipient.all(appId, query.recipient, since, query.limit)
          : this.byTime.all(appId, since, query.limit);
    const entries = rows.map(fromRow);
    // A notification read may also name a recipient: filter the (small) per-notification result.
    return query.notificationId !== undefined && query.recipient !== undefined
      ? entries.filter((e) => e.recipient === query.recipient)
      : entries;
  }

  /** Call inside a transaction. */
  sweep(appId: string, cutoffMs: number, limit: number): number {
    const removed = this.sweepRows.run(appId, cutoffMs, limit).changes;
    // A day whose end is at or before the cutoff: day + 1 <= cutoff / day length.
    this.sweepStats.run(appId, Math.floor(cutoffMs / DELIVERY_STATS_DAY_MS));
    return removed;
  }

  rates(appId: string, sinceMs: number): TypeOpenRate[] {
    return this.openRates.all(appId, deliveryStatsDay(sinceMs)).map((r) => ({ type: r.type, sent: r.sent, opened: r.opened }));
  }
}
