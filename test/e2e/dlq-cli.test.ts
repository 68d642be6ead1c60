/** `nostr-push dlq list|replay|delete`: the real binary against a store on disk (SQLite) and a private redis-server. */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import type { Lane, QueueName, StorePort } from '../../src/store/port.ts';
import { openStore } from '../../src/store/open.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';

const BIN = fileURLToPath(new URL('../../bin/nostr-push.js', import.meta.url));

function run(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

async function kill(store: StorePort, queue: QueueName, id: string, lane?: Lane): Promise<void> {
  await store.enqueue(queue, { id, payload: { id }, ...(lane ? { lane } : {}) });
  const items = await store.lease(queue, { max: 50, leaseMs: 60_000, maxAttempts: 5 });
  for (const item of items) {
    if (item.id === id) await store.deadLetter(queue, id, item.leaseToken, `poison ${id}`);
    else await store.retry(queue, item.id, item.leaseToken, store.clock.nowMs(), 'not this one');
  }
}

let redis: PrivateRedisServer | undefined;
let dir = '';
before(async () => {
  redis = await startRedisServer();
  dir = mkdtempSync(join(tmpdir(), 'np-dlq-cli-'));
});
after(async () => {
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`nostr-push dlq (${adapter})`, () => {
    test('list, replay one, replay all, delete, and the exit codes of mistakes', async () => {
      if (!redis) throw new Error('redis-server did not start');
      const path = join(dir, `${randomUUID()}.sqlite`);
      // The binary opens the store itself, with no key prefix on Redis: a database of its own.
      const redisUrl = `${redis.url}/${adapter === 'redis' ? 3 : 0}`;
      const open = (): Promise<StorePort> => (adapter === 'sqlite' ? openSqliteStore({ path }) : openRedisStore({ url: redisUrl }));
      const env = {
        NOSTR_PUSH__STORE__URL: adapter === 'sqlite' ? `sqlite:${path}` : redisUrl,
        NOSTR_PUSH__DATA_DIR: dir,
        LOG_LEVEL: 'warn',
      };

      let store = await open();
      await kill(store, 'outbound', 'first', 'critical');
      await kill(store, 'outbound', 'second');
      await kill(store, 'outbound', 'third');
      await kill(store, 'inbound', 'event');
      await store.close();

      const listed = await run(['dlq', 'list', '--queue', 'outbound', '--limit', '2'], env);
      assert.equal(listed.status, 0, listed.stderr);
      const page = JSON.parse(listed.stdout) as { items: Array<Record<string, unknown>>; nextCursor: string | null };
      assert.deepEqual(
        page.items.map((item) => [item.id, item.lane, item.reason, item.attempts]),
        [
          ['first', 'critical', 'poison first', 1],
          ['second', 'normal', 'poison second', 1],
        ],
      );
      assert.ok(page.nextCursor);
      const next = await run(['dlq', 'list', '--queue', 'outbound', '--limit', '2', '--cursor', page.nextCursor], env);
      assert.deepEqual(
        (JSON.parse(next.stdout) as { items: Array<{ id: string }> }).items.map((item) => item.id),
        ['third'],
      );

      const replayed = await run(['dlq', 'replay', 'first'], env);
      assert.equal(replayed.status, 0, replayed.stderr);
      assert.deepEqual(JSON.parse(replayed.stdout), { id: 'first', queue: 'outbound', replayed: true });
      const deleted = await run(['dlq', 'delete', 'second', '--queue', 'outbound'], env);
      assert.deepEqual([deleted.status, JSON.parse(deleted.stdout)], [0, { id: 'second', queue: 'outbound', deleted: true }]);
      const all = await run(['dlq', 'replay', '--all', '--queue', 'inbound'], env);
      assert.deepEqual([all.status, JSON.parse(all.stdout)], [0, { queue: 'inbound', replayed: 1 }]);

      const missing = await run(['dlq', 'delete', 'second'], env);
      assert.equal(missing.status, 1);
      assert.match(missing.stderr, /no dead letter second/);
      for (const bad of [
        ['dlq', 'list'],
        ['dlq', 'replay', '--all'],
        ['dlq', 'list', '--queue', 'x'],
        ['dlq', 'frobnicate'],
        ['dlq', 'list', '--queue', 'outbound', '--cursor', '!!'],
      ]) {
        const res = await run(bad, env);
        assert.equal(res.status, 2, `${bad.join(' ')}: ${res.stderr}`);
        assert.doesNotMatch(res.stderr, /\n\s+at /, 'no stack trace');
      }

      store = await open();
      try {
        const outbound = await store.queueStats('outbound');
        assert.deepEqual([outbound.dead, outbound.lanes.critical.ready], [1, 1], 'third still dead; first back in its lane');
        assert.equal((await store.queueStats('inbound')).ready, 1);
      } finally {
        await store.close();
      }
    });

    test('--app names the app whose dead letters these are; an unknown app is a usage error', async () => {
      if (!redis) throw new Error('redis-server did not start');
      const path = join(dir, `${randomUUID()}.sqlite`);
      const redisUrl = `${redis.url}/${adapter === 'redis' ? 4 : 0}`;
      const location = adapter === 'sqlite' ? ({ kind: 'sqlite', path } as const) : ({ kind: 'redis', url: redisUrl } as const);
      const configFile = join(dir, `${randomUUID()}.yaml`);
      writeFileSync(configFile, 'apps:\n  - id: clips\n');
      const env = {
        NOSTR_PUSH__STORE__URL: adapter === 'sqlite' ? `sqlite:${path}` : redisUrl,
        NOSTR_PUSH__DATA_DIR: dir,
        LOG_LEVEL: 'warn',
      };
      const [defaultView, clipsView] = await Promise.all([openStore(location), openStore(location, { app: 'clips' })]);
      try {
        await kill(defaultView, 'outbound', 'default-item');
        await kill(clipsView, 'outbound', 'clips-item');
      } finally {
        await Promise.all([defaultView.close(), clipsView.close()]);
      }
      const ids = (stdout: string) => (JSON.parse(stdout) as { items: Array<{ id: string }> }).items.map((item) => item.id);
      const ofClips = await run(['dlq', 'list', '--queue', 'outbound', '--app', 'clips', '--config', configFile], env);
      assert.equal(ofClips.status, 0, ofClips.stderr);
      assert.deepEqual(ids(ofClips.stdout), ['clips-item']);
      const ofDefault = await run(['dlq', 'list', '--queue', 'outbound', '--config', configFile], env);
      assert.deepEqual(ids(ofDefault.stdout), ['default-item'], 'without --app: the default app');
      const crossing = await run(['dlq', 'delete', 'default-item', '--app', 'clips', '--config', configFile], env);
      assert.equal(crossing.status, 1, 'another app’s dead letter is not found');
      const unknown = await run(['dlq', 'list', '--queue', 'outbound', '--app', 'nope', '--config', configFile], env);
      assert.equal(unknown.status, 2);
      assert.match(unknown.stderr, /no app "nope"/);
    });
  });
}
