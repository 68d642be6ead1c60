import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { QueueName } from '../../../src/store/port.ts';
import { SECOND_MS, totals, type ContractContext } from './context.ts';
import { LEASE, LEASE_MS, RICH_PAYLOAD, leaseOne } from './queues.ts';

/** Attempt limits, the dead-letter list and queue counts of one queue. */

const MAX_ATTEMPTS_REASON = 'max attempts exceeded';

export function deadLetterContract(ctx: ContractContext, queue: QueueName): void {
  describe(`queue '${queue}': attempts, dead letters and stats`, () => {
    test('after maxAttempts leases the next lease moves the item to dead instead of returning it', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      const options = { ...LEASE, maxAttempts: 2 };
      await store.enqueue(queue, { id: 'job', payload: RICH_PAYLOAD });
      assert.equal((await leaseOne(store, queue, options)).attempts, 1);
      clock.advance(LEASE_MS + SECOND_MS);
      assert.equal((await leaseOne(store, queue, options)).attempts, 2);
      clock.advance(LEASE_MS + SECOND_MS);

      assert.deepEqual(await store.lease(queue, options), []);
      assert.deepEqual(totals(await store.queueStats(queue)), { ready: 0, leased: 0, dead: 1 });
      assert.deepEqual(await store.listDead(queue, 10), [
        { id: 'job', payload: RICH_PAYLOAD, attempts: 2, reason: MAX_ATTEMPTS_REASON, deadAtMs: clock.nowMs() },
      ]);
    });

    test('attempts spent through retry count toward maxAttempts', async () => {
      const store = ctx.store();
      const options = { ...LEASE, maxAttempts: 1 };
      await store.enqueue(queue, { id: 'job', payload: 1 });
      const item = await leaseOne(store, queue, options);
      await store.retry(queue, 'job', item.leaseToken, ctx.clock().nowMs(), 'transient');
      assert.deepEqual(await store.lease(queue, options), []);
      const [dead] = await store.listDead(queue, 10);
      assert.equal(dead?.reason, MAX_ATTEMPTS_REASON);
      assert.equal(dead.attempts, 1);
    });

    test('an exhausted item does not take the place of a leasable one', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      const options = { ...LEASE, maxAttempts: 1 };
      await store.enqueue(queue, { id: 'exhausted', payload: 1, availableAtMs: clock.nowMs() - SECOND_MS });
      const item = await leaseOne(store, queue, options);
      await store.retry(queue, 'exhausted', item.leaseToken, clock.nowMs() - SECOND_MS, 'transient');
      await store.enqueue(queue, { id: 'fresh', payload: 2 });

      const batch = await store.lease(queue, { ...options, max: 1 });
      assert.deepEqual(
        batch.map((leased) => leased.id),
        ['fresh'],
      );
      assert.deepEqual(totals(await store.queueStats(queue)), { ready: 0, leased: 1, dead: 1 });
    });

    test('deadLetter moves a leased item to the dead list with its reason', async () => {
      const store = ctx.store();
      await store.enqueue(queue, { id: 'job', payload: RICH_PAYLOAD });
      const item = await leaseOne(store, queue);
      assert.equal(await store.deadLetter(queue, 'job', item.leaseToken, 'payload failed validation'), true);
      assert.deepEqual(totals(await store.queueStats(queue)), { ready: 0, leased: 0, dead: 1 });
      assert.deepEqual(await store.listDead(queue, 10), [
        { id: 'job', payload: RICH_PAYLOAD, attempts: 1, reason: 'payload failed validation', deadAtMs: ctx.clock().nowMs() },
      ]);
      assert.equal(await store.ack(queue, 'job', item.leaseToken), false, 'a dead item is no longer leased');
      ctx.clock().advance(LEASE_MS + SECOND_MS);
      assert.deepEqual(await store.lease(queue, LEASE), [], 'a dead item is never leased');
    });

    test('listDead returns the oldest first, up to limit', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      for (const id of ['x', 'y', 'z']) await store.enqueue(queue, { id, payload: { id } });
      const leased = await store.lease(queue, LEASE);
      const tokenOf = new Map(leased.map((item) => [item.id, item.leaseToken]));
      // Dead-lettered in an order different from the enqueue order, a second apart.
      for (const id of ['y', 'z', 'x']) {
        assert.equal(await store.deadLetter(queue, id, tokenOf.get(id) ?? '', `reason ${id}`), true);
        clock.advance(SECOND_MS);
      }
      const all = await store.listDead<{ id: string }>(queue, 10);
      assert.deepEqual(
        all.map((item) => item.id),
        ['y', 'z', 'x'],
      );
      assert.deepEqual(
        all.map((item) => item.payload),
        [{ id: 'y' }, { id: 'z' }, { id: 'x' }],
      );
      assert.deepEqual(
        (await store.listDead(queue, 2)).map((item) => item.id),
        ['y', 'z'],
      );
    });

    test('replayDead puts the item back with its attempts reset', async () => {
      const store = ctx.store();
      await store.enqueue(queue, { id: 'job', payload: RICH_PAYLOAD });
      const item = await leaseOne(store, queue);
      await store.deadLetter(queue, 'job', item.leaseToken, 'poison');
      assert.equal(await store.replayDead(queue, 'job'), true);
      assert.deepEqual(totals(await store.queueStats(queue)), { ready: 1, leased: 0, dead: 0 });
      assert.deepEqual(await store.listDead(queue, 10), []);

      const replayed = await leaseOne(store, queue);
      assert.equal(replayed.id, 'job');
      assert.equal(replayed.attempts, 1);
      assert.deepEqual(replayed.payload, RICH_PAYLOAD);
      assert.equal(await store.replayDead(queue, 'job'), false, 'no longer dead');
    });

    test('replayDead and deleteDead of an unknown or live item return false and change nothing', async () => {
      const store = ctx.store();
      assert.equal(await store.replayDead(queue, 'missing'), false);
      assert.equal(await store.deleteDead(queue, 'missing'), false);
      await store.enqueue(queue, { id: 'live', payload: 1 });
      assert.equal(await store.replayDead(queue, 'live'), false);
      assert.equal(await store.deleteDead(queue, 'live'), false);
      assert.deepEqual(totals(await store.queueStats(queue)), { ready: 1, leased: 0, dead: 0 });
    });

    test('deleteDead forgets the item and frees its id', async () => {
      const store = ctx.store();
      await store.enqueue(queue, { id: 'job', payload: 1 });
      const item = await leaseOne(store, queue);
      await store.deadLetter(queue, 'job', item.leaseToken, 'poison');
      assert.equal(await store.deleteDead(queue, 'job'), true);
      assert.equal(await store.deleteDead(queue, 'job'), false);
      assert.deepEqual(await store.listDead(queue, 10), []);
      assert.deepEqual(totals(await store.queueStats(queue)), { ready: 0, leased: 0, dead: 0 });
      assert.equal(await store.enqueue(queue, { id: 'job', payload: 2 }), true);
    });

    test('queueStats counts ready (scheduled included), live leases and dead; an expired lease counts as ready', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      assert.deepEqual(totals(await store.queueStats(queue)), { ready: 0, leased: 0, dead: 0 });
      await store.enqueue(queue, { id: 'to-lease', payload: 1, availableAtMs: clock.nowMs() - 2 * SECOND_MS });
      await store.enqueue(queue, { id: 'to-kill', payload: 2, availableAtMs: clock.nowMs() - SECOND_MS });
      await store.enqueue(queue, { id: 'waiting', payload: 3 });
      await store.enqueue(queue, { id: 'scheduled', payload: 4, availableAtMs: clock.nowMs() + 3_600 * SECOND_MS });
      const [leased, doomed] = await store.lease(queue, { ...LEASE, max: 2 });
      assert.equal(leased?.id, 'to-lease');
      assert.equal(doomed?.id, 'to-kill');
      await store.deadLetter(queue, 'to-kill', doomed.leaseToken, 'poison');
      assert.deepEqual(totals(await store.queueStats(queue)), { ready: 2, leased: 1, dead: 1 });

      clock.advance(LEASE_MS + SECOND_MS);
      assert.deepEqual(totals(await store.queueStats(queue)), { ready: 3, leased: 0, dead: 1 });
    });
  });
}
