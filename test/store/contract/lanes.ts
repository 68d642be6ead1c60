import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Lane, QueueName, StorePort } from '../../../src/store/port.ts';
import { MIN_BATCH_FOR_RESERVED_SLOTS, reservedLaneSlots } from '../../../src/store/lanes.ts';
import { SECOND_MS, totals, type ContractContext } from './context.ts';
import { LEASE, LEASE_MS } from './queues.ts';

/** Priority lanes of one queue: drain order, the reserved share of the lower lanes, ids unique across lanes. */

async function fill(store: StorePort, queue: QueueName, lane: Lane, count: number, availableAtMs: number): Promise<void> {
  const items = Array.from({ length: count }, (_, i) => ({
    id: `${lane}-${String(i).padStart(4, '0')}`,
    payload: { lane, i },
    lane,
    availableAtMs,
  }));
  const added = await store.enqueueMany(queue, items);
  assert.ok(added.every(Boolean));
}

function lanesOf(batch: ReadonlyArray<{ id: string }>): string[] {
  return batch.map((item) => item.id.split('-')[0] ?? '');
}

export function laneContract(ctx: ContractContext, queue: QueueName): void {
  describe(`queue '${queue}': priority lanes`, () => {
    test('a lease drains critical before normal before low, whatever their age', async () => {
      const store = ctx.store();
      const now = ctx.clock().nowMs();
      // The low items are the oldest, the critical one the newest.
      await store.enqueue(queue, { id: 'low-old', payload: 1, lane: 'low', availableAtMs: now - 30 * SECOND_MS });
      await store.enqueue(queue, { id: 'normal-mid', payload: 2, availableAtMs: now - 20 * SECOND_MS });
      await store.enqueue(queue, { id: 'critical-new', payload: 3, lane: 'critical', availableAtMs: now - 10 * SECOND_MS });
      const batch = await store.lease(queue, { ...LEASE, max: MIN_BATCH_FOR_RESERVED_SLOTS - 1 });
      assert.deepEqual(
        batch.map((item) => item.id),
        ['critical-new', 'normal-mid', 'low-old'],
      );
      const one = await store.lease(queue, { ...LEASE, max: 1 });
      assert.deepEqual(one, [], 'everything was leased');
    });

    test('below the reserved-slot batch size priority is strict', async () => {
      const store = ctx.store();
      const now = ctx.clock().nowMs();
      await fill(store, queue, 'low', 5, now - 60 * SECOND_MS);
      await fill(store, queue, 'critical', 5, now);
      const batch = await store.lease(queue, { ...LEASE, max: MIN_BATCH_FOR_RESERVED_SLOTS - 1 });
      assert.deepEqual(lanesOf(batch), ['critical', 'critical', 'critical']);
    });

    test('a full batch reserves a small share to normal and low, and lists critical items first', async () => {
      const store = ctx.store();
      const now = ctx.clock().nowMs();
      const max = 64;
      const reserved = reservedLaneSlots(max);
      assert.ok(reserved >= 1 && reserved * 8 <= max, 'the reserve is small');
      await fill(store, queue, 'low', max, now - 3 * SECOND_MS);
      await fill(store, queue, 'normal', max, now - 2 * SECOND_MS);
      await fill(store, queue, 'critical', max, now - SECOND_MS);
      const batch = await store.lease(queue, { ...LEASE, max });
      const expected = [
        ...Array.from({ length: max - 2 * reserved }, () => 'critical'),
        ...Array.from({ length: reserved }, () => 'normal'),
        ...Array.from({ length: reserved }, () => 'low'),
      ];
      assert.deepEqual(lanesOf(batch), expected);
      // Within a lane, oldest first.
      assert.equal(batch[0]?.id, 'critical-0000');
      assert.equal(batch.at(-1)?.id, `low-${String(reserved - 1).padStart(4, '0')}`);
      const stats = await store.queueStats(queue);
      assert.deepEqual(stats.lanes, {
        critical: { ready: max - (max - 2 * reserved), leased: max - 2 * reserved },
        normal: { ready: max - reserved, leased: reserved },
        low: { ready: max - reserved, leased: reserved },
      });
      assert.deepEqual(totals(stats), { ready: 3 * max - max, leased: max, dead: 0 });
    });

    test('low never starves: under a steady flood of critical items every full batch carries low items', async () => {
      const store = ctx.store();
      const now = ctx.clock().nowMs();
      const max = 32;
      await fill(store, queue, 'low', 10, now - 60 * SECOND_MS);
      let lowLeased = 0;
      for (let round = 0; round < 5; round += 1) {
        // More critical work than a batch holds arrives before every lease.
        await store.enqueueMany(
          queue,
          Array.from({ length: 2 * max }, (_, i) => ({ id: `critical-r${round}-${i}`, payload: i, lane: 'critical' as const })),
        );
        const batch = await store.lease(queue, { ...LEASE, max });
        const low = batch.filter((item) => item.id.startsWith('low-'));
        assert.equal(low.length, reservedLaneSlots(max), `round ${round}: the reserved low share was leased`);
        lowLeased += low.length;
        await store.settleLeased(
          queue,
          batch.map((item) => ({ id: item.id, leaseToken: item.leaseToken, outcome: 'ack' as const })),
        );
      }
      assert.equal(lowLeased, 5 * reservedLaneSlots(max));
    });

    test('slots a lane leaves unused go to the others', async () => {
      const store = ctx.store();
      const now = ctx.clock().nowMs();
      await fill(store, queue, 'critical', 40, now);
      assert.equal((await store.lease(queue, { ...LEASE, max: 32 })).length, 32, 'no lower items: critical fills the batch');
      await fill(store, queue, 'low', 40, now);
      const batch = await store.lease(queue, { ...LEASE, max: 32 });
      assert.deepEqual(lanesOf(batch), [...Array.from({ length: 8 }, () => 'critical'), ...Array.from({ length: 24 }, () => 'low')]);
    });

    test('ids are unique across the lanes of a queue, and free again after an ack', async () => {
      const store = ctx.store();
      assert.equal(await store.enqueue(queue, { id: 'x', payload: 1, lane: 'low' }), true);
      assert.equal(await store.enqueue(queue, { id: 'x', payload: 2, lane: 'critical' }), false);
      assert.equal(await store.enqueue(queue, { id: 'x', payload: 3 }), false);
      assert.deepEqual(
        await store.enqueueMany(queue, [
          { id: 'x', payload: 4, lane: 'normal' },
          { id: 'y', payload: 5, lane: 'critical' },
          { id: 'y', payload: 6, lane: 'low' },
        ]),
        [false, true, false],
      );
      const owner = '00000000-0000-4000-8000-000000000001';
      assert.deepEqual(
        await store.claimAndEnqueueDeliveries(queue, 60, [
          { claim: { eventId: 'e1', recipient: 'r1', owner }, item: { id: 'y', payload: 7, lane: 'low' } },
        ]),
        [true],
        'the claim is taken; the id already queued stays as it is',
      );
      const stats = await store.queueStats(queue);
      assert.deepEqual(stats.lanes, { critical: { ready: 1, leased: 0 }, normal: { ready: 0, leased: 0 }, low: { ready: 1, leased: 0 } });

      const batch = await store.lease<number>(queue, { ...LEASE, max: 10 });
      assert.deepEqual(
        batch.map((item) => [item.id, item.payload]),
        [
          ['y', 5],
          ['x', 1],
        ],
      );
      for (const item of batch) assert.equal(await store.ack(queue, item.id, item.leaseToken), true);
      assert.equal(await store.enqueue(queue, { id: 'x', payload: 8, lane: 'critical' }), true, 'free after the ack, in any lane');
    });

    test('claimAndEnqueueDeliveries queues each delivery in its lane', async () => {
      const store = ctx.store();
      const owner = '00000000-0000-4000-8000-000000000002';
      await store.claimAndEnqueueDeliveries(queue, 60, [
        { claim: { eventId: 'e', recipient: 'a', owner }, item: { id: 'd-low', payload: 1, lane: 'low' } },
        { claim: { eventId: 'e', recipient: 'b', owner }, item: { id: 'd-critical', payload: 2, lane: 'critical' } },
        { claim: { eventId: 'e', recipient: 'c', owner }, item: { id: 'd-normal', payload: 3 } },
      ]);
      const batch = await store.lease(queue, { ...LEASE, max: 3 });
      assert.deepEqual(
        batch.map((item) => item.id),
        ['d-critical', 'd-normal', 'd-low'],
      );
    });

    test('an item keeps its lane through retry, lease expiry and replay', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      const max = MIN_BATCH_FOR_RESERVED_SLOTS - 1;
      await store.enqueue(queue, { id: 'slow', payload: 1, lane: 'low' });
      const [first] = await store.lease(queue, { ...LEASE, max });
      assert.equal(first?.id, 'slow');
      await store.retry(queue, 'slow', first.leaseToken, clock.nowMs(), 'transient');
      await store.enqueue(queue, { id: 'urgent-1', payload: 2, lane: 'critical' });
      assert.deepEqual(
        (await store.lease(queue, { ...LEASE, max })).map((item) => item.id),
        ['urgent-1', 'slow'],
        'retried into the low lane',
      );

      clock.advance(LEASE_MS + SECOND_MS);
      await store.enqueue(queue, { id: 'urgent-2', payload: 3, lane: 'critical' });
      const afterExpiry = await store.lease(queue, { ...LEASE, max });
      assert.deepEqual(
        afterExpiry.map((item) => item.id),
        ['urgent-1', 'urgent-2', 'slow'],
        'expired leases return to their lanes',
      );
      const slow = afterExpiry.find((item) => item.id === 'slow');
      assert.ok(slow);
      assert.equal(await store.deadLetter(queue, 'slow', slow.leaseToken, 'poison'), true);
      assert.equal(await store.replayDead(queue, 'slow'), true);
      assert.deepEqual((await store.queueStats(queue)).lanes.low, { ready: 1, leased: 0 }, 'replayed into its lane');
    });
  });
}
