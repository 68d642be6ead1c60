/** Quiet hours and their digests on SQLite (port-quiet-hours.ts); each operation one statement or transaction. */
import type { Database, Statement } from 'better-sqlite3';
import type { Clock } from '../port.ts';
import type { DueDigest, QuietHours } from '../port-quiet-hours.ts';

export const CREATE_QUIET_HOURS_TABLES = `
  -- Kind 3083 quietHours (and urgentTypes) per user.
  CREATE TABLE quiet_hours (
    pubkey     TEXT PRIMARY KEY,
    hours_json TEXT NOT NULL
  );
  -- Social pushes held during quiet hours, counted per type for the digest.
  CREATE TABLE digest_counts (
    pubkey TEXT NOT NULL,
    type   TEXT NOT NULL,
    count  INTEGER NOT NULL,
    PRIMARY KEY (pubkey, type)
  );
  -- When each user's digest is due (the window's end, or a lease deadline).
  CREATE TABLE digest_due (
    pubkey    TEXT PRIMARY KEY,
    due_at_ms INTEGER NOT NULL
  );
  CREATE INDEX digest_due_by_time ON digest_due (due_at_ms);
`;

export class QuietHoursTables {
  private readonly upsertHours: Statement<[string, string]>;
  private readonly deleteHours: Statement<[string]>;
  private readonly selectHours: Statement<[string], { pubkey: string; hours_json: string }>;
  private readonly addCount: Statement<[string, string]>;
  private readonly scheduleEarliest: Statement<[string, number]>;
  private readonly selectDue: Statement<[number], { pubkey: string }>;
  private readonly setDue: Statement<[number, string]>;
  private readonly selectCounts: Statement<[string], { type: string; count: number }>;
  private readonly subtract: Statement<[number, string, string]>;
  private readonly dropEmpty: Statement<[string]>;
  private readonly countLeft: Statement<[string], { n: number }>;
  private readonly unschedule: Statement<[string]>;

  readonly hold: (pubkey: string, type: string, releaseAtMs: number) => void;
  readonly claimDue: (leaseMs: number) => DueDigest | null;
  readonly complete: (pubkey: string, counts: Readonly<Record<string, number>>) => void;

  constructor(
    db: Database,
    private readonly clock: Clock,
  ) {
    this.upsertHours = db.prepare(
      `INSERT INTO quiet_hours (pubkey, hours_json) VALUES (?, ?) ON CONFLICT (pubkey) DO UPDATE SET hours_json = excluded.hours_json`,
    );
    this.deleteHours = db.prepare(`DELETE FROM quiet_hours WHERE pubkey = ?`);
    this.selectHours = db.prepare(`SELECT pubkey, hours_json FROM quiet_hours WHERE pubkey IN (SELECT value FROM json_each(?))`);
    this.addCount = db.prepare(
      `INSERT INTO digest_counts (pubkey, type, count) VALUES (?, ?, 1) ON CONFLICT (pubkey, type) DO UPDATE SET count = count + 1`,
    );
    this.scheduleEarliest = db.prepare(
      `INSERT INTO digest_due (pubkey, due_at_ms) VALUES (?, ?) ON CONFLICT (pubkey) DO UPDATE SET due_at_ms = MIN(due_at_ms, excluded.due_at_ms)`,
    );
    this.selectDue = db.prepare(`SELECT pubkey FROM digest_due WHERE due_at_ms <= ? ORDER BY due_at_ms, pubkey LIMIT 1`);
    this.setDue = db.prepare(`UPDATE digest_due SET due_at_ms = ? WHERE pubkey = ?`);
    this.selectCounts = db.prepare(`SELECT type, count FROM digest_counts WHERE pubkey = ? AND count > 0 ORDER BY type`);
    this.subtract = db.prepare(`UPDATE digest_counts SET count = count - ? WHERE pubkey = ? AND type = ?`);
    this.dropEmpty = db.prepare(`DELETE FROM digest_counts WHERE pubkey = ? AND count <= 0`);
    this.countLeft = db.prepare(`SELECT COUNT(*) AS n FROM digest_counts WHERE pubkey = ?`);
    this.unschedule = db.prepare(`DELETE FROM digest_due WHERE pubkey = ?`);

    this.hold = db.transaction((pubkey: string, type: string, releaseAtMs: number) => {
      this.addCount.run(pubkey, type);
      this.scheduleEarliest.run(pubkey, releaseAtMs);
    });
    this.claimDue = db.transaction((leaseMs: number): DueDigest | null => {
      const nowMs = this.clock.nowMs();
      const row = this.selectDue.get(nowMs);
      if (!row) return null;
      const leaseExpiresAtMs = nowMs + leaseMs;
      this.setDue.run(leaseExpiresAtMs, row.pubkey);
      const counts: Record<string, number> = {};
      for (const { type, count } of this.selectCounts.all(row.pubkey)) counts[type] = count;
      return { pubkey: row.pubkey, counts, leaseExpiresAtMs };
    });
    this.complete = db.transaction((pubkey: string, counts: Readonly<Record<string, number>>) => {
      for (const [type, n] of Object.entries(counts)) this.subtract.run(n, pubkey, type);
      this.dropEmpty.run(pubkey);
      if ((this.countLeft.get(pubkey)?.n ?? 0) === 0) this.unschedule.run(pubkey);
      else this.setDue.run(this.clock.nowMs(), pubkey);
    });
  }

  set(pubkey: string, hours: QuietHours | null): void {
    if (hours === null) this.deleteHours.run(pubkey);
    else this.upsertHours.run(pubkey, JSON.stringify(hours));
  }

  read(pubkeys: readonly string[]): Array<QuietHours | null> {
    const found = new Map<string, QuietHours>();
    for (const row of this.selectHours.all(JSON.stringify(pubkeys))) {
      try {
        found.set(row.pubkey, JSON.parse(row.hours_json) as QuietHours);
      } catch {
        // An unreadable row reads as no quiet hours: pushes go out rather than vanish.
      }
    }
    return pubkeys.map((p) => found.get(p) ?? null);
  }
}
