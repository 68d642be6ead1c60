import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { createLogger } from '../../observability/logger.ts';
import { GroupCommit } from './group-commit.ts';
import { openSqliteStore } from './store.ts';

const logger = createLogger({ level: 'silent' });

function scratch(): { db: Database; insert: (n: number) => void; count: () => number } {
  const db = new BetterSqlite3(':memory:');
  db.exec('CREATE TABLE t (n INTEGER PRIMARY KEY)');
  const insert = db.transaction((n: number) => void db.prepare('INSERT INTO t (n) VALUES (?)').run(n));
  return { db, insert, count: () => (db.prepare('SELECT count(*) AS c FROM t').get() as { c: number }).c };
}

describe('GroupCommit', () => {
  test('the writes of one turn share one commit, and each caller gets its own result', async () => {
    const { db, insert, count } = scratch();
    const group = new GroupCommit(db, logger);
    const results = await Promise.all([1, 2, 3].map((n) => group.run(() => (insert(n), n * 10))));
    assert.deepEqual(results, [10, 20, 30]);
    assert.equal(group.groupsCommitted, 1);
    assert.equal(count(), 3);
    assert.equal(db.inTransaction, false);
    await group.run(() => insert(4));
    assert.equal(group.groupsCommitted, 2, 'a later turn is a new group');
  });

  test('a write that throws is rolled back alone; the rest of its group commits', async () => {
    const { db, insert, count } = scratch();
    const group = new GroupCommit(db, logger);
    const outcomes = await Promise.allSettled([group.run(() => insert(1)), group.run(() => insert(1)), group.run(() => insert(2))]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.equal(count(), 2);
  });

  test('a failed COMMIT rolls the group back and fails every write in it', async () => {
    const db = new BetterSqlite3(':memory:');
    db.pragma('foreign_keys = ON');
    db.exec(
      'CREATE TABLE parent (id INTEGER PRIMARY KEY); CREATE TABLE child (pid INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)',
    );
    const addParent = db.transaction((id: number) => void db.prepare('INSERT INTO parent (id) VALUES (?)').run(id));
    // A deferred foreign key is only checked at COMMIT: an orphan makes the group's COMMIT fail.
    const addChild = db.transaction((pid: number) => void db.prepare('INSERT INTO child (pid) VALUES (?)').run(pid));
    const group = new GroupCommit(db, logger);
    const outcomes = await Promise.allSettled([group.run(() => addParent(1)), group.run(() => addChild(99))]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['rejected', 'rejected'],
    );
    assert.equal((db.prepare('SELECT count(*) AS c FROM parent').get() as { c: number }).c, 0, 'the good write went with the group');
    assert.equal(db.inTransaction, false);
    await group.run(() => addParent(2));
    assert.equal((db.prepare('SELECT count(*) AS c FROM parent').get() as { c: number }).c, 1, 'the next group works');
  });

  test('the store answers a write only once another connection can see it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'np-group-'));
    const path = join(dir, 'store.sqlite');
    const store = await openSqliteStore({ path, logger });
    const observer = new BetterSqlite3(path, { readonly: true });
    const visible = (): boolean => observer.prepare("SELECT 1 FROM queue_items WHERE id = 'job'").get() !== undefined;
    try {
      const enqueued = store.enqueue('inbound', { id: 'job', payload: { n: 1 } });
      assert.equal(visible(), false, 'not committed before the turn ends');
      assert.equal(await enqueued, true);
      assert.equal(visible(), true, 'committed by the time the caller hears back');
    } finally {
      observer.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
