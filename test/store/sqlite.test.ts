import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, afterEach, beforeEach, describe, test } from 'node:test';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { createLogger, type Logger } from '../../src/observability/logger.ts';
import { EXPIRED_SWEEP_INTERVAL_MS } from '../../src/store/sqlite/expiry.ts';
import {
  LATEST_SCHEMA_VERSION,
  SchemaTooNewError,
  migrate,
  migrations,
  schemaVersion,
  type Migration,
} from '../../src/store/sqlite/migrations.ts';
import { CORRUPT_PAYLOAD_REASON } from '../../src/store/sqlite/queues.ts';
import { NTFY_READ_WALK_ROWS, NTFY_READ_WALK_TOPICS } from '../../src/store/sqlite/ntfy.ts';
import { IN_MEMORY_PATH, openSqliteStore, type SqliteStore } from '../../src/store/sqlite/index.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { runStoreContract } from './contract.ts';
import { tenancyContract } from './contract/tenancy.ts';
import { appSqlitePath, openStore } from '../../src/store/open.ts';
import { totals } from './contract/context.ts';

const SECOND_MS = 1000;
const LEASE = { max: 10, leaseMs: 30 * SECOND_MS, maxAttempts: 5 };

const tempDir = mkdtempSync(join(tmpdir(), 'nostr-push-sqlite-'));
after(() => rmSync(tempDir, { recursive: true, force: true }));

let fileCounter = 0;
function freshPath(): string {
  fileCounter += 1;
  return join(tempDir, `store-${fileCounter}.db`);
}

/** A logger whose JSON lines the test can read back. */
function capturingLogger(): { logger: Logger; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'));
      callback();
    },
  });
  const logger = createLogger({ level: 'info', destination });
  const lines = () =>
    chunks
      .join('')
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { logger, lines };
}

function migrationLines(lines: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  return lines.filter((line) => line.msg === 'sqlite schema migration');
}

runStoreContract({ name: 'SqliteStore (:memory:)', make: (clock) => openSqliteStore({ path: IN_MEMORY_PATH, clock }) });
runStoreContract({ name: 'SqliteStore (file)', make: (clock) => openSqliteStore({ path: freshPath(), clock }) });
tenancyContract('SqliteStore (file)', (clock, apps) => {
  const path = freshPath();
  return Promise.all(apps.map((app) => openStore({ kind: 'sqlite', path }, { clock, app })));
});

test('an app’s SQLite file sits beside the default’s', () => {
  assert.equal(appSqlitePath('data/nostr-push.sqlite', 'default'), 'data/nostr-push.sqlite');
  assert.equal(appSqlitePath('data/nostr-push.sqlite', 'clips'), 'data/nostr-push.app-clips.sqlite');
  assert.equal(appSqlitePath('/var/lib/np/store.db', 'b'), '/var/lib/np/store.db.app-b.sqlite');
  assert.equal(appSqlitePath(':memory:', 'b'), ':memory:');
});

describe('SqliteStore TTL records', () => {
  let clock: ManualClock;
  let path: string;
  let store: SqliteStore;
  let raw: Database;

  beforeEach(async () => {
    clock = new ManualClock();
    path = freshPath();
    store = await openSqliteStore({ path, clock });
    raw = new BetterSqlite3(path, { readonly: true });
  });

  afterEach(async () => {
    raw.close();
    await store.close();
  });

  test('an event claim expires by the injected clock', async () => {
    assert.equal(await store.claimEvent('event', 10), true);
    clock.advance(10 * SECOND_MS - 1);
    assert.equal(await store.claimEvent('event', 10), false, 'held until the TTL is over');
    clock.advance(SECOND_MS + 1);
    assert.equal(await store.claimEvent('event', 10), true, 'claimable again after 11 s');
    assert.equal(await store.claimEvent('event', 10), false, 'and held again');
  });

  test('an expired recipient claim can be retaken, and the old owner can no longer release it', async () => {
    const first = await store.claimRecipientDelivery('event', 'recipient', 10);
    assert.ok(first);
    clock.advance(11 * SECOND_MS);
    assert.equal(await store.releaseRecipientDelivery(first), false, "an expired claim is nobody's");
    const second = await store.claimRecipientDelivery('event', 'recipient', 10);
    assert.ok(second);
    assert.notEqual(second.owner, first.owner);
    assert.equal(await store.releaseRecipientDelivery(first), false, 'the stale owner cannot release the new claim');
    assert.equal(await store.claimRecipientDelivery('event', 'recipient', 10), null);
    assert.equal(await store.releaseRecipientDelivery(second), true);
  });

  test('a cached profile is a miss once its TTL is over', async () => {
    await store.cacheProfile({ pubkey: 'alice', name: 'alice' }, 60);
    clock.advance(60 * SECOND_MS - 1);
    assert.deepEqual(await store.getCachedProfile('alice'), { pubkey: 'alice', name: 'alice' });
    clock.advance(1);
    assert.equal(await store.getCachedProfile('alice'), null);
  });

  test('expired rows are deleted opportunistically by later writes', async () => {
    await store.claimEvent('old-event', 10);
    await store.claimRecipientDelivery('old-event', 'recipient', 10);
    await store.cacheProfile({ pubkey: 'old' }, 10);
    clock.advance(EXPIRED_SWEEP_INTERVAL_MS + SECOND_MS);
    await store.claimEvent('new-event', 10);
    await store.cacheProfile({ pubkey: 'new' }, 10);

    const count = (table: string) => (raw.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    assert.equal(count('event_claims'), 1);
    assert.equal(count('recipient_claims'), 0);
    assert.equal(count('profile_cache'), 1);
  });

  test('a non-positive TTL is refused', async () => {
    await assert.rejects(store.claimEvent('event', 0), RangeError);
    await assert.rejects(store.cacheProfile({ pubkey: 'p' }, -1), RangeError);
  });
});

describe('SqliteStore migrations', () => {
  test('a fresh file reaches the latest version, logging each step', async () => {
    const path = freshPath();
    const { logger, lines } = capturingLogger();
    const store = await openSqliteStore({ path, logger });
    await store.close();
    assert.equal(migrationLines(lines()).length, migrations.length);
    const raw = new BetterSqlite3(path);
    try {
      assert.equal(schemaVersion(raw), LATEST_SCHEMA_VERSION);
    } finally {
      raw.close();
    }
  });

  test('opening a file already at the latest version migrates nothing', async () => {
    const path = freshPath();
    await (await openSqliteStore({ path })).close();
    const { logger, lines } = capturingLogger();
    const store = await openSqliteStore({ path, logger });
    await store.close();
    assert.deepEqual(migrationLines(lines()), []);

    const raw = new BetterSqlite3(path);
    try {
      assert.deepEqual(migrate(raw, logger), []);
      assert.equal(schemaVersion(raw), LATEST_SCHEMA_VERSION);
    } finally {
      raw.close();
    }
  });

  test('migration from version 0 creates every table', () => {
    const raw = new BetterSqlite3(IN_MEMORY_PATH);
    try {
      assert.deepEqual(migrate(raw, capturingLogger().logger, migrations.slice(0, 1)), [1]);
      const tables = raw
        .prepare<[], { name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
        .all()
        .map((row) => row.name);
      for (const table of ['devices', 'event_claims', 'recipient_claims', 'preferences', 'relay_cursors', 'profile_cache', 'queue_items']) {
        assert.ok(tables.includes(table), `${table} exists`);
      }
    } finally {
      raw.close();
    }
  });

  test('migration from version 5 adds the VAPID key table to a file that has data', () => {
    const raw = new BetterSqlite3(IN_MEMORY_PATH);
    try {
      migrate(raw, capturingLogger().logger, migrations.slice(0, 5));
      raw.prepare(`INSERT INTO relay_cursors (relay_url, created_at) VALUES ('wss://r', 7)`).run();
      assert.deepEqual(migrate(raw, capturingLogger().logger, migrations.slice(0, 6)), [6]);
      assert.equal(raw.prepare<[], { n: number }>(`SELECT count(*) AS n FROM vapid_keys`).get()?.n, 0);
      assert.equal(raw.prepare<[], { n: number }>(`SELECT count(*) AS n FROM relay_cursors`).get()?.n, 1);
    } finally {
      raw.close();
    }
  });

  test('the lanes migration puts queued items in the normal lane, leasable after critical ones', async () => {
    // The version just before the lanes migration, wherever later merges put it in the list.
    const beforeLanes = migrations.findIndex((m) => m.description.startsWith('queue lanes'));
    assert.ok(beforeLanes > 0);
    const dir = mkdtempSync(join(tmpdir(), 'np-lanes-migration-'));
    const path = join(dir, 'old.sqlite');
    try {
      const raw = new BetterSqlite3(path);
      migrate(raw, capturingLogger().logger, migrations.slice(0, beforeLanes));
      raw
        .prepare(
          `INSERT INTO queue_items (queue, id, payload_json, state, due_at_ms, attempts) VALUES ('outbound', 'old', '{"n":1}', 'ready', 0, 0)`,
        )
        .run();
      raw.close();
      const store = await openSqliteStore({ path, clock: new ManualClock(1_000_000) });
      try {
        assert.deepEqual((await store.queueStats('outbound')).lanes.normal, { ready: 1, leased: 0 });
        await store.enqueue('outbound', { id: 'new', payload: 2, lane: 'critical' });
        const batch = await store.lease('outbound', { max: 3, leaseMs: 1000, maxAttempts: 3 });
        assert.deepEqual(
          batch.map((item) => [item.id, item.payload]),
          [
            ['new', 2],
            ['old', { n: 1 }],
          ],
        );
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('migrations apply in order, and a failing step leaves the file at the last completed version', () => {
    const raw = new BetterSqlite3(IN_MEMORY_PATH);
    const order: number[] = [];
    const list: Migration[] = [
      { description: 'one', apply: (db) => (order.push(1), db.exec('CREATE TABLE one (x INTEGER)')) },
      { description: 'two', apply: (db) => (order.push(2), db.exec('CREATE TABLE two (x INTEGER)')) },
      {
        description: 'three fails halfway',
        apply: (db) => {
          order.push(3);
          db.exec('CREATE TABLE three (x INTEGER)');
          throw new Error('step three broke');
        },
      },
    ];
    try {
      const { logger, lines } = capturingLogger();
      assert.throws(() => migrate(raw, logger, list), /step three broke/);
      assert.deepEqual(order, [1, 2, 3]);
      assert.equal(schemaVersion(raw), 2);
      const three = raw.prepare(`SELECT name FROM sqlite_master WHERE name = 'three'`).get();
      assert.equal(three, undefined, 'the failed step was rolled back');
      assert.deepEqual(
        migrationLines(lines()).map((line) => line.to),
        [1, 2, 3],
      );
      assert.deepEqual(migrate(raw, logger, list.slice(0, 2)), [], 'a rerun with the working steps has nothing left');
    } finally {
      raw.close();
    }
  });

  test('a file from a newer build is refused, not downgraded', async () => {
    const path = freshPath();
    await (await openSqliteStore({ path })).close();
    const raw = new BetterSqlite3(path);
    raw.prepare('UPDATE schema_version SET version = ?').run(LATEST_SCHEMA_VERSION + 1);
    raw.close();
    await assert.rejects(openSqliteStore({ path }), SchemaTooNewError);
  });
});

describe('SqliteStore ntfy reads of many topics', () => {
  test('walk the messages in id order, examining a bounded number per read, and continue from the last examined', async () => {
    const store = await openSqliteStore({ path: IN_MEMORY_PATH, clock: new ManualClock() });
    try {
      const topics = Array.from({ length: NTFY_READ_WALK_TOPICS + 1 }, (_, i) => `held-${i}`);
      const start = await store.ntfyHeadId();
      const noise = await Promise.all(
        Array.from({ length: NTFY_READ_WALK_ROWS + 10 }, () => store.appendNtfyMessage('noise', { message: 'n' }, 60_000)),
      );
      const wanted = await store.appendNtfyMessage('held-3', { message: 'w' }, 60_000);
      const first = await store.readNtfyMessages(topics, start, 100);
      assert.deepEqual(first, { messages: [], position: noise[NTFY_READ_WALK_ROWS - 1]?.id, complete: false });
      const second = await store.readNtfyMessages(topics, first.position, 100);
      assert.deepEqual([second.messages.map((m) => m.id), second.complete, second.position], [[wanted.id], true, wanted.id]);
    } finally {
      await store.close();
    }
  });
});

describe('SqliteStore scheduled ntfy messages across processes', () => {
  test('two stores on one file (as two processes) take turns releasing: each due message once, ids in one order', async () => {
    // Turns, not the same moment: two connections in one process would block each other's group
    // commit (a busy wait holds the event loop); two processes at once are the end-to-end test's.
    const path = freshPath();
    const clock = new ManualClock();
    const [a, b] = await Promise.all([openSqliteStore({ path, clock }), openSqliteStore({ path, clock })]);
    try {
      const scheduled = [];
      for (let i = 0; i < 20; i++)
        scheduled.push(await a.scheduleNtfyMessage(`t${i % 3}`, { message: `m${i}` }, clock.nowMs() + 10_000, 60_000));
      clock.advance(10_000);
      const delivered = [];
      for (const store of [b, a, b, a]) delivered.push(...(await store.releaseDueNtfyMessages(7)));
      assert.equal(delivered.length, 20);
      assert.deepEqual(new Set(delivered.map((m) => m.sequenceId)), new Set(scheduled.map((s) => s.id)));
      assert.deepEqual(
        delivered.map((m) => m.id),
        [...delivered.map((m) => m.id)].sort(),
        'ids rise across both',
      );
      const stored = (await b.readNtfyMessages(['t0', 't1', 't2'], null, 100)).messages;
      assert.deepEqual(
        stored.map((m) => m.id),
        delivered.map((m) => m.id),
      );
      assert.deepEqual(await a.readNtfyScheduled(['t0', 't1', 't2'], 100), []);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  test('the schedule migration adds its table to a file of the previous version', () => {
    const raw = new BetterSqlite3(IN_MEMORY_PATH);
    try {
      const step = migrations.findIndex((m) => m.description.includes('delayed ntfy messages'));
      migrate(raw, capturingLogger().logger, migrations.slice(0, step));
      const tables = () => raw.prepare<[], { n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE name = 'ntfy_scheduled'").get()?.n;
      assert.equal(tables(), 0);
      assert.ok(migrate(raw, capturingLogger().logger).includes(step + 1));
      assert.equal(tables(), 1);
    } finally {
      raw.close();
    }
  });
});

describe('SqliteStore event claim owners (issue 42)', () => {
  test('the owner migration keeps the claims of a file of the previous version, unowned', async () => {
    const path = freshPath();
    const raw = new BetterSqlite3(path);
    const step = migrations.findIndex((m) => m.description.includes('event claims carry their owner'));
    migrate(raw, capturingLogger().logger, migrations.slice(0, step));
    raw.prepare('INSERT INTO event_claims (event_id, expires_at_ms) VALUES (?, ?)').run('old-claim', Date.UTC(2100, 0, 1));
    raw.close();
    const store = await openSqliteStore({ path, clock: new ManualClock() });
    try {
      assert.equal(await store.claimEvent('old-claim', 60), false, 'still held');
      assert.equal(await store.claimEvent('old-claim', 60, 'someone'), false, 'by nobody that can take it again');
      assert.equal(await store.claimEvent('new-claim', 60, 'someone'), true);
      assert.equal(await store.claimEvent('new-claim', 60, 'someone'), true, 'an owned claim after the migration');
    } finally {
      await store.close();
    }
  });
});

describe('SqliteStore API key last use (issue 38)', () => {
  test('the last-use migration keeps the keys of a file of the previous version, never used, and records uses after it', async () => {
    const path = freshPath();
    const raw = new BetterSqlite3(path);
    const step = migrations.findIndex((m) => m.description.includes("API keys' last use"));
    assert.ok(step > 0);
    migrate(raw, capturingLogger().logger, migrations.slice(0, step));
    raw
      .prepare('INSERT INTO api_keys (id, app_id, role, hash, prefix, created_at_ms) VALUES (?, ?, ?, ?, ?, ?)')
      .run('key_old', 'default', 'admin', 'f'.repeat(64), 'npk_oldkey12', 1000);
    raw.close();
    const store = await openSqliteStore({ path, clock: new ManualClock() });
    try {
      const [old] = await store.listApiKeys('default');
      assert.deepEqual([old?.id, old?.role, old?.createdAtMs, old?.lastUsedAtMs], ['key_old', 'admin', 1000, null]);
      assert.equal(await store.touchApiKeyUse('key_old', 5000), true);
      assert.equal((await store.findApiKeyByHash('f'.repeat(64)))?.lastUsedAtMs, 5000);
    } finally {
      await store.close();
    }
  });
});

describe('SqliteStore files', () => {
  test('a file store runs in WAL mode', async () => {
    const path = freshPath();
    const store = await openSqliteStore({ path });
    const raw = new BetterSqlite3(path);
    try {
      assert.equal(raw.pragma('journal_mode', { simple: true }), 'wal');
    } finally {
      raw.close();
      await store.close();
    }
  });

  test('the parent directory is created when missing', async () => {
    const path = join(tempDir, 'nested', 'deeper', 'store.db');
    const store = await openSqliteStore({ path });
    await store.ping();
    await store.close();
  });

  test('data survives close and reopen, leases included', async () => {
    const path = freshPath();
    const clock = new ManualClock();
    const first = await openSqliteStore({ path, clock });
    await first.registerToken('alice', { token: 'token-1', transport: 'webpush', endpoint: 'https://e.example/1', p256dh: 'k', auth: 'a' });
    await first.setPreferences('alice', { kinds: [1, 7], campaignsEnabled: true });
    await first.advanceRelayCursor('wss://relay.example', 1234);
    await first.claimEvent('event', 600);
    await first.enqueue('outbound', { id: 'job', payload: { to: 'token-1' } });
    await first.enqueue('inbound', { id: 'waiting', payload: 'w' });
    const [leased] = await first.lease('outbound', LEASE);
    assert.ok(leased);
    await first.close();

    const second = await openSqliteStore({ path, clock });
    try {
      assert.deepEqual(await second.listDevices('alice'), [
        { token: 'token-1', transport: 'webpush', endpoint: 'https://e.example/1', p256dh: 'k', auth: 'a' },
      ]);
      assert.deepEqual(await second.getPreferences('alice'), { kinds: [1, 7], campaignsEnabled: true });
      assert.equal(await second.getRelayCursor('wss://relay.example'), 1234);
      assert.equal(await second.claimEvent('event', 600), false);
      assert.deepEqual(totals(await second.queueStats('outbound')), { ready: 0, leased: 1, dead: 0 });
      assert.equal(await second.ack('outbound', 'job', leased.leaseToken), true, 'a lease outlives a restart');
      assert.equal((await second.lease<string>('inbound', LEASE))[0]?.payload, 'w');
    } finally {
      await second.close();
    }
  });

  test('close is idempotent', async () => {
    const store = await openSqliteStore({ path: IN_MEMORY_PATH });
    await store.close();
    await store.close();
  });
});

describe('SqliteStore damaged rows', () => {
  test('a queue payload that no longer parses is dead-lettered by lease, not thrown', async () => {
    const path = freshPath();
    const { logger, lines } = capturingLogger();
    const store = await openSqliteStore({ path, clock: new ManualClock(), logger });
    try {
      await store.enqueue('inbound', { id: 'broken', payload: { ok: true } });
      await store.enqueue('inbound', { id: 'fine', payload: { ok: true } });
      const raw = new BetterSqlite3(path);
      raw.prepare(`UPDATE queue_items SET payload_json = '{not json' WHERE id = 'broken'`).run();
      raw.close();

      const leased = await store.lease('inbound', LEASE);
      assert.deepEqual(
        leased.map((item) => item.id),
        ['fine'],
      );
      const [dead] = await store.listDead('inbound', 10);
      assert.equal(dead?.id, 'broken');
      assert.equal(dead.reason, CORRUPT_PAYLOAD_REASON);
      assert.equal(dead.payload, '{not json', 'listed as the stored text');
      assert.ok(
        lines().some((line) => line.level === 40 && line.id === 'broken'),
        'logged at warn',
      );
    } finally {
      await store.close();
    }
  });

  test('a payload that is not JSON-serialisable is refused at enqueue', async () => {
    const store = await openSqliteStore({ path: IN_MEMORY_PATH });
    try {
      await assert.rejects(store.enqueue('inbound', { id: 'x', payload: undefined }), TypeError);
      await assert.rejects(store.enqueue('inbound', { id: 'y', payload: 10n }), TypeError);
      assert.deepEqual(totals(await store.queueStats('inbound')), { ready: 0, leased: 0, dead: 0 });
    } finally {
      await store.close();
    }
  });
});
