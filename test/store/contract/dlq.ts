import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidCursorError, type DeadLetter } from '../../../src/store/port-dlq.ts';
import type { QueueName, StorePort } from '../../../src/store/port.ts';
import { SECOND_MS, totals, type ContractContext } from './context.ts';
import { LEASE, LEASE_MS, RICH_PAYLOAD, leaseOne } from './queues.ts';

/** What an operator sees of dead letters (port-dlq.ts): failure history, pages, replay of a whole queue. */

async function kill(store: StorePort, queue: QueueName, id: string, lane?: 'critical' | 'low'): Promise<void> {
  await store.enqueue(queue, { id, payload: { id }, ...(lane ? { lane } : {}) });
  const batch = await store.lease(queue, { ...LEASE, max: 100 });
  for (const item of batch) {
    if (item.id === id) assert.equal(await store.deadLetter(queue, id, item.leaseToken, `poison ${id}`), true);
    else await store.retry(queue, item.id, item.leaseToken, store.clock.nowMs(), 'not this one');
  }
}

async function walk(store: StorePort, queue: QueueName, limit: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    const page = await store.listDeadPage(queue, { limit, ...(cursor === undefined ? {} : { cursor }) });
    pages += 1;
    ids.push(...page.items.map((item) => item.id));
    if (page.nextCursor === null) return { ids, pages };
    assert.ok(page.items.length === limit, 'a page with a next cursor is full');
    cursor = page.nextCursor;
    assert.ok(pages < 100, 'the walk ends');
  }
}

export function dlqContract(ctx: ContractContext, queue: QueueName): void {
  describe(`queue '${queue}': dead letters for operators`, () => {
    test('a dead letter carries its lane, reason, attempts, last error and first and last failure times', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      const options = { ...LEASE, maxAttempts: 2 };
      await store.enqueue(queue, { id: 'job', payload: RICH_PAYLOAD, lane: 'critical' });
      const first = await leaseOne(store, queue, options);
      clock.advance(SECOND_MS);
      const firstFailure = clock.nowMs();
      await store.retry(queue, 'job', first.leaseToken, clock.nowMs(), 'provider said 503');
      const second = await leaseOne(store, queue, options);
      const expiry = second.leaseExpiresAtMs;
      clock.advance(LEASE_MS + 5 * SECOND_MS);
      assert.deepEqual(await store.lease(queue, options), [], 'the expired item had its last attempt');

      const expected: DeadLetter = {
        id: 'job',
        lane: 'critical',
        payload: RICH_PAYLOAD,
        attempts: 2,
        reason: 'max attempts exceeded',
        lastError: 'provider said 503',
        firstFailedAtMs: firstFailure,
        lastFailedAtMs: expiry,
        deadAtMs: clock.nowMs(),
      };
      assert.deepEqual(await store.listDeadPage(queue, { limit: 10 }), { items: [expected], nextCursor: null });
      assert.deepEqual(await store.getDead(queue, 'job'), expected);
    });

    test('an item dead-lettered by its consumer at the first attempt failed once, then', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      await kill(store, queue, 'once');
      const dead = await store.getDead(queue, 'once');
      assert.deepEqual(dead, {
        id: 'once',
        lane: 'normal',
        payload: { id: 'once' },
        attempts: 1,
        reason: 'poison once',
        lastError: null,
        firstFailedAtMs: clock.nowMs(),
        lastFailedAtMs: clock.nowMs(),
        deadAtMs: clock.nowMs(),
      });
      assert.equal(await store.getDead(queue, 'missing'), null);
      await store.enqueue(queue, { id: 'live', payload: 1 });
      assert.equal(await store.getDead(queue, 'live'), null, 'a live item is not a dead letter');
    });

    test('pages walk every dead letter once, oldest first with ties by id, and deletions do not shift them', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      // Three at one instant (a tie group), then four at later instants.
      for (const id of ['t-b', 't-c', 't-a']) await kill(store, queue, id);
      for (const id of ['d-1', 'd-2', 'd-3', 'd-4']) {
        clock.advance(SECOND_MS);
        await kill(store, queue, id);
      }
      const all = ['t-a', 't-b', 't-c', 'd-1', 'd-2', 'd-3', 'd-4'];
      assert.deepEqual(await walk(store, queue, 100), { ids: all, pages: 1 });
      assert.deepEqual(await walk(store, queue, 2), { ids: all, pages: 4 });
      assert.deepEqual((await walk(store, queue, 7)).ids, all);

      const first = await store.listDeadPage(queue, { limit: 2 });
      assert.deepEqual(
        first.items.map((item) => item.id),
        ['t-a', 't-b'],
      );
      // The cursor's own item and the next one go away meanwhile: the next page starts after the position.
      assert.equal(await store.deleteDead(queue, 't-b'), true);
      assert.equal(await store.replayDead(queue, 't-c'), true);
      const next = await store.listDeadPage(queue, { limit: 2, cursor: first.nextCursor ?? '' });
      assert.deepEqual(
        next.items.map((item) => item.id),
        ['d-1', 'd-2'],
      );
    });

    test('a cursor the store did not make is refused; a limit below one is an empty page', async () => {
      const store = ctx.store();
      await kill(store, queue, 'x');
      for (const cursor of [
        '',
        'not a cursor!',
        Buffer.from('no-colon').toString('base64url'),
        Buffer.from('abc:x').toString('base64url'),
      ]) {
        await assert.rejects(store.listDeadPage(queue, { limit: 10, cursor }), InvalidCursorError, `cursor ${JSON.stringify(cursor)}`);
      }
      assert.deepEqual(await store.listDeadPage(queue, { limit: 0 }), { items: [], nextCursor: null });
    });

    test('replayAllDead puts every dead letter back in its own lane, attempts reset', async () => {
      const store = ctx.store();
      await kill(store, queue, 'c', 'critical');
      await kill(store, queue, 'n');
      await kill(store, queue, 'l', 'low');
      assert.equal(await store.replayAllDead(queue), 3);
      assert.equal(await store.replayAllDead(queue), 0);
      const stats = await store.queueStats(queue);
      assert.deepEqual(totals(stats), { ready: 3, leased: 0, dead: 0 });
      assert.deepEqual([stats.lanes.critical.ready, stats.lanes.normal.ready, stats.lanes.low.ready], [1, 1, 1]);
      const batch = await store.lease(queue, { ...LEASE, max: 3 });
      assert.deepEqual(
        batch.map((item) => [item.id, item.attempts, item.lastError]),
        [
          ['c', 1, null],
          ['n', 1, null],
          ['l', 1, null],
        ],
      );
    });

    test('replayAllDead replays a list longer than one step', async () => {
      const store = ctx.store();
      const count = 1_234;
      await store.enqueueMany(
        queue,
        Array.from({ length: count }, (_, i) => ({ id: `bulk-${i}`, payload: i, lane: 'low' as const })),
      );
      for (;;) {
        const batch = await store.lease(queue, { ...LEASE, max: 500 });
        if (batch.length === 0) break;
        await store.settleLeased(
          queue,
          batch.map((item) => ({ id: item.id, leaseToken: item.leaseToken, outcome: 'dead' as const, reason: 'bulk' })),
        );
      }
      assert.equal((await store.queueStats(queue)).dead, count);
      assert.equal(await store.replayAllDead(queue), count);
      assert.deepEqual((await store.queueStats(queue)).lanes.low, { ready: count, leased: 0 });
    });
  });
}
