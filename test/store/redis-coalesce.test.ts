/**
 * Redis-only behaviour of coalescing, which the adapter-neutral contract cannot see: seed 000's
 * exact `coalesce:*` keys and value formats, their TTLs, groups and dispositions written by
 * divine-push-service, reconciliation of entries only a damaged or foreign Redis holds, the
 * HyperLogLog's error, buckets taken from the Redis server clock, and the cluster layout's
 * slots and per-slot steps (a crash between two steps, shown by running the first step alone).
 *
 * Runs on database 4 of a private redis-server with no key prefix, flushed before each test.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import calculateKeySlot from 'cluster-key-slot';
import { coalesceGroupId, type CoalesceEvent, type CoalescePolicy } from '../../src/store/port-coalesce.ts';
import { openRedisStore, type RedisStore } from '../../src/store/redis/index.ts';
import { CLUSTER_COALESCE_OUTBOX_SHARDS, createRedisKeys, shardOf } from '../../src/store/redis/keys.ts';
import { RedisScripts } from '../../src/store/redis/scripts.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';

const DB = 4;
const SECOND_MS = 1000;
const OWNER = 'a1'.repeat(32);
const POST = 'f1'.repeat(32);
const TARGET = `e:${POST}`;
const START_SECS = 1_767_225_600; // 2026-01-01T00:00:00Z, a multiple of every window here
const POLICY: CoalescePolicy = {
  windowSecs: 7200,
  immediateLimit: 3,
  groupTtlSecs: 86_400,
  graceSecs: 3600,
  throttleCapacity: 20,
  throttleRefillSecs: 60,
  dailyWindowSecs: 86_400,
  dailyCap: 20,
};
const BUCKET = Math.floor(START_SECS / POLICY.windowSecs);
const GID = coalesceGroupId('like', OWNER, TARGET, BUCKET);

let server: PrivateRedisServer;
let url: string;
let raw: Redis;
let clock: ManualClock;
let store: RedisStore;

let counter = 0;
function hexId(prefix: string): string {
  counter += 1;
  return `${prefix}${counter.toString(16).padStart(64 - prefix.length, '0')}`;
}

function like(overrides: Partial<CoalesceEvent> = {}): CoalesceEvent {
  return {
    type: 'like',
    owner: OWNER,
    target: TARGET,
    actor: hexId('ac'),
    eventId: hexId('ee'),
    eventKind: 7,
    createdAt: START_SECS - 5,
    references: {
      referencedEventId: POST,
      referencedAddress: `34236:${'c1'.repeat(32)}:weird:d:tag`,
      referencedKind: '34236',
      referencedAuthorPubkey: 'c1'.repeat(32),
      referencedDTag: 'weird:d:tag',
    },
    ...overrides,
  };
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

beforeEach(async () => {
  await raw.flushdb();
  clock = new ManualClock(START_SECS * SECOND_MS);
  store = await openRedisStore({ url, clock });
});

afterEach(async () => {
  await store.close();
});

describe('seed 000 coalescing keys', () => {
  test('ingest writes exactly the seed keys, types and values', async () => {
    const events = [like(), like(), like(), like()];
    for (const e of events) await store.ingestCoalesceEvent(e, POLICY);
    const buffered = events[3] as CoalesceEvent;
    assert.deepEqual(
      (await raw.keys('*')).sort(),
      [
        'coalesce:due',
        ...events.map((e) => `coalesce:disp:${e.eventId}:${OWNER}`).sort(),
        `coalesce:emitted:${OWNER}`,
        `coalesce:g:${GID}`,
        `coalesce:hll:${GID}`,
        `coalesce:throttle:${OWNER}`,
      ].sort(),
    );
    assert.equal(GID, `like:${OWNER}:e:${POST}:${BUCKET}`);
    assert.deepEqual(await raw.hgetall(`coalesce:g:${GID}`), {
      due: String(START_SECS + POLICY.windowSecs),
      expires_at: String(START_SECS + POLICY.groupTtlSecs),
      owner: OWNER,
      type: 'like',
      target: TARGET,
      event_kind: '7',
      ref_event_id: POST,
      ref_address: `34236:${'c1'.repeat(32)}:weird:d:tag`,
      ref_kind: '34236',
      ref_author: 'c1'.repeat(32),
      ref_dtag: 'weird:d:tag',
      immediate: '3',
      pending: '1',
      first_actor: buffered.actor,
      first_event: buffered.eventId,
      last_at: String(START_SECS - 5),
    });
    assert.equal(await raw.type(`coalesce:hll:${GID}`), 'string', 'a HyperLogLog is a string');
    assert.equal(await raw.pfcount(`coalesce:hll:${GID}`), 1);
    assert.equal(await raw.get(`coalesce:disp:${events[0]?.eventId}:${OWNER}`), `i:${GID}`);
    assert.equal(await raw.get(`coalesce:disp:${buffered.eventId}:${OWNER}`), `b:${GID}`);
    assert.deepEqual(await raw.zrange('coalesce:due', 0, -1, 'WITHSCORES'), [GID, String(START_SECS + POLICY.windowSecs)]);
    assert.deepEqual(await raw.hgetall(`coalesce:throttle:${OWNER}`), { tokens: '17', ts: String(START_SECS * SECOND_MS) });
    assert.deepEqual(
      await raw.zrange(`coalesce:emitted:${OWNER}`, 0, -1, 'WITHSCORES'),
      events
        .slice(0, 3)
        .map((e) => e.eventId)
        .sort()
        .flatMap((id) => [id, String(START_SECS)]),
    );
  });

  test('a claim writes the lease token into the group and moves the gid from due to leases; a summary emission is the gid', async () => {
    for (let i = 0; i < 4; i++) await store.ingestCoalesceEvent(like(), POLICY);
    clock.advance(POLICY.windowSecs * SECOND_MS);
    const { claim } = await store.claimDueCoalesceGroup(300);
    assert.ok(claim);
    assert.equal(await raw.hget(`coalesce:g:${GID}`, 'lease'), claim.leaseToken);
    assert.equal(await raw.zcard('coalesce:due'), 0);
    assert.equal(await raw.zscore('coalesce:leases', GID), String(START_SECS + POLICY.windowSecs + 300));
    await store.consumeRecipientToken(OWNER, GID, POLICY);
    assert.equal(await raw.zscore(`coalesce:emitted:${OWNER}`, GID), String(START_SECS + POLICY.windowSecs));
    assert.equal(await store.completeCoalesceGroup(claim), 'completed');
    assert.equal(await raw.exists(`coalesce:g:${GID}`, `coalesce:hll:${GID}`), 0);
    assert.equal(await raw.zcard('coalesce:leases'), 0);
  });
});

describe('coalescing TTLs', () => {
  const dispositionTtl = POLICY.windowSecs + POLICY.graceSecs;
  const groupTtl = POLICY.groupTtlSecs + POLICY.graceSecs;

  test('a buffered group and its HyperLogLog live group_ttl + grace, longer than window + grace', async () => {
    for (let i = 0; i < 4; i++) await store.ingestCoalesceEvent(like(), POLICY);
    const ttl = await raw.ttl(`coalesce:g:${GID}`);
    assert.ok(ttl > groupTtl - 5 && ttl <= groupTtl, `group TTL ${ttl}`);
    assert.ok(ttl > dispositionTtl);
    const hllTtl = await raw.ttl(`coalesce:hll:${GID}`);
    assert.ok(hllTtl > groupTtl - 5 && hllTtl <= groupTtl, `hll TTL ${hllTtl}`);
  });

  test('an immediate-only group lives window + grace; an immediate never shortens a buffered group', async () => {
    const policy = { ...POLICY, throttleCapacity: 1, throttleRefillSecs: 60 };
    const otherTarget = `e:${'f2'.repeat(32)}`;
    const otherGid = coalesceGroupId('like', OWNER, otherTarget, BUCKET);
    assert.equal((await store.ingestCoalesceEvent(like({ target: otherTarget }), policy)).disposition, 'immediate');
    const otherTtl = await raw.ttl(`coalesce:g:${otherGid}`);
    assert.ok(otherTtl > 0 && otherTtl <= dispositionTtl + 2, `immediate-only TTL ${otherTtl}`);
    assert.equal((await store.ingestCoalesceEvent(like(), policy)).disposition, 'throttled', 'buffered first');
    clock.advance(60 * SECOND_MS);
    assert.equal((await store.ingestCoalesceEvent(like(), policy)).disposition, 'immediate', 'then an immediate on the same group');
    assert.ok((await raw.ttl(`coalesce:g:${GID}`)) > dispositionTtl, 'still the long TTL');
  });

  test('dispositions, the token bucket and the emission window carry their TTLs', async () => {
    const first = like();
    await store.ingestCoalesceEvent(first, POLICY);
    const dispTtl = await raw.ttl(`coalesce:disp:${first.eventId}:${OWNER}`);
    assert.ok(dispTtl > dispositionTtl - 5 && dispTtl <= dispositionTtl, `disposition TTL ${dispTtl}`);
    const throttleTtl = Math.max(POLICY.throttleCapacity * POLICY.throttleRefillSecs * 2, dispositionTtl);
    assert.ok((await raw.ttl(`coalesce:throttle:${OWNER}`)) > throttleTtl - 5);
    const emittedTtl = POLICY.dailyWindowSecs + POLICY.graceSecs;
    assert.ok((await raw.ttl(`coalesce:emitted:${OWNER}`)) > emittedTtl - 5);
  });
});

describe('foreign and damaged coalescing state', () => {
  test('an immediate-only group with a stale lease is deleted, not re-queued', async () => {
    await store.ingestCoalesceEvent(like(), POLICY);
    await raw.zadd('coalesce:leases', START_SECS - 1, GID);
    assert.deepEqual(await store.claimDueCoalesceGroup(300), { claim: null, expiredDropped: 0, danglingDropped: 0 });
    assert.equal(await raw.exists(`coalesce:g:${GID}`), 0);
    assert.equal(await raw.zcard('coalesce:due'), 0);
    assert.equal(await raw.zcard('coalesce:leases'), 0);
  });

  test('a stale lease of a group that is also due is not queued twice', async () => {
    for (let i = 0; i < 4; i++) await store.ingestCoalesceEvent(like(), POLICY);
    await raw.zadd('coalesce:leases', START_SECS - 1, GID);
    await store.claimDueCoalesceGroup(300);
    assert.deepEqual(
      await raw.zrange('coalesce:due', 0, -1, 'WITHSCORES'),
      [GID, String(START_SECS + POLICY.windowSecs)],
      'kept at its own deadline',
    );
  });

  test('a due member without a group is dropped and counted; a backdated head reports its age', async () => {
    await raw.zadd('coalesce:due', START_SECS - 100, 'like:nobody:e:x:1');
    assert.equal(await store.oldestCoalesceDueAgeSecs(), 100);
    assert.deepEqual(await store.claimDueCoalesceGroup(300), { claim: null, expiredDropped: 0, danglingDropped: 1 });
    assert.equal(await raw.zcard('coalesce:due'), 0);
  });

  test("divine's dispositions are replayed, and one that is not a disposition is decided afresh", async () => {
    const fromDivine = like();
    await raw.set(`coalesce:disp:${fromDivine.eventId}:${OWNER}`, 'b:like:divine-gid');
    assert.deepEqual(await store.ingestCoalesceEvent(fromDivine, POLICY), {
      disposition: 'buffered',
      groupId: 'like:divine-gid',
      replayed: true,
    });
    const garbage = like();
    await raw.set(`coalesce:disp:${garbage.eventId}:${OWNER}`, 'not a disposition');
    assert.deepEqual(await store.ingestCoalesceEvent(garbage, POLICY), { disposition: 'immediate', groupId: GID, replayed: false });
    assert.equal(await raw.get(`coalesce:disp:${garbage.eventId}:${OWNER}`), `i:${GID}`);
  });

  test('a group written by divine reads with every field, and a damaged HyperLogLog reads as no count', async () => {
    await raw.hset(`coalesce:g:${GID}`, {
      due: '100',
      expires_at: '0',
      owner: OWNER,
      type: 'like',
      target: TARGET,
      pending: '2',
      immediate: '3',
      first_actor: 'ab'.repeat(32),
      first_event: 'cd'.repeat(32),
      last_at: '90',
    });
    await raw.pfadd(`coalesce:hll:${GID}`, 'x', 'y');
    const group = await store.readCoalesceGroup(GID);
    assert.equal(group?.distinctActors, 2);
    assert.equal(group.expiresAtSecs, 0);
    assert.equal(group.eventKind, null);
    assert.deepEqual(group.references, {});
    await raw.del(`coalesce:hll:${GID}`);
    await raw.lpush(`coalesce:hll:${GID}`, 'wrong type');
    assert.equal((await store.readCoalesceGroup(GID))?.distinctActors, 0);
  });
});

describe('coalescing on the Redis server clock', () => {
  test('the HyperLogLog counts 5,000 distinct actors within 2 %', async () => {
    const policy = { ...POLICY, immediateLimit: 1 };
    const actors = Array.from({ length: 5000 }, () => hexId('ac'));
    await Promise.all(actors.map((actor) => store.ingestCoalesceEvent(like({ actor }), policy)));
    const group = await store.readCoalesceGroup(GID);
    assert.equal(group?.pending, 4999);
    const error = Math.abs(group.distinctActors - 4999) / 4999;
    assert.ok(error < 0.02, `HLL count ${group.distinctActors} for 4999`);
  });

  test('without an injected clock the bucket comes from Redis TIME', async () => {
    const live = await openRedisStore({ url });
    try {
      const [seconds] = await raw.time();
      const result = await live.ingestCoalesceEvent(like(), POLICY);
      const bucket = Number(result.groupId.split(':').at(-1));
      const expected = Math.floor(Number(seconds) / POLICY.windowSecs);
      assert.ok(bucket === expected || bucket === expected + 1, `bucket ${bucket} from server time ${seconds}`);
      assert.equal(Number(await raw.hget(`coalesce:g:${result.groupId}`, 'due')), (bucket + 1) * POLICY.windowSecs);
    } finally {
      await live.close();
    }
  });
});

describe('the cluster layout: slots and per-slot steps', () => {
  const keys = createRedisKeys('cluster');
  const shard = shardOf(GID, CLUSTER_COALESCE_OUTBOX_SHARDS);
  const due = `coalesce:due:{c:${shard}}`;
  const leases = `coalesce:leases:{c:${shard}}`;
  const groupKey = `coalesce:g:like:{u:${OWNER}}:e:${POST}:${BUCKET}`;
  const hllKey = `coalesce:hll:like:{u:${OWNER}}:e:${POST}:${BUCKET}`;
  let clustered: RedisStore;
  let scripts: RedisScripts;

  beforeEach(async () => {
    clustered = await openRedisStore({ url, clock, layout: 'cluster' });
    scripts = new RedisScripts(raw);
  });

  afterEach(async () => {
    await clustered.close();
  });

  async function bufferOne(): Promise<CoalesceEvent> {
    const events = [like(), like(), like(), like()];
    for (const e of events) await clustered.ingestCoalesceEvent(e, POLICY);
    return events[3] as CoalesceEvent;
  }

  test("a recipient's coalescing keys share the recipient's slot; the outbox is the gid's shard", async () => {
    const buffered = await bufferOne();
    assert.equal(keys.coalesceGroupKey(GID), groupKey);
    assert.equal(keys.coalesceHllKey(GID), hllKey);
    const recipientKeys = (await raw.keys('coalesce:*')).filter((key) => !/^coalesce:(due|leases):/.test(key));
    assert.equal(recipientKeys.length, 8, `group, actors, 4 dispositions, bucket, emissions: ${recipientKeys.join(' ')}`);
    assert.ok(recipientKeys.includes(`coalesce:disp:${buffered.eventId}:{u:${OWNER}}`));
    assert.ok(recipientKeys.includes(`coalesce:throttle:{u:${OWNER}}`) && recipientKeys.includes(`coalesce:emitted:{u:${OWNER}}`));
    const slots = new Set(recipientKeys.map((key) => calculateKeySlot(key)));
    assert.equal(slots.size, 1, `one slot for ${recipientKeys.join(' ')}`);
    assert.deepEqual(await raw.zrange(due, 0, -1, 'WITHSCORES'), [GID, String(START_SECS + POLICY.windowSecs)], 'queued in its shard');
    assert.equal(calculateKeySlot(due), calculateKeySlot(leases), 'due and leases of a shard share a slot');
  });

  test('an ingest that stopped after its first step is completed by the replay, without counting twice', async () => {
    const buffered = await bufferOne();
    await raw.zrem(due, GID); // as if the process died before step 2
    assert.deepEqual(await clustered.ingestCoalesceEvent(buffered, POLICY), { disposition: 'buffered', groupId: GID, replayed: true });
    assert.deepEqual(await raw.zrange(due, 0, -1, 'WITHSCORES'), [GID, String(START_SECS + POLICY.windowSecs)], 'queued again');
    assert.equal((await clustered.readCoalesceGroup(GID))?.pending, 1, 'not counted twice');
    assert.deepEqual(await clustered.ingestCoalesceEvent(buffered, POLICY), { disposition: 'buffered', groupId: GID, replayed: true });
    assert.equal(await raw.zcard(due), 1, 'a second replay changes nothing');
  });

  test('a replay does not queue a group a flush holds', async () => {
    const buffered = await bufferOne();
    clock.advance(POLICY.windowSecs * SECOND_MS);
    const { claim } = await clustered.claimDueCoalesceGroup(300);
    assert.equal(claim?.groupId, GID);
    await clustered.ingestCoalesceEvent(buffered, POLICY);
    assert.equal(await raw.zcard(due), 0, 'held in leases only');
    assert.equal((await clustered.claimDueCoalesceGroup(300)).claim, null, 'not claimed twice');
  });

  test('a claim that stopped after taking the due entry leaves a lease that expires into the next claim', async () => {
    await bufferOne();
    const now = START_SECS + POLICY.windowSecs;
    clock.advance(POLICY.windowSecs * SECOND_MS);
    assert.equal(await scripts.run('coalesceTakeDue', [due, leases], [now, now + 300]), GID, 'step C1 alone');
    assert.equal((await clustered.claimDueCoalesceGroup(300)).claim, null, 'held until the lease expires');
    clock.advance(300 * SECOND_MS);
    const recovered = await clustered.claimDueCoalesceGroup(300);
    assert.deepEqual({ ...recovered, claim: recovered.claim?.groupId }, { claim: GID, expiredDropped: 0, danglingDropped: 0 });
    assert.equal((await clustered.readCoalesceGroup(GID))?.leaseToken, recovered.claim?.leaseToken);
    assert.equal((await clustered.readCoalesceGroup(GID))?.pending, 1);
  });

  test('a reconciliation that stopped after taking the expired leases is done again after its own lease', async () => {
    await bufferOne();
    clock.advance(POLICY.windowSecs * SECOND_MS);
    const crashed = await clustered.claimDueCoalesceGroup(300);
    assert.ok(crashed.claim, 'claimed');
    clock.advance(300 * SECOND_MS);
    const now = START_SECS + POLICY.windowSecs + 300;
    assert.deepEqual(await scripts.run('coalesceRecoverLeases', [leases], [now, now + 300, 64]), [GID], 'step R1 alone');
    assert.equal((await clustered.claimDueCoalesceGroup(300)).claim, null, 'nobody reconciles it meanwhile');
    assert.equal(await clustered.completeCoalesceGroup(crashed.claim), 'completed', 'the late flush may still finish it');
    clock.advance(300 * SECOND_MS);
    assert.deepEqual(await clustered.claimDueCoalesceGroup(300), { claim: null, expiredDropped: 0, danglingDropped: 0 });
    assert.equal(await raw.zcard(leases), 0, 'the lease entry is gone');
    assert.equal(await raw.zcard(due), 0, 'and nothing is due');
  });

  test('a completion that stopped after its first step is finished by reconciliation: dropped, or requeued', async () => {
    await bufferOne();
    clock.advance(POLICY.windowSecs * SECOND_MS);
    const first = await clustered.claimDueCoalesceGroup(300);
    assert.ok(first.claim);
    const now = START_SECS + POLICY.windowSecs;
    assert.deepEqual(
      await scripts.run('coalesceComplete', [groupKey, hllKey], [first.claim.leaseToken, now, 60]),
      [2, now + 60],
      'requeue, step 1 alone',
    );
    clock.advance(300 * SECOND_MS);
    const second = await clustered.claimDueCoalesceGroup(300);
    assert.equal(second.claim?.groupId, GID, 'the requeued group comes back when the lease expires');
    assert.equal((await clustered.readCoalesceGroup(GID))?.pending, 1);
    assert.deepEqual(
      await scripts.run('coalesceComplete', [groupKey, hllKey], [second.claim.leaseToken, now + 300, '']),
      [1, 0],
      'complete, step 1 alone',
    );
    clock.advance(300 * SECOND_MS);
    assert.deepEqual(await clustered.claimDueCoalesceGroup(300), { claim: null, expiredDropped: 0, danglingDropped: 0 });
    assert.equal(await raw.zcard(leases), 0, 'the completed group leaves the outbox');
    assert.equal(await raw.exists(groupKey, hllKey), 0);
  });

  test('groups spread over the shards are claimed in deadline order', async () => {
    const policy = { ...POLICY, immediateLimit: 0 };
    const targets = Array.from({ length: 12 }, (_, i) => `e:${i.toString(16).padStart(64, '0')}`);
    for (const target of targets) {
      await clustered.ingestCoalesceEvent(like({ target }), policy);
      clock.advance(POLICY.windowSecs * SECOND_MS);
    }
    const shards = await raw.keys('coalesce:due:*');
    assert.ok(shards.length > 1, `spread over ${shards.length} shards`);
    const claimed: string[] = [];
    for (;;) {
      const { claim } = await clustered.claimDueCoalesceGroup(300);
      if (!claim) break;
      claimed.push(claim.groupId);
    }
    assert.deepEqual(
      claimed,
      targets.map((target, i) => coalesceGroupId('like', OWNER, target, BUCKET + i)),
    );
  });

  test('claims racing from two stores take every due group exactly once', async () => {
    const other = await openRedisStore({ url, clock, layout: 'cluster' });
    try {
      const policy = { ...POLICY, immediateLimit: 0 };
      const targets = Array.from({ length: 20 }, (_, i) => `e:${(i + 1).toString(16).padStart(64, '0')}`);
      for (const target of targets) await clustered.ingestCoalesceEvent(like({ target }), policy);
      clock.advance(POLICY.windowSecs * SECOND_MS);
      const drain = async (store: RedisStore): Promise<string[]> => {
        const claimed: string[] = [];
        for (;;) {
          const { claim } = await store.claimDueCoalesceGroup(300);
          if (!claim) return claimed;
          claimed.push(claim.groupId);
        }
      };
      const [mine, theirs] = await Promise.all([drain(clustered), drain(other)]);
      const all = [...mine, ...theirs].sort();
      assert.deepEqual(all, targets.map((target) => coalesceGroupId('like', OWNER, target, BUCKET)).sort(), 'each group once');
    } finally {
      await other.close();
    }
  });
});
