/**
 * The cluster's own health as an operator sees it, on a real 3-master Redis Cluster: `nostr-push
 * doctor` lists the nodes and slot coverage, and the store topology watch behind `/health`'s
 * `store_slots` flag turns false when a master dies with no replica to take its slots.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { healthBody } from '../../src/api/health.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { STORE_SLOTS_FLAG, StoreTopologyWatch } from '../../src/store/topology-watch.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { startRedisCluster, type PrivateRedisCluster } from '../support/redis-cluster.ts';

const BIN = fileURLToPath(new URL('../../bin/nostr-push.js', import.meta.url));
/** An upper bound only a hang reaches: the cluster marks a dead master failed after its node timeout (2 s). */
const FAILURE_NOTICED_WITHIN_MS = 60_000;

function doctor(env: Record<string, string>): Promise<{ status: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'doctor'], { env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('exit', (status) => resolve({ status, stdout }));
  });
}

describe('Redis Cluster topology', () => {
  let cluster: PrivateRedisCluster | undefined;
  let dir = '';

  before(async () => {
    cluster = await startRedisCluster({ masters: 3 });
    dir = mkdtempSync(join(tmpdir(), 'np-cluster-doctor-'));
  });

  after(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('doctor reports the nodes and full slot coverage, the watch holds /health ok; a dead master makes both say so', async () => {
    assert.ok(cluster, 'cluster started');
    // Only the store is looked at here: roles without a listener or HTTP (no relay or port to check).
    const env = {
      NOSTR_PUSH__DATA_DIR: dir,
      NOSTR_PUSH__STORE__URL: cluster.url,
      NOSTR_PUSH__NOSTR__RELAYS: 'ws://127.0.0.1:1',
      NOSTR_PUSH__ROLES: 'janitor',
    };
    const healthy = await doctor(env);
    assert.equal(healthy.status, 0, healthy.stdout);
    assert.match(
      healthy.stdout,
      /^ok {4}store: Redis Cluster, cluster key layout: 3 masters, 0 replicas, 16384\/16384 slots covered, state ok$/m,
      healthy.stdout,
    );
    const nodeLines = healthy.stdout.match(/^ok {6}node 127\.0\.0\.1:\d+ [0-9a-f]{8} \(master, \d+ slots\)$/gm) ?? [];
    assert.equal(nodeLines.length, 3, `one line per master:\n${healthy.stdout}`);

    const store = await openRedisStore({ url: cluster.url, keyPrefix: 'topology-test:' });
    try {
      const watch = new StoreTopologyWatch(store, createLogger({ level: 'silent' }));
      assert.equal(await watch.check(), true, 'a whole cluster serves every slot');
      const health = () => healthBody({ pubkey: () => null, criticalFlags: () => ({ [STORE_SLOTS_FLAG]: watch.servesEverySlot }) });
      assert.equal((await health()).status, 'ok', 'health ok while every slot is served');

      const victim = cluster.nodes[0];
      assert.ok(victim, 'a master to kill');
      await victim.kill();
      const deadline = Date.now() + FAILURE_NOTICED_WITHIN_MS;
      while ((await watch.check()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(watch.servesEverySlot, false, 'the dead master’s slots are uncovered');
      assert.deepEqual(
        await health(),
        {
          status: 'failing',
          pubkey: null,
          tasks: { [STORE_SLOTS_FLAG]: false },
          problems: [{ code: 'critical_flag_down', severity: 'failing', message: `critical tasks or checks down: ${STORE_SLOTS_FLAG}` }],
        },
        '/health fails (503)',
      );
    } finally {
      await store.close();
    }

    const broken = await doctor(env);
    assert.equal(broken.status, 1, broken.stdout);
    // The node asked may still be between suspecting the master (unreachable to it) and the
    // cluster's vote that marks it failed: the state reads either way; the uncovered slots count.
    const failLine =
      /^FAIL {2}store: Redis Cluster, cluster key layout: 3 masters, 0 replicas \(1 unreachable\), (\d+)\/16384 slots covered, state (ok|fail); /m.exec(
        broken.stdout,
      );
    assert.ok(failLine && Number(failLine[1]) < 16_384, broken.stdout);
    assert.match(broken.stdout, /^warn {2} {2}node 127\.0\.0\.1:\d+ [0-9a-f]{8} \(master, \d+ slots\) unreachable$/m, broken.stdout);
  });
});
