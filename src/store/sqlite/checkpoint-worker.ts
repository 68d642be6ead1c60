/**
 * The checkpoint thread of a SQLite store (see checkpointer.ts): its own connection to the
 * store's file, copying committed WAL frames back into the database file when asked.
 *
 * Messages from the store's thread: `'checkpoint'` (answered with a {@link CheckpointReport}
 * once done) and `'close'` (closes the connection, then the port).
 */
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';

export interface CheckpointReport {
  /** Why the checkpoint failed (the store's thread logs it and asks again after a commit), else null. */
  error: string | null;
}

const port = parentPort;
const data = workerData as { path?: unknown } | null | undefined;
const path = data?.path;
if (port === null || typeof path !== 'string') throw new Error('checkpoint-worker: run as a worker thread with workerData.path');

const db = new BetterSqlite3(path, { fileMustExist: true });
// The same durability as the store's connection: a checkpoint syncs the WAL before it copies and
// the database file after, which is exactly the work this thread takes off the store's.
db.pragma('synchronous = NORMAL');
// A PASSIVE checkpoint never waits for a lock, so a busy handler would only delay the answer.
db.pragma('busy_timeout = 0');

port.on('message', (message: unknown) => {
  if (message === 'close') {
    db.close();
    port.close();
    return;
  }
  if (message !== 'checkpoint') return;
  let report: CheckpointReport;
  try {
    // PASSIVE: copies what no reader still needs, without blocking the store's writer; once a
    // checkpoint has copied every frame, the writer's next commit starts the WAL over.
    db.pragma('wal_checkpoint(PASSIVE)');
    report = { error: null };
  } catch (err) {
    report = { error: (err as Error).message };
  }
  port.postMessage(report);
});
