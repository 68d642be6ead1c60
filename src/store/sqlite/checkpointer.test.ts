import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { createLogger } from '../../observability/logger.ts';
import { eventually } from '../../../test/support/service-process.ts';
import {
  BACKSTOP_AUTOCHECKPOINT_PAGES,
  BackgroundCheckpointer,
  SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES,
  START_AFTER_COMMITS_PER_SECOND,
} from './checkpointer.ts';
import { openSqliteStore } from './store.ts';

const logger = createLogger({ level: 'silent' });

function walFile(t: { after: (fn: () => void) => void }): { path: string; db: Database } {
  const dir = mkdtempSync(join(tmpdir(), 'np-ckpt-'));
  const path = join(dir, 'store.sqlite');
  const db = new BetterSqlite3(path);
  db.pragma('journal_mode = WAL');
  t.after(() => {
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { path, db };
}

/** Rows of `t` in the database file itself, WAL ignored: a copy of the main file alone is opened. */
function rowsInMainFile(path: string): number {
  const copyDir = mkdtempSync(join(tmpdir(), 'np-ckpt-copy-'));
  const copy = join(copyDir, 'main-only.sqlite');
  copyFileSync(path, copy);
  const reader = new BetterSqlite3(copy);
  try {
    const exists = reader.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE name = 't'`).get() as { n: number };
    return exists.n === 0 ? 0 : (reader.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n;
  } finally {
    reader.close();
    rmSync(copyDir, { recursive: true, force: true });
  }
}

const autocheckpoint = (db: Database) => db.pragma('wal_autocheckpoint', { simple: true }) as number;

describe('BackgroundCheckpointer', () => {
  test('committed WAL frames reach the database file from the checkpoint thread, not the writer', async (t) => {
    const { path, db } = walFile(t);
    const checkpointer = new BackgroundCheckpointer(path, db, logger, 1);
    t.after(() => checkpointer.close());
    db.exec('CREATE TABLE t (n INTEGER PRIMARY KEY, pad TEXT)');
    const insert = db.prepare('INSERT INTO t (n, pad) VALUES (?, ?)');
    db.transaction(() => {
      for (let n = 0; n < 500; n++) insert.run(n, 'x'.repeat(200));
    })();
    assert.equal(rowsInMainFile(path), 0, 'the commit is in the WAL only');

    checkpointer.noteCommit();
    assert.equal(autocheckpoint(db), BACKSTOP_AUTOCHECKPOINT_PAGES, 'with the thread up the writer only checkpoints as a backstop');
    await eventually(() => (checkpointer.checkpointsDone >= 1 ? true : undefined), 10_000, 'a background checkpoint');
    assert.equal(rowsInMainFile(path), 500);
  });

  test('a quiet store keeps SQLite’s own checkpoints; the thread starts once commits come often', async (t) => {
    const { path, db } = walFile(t);
    const checkpointer = new BackgroundCheckpointer(path, db, logger);
    t.after(() => checkpointer.close());
    for (let n = 1; n < START_AFTER_COMMITS_PER_SECOND; n++) checkpointer.noteCommit();
    assert.equal(checkpointer.threadRunning, false);
    assert.equal(autocheckpoint(db), SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES);
    checkpointer.noteCommit();
    assert.equal(checkpointer.threadRunning, true, `the ${START_AFTER_COMMITS_PER_SECOND}th commit within a second starts it`);
    assert.equal(autocheckpoint(db), BACKSTOP_AUTOCHECKPOINT_PAGES);
  });

  test('commits noted while a checkpoint is out are covered by the next one, and close stops the thread', async (t) => {
    const { path, db } = walFile(t);
    const checkpointer = new BackgroundCheckpointer(path, db, logger, 1);
    db.exec('CREATE TABLE t (n INTEGER PRIMARY KEY)');
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    for (let n = 0; n < 20; n++) {
      insert.run(n);
      checkpointer.noteCommit();
    }
    await eventually(() => (rowsInMainFile(path) === 20 ? true : undefined), 10_000, 'every noted commit checkpointed');
    assert.ok(checkpointer.checkpointsDone <= 2, `one request out at a time, at most one more after it (${checkpointer.checkpointsDone})`);
    assert.equal(checkpointer.threadRunning, true);
    await checkpointer.close();
    assert.equal(checkpointer.threadRunning, false);
    insert.run(20);
    checkpointer.noteCommit();
    assert.equal(checkpointer.threadRunning, false, 'a closed checkpointer starts no thread again');
  });

  test('a checkpoint thread that cannot start hands checkpoints back to the writer at SQLite’s default threshold', async (t) => {
    const { path, db } = walFile(t);
    // The thread opens its own connection to a file that must exist; this one does not.
    const checkpointer = new BackgroundCheckpointer(`${path}.missing`, db, logger, 1);
    t.after(() => checkpointer.close());
    checkpointer.noteCommit();
    await eventually(() => (autocheckpoint(db) === SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES ? true : undefined), 10_000, 'the fallback');
    assert.equal(checkpointer.threadRunning, false);
    checkpointer.noteCommit();
    assert.equal(checkpointer.threadRunning, false, 'no second thread is started');
    assert.equal(checkpointer.checkpointsDone, 0);
  });

  test('a file store’s close leaves no WAL behind, and its data is there after reopening', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'np-ckpt-store-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'store.sqlite');
    const store = await openSqliteStore({ path, logger });
    await store.registerToken('a'.repeat(64), { token: 'tok-1', transport: 'fcm' });
    assert.ok(existsSync(`${path}-wal`));
    await store.close();
    assert.equal(existsSync(`${path}-wal`), false, 'the last connection to close checkpointed the WAL and removed it');
    const reopened = await openSqliteStore({ path, logger });
    t.after(() => reopened.close());
    assert.deepEqual(await reopened.listDevices('a'.repeat(64)), [{ token: 'tok-1', transport: 'fcm' }]);
  });
});
