/**
 * The user's inbox on SQLite (port-inbox.ts): a row per (user, type) with `total` and `viewed`,
 * a row per known user with the announcement high-water mark, a row per counted (countKey,
 * recipient) with its expiry, the alert-word index as (word, pubkey) rows, and announcements
 * with an AUTOINCREMENT id (never reused, so ids increase).
 *
 * Live hints go through an in-process bus: the SQLite store serves one process (the file's one
 * service), so every subscriber is in the process that made the change. A hint is emitted once
 * the group commit holding the change is done.
 */
import { EventEmitter } from 'node:events';
import type { Database, Statement } from 'better-sqlite3';
import type { Clock } from '../port.ts';
import {
  ALERT_WORDS_CEILING,
  INBOX_TYPES,
  inboxActivityDayMs,
  inboxCountsFrom,
  type IdleSweepPage,
  type Announcement,
  type InboxCountEntry,
  type InboxCounts,
  type InboxHint,
  type InboxType,
} from '../port-inbox.ts';
import { ExpiredRowSweeper, expiresAtMs } from './expiry.ts';

/** Schema of the inbox tables (one migration). */
export const CREATE_INBOX_TABLES = `
  -- Users whose notifications count (remembered: registration, user API; or counted once).
  CREATE TABLE inbox_users (
    pubkey                  TEXT PRIMARY KEY,
    announcement_high_water INTEGER NOT NULL DEFAULT 0
  ) WITHOUT ROWID;

  -- One row per (user, counted type): Twitarr's total and _viewed.
  CREATE TABLE inbox_counters (
    pubkey TEXT NOT NULL,
    type   TEXT NOT NULL,
    total  INTEGER NOT NULL DEFAULT 0,
    viewed INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (pubkey, type)
  ) WITHOUT ROWID;

  -- A notification counted for a recipient; kept for processed_event_ttl_secs.
  CREATE TABLE inbox_counted (
    count_key     TEXT NOT NULL,
    recipient     TEXT NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    PRIMARY KEY (count_key, recipient)
  );
  CREATE INDEX inbox_counted_by_expiry ON inbox_counted (expires_at_ms);

  -- The global alert-word index: who watches which word.
  CREATE TABLE alert_words (
    word   TEXT NOT NULL,
    pubkey TEXT NOT NULL,
    PRIMARY KEY (word, pubkey)
  ) WITHOUT ROWID;
  CREATE INDEX alert_words_by_pubkey ON alert_words (pubkey, word);

  CREATE TABLE announcements (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    text          TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL
  );
  CREATE INDEX announcements_by_expiry ON announcements (expires_at_ms);
`;

/**
 * Issue 35: the day a user was last active (a request, a registration), so the janitor can forget
 * users idle for `inbox.idle_user_ttl_days`. Users of an older file count as active on the day of
 * the upgrade, so none is forgotten sooner than a whole TTL after it.
 */
export const ADD_INBOX_USER_ACTIVITY = (upgradeDayMs: number): string => `
  ALTER TABLE inbox_users ADD COLUMN active_day_ms INTEGER NOT NULL DEFAULT 0;
  UPDATE inbox_users SET active_day_ms = ${Math.trunc(upgradeDayMs)};
  CREATE INDEX inbox_users_by_activity ON inbox_users (active_day_ms);
`;

// Remembers the user, and raises their activity day; a request on a day already recorded writes nothing.
const REMEMBER_USER = `
  INSERT INTO inbox_users (pubkey, active_day_ms) VALUES (@pubkey, @dayMs)
  ON CONFLICT (pubkey) DO UPDATE SET active_day_ms = excluded.active_day_ms WHERE inbox_users.active_day_ms < excluded.active_day_ms`;
const SELECT_IDLE_USERS = `SELECT pubkey FROM inbox_users WHERE active_day_ms < ? ORDER BY active_day_ms, pubkey LIMIT ?`;
const HAS_DEVICE = `SELECT EXISTS (SELECT 1 FROM devices WHERE pubkey = ?) AS has`;
const SET_ACTIVITY = `UPDATE inbox_users SET active_day_ms = ? WHERE pubkey = ?`;
const FORGET_USER = [
  `DELETE FROM inbox_users WHERE pubkey = ?`,
  `DELETE FROM inbox_counters WHERE pubkey = ?`,
  `DELETE FROM alert_words WHERE pubkey = ?`,
];
/** 2: remembered (an inbox_users row); 1: known by a registered device only; 0: unknown. */
const IS_KNOWN = `
  SELECT CASE WHEN EXISTS (SELECT 1 FROM inbox_users WHERE pubkey = @pubkey) THEN 2
              WHEN EXISTS (SELECT 1 FROM devices WHERE pubkey = @pubkey) THEN 1
              ELSE 0 END AS known`;
const TAKE_COUNTED_MARK = `
  INSERT INTO inbox_counted (count_key, recipient, expires_at_ms) VALUES (@countKey, @recipient, @expiresAtMs)
  ON CONFLICT (count_key, recipient) DO UPDATE SET expires_at_ms = excluded.expires_at_ms
  WHERE inbox_counted.expires_at_ms <= @nowMs`;
const DELETE_EXPIRED_COUNTED = `
  DELETE FROM inbox_counted WHERE rowid IN (SELECT rowid FROM inbox_counted WHERE expires_at_ms <= ? LIMIT ?)`;
const INCREMENT = `
  INSERT INTO inbox_counters (pubkey, type, total) VALUES (@pubkey, @type, 1)
  ON CONFLICT (pubkey, type) DO UPDATE SET total = total + 1`;
const SELECT_COUNTERS = `SELECT type, total, viewed FROM inbox_counters WHERE pubkey = ?`;
// The badge's two parts in one statement: it is read for every counted entry and every push.
const SELECT_BADGE_PARTS = `
  SELECT (SELECT COALESCE(SUM(MAX(total - viewed, 0)), 0) FROM inbox_counters WHERE pubkey = @pubkey) AS fresh,
         COALESCE((SELECT announcement_high_water FROM inbox_users WHERE pubkey = @pubkey), 0) AS highWater`;
const SELECT_HIGH_WATER = `SELECT announcement_high_water AS highWater FROM inbox_users WHERE pubkey = ?`;
const MARK_VIEWED = `UPDATE inbox_counters SET viewed = total WHERE pubkey = @pubkey AND type = @type AND viewed <> total`;
const RAISE_HIGH_WATER = `
  UPDATE inbox_users SET announcement_high_water = @highWater WHERE pubkey = @pubkey AND announcement_high_water < @highWater`;
const SELECT_ACTIVE_IDS = `SELECT id FROM announcements WHERE expires_at_ms > ? ORDER BY id DESC`;
const SELECT_ACTIVE = `
  SELECT id, text, created_at_ms AS createdAtMs, expires_at_ms AS expiresAtMs FROM announcements
  WHERE expires_at_ms > ? ORDER BY id DESC`;
const INSERT_ANNOUNCEMENT = `INSERT INTO announcements (text, created_at_ms, expires_at_ms) VALUES (?, ?, ?)`;
const SELECT_USER_WORDS = `SELECT word FROM alert_words WHERE pubkey = ? ORDER BY word`;
const DELETE_USER_WORDS = `DELETE FROM alert_words WHERE pubkey = ?`;
const INSERT_WORD = `INSERT INTO alert_words (word, pubkey) VALUES (?, ?) ON CONFLICT DO NOTHING`;
// Every word of a comment in one statement (most of them watched by nobody): ordered per word.
const SELECT_WATCHERS = `
  SELECT word, pubkey FROM alert_words WHERE word IN (SELECT value FROM json_each(?)) ORDER BY word, pubkey`;
const COUNT_WORDS = `SELECT COUNT(DISTINCT word) AS n FROM alert_words`;

/** What a write produced, for the caller to act on once it is committed. */
export interface InboxWrite<T> {
  result: T;
  hints: InboxHint[];
}

export class InboxTables {
  private readonly remember: Statement<[{ pubkey: string; dayMs: number }]>;
  private readonly idleUsers: Statement<[number, number], { pubkey: string }>;
  private readonly hasDevice: Statement<[string], { has: number }>;
  private readonly setActivity: Statement<[number, string]>;
  private readonly forgetUser: Statement<[string]>[];
  private readonly isKnown: Statement<[{ pubkey: string }], { known: number }>;
  private readonly takeMark: Statement<[{ countKey: string; recipient: string; expiresAtMs: number; nowMs: number }]>;
  private readonly increment: Statement<[{ pubkey: string; type: string }]>;
  private readonly counters: Statement<[string], { type: string; total: number; viewed: number }>;
  private readonly badgeParts: Statement<[{ pubkey: string }], { fresh: number; highWater: number }>;
  private readonly highWater: Statement<[string], { highWater: number }>;
  private readonly setViewed: Statement<[{ pubkey: string; type: string }]>;
  private readonly raiseHighWater: Statement<[{ pubkey: string; highWater: number }]>;
  private readonly activeIds: Statement<[number], { id: number }>;
  private readonly active: Statement<[number], Announcement>;
  private readonly insertAnnouncement: Statement<[string, number, number]>;
  private readonly userWords: Statement<[string], { word: string }>;
  private readonly deleteUserWords: Statement<[string]>;
  private readonly insertWord: Statement<[string, string]>;
  private readonly watchers: Statement<[string], { word: string; pubkey: string }>;
  private readonly countWords: Statement<[], { n: number }>;
  private readonly sweeper: ExpiredRowSweeper;
  /** The in-process hint bus (see the module comment). */
  readonly hints = new EventEmitter();

  constructor(
    db: Database,
    private readonly clock: Clock,
  ) {
    this.remember = db.prepare(REMEMBER_USER);
    this.idleUsers = db.prepare(SELECT_IDLE_USERS);
    this.hasDevice = db.prepare(HAS_DEVICE);
    this.setActivity = db.prepare(SET_ACTIVITY);
    this.forgetUser = FORGET_USER.map((sql) => db.prepare<[string]>(sql));
    this.forgetIdle = db.transaction((idleBeforeMs: number, max: number) => this.forgetIdleNow(idleBeforeMs, max));
    this.isKnown = db.prepare(IS_KNOWN);
    this.takeMark = db.prepare(TAKE_COUNTED_MARK);
    this.increment = db.prepare(INCREMENT);
    this.counters = db.prepare(SELECT_COUNTERS);
    this.badgeParts = db.prepare(SELECT_BADGE_PARTS);
    this.highWater = db.prepare(SELECT_HIGH_WATER);
    this.setViewed = db.prepare(MARK_VIEWED);
    this.raiseHighWater = db.prepare(RAISE_HIGH_WATER);
    this.activeIds = db.prepare(SELECT_ACTIVE_IDS);
    this.active = db.prepare(SELECT_ACTIVE);
    this.insertAnnouncement = db.prepare(INSERT_ANNOUNCEMENT);
    this.userWords = db.prepare(SELECT_USER_WORDS);
    this.deleteUserWords = db.prepare(DELETE_USER_WORDS);
    this.insertWord = db.prepare(INSERT_WORD);
    this.watchers = db.prepare(SELECT_WATCHERS);
    this.countWords = db.prepare(COUNT_WORDS);
    this.sweeper = new ExpiredRowSweeper(db, [DELETE_EXPIRED_COUNTED]);
    // Every open WebSocket of the process may listen; the default limit of 10 is not a leak signal here.
    this.hints.setMaxListeners(0);
  }

  rememberUser(pubkey: string): void {
    this.remember.run({ pubkey, dayMs: inboxActivityDayMs(this.clock.nowMs()) });
  }

  /** One page of the idle sweep (port-inbox.ts `forgetIdleInboxUsers`), as one savepoint of the group's commit. */
  readonly forgetIdle: (idleBeforeMs: number, max: number) => IdleSweepPage;

  private forgetIdleNow(idleBeforeMs: number, max: number): IdleSweepPage {
    const today = inboxActivityDayMs(this.clock.nowMs());
    const idle = this.idleUsers.all(idleBeforeMs, max);
    let removed = 0;
    for (const { pubkey } of idle) {
      if ((this.hasDevice.get(pubkey)?.has ?? 0) === 1) {
        this.setActivity.run(today, pubkey);
        continue;
      }
      for (const statement of this.forgetUser) statement.run(pubkey);
      removed += 1;
    }
    return { examined: idle.length, removed };
  }

  count(entries: readonly InboxCountEntry[], ttlSecs: number): InboxWrite<(number | null)[]> {
    const nowMs = this.clock.nowMs();
    const expires = expiresAtMs(nowMs, ttlSecs);
    this.sweeper.maybeSweep(nowMs);
    const activeIds = this.activeIdList(nowMs);
    const hints: InboxHint[] = [];
    const result = entries.map((entry) => {
      const known = this.isKnown.get({ pubkey: entry.recipient })?.known ?? 0;
      if (known === 0) return null;
      const taken = this.takeMark.run({ countKey: entry.countKey, recipient: entry.recipient, expiresAtMs: expires, nowMs });
      if (taken.changes === 0) return null;
      // A user known by a device only is remembered now; one remembered already needs no write.
      if (known === 1) this.rememberUser(entry.recipient);
      this.increment.run({ pubkey: entry.recipient, type: entry.type });
      const totalNew = this.totalNew(entry.recipient, activeIds);
      hints.push({ pubkey: entry.recipient, type: entry.type, totalNew });
      return totalNew;
    });
    return { result, hints };
  }

  readCounts(pubkey: string): InboxCounts {
    const activeIds = this.activeIdList(this.clock.nowMs());
    const rows = new Map(this.counters.all(pubkey).map((row) => [row.type, row]));
    const highWater = this.highWater.get(pubkey)?.highWater ?? 0;
    return inboxCountsFrom(
      (type) => ({ total: rows.get(type)?.total ?? 0, viewed: rows.get(type)?.viewed ?? 0 }),
      activeIds.filter((id) => id > highWater).length,
      activeIds.length,
    );
  }

  readBadges(pubkeys: readonly string[]): number[] {
    const activeIds = this.activeIdList(this.clock.nowMs());
    return pubkeys.map((pubkey) => this.totalNew(pubkey, activeIds));
  }

  markViewed(pubkey: string, types: readonly InboxType[]): InboxWrite<InboxCounts> {
    this.rememberUser(pubkey);
    let changedType: InboxType | null = null;
    for (const type of INBOX_TYPES.filter((t) => types.includes(t))) {
      let changes: number;
      if (type === 'announcement') {
        const newest = this.activeIdList(this.clock.nowMs())[0] ?? 0;
        changes = this.raiseHighWater.run({ pubkey, highWater: newest }).changes;
      } else changes = this.setViewed.run({ pubkey, type }).changes;
      if (changes > 0) changedType ??= type;
    }
    const result = this.readCounts(pubkey);
    return { result, hints: changedType === null ? [] : [{ pubkey, type: changedType, totalNew: result.totalNew }] };
  }

  replaceWords(pubkey: string, words: readonly string[]): void {
    const distinct = [...new Set(words)];
    if (distinct.length > ALERT_WORDS_CEILING)
      throw new RangeError(`replaceAlertWords: at most ${ALERT_WORDS_CEILING} words, got ${distinct.length}`);
    this.rememberUser(pubkey);
    this.deleteUserWords.run(pubkey);
    for (const word of distinct) this.insertWord.run(word, pubkey);
  }

  readWords(pubkey: string): string[] {
    return this.userWords.all(pubkey).map((row) => row.word);
  }

  wordWatchers(words: readonly string[]): Map<string, string[]> {
    const distinct = [...new Set(words)];
    if (distinct.length === 0) return new Map();
    const found = new Map<string, string[]>();
    for (const { word, pubkey } of this.watchers.all(JSON.stringify(distinct))) {
      const users = found.get(word);
      if (users) users.push(pubkey);
      else found.set(word, [pubkey]);
    }
    // In the order the words were asked, as one lookup per word gave them.
    const watchers = new Map<string, string[]>();
    for (const word of distinct) {
      const users = found.get(word);
      if (users) watchers.set(word, users);
    }
    return watchers;
  }

  wordCount(): number {
    return this.countWords.get()?.n ?? 0;
  }

  publishAnnouncement(text: string, expiresAtMs: number): Announcement {
    const createdAtMs = this.clock.nowMs();
    const id = Number(this.insertAnnouncement.run(text, createdAtMs, expiresAtMs).lastInsertRowid);
    return { id, text, createdAtMs, expiresAtMs };
  }

  activeAnnouncements(): Announcement[] {
    return this.active.all(this.clock.nowMs());
  }

  private activeIdList(nowMs: number): number[] {
    return this.activeIds.all(nowMs).map((row) => row.id);
  }

  private totalNew(pubkey: string, activeIds: readonly number[]): number {
    const parts = this.badgeParts.get({ pubkey });
    const highWater = parts?.highWater ?? 0;
    const fresh = activeIds.filter((id) => id > highWater).length;
    return (parts?.fresh ?? 0) + fresh;
  }
}
