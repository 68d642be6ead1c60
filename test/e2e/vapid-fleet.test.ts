/**
 * A Redis fleet with no VAPID key configured shares one key pair through the store: the real
 * binary, several processes on one private redis-server, each with its own data directory. Every
 * process serves the same public key (the one browser apps subscribe with), including one that
 * starts later; a process that already had a key in its data directory (from before the store kept
 * it) makes that key the fleet's when it is first.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import webpush from 'web-push';
import { VAPID_KEY_FILE } from '../../src/delivery/webpush/vapid-key.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.ts';

describe('the VAPID key of a Redis fleet', () => {
  let redis: PrivateRedisServer;
  let root: string;
  const processes: ServiceProcess[] = [];

  before(async () => {
    redis = await startRedisServer();
    root = mkdtempSync(join(tmpdir(), 'np-vapid-fleet-'));
  });
  after(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await redis.stop();
    rmSync(root, { recursive: true, force: true });
  });

  /** One api process on Redis database `db`, with its own data directory. */
  async function start(name: string, db: number): Promise<{ dataDir: string; publicKey: () => Promise<string> }> {
    const dataDir = join(root, name);
    mkdirSync(dataDir, { recursive: true });
    const service = await startServiceProcess({
      env: {
        NOSTR_PUSH__ROLES: 'api',
        NOSTR_PUSH__STORE__URL: `${redis.url}/${db}`,
        NOSTR_PUSH__DATA_DIR: dataDir,
        NOSTR_PUSH__WEBPUSH__VAPID_SUBJECT: 'mailto:ops@nostr-push.test',
      },
    });
    processes.push(service);
    return {
      dataDir,
      publicKey: async () =>
        ((await (await fetch(`${service.baseUrl}/v1/webpush/vapid-public-key`)).json()) as { publicKey: string }).publicKey,
    };
  }

  async function storedPublicKey(db: number): Promise<string> {
    const client = new Redis(`${redis.url}/${db}`);
    try {
      return (JSON.parse((await client.get('webpush:vapid')) ?? '{}') as { publicKey?: string }).publicKey ?? '';
    } finally {
      client.disconnect();
    }
  }

  test('two processes starting together, and one starting later, all use the one key stored in Redis', async () => {
    const [a, b] = await Promise.all([start('a', 1), start('b', 1)]);
    const keyA = await a.publicKey();
    assert.match(keyA, /^[A-Za-z0-9_-]{87}$/, 'an uncompressed P-256 key, base64url');
    assert.equal(await b.publicKey(), keyA);
    assert.equal(await storedPublicKey(1), keyA);
    const later = await start('later', 1);
    assert.equal(await later.publicKey(), keyA);
    for (const dir of [a.dataDir, b.dataDir, later.dataDir])
      assert.equal(existsSync(join(dir, VAPID_KEY_FILE)), false, 'nothing per process in the data directory');
  });

  test("a key already in the first process's data directory becomes the fleet's key", async () => {
    const kept = webpush.generateVAPIDKeys();
    const dataDir = join(root, 'upgraded');
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, VAPID_KEY_FILE), JSON.stringify(kept));
    const upgraded = await start('upgraded', 2);
    assert.equal(await upgraded.publicKey(), kept.publicKey);
    const other = await start('other', 2);
    assert.equal(await other.publicKey(), kept.publicKey);
  });
});
