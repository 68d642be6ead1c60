/**
 * `redis.wait_replicas` on a real Redis Cluster of three masters with one replica each
 * (`src/store/redis/replication.ts`): a step that must survive a failover waits for the replica
 * of the master it wrote to, and fails (for its caller to retry) when that replica does not
 * answer. The replica is frozen with SIGSTOP, so it is connected but acknowledges nothing, as a
 * lagging or resyncing replica would; the other masters' steps go on. A replica that died and was
 * marked failed is not waited for: its master could not fail over anyway.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import calculateKeySlot from 'cluster-key-slot';
import { Cluster, type Redis } from 'ioredis';
import type { StorePort } from '../../src/store/port.ts';
import type { CoalesceEvent, CoalescePolicy } from '../../src/store/port-coalesce.ts';
import { WATCHER_WALK_START } from '../../src/store/port-bells.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { createRedisKeys, queueShardOf, DEFAULT_CLUSTER_QUEUE_SHARDS } from '../../src/store/redis/keys.ts';
import { ReplicaWaiter, ReplicationWaitError } from '../../src/store/redis/replication.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { clusterNodeId, startRedisCluster, waitForFailover, type PrivateRedisCluster } from '../support/redis-cluster.ts';
import type { PrivateRedisServer } from '../support/redis-server.ts';
import { eventually } from '../support/service-process.ts';

/** Short, so a step meeting the frozen replica fails fast. */
const WAIT_TIMEOUT_MS = 100;
const PREFIX = 'replication-test:';
/** A watcher set large enough to be a hash table, walked in pages. */
const WALKED_WATCHERS = 1_000;
const WALK_PAGE = 100;
/** An upper bound only a hang reaches. */
const RETRY_DEADLINE_MS = 30_000;

/** Runs `work` with the process `pid` frozen (SIGSTOP: connected, answering nothing), thawing it whatever `work` does. */
async function whileFrozen(pid: number, work: () => Promise<void>): Promise<void> {
  process.kill(pid, 'SIGSTOP');
  try {
    await work();
  } finally {
    process.kill(pid, 'SIGCONT');
  }
}

describe('replica acknowledgement on a Redis Cluster with replicas', () => {
  let cluster: PrivateRedisCluster;
  let raw: Cluster;
  let store: StorePort;
  const keys = createRedisKeys('cluster');

  before(async () => {
    cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1 });
    raw = new Cluster(cluster.nodes.map((node) => ({ host: '127.0.0.1', port: node.port })));
    await raw.ping();
    // wait_replicas left at auto: 1 on a cluster.
    store = await openRedisStore({
      url: cluster.url,
      keyPrefix: PREFIX,
      waitTimeoutMs: WAIT_TIMEOUT_MS,
      logger: createLogger({ level: 'silent' }),
    });
  });

  after(async () => {
    /* eslint-disable @typescript-eslint/no-unnecessary-condition -- before() can fail before it assigns these. */
    await store?.close();
    raw?.disconnect();
    await cluster?.stop();
    /* eslint-enable @typescript-eslint/no-unnecessary-condition */
  });

  /** The master and replica serving `key`'s slot, as the client's map lists them and as the test cluster's nodes. */
  function slotNodes(key: string): {
    slot: number;
    masterAddress: string;
    replicaAddress: string;
    master: Redis;
    replica: PrivateRedisServer;
  } {
    const slot = calculateKeySlot(key);
    const [masterAddress, replicaAddress] = raw.slots[slot] ?? [];
    assert.ok(masterAddress && replicaAddress, 'the slot has a master and a replica');
    const replica = cluster.nodes.find((node) => node.port === Number(replicaAddress.split(':')[1]));
    const master = raw.nodes('master').find((node) => `${node.options.host}:${node.options.port}` === masterAddress);
    assert.ok(replica && master, 'the slot’s master and replica are nodes of the test cluster');
    return { slot, masterAddress, replicaAddress, master, replica };
  }

  /** The port of the replica of the master serving the queue shard of `id` (ioredis lists a slot's nodes master first). */
  function replicaPortOf(id: string): { replicaPort: number; masterAddress: string } {
    const shardKey = keys.queueKeys('outbound', queueShardOf(id, DEFAULT_CLUSTER_QUEUE_SHARDS)).items;
    const [masterAddress, replicaAddress] = raw.slots[calculateKeySlot(`${PREFIX}${shardKey}`)] ?? [];
    assert.ok(masterAddress && replicaAddress, `the shard of ${id} has a master and a replica`);
    return { replicaPort: Number(replicaAddress.split(':')[1]), masterAddress };
  }

  test('an enqueue waits for its master’s replica: refused while it is frozen, done when retried after', async () => {
    const frozenId = 'item-on-a-frozen-master';
    const { replicaPort, masterAddress } = replicaPortOf(frozenId);
    // An item whose shard another master serves: its WAIT goes there, and is answered.
    const otherId = Array.from({ length: 64 }, (_, i) => `item-${i}`).find((id) => replicaPortOf(id).masterAddress !== masterAddress);
    assert.ok(otherId, 'an id on another master');
    const replica = cluster.nodes.find((node) => node.port === replicaPort);
    assert.ok(replica, 'the replica is one of the test cluster’s nodes');

    assert.equal(await store.enqueue('outbound', { id: 'warm-up', payload: 1 }), true, 'enqueued with every replica answering');
    await whileFrozen(replica.pid, async () => {
      await assert.rejects(
        store.enqueue('outbound', { id: frozenId, payload: 'a' }),
        (error: unknown) => error instanceof ReplicationWaitError && /0 of 1 replicas acknowledged/.test(error.message),
        'the step fails when its master’s replica does not acknowledge',
      );
      assert.equal(await store.enqueue('outbound', { id: otherId, payload: 'b' }), true, 'a step on another master is unaffected');
    });
    // The caller's retry: the master kept the write, so the item is known; now it is replicated.
    assert.equal(await store.enqueue('outbound', { id: frozenId, payload: 'a' }), false, 'the retry finds the item already queued');
    const stats = await store.queueStats('outbound');
    assert.equal(stats.ready, 3, 'warm-up, the other and the retried item are queued, once each');
  });

  test('a replica the client’s slot map leaves out is still waited for while its master has it connected', async () => {
    // A slot map refreshed while the cluster flagged the replica failed for a moment (a loaded
    // host): the replica is gone from the map but still replicates, and could still be promoted.
    const key = 'stale-map-step';
    const { slot, masterAddress, master, replica } = slotNodes(key);
    const waiter = new ReplicaWaiter(master, raw, { replicas: 1, timeoutMs: WAIT_TIMEOUT_MS });
    await raw.set(key, 'before');
    raw.slots[slot] = [masterAddress];
    await whileFrozen(replica.pid, async () => {
      await raw.set(key, 'frozen');
      await assert.rejects(
        waiter.afterWrites(() => [key]),
        (error: unknown) => error instanceof ReplicationWaitError && /0 of 1 replicas acknowledged/.test(error.message),
        'the master still has its replica connected, so the step waits for it and fails when it does not answer',
      );
    });
    raw.slots[slot] = [masterAddress];
    await raw.set(key, 'after');
    await waiter.afterWrites(() => [key]);
    await raw.del(key);
  });

  test('a replica its master no longer counts as connected does not excuse a shortfall', async () => {
    // The replica is cut off from its master (its link killed while it is frozen): the master
    // counts no connected replica, yet the cluster still lists it and could still promote it,
    // without the step's write. A replica promoted over a master that has not heard of it yet
    // looks the same from the master's side, so the step fails and its caller retries it.
    const key = 'cut-off-replica-step';
    const { slot, masterAddress, replicaAddress, master, replica } = slotNodes(key);
    const waiter = new ReplicaWaiter(master, raw, { replicas: 1, timeoutMs: WAIT_TIMEOUT_MS });
    await whileFrozen(replica.pid, async () => {
      await master.call('CLIENT', 'KILL', 'TYPE', 'replica');
      await eventually(
        async () => (/^connected_slaves:0/m.test(await master.info('replication')) ? true : undefined),
        RETRY_DEADLINE_MS,
        'the master counting no connected replica',
      );
      // As the client's map had it before the cut (a refresh now could already leave the replica out).
      raw.slots[slot] = [masterAddress, replicaAddress];
      await raw.set(key, 'cut off');
      await assert.rejects(
        waiter.afterWrites(() => [key]),
        (error: unknown) => error instanceof ReplicationWaitError && /0 of 1 replicas acknowledged/.test(error.message),
        'the shortfall is an error though the master lost the replica',
      );
    });
    // Reconnected (a partial resync), the replica acknowledges again and the retry goes through.
    await eventually(
      async () => {
        raw.slots[slot] = [masterAddress, replicaAddress];
        await raw.set(key, 'after');
        return waiter
          .afterWrites(() => [key])
          .then(
            () => true,
            (error: unknown) => {
              if (error instanceof ReplicationWaitError) return undefined;
              throw error;
            },
          );
      },
      RETRY_DEADLINE_MS,
      'the replica acknowledging again',
    );
    await raw.del(key);
  });

  test('a watcher walk continued on another Redis process restarts instead of skipping watchers', async () => {
    const creator = 'c4'.repeat(32);
    const watchers = Array.from({ length: WALKED_WATCHERS }, (_, i) => `d${i.toString(16).padStart(63, '0')}`);
    await raw.sadd(`${PREFIX}${keys.notifyWatchersKey(creator)}`, ...watchers);
    const first = await store.notifyWatchersPage(creator, WATCHER_WALK_START, WALK_PAGE);
    const [issuer, position] = first.nextCursor.split(':');
    assert.match(issuer ?? '', /^[0-9a-f]{40}$/, `the cursor names the process that issued it (${first.nextCursor})`);
    // The same position from a process that did not issue it (a promoted replica, a restart).
    const foreign = await store.notifyWatchersPage(creator, `${'0'.repeat(40)}:${String(position)}`, WALK_PAGE);
    assert.deepEqual(foreign.watchers, first.watchers, 'the walk starts over, from the first page');
    const walked = new Set(first.watchers);
    for (let cursor = first.nextCursor; cursor !== WATCHER_WALK_START;) {
      const page = await store.notifyWatchersPage(creator, cursor, WALK_PAGE);
      for (const watcher of page.watchers) walked.add(watcher);
      cursor = page.nextCursor;
    }
    assert.equal(walked.size, WALKED_WATCHERS, 'the issuer’s own cursors walk every watcher');
  });

  test('a buffered like waits for its group’s replica before the event can be acknowledged; the retry replays it once', async () => {
    const owner = 'e5'.repeat(32);
    const policy: CoalescePolicy = {
      windowSecs: 600,
      immediateLimit: 0,
      groupTtlSecs: 3600,
      graceSecs: 600,
      throttleCapacity: 20,
      throttleRefillSecs: 60,
      dailyWindowSecs: 86_400,
      dailyCap: 20,
    };
    const like: CoalesceEvent = {
      type: 'like',
      owner,
      target: `e:${'f1'.repeat(32)}`,
      actor: 'ac'.repeat(32),
      eventId: 'ee'.repeat(32),
      eventKind: 7,
      createdAt: 1_767_225_600,
      references: { referencedEventId: 'f1'.repeat(32) },
    };
    // The group lives in the recipient's slot; freeze the replica of that slot's master.
    const [, replicaAddress] = raw.slots[calculateKeySlot(`${PREFIX}${keys.coalesceDispositionKey(like.eventId, owner)}`)] ?? [];
    const replica = cluster.nodes.find((node) => `127.0.0.1:${node.port}` === replicaAddress);
    assert.ok(replica, 'the recipient’s master has a replica among the test cluster’s nodes');
    await whileFrozen(replica.pid, async () => {
      await assert.rejects(
        store.ingestCoalesceEvent(like, policy),
        (error: unknown) => error instanceof ReplicationWaitError,
        'the ingest fails while the group’s master’s replica does not acknowledge',
      );
    });
    const retried = await store.ingestCoalesceEvent(like, policy);
    assert.deepEqual([retried.disposition, retried.replayed], ['buffered', true], 'the retry replays the recorded disposition');
    assert.equal((await store.readCoalesceGroup(retried.groupId))?.pending, 1, 'the like is buffered once');
  });

  test('a master whose replica died is not waited for once the cluster marked it failed', async () => {
    const id = 'item-on-a-master-without-replica';
    const { replicaPort } = replicaPortOf(id);
    const replica = cluster.nodes.find((node) => node.port === replicaPort);
    assert.ok(replica, 'the replica is one of the test cluster’s nodes');
    const replicaId = await clusterNodeId(replica);
    await replica.kill();
    await waitForFailover(
      cluster.nodes.filter((node) => node !== replica),
      replicaId,
    );
    // The first try may still find the dead replica in the client's slot map: its shortfall
    // refreshes the map, and a retry (as the callers make) asks for no replica.
    const added = await eventually(
      async () => {
        try {
          return await store.enqueue('outbound', { id, payload: 'c' });
        } catch (error) {
          if (error instanceof ReplicationWaitError) return undefined;
          throw error;
        }
      },
      RETRY_DEADLINE_MS,
      'an enqueue on the master without a replica',
    );
    assert.equal(typeof added, 'boolean', 'the enqueue completed');
    assert.equal((await store.queueStats('outbound')).ready, 4, 'the item is queued beside the first test’s three');
  });
});
