import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LeaseOptions, LeasedItem, QueueName, StorePort } from '../../../src/store/port.ts';
import { SECOND_MS, totals, type ContractContext } from './context.ts';

/** Enqueue, lease, ack, retry and lease recovery of one queue; dead letters are in dead-letters.ts. */

export const LEASE_MS = 30 * SECOND_MS;
export const LEASE: LeaseOptions = { max: 10, leaseMs: LEASE_MS, maxAttempts: 5 };
const WRONG_TOKEN = 'not-the-lease-token';

/** Payloads are arbitrary JSON and must come back exactly as given. */
export const RICH_PAYLOAD = {
  event: {
    id: 'f0'.repeat(32),
    kind: 1,
    tags: [
      ['p', 'ab'.repeat(32)],
      ['e', 'cd'.repeat(32), 'wss://r.example', 'reply'],
    ],
  },
  text: 'héllo 👋 世界 — "quoted" \\ back\nslash',
  numbers: [0, -1, 1.5, 1e21, Number.MAX_SAFE_INTEGER],
  flags: { on: true, off: false, none: null },
  nested: [[[]], {}, [{ deep: ['x'] }]],
};

export async function leaseOne<T = unknown>(store: StorePort, queue: QueueName, options: LeaseOptions = LEASE): Promise<LeasedItem<T>> {
  const items = await store.lease<T>(queue, { ...options, max: 1 });
  assert.equal(items.length, 1, 'expected one leasable item');
  const [item] = items;
  assert.ok(item);
  return item;
}

export function queueContract(ctx: ContractContext, queue: QueueName): void {
  describe(`queue '${queue}': how long the oldest due item has waited`, () => {
    test('the earliest due item of any lane, not later ones, not live leases, not dead letters; an expired lease from its expiry', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      const now = clock.nowMs();
      assert.equal(await store.oldestDueAtMs(queue), null, 'an empty queue');
      await store.enqueue(queue, { id: 'later', payload: 1, availableAtMs: now + 60 * SECOND_MS });
      assert.equal(await store.oldestDueAtMs(queue), null, 'scheduled for later is not waiting');
      await store.enqueue(queue, { id: 'normal', payload: 2, availableAtMs: now - 20 * SECOND_MS });
      await store.enqueue(queue, { id: 'low', payload: 3, lane: 'low', availableAtMs: now - 30 * SECOND_MS });
      await store.enqueue(queue, { id: 'critical', payload: 4, lane: 'critical', availableAtMs: now - 10 * SECOND_MS });
      assert.equal(await store.oldestDueAtMs(queue), now - 30 * SECOND_MS, 'the low lane’s item waited longest');
      const leased = await store.lease(queue, { ...LEASE, max: 3 });
      assert.equal(leased.length, 3);
      assert.equal(await store.oldestDueAtMs(queue), null, 'all due items are under live leases');
      const low = leased.find((item) => item.id === 'low');
      assert.ok(low);
      assert.equal(await store.deadLetter(queue, low.id, low.leaseToken, 'poison'), true);
      clock.advance(LEASE_MS + SECOND_MS);
      // 'later' (due 60 s after the start) is still not due.
      assert.equal(
        await store.oldestDueAtMs(queue),
        now + LEASE_MS,
        'expired leases wait from their expiry; the dead letter does not count',
      );
    });
  });

  describe(`queue '${queue}': enqueue and lease`, () => {
    test('enqueue returns true, then false for the same id', async () => {
      const store = ctx.store();
      assert.equal(await store.enqueue(queue, { id: 'job-1', payload: { n: 1 } }), true);
      assert.equal(await store.enqueue(queue, { id: 'job-1', payload: { n: 2 } }), false);
      assert.deepEqual(totals(await store.queueStats(queue)), { ready: 1, leased: 0, dead: 0 });
      assert.deepEqual((await leaseOne(store, queue)).payload, { n: 1 }, 'the duplicate did not overwrite the payload');
    });

    test('enqueue of an id that is leased or dead returns false', async () => {
      const store = ctx.store();
      await store.enqueue(queue, { id: 'leased', payload: 1 });
      await store.enqueue(queue, { id: 'dead', payload: 2 });
      const [first, second] = await store.lease(queue, LEASE);
      assert.ok(first && second);
      const dead = first.id === 'dead' ? first : second;
      assert.equal(await store.deadLetter(queue, dead.id, dead.leaseToken, 'poison'), true);
      assert.equal(await store.enqueue(queue, { id: 'leased', payload: 3 }), false, 'while leased');
      assert.equal(await store.enqueue(queue, { id: 'dead', payload: 4 }), false, 'while dead');
      assert.deepEqual(totals(await store.queueStats(queue)), { ready: 0, leased: 1, dead: 1 });
    });

    test('lease hands out available items oldest availability first, up to max', async () => {
      const store = ctx.store();
      const now = ctx.clock().nowMs();
      await store.enqueue(queue, { id: 'c', payload: 'c', availableAtMs: now - 1 * SECOND_MS });
      await store.enqueue(queue, { id: 'a', payload: 'a', availableAtMs: now - 3 * SECOND_MS });
      await store.enqueue(queue, { id: 'd', payload: 'd' });
      await store.enqueue(queue, { id: 'b', payload: 'b', availableAtMs: now - 2 * SECOND_MS });

      const batch = await store.lease<string>(queue, { ...LEASE, max: 3 });
      assert.deepEqual(
        batch.map((item) => item.id),
        ['a', 'b', 'c'],
      );
      for (const item of batch) {
        assert.equal(item.payload, item.id);
        assert.equal(item.attempts, 1);
        assert.equal(item.lastError, null);
        assert.equal(item.leaseExpiresAtMs, now + LEASE_MS);
        assert.equal(typeof item.leaseToken, 'string');
        assert.ok(item.leaseToken.length > 0);
      }
      assert.equal(new Set(batch.map((item) => item.leaseToken)).size, 3, 'every lease has its own token');

      assert.deepEqual(
        (await store.lease(queue, LEASE)).map((item) => item.id),
        ['d'],
      );
      assert.deepEqual(await store.lease(queue, LEASE), [], 'everything is leased');
      assert.deepEqual(totals(await store.queueStats(queue)), { ready: 0, leased: 4, dead: 0 });
    });

    test('an item available in the future is not leased until the clock reaches it', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      await store.enqueue(queue, { id: 'later', payload: null, availableAtMs: clock.nowMs() + 60 * SECOND_MS });
      assert.deepEqual(await store.lease(queue, LEASE), []);
      assert.deepEqual(totals(await store.queueStats(queue)), { ready: 1, leased: 0, dead: 0 }, 'a scheduled item counts as ready');
      clock.advance(60 * SECOND_MS - 1);
      assert.deepEqual(await store.lease(queue, LEASE), []);
      clock.advance(1);
      assert.equal((await leaseOne(store, queue)).id, 'later');
    });

    test('payloads round-trip exactly', async () => {
      const store = ctx.store();
      const payloads: unknown[] = [RICH_PAYLOAD, 'just a string ✓', 42, null, [1, 'two', { three: [3] }], true];
      const now = ctx.clock().nowMs();
      for (const [index, payload] of payloads.entries()) {
        // Distinct availability times make the lease order, and so the comparison, deterministic.
        await store.enqueue(queue, { id: `p${index}`, payload, availableAtMs: now - (payloads.length - index) * SECOND_MS });
      }
      const leased = await store.lease(queue, LEASE);
      assert.deepEqual(
        leased.map((item) => item.payload),
        payloads,
      );
    });

    test('ack removes the item and frees its id', async () => {
      const store = ctx.store();
      await store.enqueue(queue, { id: 'job', payload: { n: 1 } });
      const item = await leaseOne(store, queue);
      assert.equal(await store.ack(queue, item.id, item.leaseToken), true);
      assert.deepEqual(totals(await store.queueStats(queue)), { ready: 0, leased: 0, dead: 0 });
      assert.equal(await store.ack(queue, item.id, item.leaseToken), false, 'a second ack finds nothing');
      assert.deepEqual(await store.lease(queue, LEASE), []);
      assert.equal(await store.enqueue(queue, { id: 'job', payload: { n: 2 } }), true, 'the id may be enqueued again');
      assert.deepEqual((await leaseOne(store, queue)).payload, { n: 2 });
    });

    test('ack, retry and deadLetter with a wrong lease token change nothing', async () => {
      const store = ctx.store();
      const now = ctx.clock().nowMs();
      await store.enqueue(queue, { id: 'job', payload: RICH_PAYLOAD });
      const item = await leaseOne(store, queue);
      assert.equal(await store.ack(queue, item.id, WRONG_TOKEN), false);
      assert.equal(await store.retry(queue, item.id, WRONG_TOKEN, now, 'boom'), false);
      assert.equal(await store.deadLetter(queue, item.id, WRONG_TOKEN, 'poison'), false);
      assert.deepEqual(totals(await store.queueStats(queue)), { ready: 0, leased: 1, dead: 0 });
      assert.deepEqual(await store.listDead(queue, 10), []);
      assert.deepEqual(await store.lease(queue, LEASE), [], 'still under its lease');
      assert.equal(await store.ack(queue, item.id, item.leaseToken), true, 'the real token still works');
    });

    test('ack, retry and deadLetter of an unknown id return false', async () => {
      const store = ctx.store();
      assert.equal(await store.ack(queue, 'missing', WRONG_TOKEN), false);
      assert.equal(await store.retry(queue, 'missing', WRONG_TOKEN, ctx.clock().nowMs(), 'boom'), false);
      assert.equal(await store.deadLetter(queue, 'missing', WRONG_TOKEN, 'poison'), false);
      assert.deepEqual(totals(await store.queueStats(queue)), { ready: 0, leased: 0, dead: 0 });
    });

    test('an expired lease returns the item under a new token; the old token is void', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      await store.enqueue(queue, { id: 'job', payload: { n: 1 } });
      const first = await leaseOne(store, queue);
      clock.advance(LEASE_MS - SECOND_MS);
      assert.deepEqual(await store.lease(queue, LEASE), [], 'not before the lease expires');
      clock.advance(2 * SECOND_MS);

      const second = await leaseOne(store, queue);
      assert.equal(second.id, 'job');
      assert.equal(second.attempts, 2);
      assert.notEqual(second.leaseToken, first.leaseToken);
      assert.equal(second.leaseExpiresAtMs, clock.nowMs() + LEASE_MS);
      assert.deepEqual(second.payload, { n: 1 });
      assert.equal(await store.ack(queue, 'job', first.leaseToken), false, 'the old token no longer acks');
      assert.equal(await store.ack(queue, 'job', second.leaseToken), true);
    });

    test('retry returns the item at availableAtMs with the error recorded and attempts kept', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      await store.enqueue(queue, { id: 'job', payload: { n: 1 } });
      const first = await leaseOne(store, queue);
      const retryAt = clock.nowMs() + 10 * SECOND_MS;
      assert.equal(await store.retry(queue, 'job', first.leaseToken, retryAt, 'provider said 503'), true);
      assert.deepEqual(totals(await store.queueStats(queue)), { ready: 1, leased: 0, dead: 0 });
      assert.equal(await store.ack(queue, 'job', first.leaseToken), false, 'the retried lease is over');
      assert.deepEqual(await store.lease(queue, LEASE), [], 'not before availableAtMs');

      clock.set(retryAt);
      const second = await leaseOne(store, queue);
      assert.equal(second.id, 'job');
      assert.equal(second.attempts, 2);
      assert.equal(second.lastError, 'provider said 503');
      assert.deepEqual(second.payload, { n: 1 });
    });

    test('retry at now makes the item leasable at once', async () => {
      const store = ctx.store();
      await store.enqueue(queue, { id: 'job', payload: 1 });
      const first = await leaseOne(store, queue);
      assert.equal(await store.retry(queue, 'job', first.leaseToken, ctx.clock().nowMs(), 'transient'), true);
      assert.equal((await leaseOne(store, queue)).attempts, 2);
    });

    test('enqueueMany adds each item as enqueue would: known and repeated ids once, one result per item', async () => {
      const store = ctx.store();
      const now = ctx.clock().nowMs();
      await store.enqueue(queue, { id: 'known', payload: 'first' });
      const results = await store.enqueueMany<unknown>(queue, [
        { id: 'a', payload: RICH_PAYLOAD },
        { id: 'known', payload: 'second' },
        { id: 'later', payload: 'later', availableAtMs: now + 5 * SECOND_MS },
        { id: 'a', payload: 'again' },
      ]);
      assert.deepEqual(results, [true, false, true, false]);
      assert.deepEqual(await store.enqueueMany(queue, []), []);
      const leased = await store.lease(queue, LEASE);
      assert.deepEqual(
        leased.map((item) => [item.id, item.payload]).sort(),
        [
          ['a', RICH_PAYLOAD],
          ['known', 'first'],
        ].sort(),
        'payloads exact, the known id untouched, the later item not yet due',
      );
      ctx.clock().set(now + 5 * SECOND_MS);
      assert.equal((await leaseOne(store, queue)).id, 'later');
    });

    test('settleLeased settles many items in one call, each as its single-item call would', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      for (const id of ['acked', 'retried', 'killed', 'stale']) await store.enqueue(queue, { id, payload: { id } });
      const leased = await store.lease<{ id: string }>(queue, LEASE);
      const byId = new Map(leased.map((item) => [item.id, item]));
      const token = (id: string): string => byId.get(id)?.leaseToken ?? assert.fail(`${id} was not leased`);
      const retryAt = clock.nowMs() + 5 * SECOND_MS;
      const results = await store.settleLeased(queue, [
        { id: 'acked', leaseToken: token('acked'), outcome: 'ack' },
        { id: 'stale', leaseToken: WRONG_TOKEN, outcome: 'ack' },
        { id: 'retried', leaseToken: token('retried'), outcome: 'retry', availableAtMs: retryAt, error: 'provider said 503' },
        { id: 'missing', leaseToken: WRONG_TOKEN, outcome: 'dead', reason: 'never existed' },
        { id: 'killed', leaseToken: token('killed'), outcome: 'dead', reason: 'poison' },
      ]);
      assert.deepEqual(results, [true, false, true, false, true], 'one result per entry, in order; stale entries do not stop the rest');
      assert.deepEqual(totals(await store.queueStats(queue)), { ready: 1, leased: 1, dead: 1 });
      assert.deepEqual(
        (await store.listDead(queue, 10)).map((d) => [d.id, d.reason]),
        [['killed', 'poison']],
      );
      assert.equal(await store.ack(queue, 'stale', token('stale')), true, 'the stale entry left the real lease alone');
      assert.deepEqual(await store.lease(queue, LEASE), [], 'the retried item waits for availableAtMs');
      clock.set(retryAt);
      const again = await leaseOne<{ id: string }>(store, queue);
      assert.equal(again.id, 'retried');
      assert.equal(again.lastError, 'provider said 503');
      assert.equal(again.attempts, 2);
      assert.equal(await store.enqueue(queue, { id: 'acked', payload: 'again' }), true, 'the acked id is free again');
    });

    test('settleLeased of nothing is a no-op, and one item is settled once', async () => {
      const store = ctx.store();
      assert.deepEqual(await store.settleLeased(queue, []), []);
      await store.enqueue(queue, { id: 'job', payload: 1 });
      const item = await leaseOne(store, queue);
      const ack = { id: item.id, leaseToken: item.leaseToken, outcome: 'ack' as const };
      assert.deepEqual(await store.settleLeased(queue, [ack, ack]), [true, false], 'the same entry twice settles once');
    });

    test("'inbound' and 'outbound' are independent queues", async () => {
      const store = ctx.store();
      const other: QueueName = queue === 'inbound' ? 'outbound' : 'inbound';
      assert.equal(await store.enqueue(queue, { id: 'same-id', payload: 'here' }), true);
      assert.equal(await store.enqueue(other, { id: 'same-id', payload: 'there' }), true, 'the same id in the other queue');
      const item = await leaseOne<string>(store, queue);
      assert.equal(item.payload, 'here');
      assert.deepEqual(totals(await store.queueStats(other)), { ready: 1, leased: 0, dead: 0 });
      assert.equal(await store.ack(other, 'same-id', item.leaseToken), false, 'a lease token does not cross queues');
      assert.equal(await store.deadLetter(queue, 'same-id', item.leaseToken, 'poison'), true);
      assert.deepEqual(totals(await store.queueStats(other)), { ready: 1, leased: 0, dead: 0 });
      assert.deepEqual(await store.listDead(other, 10), []);
      assert.equal((await leaseOne<string>(store, other)).payload, 'there');
    });
  });

  describe(`queue '${queue}': enqueued leased`, () => {
    test('new ids come back leased (attempt 1, distinct tokens, payload exact); known and repeated ids are null', async () => {
      const store = ctx.store();
      assert.equal(await store.enqueue(queue, { id: 'known', payload: {} }), true);
      const now = ctx.clock().nowMs();
      const leased = await store.enqueueLeased<unknown>(
        queue,
        [
          { id: 'a', payload: RICH_PAYLOAD },
          { id: 'known', payload: {} },
          { id: 'b', payload: { n: 2 }, lane: 'critical' },
          { id: 'a', payload: { again: true } },
        ],
        LEASE_MS,
      );
      assert.deepEqual(
        leased.map((item) => item && { id: item.id, attempts: item.attempts, expires: item.leaseExpiresAtMs, lastError: item.lastError }),
        [
          { id: 'a', attempts: 1, expires: now + LEASE_MS, lastError: null },
          null,
          { id: 'b', attempts: 1, expires: now + LEASE_MS, lastError: null },
          null,
        ],
      );
      const [a, , b] = leased;
      assert.ok(a, 'a leased');
      assert.ok(b, 'b leased');
      assert.deepEqual(a.payload, RICH_PAYLOAD);
      assert.notEqual(a.leaseToken, b.leaseToken);
      assert.deepEqual(await store.enqueueLeased(queue, [], LEASE_MS), []);
      const stats = totals(await store.queueStats(queue));
      assert.deepEqual({ ready: stats.ready, leased: stats.leased }, { ready: 1, leased: 2 }, 'known waits; a and b are leased');
    });

    test('an item enqueued leased is not handed out until its lease expires, then comes back as attempt 2', async () => {
      const store = ctx.store();
      const [item] = await store.enqueueLeased(queue, [{ id: 'held', payload: { n: 1 } }], LEASE_MS);
      assert.ok(item);
      assert.deepEqual(await store.lease(queue, LEASE), [], 'not handed out while leased');
      ctx.clock().advance(LEASE_MS + SECOND_MS);
      const again = await leaseOne<{ n: number }>(store, queue);
      assert.equal(again.id, 'held');
      assert.equal(again.attempts, 2, 'the first attempt was counted by enqueueLeased');
      assert.deepEqual(again.payload, { n: 1 });
      assert.equal(await store.ack(queue, item.id, item.leaseToken), false, 'the expired first lease no longer owns it');
      assert.equal(await store.ack(queue, again.id, again.leaseToken), true);
    });

    test('the enqueuer settles with its token: ack removes it, retry puts it back for later', async () => {
      const store = ctx.store();
      const [done, later] = await store.enqueueLeased(
        queue,
        [
          { id: 'done', payload: {} },
          { id: 'later', payload: {} },
        ],
        LEASE_MS,
      );
      assert.ok(done && later);
      assert.equal(await store.ack(queue, done.id, WRONG_TOKEN), false);
      assert.deepEqual(
        await store.settleLeased(queue, [
          { id: done.id, leaseToken: done.leaseToken, outcome: 'ack' },
          { id: later.id, leaseToken: later.leaseToken, outcome: 'retry', availableAtMs: ctx.clock().nowMs() + SECOND_MS, error: '503' },
        ]),
        [true, true],
      );
      assert.equal(await store.enqueue(queue, { id: 'done', payload: {} }), true, 'an acked id is gone, so it can be queued again');
      ctx.clock().advance(2 * SECOND_MS);
      const items = await store.lease(queue, LEASE);
      const retried = items.find((i) => i.id === 'later');
      assert.equal(retried?.attempts, 2);
      assert.equal(retried.lastError, '503');
    });
  });
}
