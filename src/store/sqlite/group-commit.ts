/**
 * Group commit for the SQLite adapter: every write made during one turn of the event loop joins
 * one transaction, committed when the turn ends.
 *
 * Why: in WAL mode a commit costs tens of microseconds (WAL frames written, the wal-index
 * updated) whatever the transaction holds, and the pipeline makes several small writes per push
 * from many concurrent handlers. Sharing the commit makes each write cost little more than its
 * statements.
 *
 * Contract, unchanged for callers:
 * - each write is still atomic on its own: it runs as a better-sqlite3 transaction function, which
 *   inside the group's open transaction becomes a SAVEPOINT, so a write that throws is rolled back
 *   alone and its caller gets the error at once;
 * - a caller's promise resolves only after the COMMIT that made its write durable, so nothing is
 *   acknowledged (a queue item settled, an HTTP answer sent) before it is on disk;
 * - if the COMMIT fails, every write of the group is rolled back and every caller of the group
 *   gets the error, as if each of its writes had failed.
 *
 * Reads do not go through the group: they run at once on the same connection and see the writes
 * of the open group, as they would see them a moment later.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { Logger } from '../../observability/logger.ts';

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class GroupCommit {
  private readonly begin: Statement;
  private readonly commit: Statement;
  private readonly rollback: Statement;
  /** Writers of the open group, resolved by its COMMIT. */
  private waiters: Waiter[] = [];
  private open = false;
  /** Groups committed so far (tests and diagnostics). */
  groupsCommitted = 0;

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    /** Told after every successful COMMIT (the background checkpointer listens). */
    private readonly onCommitted: () => void = () => {},
  ) {
    // IMMEDIATE: a group only opens for a write, and taking the write lock up front means a read
    // inside the group (an id allocation's head, a lease's due items) is never of a stale snapshot.
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
  }

  /**
   * Run `write` (a better-sqlite3 transaction function, or anything that only writes through
   * one) in this turn's group; resolve with its result once the group committed.
   */
  run<T>(write: () => T): Promise<T> {
    if (!this.open) {
      if (this.db.inTransaction) {
        // Someone else's transaction is open on this connection (never in this adapter, but a
        // group must not adopt writes it did not open): run alone, committed by its owner.
        try {
          return Promise.resolve(write());
        } catch (err) {
          return Promise.reject(err);
        }
      }
      this.begin.run();
      this.open = true;
      setImmediate(() => this.flush());
    }
    let value: T;
    try {
      value = write();
    } catch (err) {
      // Usually only this write's savepoint was rolled back; an I/O or disk-full error can make
      // SQLite roll back the whole group, and then everyone in it must hear of it.
      if (!this.db.inTransaction) this.groupLost(err);
      return Promise.reject(err);
    }
    return new Promise<T>((resolve, reject) => this.waiters.push({ resolve: () => resolve(value), reject }));
  }

  /** Commit the open group now (the end of the turn, or close). */
  flush(): void {
    if (!this.open) return;
    this.open = false;
    const waiters = this.waiters;
    this.waiters = [];
    try {
      this.commit.run();
    } catch (err) {
      if (this.db.inTransaction) this.rollback.run();
      this.logger.error({ err: (err as Error).message, writes: waiters.length }, 'sqlite group commit failed; its writes were rolled back');
      for (const waiter of waiters) waiter.reject(err);
      return;
    }
    this.groupsCommitted++;
    this.onCommitted();
    for (const waiter of waiters) waiter.resolve();
  }

  private groupLost(err: unknown): void {
    this.open = false;
    const waiters = this.waiters;
    this.waiters = [];
    this.logger.error(
      { err: (err as Error).message, writes: waiters.length },
      'sqlite rolled back a whole group transaction; its writes failed',
    );
    for (const waiter of waiters) waiter.reject(err);
  }
}
