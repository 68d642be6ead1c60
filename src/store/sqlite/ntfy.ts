/**
 * ntfy topics on SQLite (port-ntfy.ts).
 *
 * `ntfy_messages` holds every unexpired message (plus expired ones the janitor has not reclaimed
 * yet; reads skip those by `expires_ms`). `ntfy_head` holds the newest id allocated. An append
 * is one IMMEDIATE transaction: take the write lock, read the head, allocate the next position,
 * insert, move the head. Because the allocation happens under the write lock, ids rise in commit
 * order across every process sharing the file, and a reader's snapshot that contains id X
 * contains every id below X as well.
 *
 * Group commit: appends that arrive in the same event-loop turn (several publishes parsed from
 * the sockets at once) share one transaction, committed on the next turn; each caller's promise
 * resolves only after that commit, so a publish is still answered only once it is durable. One
 * commit writes the table's and indexes' right-edge pages to the WAL once for the whole group
 * instead of once per message, which is most of an append's cost.
 */
import type { GroupCommit } from './group-commit.ts';
import type { Database, Statement, Transaction } from 'better-sqlite3';
import type { Logger } from '../../observability/logger.ts';
import type { Clock } from '../port.ts';
import type { NtfyMessage, NtfyMessageContent, NtfyReadRequest, NtfyReadResult } from '../port-ntfy.ts';
import { decodeNtfyId, encodeNtfyId, nextNtfyPosition } from '../ntfy-ids.ts';
import {
  decodeNtfyContent,
  NtfyAppendListeners,
  requireLimit,
  requireNtfyReadRequest,
  requirePositiveTtl,
  storedNtfyContent,
} from '../ntfy-shared.ts';

/** Schema of the ntfy tables (one migration). */
export const CREATE_NTFY_TABLES = `
  -- One row per message; id is the 12-character globally ordered ntfy id.
  CREATE TABLE ntfy_messages (
    seq          INTEGER PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    topic        TEXT NOT NULL,
    expires_ms   INTEGER NOT NULL,
    content_json TEXT NOT NULL
  );
  CREATE INDEX ntfy_messages_by_topic ON ntfy_messages (topic, id);
  CREATE INDEX ntfy_messages_by_expiry ON ntfy_messages (expires_ms);

  -- The newest id ever allocated; one row once the first message was appended.
  CREATE TABLE ntfy_head (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
    last_id   TEXT NOT NULL
  );
`;

const SELECT_HEAD = `SELECT last_id FROM ntfy_head WHERE singleton = 1`;
const UPSERT_HEAD = `
  INSERT INTO ntfy_head (singleton, last_id) VALUES (1, @id)
  ON CONFLICT (singleton) DO UPDATE SET last_id = excluded.last_id`;
const INSERT_MESSAGE = `
  INSERT INTO ntfy_messages (id, topic, expires_ms, content_json) VALUES (@id, @topic, @expiresMs, @contentJson)`;

/** The common subscription (one app on one phone) reads one topic: a plain index range. */
const SELECT_TOPIC_AFTER = `
  SELECT id, topic, expires_ms, content_json FROM ntfy_messages
  WHERE topic = @topic AND id > @afterId AND expires_ms > @nowMs
  ORDER BY id
  LIMIT @limit`;
/**
 * A read of more topics than this walks the messages in id order and keeps those of its topics,
 * instead of one index range per topic: the pusher's bridge reads every topic it holds (thousands)
 * after a position the store has barely passed, and a walk costs what it finds, not a probe per
 * topic. A phone's subscription has far fewer topics, and may start far back.
 */
export const NTFY_READ_WALK_TOPICS = 64;
/** Messages a walking read examines at most; it continues from the last one examined. */
export const NTFY_READ_WALK_ROWS = 2_000;
const SELECT_LOG_AFTER = `
  SELECT id, topic, expires_ms, content_json FROM ntfy_messages
  WHERE id > @afterId
  ORDER BY id
  LIMIT @limit`;
/** Topics arrive as one JSON array, so a single prepared statement serves any number of them. */
const SELECT_AFTER = `
  SELECT id, topic, expires_ms, content_json FROM ntfy_messages
  WHERE topic IN (SELECT value FROM json_each(@topics)) AND id > @afterId AND expires_ms > @nowMs
  ORDER BY id
  LIMIT @limit`;
const SELECT_LATEST = `
  SELECT id, topic, expires_ms, content_json FROM ntfy_messages
  WHERE topic = @topic AND id <= @upToId AND expires_ms > @nowMs
  ORDER BY id DESC
  LIMIT 1`;
const SELECT_EXISTS = `SELECT 1 FROM ntfy_messages WHERE id = @id AND expires_ms > @nowMs`;
const DELETE_EXPIRED = `
  DELETE FROM ntfy_messages WHERE seq IN (
    SELECT seq FROM ntfy_messages WHERE expires_ms <= @nowMs ORDER BY expires_ms LIMIT @limit
  )`;

/** A message to give an id (and, when `store`, a row) inside a write transaction. */
interface AllocationItem {
  topic: string;
  contentJson: string;
  ttlMs: number;
  /** False for ntfy's `Cache: no`: an id and an event, no row. */
  store: boolean;
}

interface PendingAppend extends AllocationItem {
  content: NtfyMessageContent;
  resolve: (message: NtfyMessage) => void;
  reject: (err: unknown) => void;
}

export interface AllocatedMessage {
  id: string;
  timeMs: number;
  expiresMs: number;
  /** The id allocated just before (any topic). */
  previousId: string | null;
}

interface MessageRow {
  id: string;
  topic: string;
  expires_ms: number;
  content_json: string;
}

export class NtfyTable {
  private readonly selectHead: Statement<[], { last_id: string }>;
  private readonly upsertHead: Statement<[{ id: string }]>;
  private readonly insertMessage: Statement<[{ id: string; topic: string; expiresMs: number; contentJson: string }]>;
  private readonly selectAfter: Statement<[{ topics: string; afterId: string; nowMs: number; limit: number }], MessageRow>;
  private readonly selectTopicAfter: Statement<[{ topic: string; afterId: string; nowMs: number; limit: number }], MessageRow>;
  private readonly selectLogAfter: Statement<[{ afterId: string; limit: number }], MessageRow>;
  private readonly selectLatest: Statement<[{ topic: string; upToId: string; nowMs: number }], MessageRow>;
  private readonly selectExists: Statement<[{ id: string; nowMs: number }], { 1: number }>;
  private readonly deleteExpired: Statement<[{ nowMs: number; limit: number }]>;
  private readonly appendTx: Transaction<(batch: readonly PendingAppend[]) => AllocatedMessage[]>;
  private pending: PendingAppend[] = [];
  private readonly readTx: Transaction<(requests: readonly NtfyReadRequest[]) => NtfyReadResult[]>;
  private readonly latestTx: Transaction<(topics: readonly string[], upToId: string) => MessageRow[]>;
  readonly listeners: NtfyAppendListeners;

  constructor(
    db: Database,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly group: GroupCommit,
  ) {
    this.listeners = new NtfyAppendListeners(logger);
    this.selectHead = db.prepare(SELECT_HEAD);
    this.upsertHead = db.prepare(UPSERT_HEAD);
    this.insertMessage = db.prepare(INSERT_MESSAGE);
    this.selectAfter = db.prepare(SELECT_AFTER);
    this.selectTopicAfter = db.prepare(SELECT_TOPIC_AFTER);
    this.selectLogAfter = db.prepare(SELECT_LOG_AFTER);
    this.selectLatest = db.prepare(SELECT_LATEST);
    this.selectExists = db.prepare(SELECT_EXISTS);
    this.deleteExpired = db.prepare(DELETE_EXPIRED);

    this.appendTx = db.transaction((batch: readonly PendingAppend[]) => this.allocate(batch));

    // One transaction, so the head and the rows of every read come from the same snapshot.
    this.readTx = db.transaction((requests: readonly NtfyReadRequest[]) => {
      const head = this.selectHead.get()?.last_id ?? null;
      const nowMs = this.clock.nowMs();
      return requests.map((request) => this.readIn(request, head, nowMs));
    });

    this.latestTx = db.transaction((topics: readonly string[], upToId: string) => {
      const nowMs = this.clock.nowMs();
      const rows: MessageRow[] = [];
      for (const topic of new Set(topics)) {
        const row = this.selectLatest.get({ topic, upToId, nowMs });
        if (row) rows.push(row);
      }
      return rows.sort((a, b) => (a.id < b.id ? -1 : 1));
    });
  }

  /**
   * Give `items` the next ids of the global order and insert the stored ones, moving the head: the
   * body of every write transaction that appends (run inside one, under the write lock).
   */
  allocate(items: readonly AllocationItem[]): AllocatedMessage[] {
    let previousId = this.selectHead.get()?.last_id ?? null;
    let last = previousId === null ? null : decodeNtfyId(previousId);
    const nowMs = this.clock.nowMs();
    const allocated: AllocatedMessage[] = [];
    for (const item of items) {
      const position = nextNtfyPosition(last, nowMs);
      const id = encodeNtfyId(position);
      const expiresMs = item.store ? position.ms + Math.ceil(item.ttlMs) : 0;
      if (item.store) this.insertMessage.run({ id, topic: item.topic, expiresMs, contentJson: item.contentJson });
      allocated.push({ id, timeMs: position.ms, expiresMs, previousId });
      last = position;
      previousId = id;
    }
    const newest = allocated[allocated.length - 1];
    if (newest) this.upsertHead.run({ id: newest.id });
    return allocated;
  }

  /** Queue an append for this turn's group commit; resolves once it is committed. */
  append(topic: string, content: NtfyMessageContent, ttlMs: number): Promise<NtfyMessage> {
    requirePositiveTtl(ttlMs);
    return this.queue(topic, content, ttlMs, true);
  }

  /** ntfy's `Cache: no` (port-ntfy.ts `announceNtfyMessage`): an id and an event, no row. */
  announce(topic: string, content: NtfyMessageContent): Promise<NtfyMessage> {
    return this.queue(topic, content, 0, false);
  }

  private queue(topic: string, content: NtfyMessageContent, ttlMs: number, store: boolean): Promise<NtfyMessage> {
    const stored = storedNtfyContent(content);
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => this.commitPending());
      this.pending.push({ topic, content: stored.content, contentJson: stored.json, ttlMs, store, resolve, reject });
    });
  }

  private commitPending(): void {
    const batch = this.pending;
    this.pending = [];
    // The group's transaction is BEGIN IMMEDIATE: the head is read under the write lock, so two
    // processes never allocate one id. Callers hear back and subscribers are woken only after the
    // commit, in commit order. The stored content is what readers will decode, so the answer
    // needs no read back; the same object goes to the publisher and to the append listeners.
    this.group
      .run(() => this.appendTx(batch))
      .then(
        (allocated) => {
          const messages = batch.map((item, i) => {
            const { id, timeMs, expiresMs } = allocated[i] as AllocatedMessage;
            const message: NtfyMessage = { id, topic: item.topic, timeMs, expiresMs, ...item.content };
            item.resolve(message);
            return message;
          });
          messages.forEach((message, i) => this.listeners.emit({ message, previousId: (allocated[i] as AllocatedMessage).previousId }));
        },
        (err: unknown) => {
          for (const item of batch) item.reject(err);
        },
      );
  }

  read(topics: readonly string[], afterId: string | null, limit: number): NtfyReadResult {
    return this.readMany([{ topics, afterId, limit }])[0] as NtfyReadResult;
  }

  /** Every read in one transaction (port-ntfy.ts `readNtfyMessagesMany`). */
  readMany(requests: readonly NtfyReadRequest[]): NtfyReadResult[] {
    for (const request of requests) requireNtfyReadRequest(request);
    return requests.length === 0 ? [] : this.readTx(requests);
  }

  /** One read inside {@link readTx}, given the snapshot's head. */
  private readIn(request: NtfyReadRequest, head: string | null, nowMs: number): NtfyReadResult {
    const { topics, afterId, limit } = request;
    if (topics.length === 0) return { messages: [], position: afterId, complete: true };
    if (topics.length > NTFY_READ_WALK_TOPICS) return this.walk(new Set(topics), request, head, nowMs);
    const rows =
      topics.length === 1
        ? this.selectTopicAfter.all({ topic: topics[0] as string, afterId: afterId ?? '', nowMs, limit })
        : this.selectAfter.all({ topics: JSON.stringify([...new Set(topics)]), afterId: afterId ?? '', nowMs, limit });
    const messages = this.toMessages(rows);
    const complete = rows.length < limit;
    const lastRow = rows[rows.length - 1];
    let position: string | null;
    if (!complete && lastRow) position = lastRow.id;
    else position = head !== null && (afterId === null || head > afterId) ? head : afterId;
    return { messages, position, complete };
  }

  /** A read of many topics: the next messages in id order, those of `topics` kept (see {@link NTFY_READ_WALK_TOPICS}). */
  private walk(topics: ReadonlySet<string>, request: NtfyReadRequest, head: string | null, nowMs: number): NtfyReadResult {
    const { afterId, limit } = request;
    const rows = this.selectLogAfter.all({ afterId: afterId ?? '', limit: NTFY_READ_WALK_ROWS });
    const messages: NtfyMessage[] = [];
    for (const row of rows) {
      if (!topics.has(row.topic) || row.expires_ms <= nowMs) continue;
      const message = this.toMessage(row);
      if (message) messages.push(message);
      if (messages.length === limit) return { messages, position: row.id, complete: false };
    }
    const lastRow = rows[rows.length - 1];
    if (rows.length === NTFY_READ_WALK_ROWS && lastRow) return { messages, position: lastRow.id, complete: false };
    return { messages, position: head !== null && (afterId === null || head > afterId) ? head : afterId, complete: true };
  }

  latest(topics: readonly string[], upToId: string): NtfyMessage[] {
    return this.toMessages(this.latestTx(topics, upToId));
  }

  head(): string | null {
    return this.selectHead.get()?.last_id ?? null;
  }

  has(id: string): boolean {
    return this.selectExists.get({ id, nowMs: this.clock.nowMs() }) !== undefined;
  }

  expire(limit: number): number {
    requireLimit('expireNtfyMessages', limit);
    return this.deleteExpired.run({ nowMs: this.clock.nowMs(), limit }).changes;
  }

  private toMessages(rows: MessageRow[]): NtfyMessage[] {
    const messages: NtfyMessage[] = [];
    for (const row of rows) {
      const message = this.toMessage(row);
      if (message) messages.push(message);
    }
    return messages;
  }

  private toMessage(row: MessageRow): NtfyMessage | null {
    const content = decodeNtfyContent(row.content_json);
    const position = decodeNtfyId(row.id);
    if (!content || !position) {
      this.logger.warn({ id: row.id, topic: row.topic }, 'stored ntfy message is damaged; skipped');
      return null;
    }
    return { id: row.id, topic: row.topic, timeMs: position.ms, expiresMs: row.expires_ms, ...content };
  }
}
