/**
 * Scheduled ntfy messages on SQLite (port-ntfy.ts `NtfyScheduledStore`).
 *
 * `ntfy_scheduled` holds each message until it is due. Delivery is one write transaction (under
 * SQLite's write lock, shared with this turn's group commit): the due rows are read, appended to
 * their topics by the same allocation as any append (`NtfyTable.allocate`), and deleted. Another
 * process on the same file waits for the lock and then finds the rows gone, so each message is
 * delivered once; a crash before the commit leaves them scheduled.
 */
import type { Database, Statement, Transaction } from 'better-sqlite3';
import type { Logger } from '../../observability/logger.ts';
import type { Clock } from '../port.ts';
import type { NtfyMessage, NtfyMessageContent, NtfyScheduledMessage } from '../port-ntfy.ts';
import { decodeNtfyContent, newScheduledId, requireLimit, requirePositiveTtl, storedNtfyContent } from '../ntfy-shared.ts';
import type { GroupCommit } from './group-commit.ts';
import type { AllocatedMessage, NtfyTable } from './ntfy.ts';

/** Schema of the schedule (one migration). */
export const CREATE_NTFY_SCHEDULED_TABLE = `
  -- One row per message waiting for its delivery time; content_json carries its sequenceId (= id).
  CREATE TABLE ntfy_scheduled (
    id            TEXT PRIMARY KEY,
    topic         TEXT NOT NULL,
    deliver_at_ms INTEGER NOT NULL,
    ttl_ms        INTEGER NOT NULL,
    content_json  TEXT NOT NULL
  );
  CREATE INDEX ntfy_scheduled_due ON ntfy_scheduled (deliver_at_ms, id);
  CREATE INDEX ntfy_scheduled_by_topic ON ntfy_scheduled (topic, deliver_at_ms, id);
`;

const INSERT_SCHEDULED = `
  INSERT INTO ntfy_scheduled (id, topic, deliver_at_ms, ttl_ms, content_json)
  VALUES (@id, @topic, @deliverAtMs, @ttlMs, @contentJson)`;
/** Topics as one JSON array, so one prepared statement serves any number of them. */
const SELECT_BY_TOPICS = `
  SELECT id, topic, deliver_at_ms, ttl_ms, content_json FROM ntfy_scheduled
  WHERE topic IN (SELECT value FROM json_each(@topics))
  ORDER BY deliver_at_ms, id
  LIMIT @limit`;
const SELECT_DUE = `
  SELECT id, topic, deliver_at_ms, ttl_ms, content_json FROM ntfy_scheduled
  WHERE deliver_at_ms <= @nowMs
  ORDER BY deliver_at_ms, id
  LIMIT @limit`;
const DELETE_SCHEDULED = `DELETE FROM ntfy_scheduled WHERE id = @id`;

interface ScheduledRow {
  id: string;
  topic: string;
  deliver_at_ms: number;
  ttl_ms: number;
  content_json: string;
}

/** One delivered row: the row and what its append allocated. */
interface Released {
  row: ScheduledRow;
  allocated: AllocatedMessage;
}

export class NtfyScheduledTable {
  private readonly insert: Statement<[{ id: string; topic: string; deliverAtMs: number; ttlMs: number; contentJson: string }]>;
  private readonly selectByTopics: Statement<[{ topics: string; limit: number }], ScheduledRow>;
  private readonly selectDue: Statement<[{ nowMs: number; limit: number }], ScheduledRow>;
  private readonly deleteOne: Statement<[{ id: string }]>;
  private readonly releaseTx: Transaction<(limit: number) => Released[]>;

  constructor(
    db: Database,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly group: GroupCommit,
    private readonly messages: NtfyTable,
  ) {
    this.insert = db.prepare(INSERT_SCHEDULED);
    this.selectByTopics = db.prepare(SELECT_BY_TOPICS);
    this.selectDue = db.prepare(SELECT_DUE);
    this.deleteOne = db.prepare(DELETE_SCHEDULED);
    this.releaseTx = db.transaction((limit: number) => {
      const rows = this.selectDue.all({ nowMs: this.clock.nowMs(), limit });
      const allocated = this.messages.allocate(
        rows.map((row) => ({ topic: row.topic, contentJson: row.content_json, ttlMs: row.ttl_ms, store: true })),
      );
      for (const row of rows) this.deleteOne.run({ id: row.id });
      return rows.map((row, i) => ({ row, allocated: allocated[i] as AllocatedMessage }));
    });
  }

  async schedule(topic: string, content: NtfyMessageContent, deliverAtMs: number, ttlMs: number): Promise<NtfyScheduledMessage> {
    requirePositiveTtl(ttlMs);
    const id = newScheduledId();
    const stored = storedNtfyContent({ ...content, sequenceId: id });
    const at = Math.floor(deliverAtMs);
    const ttl = Math.ceil(ttlMs);
    await this.group.run(() => this.insert.run({ id, topic, deliverAtMs: at, ttlMs: ttl, contentJson: stored.json }));
    return { ...stored.content, id, topic, deliverAtMs: at, ttlMs: ttl, sequenceId: id };
  }

  read(topics: readonly string[], limit: number): NtfyScheduledMessage[] {
    requireLimit('readNtfyScheduled', limit);
    if (topics.length === 0) return [];
    const rows = this.selectByTopics.all({ topics: JSON.stringify([...new Set(topics)]), limit });
    const scheduled: NtfyScheduledMessage[] = [];
    for (const row of rows) {
      const content = this.contentOf(row);
      if (content)
        scheduled.push({ ...content, id: row.id, topic: row.topic, deliverAtMs: row.deliver_at_ms, ttlMs: row.ttl_ms, sequenceId: row.id });
    }
    return scheduled;
  }

  /** Deliver what is due, then tell the append listeners (after the commit, in id order). */
  async release(limit: number): Promise<NtfyMessage[]> {
    requireLimit('releaseDueNtfyMessages', limit);
    const released = await this.group.run(() => this.releaseTx(limit));
    const delivered: NtfyMessage[] = [];
    for (const { row, allocated } of released) {
      const content = this.contentOf(row);
      if (!content) continue;
      const message: NtfyMessage = {
        id: allocated.id,
        topic: row.topic,
        timeMs: allocated.timeMs,
        expiresMs: allocated.expiresMs,
        ...content,
      };
      delivered.push(message);
      this.messages.listeners.emit({ message, previousId: allocated.previousId });
    }
    return delivered;
  }

  private contentOf(row: ScheduledRow): NtfyMessageContent | null {
    const content = decodeNtfyContent(row.content_json);
    if (!content) this.logger.warn({ id: row.id, topic: row.topic }, 'scheduled ntfy message is damaged; skipped');
    return content;
  }
}
