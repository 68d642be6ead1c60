/**
 * Redis-only behaviour of the sharded durable queues and of claimAndEnqueue's steps, which the
 * adapter-neutral contract cannot see: the lease planner over shard reports, the shard key names,
 * and a crash between the stage / claim / commit steps followed by the caller's retry (the steps
 * are run one by one with the scripts' own bodies, then the store's call completes them).
 *
 * Runs on a private redis-server (database 4), flushed before each test, in both key layouts:
 * the cluster layout's keys all live on the one server, which is all these steps need.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import type { ClaimedDelivery, Lane } from '../../src/store/port.ts';
import { openRedisStore, type RedisStore } from '../../src/store/redis/index.ts';
import { createRedisKeys, queueShardOf, type KeyLayout } from '../../src/store/redis/keys.ts';
import { loadScriptDefinitions } from '../../src/store/redis/scripts.ts';
import { peekLimit, planShardedLease, type DueEntry, type ShardReport } from '../../src/store/redis/queue-lease-plan.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';

const DB = 4;
const EVENT_ID = 'e7'.repeat(32);
const ALICE = 'a7'.repeat(32);
const CLAIM_TTL_SECS = 3600;
const LEASE = { max: 10, leaseMs: 30_000, maxAttempts: 5 };

function report(lanes: Partial<Record<Lane, { entries: DueEntry[]; truncated?: boolean }>>): ShardReport {
  const lane = (name: Lane) => ({ entries: lanes[name]?.entries ?? [], truncated: lanes[name]?.truncated ?? false });
  return { critical: lane('critical'), normal: lane('normal'), low: lane('low') };
}
const due = (id: string, availableAtMs: number): DueEntry => ({ id, availableAtMs });

describe('sharded lease plan', () => {
  test('takes the oldest due items across the shards, ties by id, whichever shard holds them', () => {
    const shards = [
      report({ normal: { entries: [due('a', 1), due('d', 4)] } }),
      report({ normal: { entries: [due('b', 2), due('c', 2)] } }),
      report({ normal: { entries: [due('e', 5)] } }),
    ];
    assert.deepEqual(
      planShardedLease(shards, 3).map((take) => take.normal),
      [1, 2, 0],
      'a (shard 0), b and c (shard 1)',
    );
  });

  test('keeps strict lane priority across shards: critical of any shard before normal and low', () => {
    const shards = [
      report({ low: { entries: [due('old-low', 1)] }, normal: { entries: [due('old-normal', 1)] } }),
      report({ critical: { entries: [due('c1', 9), due('c2', 9)] } }),
    ];
    const plan = planShardedLease(shards, 3);
    assert.deepEqual(plan, [
      { critical: 0, normal: 1, low: 0 },
      { critical: 2, normal: 0, low: 0 },
    ]);
  });

  test('reserves the lower lanes their share of a full batch, from whichever shard is oldest', () => {
    const critical = Array.from({ length: 40 }, (_, i) => due(`c${String(i).padStart(2, '0')}`, 1));
    const shards = [report({ critical: { entries: critical } }), report({ low: { entries: [due('l1', 5), due('l2', 6), due('l3', 7)] } })];
    const plan = planShardedLease(shards, 32);
    assert.deepEqual(plan, [
      { critical: 30, normal: 0, low: 0 },
      { critical: 0, normal: 0, low: 2 },
    ]);
  });

  test('stops at the edge of what a truncated report can order, rather than lease out of order or a lower lane', () => {
    // Shard 1 reported 2 of more due critical items, the last at 2: items after it may be older than shard 0's next ones.
    const shards = [
      report({ critical: { entries: [due('a', 1), due('c', 3), due('d', 4)] }, normal: { entries: [due('n', 0)] } }),
      report({ critical: { entries: [due('b', 2), due('b2', 2)], truncated: true } }),
    ];
    assert.deepEqual(
      planShardedLease(shards, 10),
      [
        { critical: 1, normal: 1, low: 0 },
        { critical: 2, normal: 0, low: 0 },
      ],
      'the reserved normal slot, then a, b and b2; c may come after items shard 1 did not report',
    );
  });

  test('reads twice a shard’s share of the batch per lane, never more than the batch', () => {
    assert.equal(peekLimit(400, 8), 108);
    assert.equal(peekLimit(4, 8), 4);
    assert.equal(peekLimit(10, 1), 10);
  });
});

describe('queue shard keys', () => {
  test('the divine layout has one shard with the names of before the shards; more is refused', () => {
    const keys = createRedisKeys('divine');
    assert.equal(keys.queueShards, 1);
    assert.equal(keys.queueKeys('outbound', keys.queueShardOf('any')).lanes.normal.ready, 'queue:outbound:ready');
    assert.throws(() => createRedisKeys('divine', { queueShards: 2 }), /exactly one shard/);
  });

  test('the cluster layout tags each shard, and an id always maps to the same shard', () => {
    const keys = createRedisKeys('cluster', { queueShards: 8 });
    assert.equal(keys.queueShards, 8);
    assert.equal(keys.queueKeys('outbound', 3).lanes.low.ready, 'queue:{q:outbound:3}:low:ready');
    assert.equal(keys.queueKeys('inbound', 0).pending, 'queue:{q:inbound:0}:pending');
    assert.equal(queueShardOf('x', 8), queueShardOf('x', 8));
    const used = new Set(Array.from({ length: 200 }, (_, i) => keys.queueShardOf(`item-${i}`)));
    assert.equal(used.size, 8, 'two hundred ids reach every shard');
    assert.equal(createRedisKeys('cluster').queueShards, 8, 'the default');
    assert.throws(() => createRedisKeys('cluster', { queueShards: 0 }), /queue_shards/);
  });
});

let server: PrivateRedisServer;
let url: string;
let raw: Redis;
let clock: ManualClock;
let store: RedisStore;
const scripts = new Map(loadScriptDefinitions().map((definition) => [definition.name, definition]));

/** Run one script of the adapter with its own body, as the store would: the steps a crash interrupts. */
async function runScript(name: string, keys: string[], args: Array<string | number>): Promise<unknown> {
  const definition = scripts.get(name);
  assert.ok(definition, `script ${name} exists`);
  assert.equal(keys.length, definition.numberOfKeys, `${name} takes ${definition.numberOfKeys} keys`);
  return raw.eval(definition.lua, keys.length, ...keys, ...args.map(String));
}

before(async () => {
  server = await startRedisServer();
  url = `${server.url}/${DB}`;
  raw = new Redis(url);
});

after(async () => {
  /* eslint-disable @typescript-eslint/no-unnecessary-condition -- before() can fail before it assigns these. */
  await raw?.quit();
  await server?.stop();
  /* eslint-enable @typescript-eslint/no-unnecessary-condition */
});

for (const layout of ['divine', 'cluster'] as KeyLayout[]) {
  const keys = createRedisKeys(layout, layout === 'cluster' ? { queueShards: 4 } : {});
  const claimKey = keys.recipientClaimKey(EVENT_ID, ALICE);
  const itemId = `${EVENT_ID}:${ALICE}`;
  const shardKeys = keys.queueKeys('outbound', keys.queueShardOf(itemId));

  function delivery(n: number): ClaimedDelivery<{ n: number; owner: string }> {
    const owner = randomUUID();
    return { claim: { eventId: EVENT_ID, recipient: ALICE, owner }, item: { id: itemId, payload: { n, owner } } };
  }

  /** Step 1 alone: the item staged under the delivery's owner. */
  async function stage(entry: ClaimedDelivery<{ n: number; owner: string }>): Promise<void> {
    const now = clock.nowMs();
    await runScript(
      'stageDeliveries',
      [shardKeys.items, shardKeys.meta, shardKeys.pending],
      [now, now + CLAIM_TTL_SECS * 1000, itemId, entry.claim.owner, JSON.stringify(entry.item.payload), 'normal'],
    );
  }

  async function queuedPayloads(): Promise<Array<{ n: number; owner: string }>> {
    return (await store.lease<{ n: number; owner: string }>('outbound', LEASE)).map((item) => item.payload);
  }

  describe(`claimAndEnqueue steps, ${layout} layout: a crash between them, then the retry`, () => {
    beforeEach(async () => {
      await raw.flushdb();
      clock = new ManualClock();
      store = await openRedisStore({ url, clock, layout, ...(layout === 'cluster' ? { queueShards: 4 } : {}) });
    });

    afterEach(async () => {
      await store.close();
    });

    test('crash after staging: the retry claims under the staged owner and queues the staged item once', async () => {
      const first = delivery(1);
      await stage(first);
      assert.equal(await raw.exists(claimKey), 0, 'no claim yet');
      assert.deepEqual(await store.queueStats('outbound').then((s) => s.ready), 0, 'a staged item is not queued');

      assert.deepEqual(await store.claimAndEnqueueDeliveries('outbound', CLAIM_TTL_SECS, [delivery(2)]), [true]);
      assert.equal(await raw.get(claimKey), first.claim.owner, 'the claim is the staged owner’s');
      assert.deepEqual(await queuedPayloads(), [{ n: 1, owner: first.claim.owner }], 'the staged item, once');
      assert.equal(await raw.zcard(shardKeys.pending), 0, 'nothing left staged');
      assert.deepEqual(
        await store.claimAndEnqueueDeliveries('outbound', CLAIM_TTL_SECS, [delivery(3)]),
        [false],
        'a later replay queues nothing',
      );
    });

    test('crash after the claim: the retry finds the claim its own and commits the one item', async () => {
      const first = delivery(1);
      await stage(first);
      assert.equal(await runScript('takeClaim', [claimKey], [first.claim.owner, CLAIM_TTL_SECS]), 1);

      assert.deepEqual(await store.claimAndEnqueueDeliveries('outbound', CLAIM_TTL_SECS, [delivery(2)]), [true]);
      assert.deepEqual(await queuedPayloads(), [{ n: 1, owner: first.claim.owner }]);
      assert.equal(await raw.get(claimKey), first.claim.owner);
    });

    test('a replay after the delivery was sent and acknowledged queues nothing and leaves nothing staged', async () => {
      const first = delivery(1);
      assert.deepEqual(await store.claimAndEnqueueDeliveries('outbound', CLAIM_TTL_SECS, [first]), [true]);
      const [leased] = await store.lease('outbound', LEASE);
      assert.ok(leased);
      assert.equal(await store.ack('outbound', leased.id, leased.leaseToken), true);

      assert.deepEqual(await store.claimAndEnqueueDeliveries('outbound', CLAIM_TTL_SECS, [delivery(2)]), [false]);
      assert.deepEqual(await store.queueStats('outbound').then((s) => [s.ready, s.leased]), [0, 0]);
      assert.equal(await raw.zcard(shardKeys.pending), 0);
      assert.equal(await raw.hlen(shardKeys.items), 0, 'the discarded item is gone, its id free');
    });

    test('crash after a refused claim: the staged item is discarded by the retry, or dropped once it expired', async () => {
      const holder = await store.claimRecipientDelivery(EVENT_ID, ALICE, CLAIM_TTL_SECS);
      assert.ok(holder);
      await stage(delivery(1));
      assert.deepEqual(await store.claimAndEnqueueDeliveries('outbound', CLAIM_TTL_SECS, [delivery(2)]), [false]);
      assert.equal(await raw.zcard(shardKeys.pending), 0, 'discarded by the retry');

      await stage(delivery(3));
      clock.advance(CLAIM_TTL_SECS * 1000 + 1);
      // Any later call on the shard drops it; an unrelated id in the same shard is enough.
      await store.claimAndEnqueueDeliveries('outbound', CLAIM_TTL_SECS, [delivery(4)]);
      assert.equal(await raw.zscore(shardKeys.pending, itemId), null, 'the expired staged item was dropped');
    });

    test('two concurrent calls of one delivery: one commits, the other answers false', async () => {
      const results = await Promise.all([
        store.claimAndEnqueueDeliveries('outbound', CLAIM_TTL_SECS, [delivery(1)]),
        store.claimAndEnqueueDeliveries('outbound', CLAIM_TTL_SECS, [delivery(2)]),
      ]);
      assert.deepEqual(results.flat().sort(), [false, true]);
      assert.equal((await queuedPayloads()).length, 1);
    });
  });
}

describe('a sharded queue on one Redis (cluster layout, 4 shards)', () => {
  beforeEach(async () => {
    await raw.flushdb();
    clock = new ManualClock();
    store = await openRedisStore({ url, clock, layout: 'cluster', queueShards: 4 });
  });

  afterEach(async () => {
    await store.close();
  });

  test('items spread over the shards, and a lease still hands them out oldest first', async () => {
    const now = clock.nowMs();
    const ids = Array.from({ length: 40 }, (_, i) => `job-${String(i).padStart(2, '0')}`);
    await store.enqueueMany(
      'inbound',
      ids.map((id, i) => ({ id, payload: i, availableAtMs: now - (ids.length - i) })),
    );
    const keys = createRedisKeys('cluster', { queueShards: 4 });
    const perShard = await Promise.all([0, 1, 2, 3].map((shard) => raw.zcard(keys.queueKeys('inbound', shard).lanes.normal.ready)));
    assert.ok(
      perShard.every((count) => count > 0),
      `every shard holds some: ${perShard.join(',')}`,
    );
    const leased: string[] = [];
    for (
      let batch = await store.lease('inbound', { ...LEASE, max: 7 });
      batch.length > 0;
      batch = await store.lease('inbound', { ...LEASE, max: 7 })
    )
      leased.push(...batch.map((item) => item.id));
    assert.deepEqual(leased, ids, 'oldest first across every shard, batch after batch');
  });

  test('an item whose attempts ran out does not cost a slot of the batch, whatever shard it is in', async () => {
    const now = clock.nowMs();
    const ids = Array.from({ length: 12 }, (_, i) => `spent-${i}`);
    await store.enqueueMany(
      'outbound',
      ids.map((id) => ({ id, payload: id, availableAtMs: now - 10 })),
    );
    for (const item of await store.lease('outbound', { ...LEASE, max: 12, maxAttempts: 1 }))
      await store.retry('outbound', item.id, item.leaseToken, now - 10, 'transient');
    await store.enqueue('outbound', { id: 'fresh', payload: 'fresh' });
    const batch = await store.lease('outbound', { ...LEASE, max: 1, maxAttempts: 1 });
    assert.deepEqual(
      batch.map((item) => item.id),
      ['fresh'],
    );
    const stats = await store.queueStats('outbound');
    assert.equal(stats.leased, 1);
    assert.ok(stats.dead >= 1, 'the spent items met on the way are dead');
    assert.equal(stats.dead + stats.ready, 12, 'the rest die when a lease reaches them');
  });
});
