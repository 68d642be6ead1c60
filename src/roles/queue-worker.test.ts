import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { ManualClock } from '../util/clock.ts';
import { createLogger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import { RELEASED_AT_SHUTDOWN, runQueueWorker } from './queue-worker.ts';
import type { LeasedItem } from '../store/port.ts';
import { totals } from '../../test/store/contract/context.ts';
import { forEachLimited } from '../util/async.ts';
import { DONE, LeasedInlet, QueueSignal, RETRY_MAX_MS, retryDelayMs, type WorkOutcome } from '../store/queue-work.ts';

async function until(predicate: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await predicate()) return;
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 2));
  }
  assert.fail(`timed out waiting for ${what}`);
}

describe('queue worker', () => {
  test('handles, acknowledges, retries a throwing handler and dead-letters past max attempts', async () => {
    const clock = new ManualClock();
    const store = await openSqliteStore({ path: ':memory:', clock });
    const wake = new QueueSignal();
    const controller = new AbortController();
    const seen: string[] = [];
    const handle = async (item: LeasedItem<{ n: number }>): Promise<WorkOutcome> => {
      seen.push(`${item.id}#${item.attempts}`);
      if (item.payload.n === 2) throw new Error('always fails');
      return DONE;
    };
    const metrics = new Metrics();
    const running = runQueueWorker({
      store,
      queue: 'inbound',
      handle,
      leaseMs: 60_000,
      maxAttempts: 3,
      batchSize: 10,
      concurrency: 1,
      pollMs: 5,
      signal: controller.signal,
      wake,
      logger: createLogger({ level: 'silent' }),
      metrics,
    });

    await store.enqueue('inbound', { id: 'a', payload: { n: 1 } });
    await store.enqueue('inbound', { id: 'b', payload: { n: 2 } });
    wake.notify('inbound');
    await until(async () => (await store.queueStats('inbound')).ready === 1 && seen.includes('b#1'), 'first pass');
    assert.deepEqual((await store.queueStats('inbound')).leased, 0);

    // The failed item waits out its backoff: advance the clock past each retry.
    clock.advance(retryDelayMs(1) + 1);
    await until(() => seen.includes('b#2'), 'second attempt');
    clock.advance(retryDelayMs(2) + 1);
    await until(() => seen.includes('b#3'), 'third attempt');
    clock.advance(retryDelayMs(3) + 1);
    await until(async () => (await store.queueStats('inbound')).dead === 1, 'dead letter');
    const dead = await store.listDead('inbound', 10);
    assert.equal(dead[0]?.id, 'b');
    assert.deepEqual(seen, ['a#1', 'b#1', 'b#2', 'b#3']);
    controller.abort();
    await running;
    await store.close();
  });

  test('backoff doubles and is capped', () => {
    assert.equal(retryDelayMs(1), 1000);
    assert.equal(retryDelayMs(2), 2000);
    assert.equal(retryDelayMs(5), 16000);
    assert.equal(retryDelayMs(100), RETRY_MAX_MS);
  });

  test('forEachLimited never exceeds its limit', async () => {
    let inFlight = 0;
    let peak = 0;
    await forEachLimited([...Array(20).keys()], 4, async () => {
      peak = Math.max(peak, ++inFlight);
      await new Promise((r) => setTimeout(r, 1));
      inFlight--;
    });
    assert.equal(peak, 4);
  });
});

describe('ordering lanes', () => {
  test('items of one key are handled one after another, others side by side', async () => {
    const clock = new ManualClock();
    const store = await openSqliteStore({ path: ':memory:', clock });
    const controller = new AbortController();
    const log: string[] = [];
    let inFlight = 0;
    let peak = 0;
    const running = runQueueWorker<{ author: string; n: number }>({
      store,
      queue: 'inbound',
      leaseMs: 60_000,
      maxAttempts: 3,
      batchSize: 50,
      concurrency: 4,
      pollMs: 5,
      signal: controller.signal,
      wake: new QueueSignal(),
      logger: createLogger({ level: 'silent' }),
      metrics: new Metrics(),
      orderingKey: (item) => item.payload.author,
      handle: async (item) => {
        peak = Math.max(peak, ++inFlight);
        await new Promise((r) => setTimeout(r, 2));
        log.push(`${item.payload.author}${item.payload.n}`);
        inFlight--;
        return DONE;
      },
    });
    for (let n = 0; n < 5; n++)
      for (const author of ['a', 'b', 'c', 'd', 'e'])
        await store.enqueue('inbound', { id: `${author}${n}`, payload: { author, n }, availableAtMs: clock.nowMs() + n });
    clock.advance(10);
    await until(() => log.length === 25, 'all handled');
    for (const author of ['a', 'b', 'c', 'd', 'e'])
      assert.deepEqual(
        log.filter((l) => l[0] === author),
        [0, 1, 2, 3, 4].map((n) => `${author}${n}`),
      );
    assert.ok(peak > 1 && peak <= 4, `peak ${peak}`);
    controller.abort();
    await running;
    await store.close();
  });
});

describe('continuous flow', () => {
  const quiet = { logger: createLogger({ level: 'silent' }), metrics: new Metrics() };

  /** A handler that holds items named in `blocked` until released. */
  function gate() {
    const releases = new Map<string, () => void>();
    return {
      wait: (id: string) => new Promise<void>((resolve) => releases.set(id, resolve)),
      release: (id: string) => releases.get(id)?.(),
      isHeld: (id: string) => releases.has(id),
    };
  }

  test('a slow item does not hold back the rest: the worker leases again as slots free up', async () => {
    const clock = new ManualClock();
    const store = await openSqliteStore({ path: ':memory:', clock });
    const controller = new AbortController();
    const held = gate();
    const done: string[] = [];
    const running = runQueueWorker<{ n: number }>({
      store,
      queue: 'outbound',
      leaseMs: 60_000,
      maxAttempts: 3,
      batchSize: 4,
      concurrency: 2,
      pollMs: 5,
      signal: controller.signal,
      wake: new QueueSignal(),
      ...quiet,
      handle: async (item) => {
        if (item.id === 'slow') await held.wait(item.id);
        done.push(item.id);
        return DONE;
      },
    });
    await store.enqueue('outbound', { id: 'slow', payload: { n: 0 } });
    for (let n = 1; n <= 12; n++) await store.enqueue('outbound', { id: `fast-${n}`, payload: { n }, availableAtMs: clock.nowMs() + 1 });
    clock.advance(1);
    await until(() => done.length === 12, 'every fast item handled while the slow one is held');
    assert.equal(done.includes('slow'), false);
    // The last fast item's settlement is written at the end of its turn, which may come after this
    // check wakes: wait for it rather than race it.
    await until(async () => (await store.queueStats('outbound')).leased === 1, 'the fast items settled');
    assert.deepEqual(totals(await store.queueStats('outbound')), { ready: 0, leased: 1, dead: 0 }, 'only the slow item is still leased');
    held.release('slow');
    await until(async () => (await store.queueStats('outbound')).leased === 0, 'the slow item settled');
    controller.abort();
    await running;
    await store.close();
  });

  test('items of one key stay in order across lease calls, and never run side by side', async () => {
    const clock = new ManualClock();
    const store = await openSqliteStore({ path: ':memory:', clock });
    const controller = new AbortController();
    const log: string[] = [];
    const runningKeys = new Set<string>();
    let overlap = false;
    const worker = runQueueWorker<{ author: string; n: number }>({
      store,
      queue: 'inbound',
      leaseMs: 60_000,
      maxAttempts: 3,
      batchSize: 2,
      concurrency: 4,
      pollMs: 5,
      signal: controller.signal,
      wake: new QueueSignal(),
      ...quiet,
      orderingKey: (item) => item.payload.author,
      handle: async (item) => {
        if (runningKeys.has(item.payload.author)) overlap = true;
        runningKeys.add(item.payload.author);
        await new Promise((r) => setTimeout(r, 1 + (item.payload.n % 3)));
        runningKeys.delete(item.payload.author);
        log.push(`${item.payload.author}${item.payload.n}`);
        return DONE;
      },
    });
    for (let n = 0; n < 6; n++)
      for (const author of ['a', 'b'])
        await store.enqueue('inbound', { id: `${author}${n}`, payload: { author, n }, availableAtMs: clock.nowMs() + n });
    clock.advance(10);
    await until(() => log.length === 12, 'all handled');
    assert.equal(overlap, false, 'two items of one author never ran at once');
    for (const author of ['a', 'b'])
      assert.deepEqual(
        log.filter((l) => l[0] === author),
        [0, 1, 2, 3, 4, 5].map((n) => `${author}${n}`),
      );
    controller.abort();
    await worker;
    await store.close();
  });

  test('on abort, running items finish and settle, and held items never started go back to the queue at once', async () => {
    const clock = new ManualClock();
    const store = await openSqliteStore({ path: ':memory:', clock });
    const controller = new AbortController();
    const held = gate();
    const started: string[] = [];
    const worker = runQueueWorker<{ n: number }>({
      store,
      queue: 'outbound',
      leaseMs: 60_000,
      maxAttempts: 3,
      batchSize: 5,
      concurrency: 1,
      pollMs: 5,
      signal: controller.signal,
      wake: new QueueSignal(),
      ...quiet,
      handle: async (item) => {
        started.push(item.id);
        await held.wait(item.id);
        return DONE;
      },
    });
    for (let n = 0; n < 5; n++) await store.enqueue('outbound', { id: `job-${n}`, payload: { n }, availableAtMs: clock.nowMs() + n });
    clock.advance(10);
    await until(() => started.length === 1, 'the first item started');
    // The worker may have leased job-0 alone before the clock moved: abort only once it holds all five.
    await until(async () => totals(await store.queueStats('outbound')).leased === 5, 'all five items leased');
    controller.abort();
    held.release('job-0');
    await worker;
    assert.deepEqual(started, ['job-0']);
    assert.deepEqual(
      totals(await store.queueStats('outbound')),
      { ready: 4, leased: 0, dead: 0 },
      'the running item was acked, the rest handed back',
    );
    const again = await store.lease<{ n: number }>('outbound', { max: 10, leaseMs: 60_000, maxAttempts: 3 });
    assert.deepEqual(
      again.map((i) => i.id).sort(),
      ['job-1', 'job-2', 'job-3', 'job-4'],
      'available at once, without waiting out the lease',
    );
    // With a message: without one, assert reads the source to describe the expression, which can take minutes under tsx.
    assert.ok(
      again.every((i) => i.lastError === RELEASED_AT_SHUTDOWN),
      `handed back at shutdown: ${again.map((i) => i.lastError).join(', ')}`,
    );
    await store.close();
  });

  test('items handed in leased are handled at once, without a lease call, and settled with their own token', async () => {
    const clock = new ManualClock();
    const store = await openSqliteStore({ path: ':memory:', clock });
    const controller = new AbortController();
    const inlet = new LeasedInlet<{ n: number }>();
    const handledInto: string[] = [];
    let leaseCalls = 0;
    const counting = new Proxy(store, {
      get(target, name, receiver) {
        if (name === 'lease') leaseCalls++;
        return Reflect.get(target, name, receiver) as unknown;
      },
    });
    assert.equal(inlet.push([]), false, 'nothing attached yet');
    const worker = runQueueWorker<{ n: number }>({
      store: counting,
      queue: 'nip9a',
      leaseMs: 60_000,
      maxAttempts: 3,
      batchSize: 4,
      concurrency: 2,
      pollMs: 60_000,
      inlet,
      signal: controller.signal,
      wake: new QueueSignal(),
      ...quiet,
      handle: async (item) => {
        handledInto.push(`${item.id}#${item.attempts}`);
        return item.payload.n === 2 ? { kind: 'retry', afterMs: 1_000, error: 'later' } : DONE;
      },
    });
    await until(() => leaseCalls === 1, 'the worker to find the queue empty and wait');
    const items = await store.enqueueLeased(
      'nip9a',
      [1, 2, 3].map((n) => ({ id: `d${n}`, payload: { n } })),
      60_000,
    );
    assert.equal(inlet.push(items.filter((item) => item !== null)), true);
    await until(async () => totals(await store.queueStats('nip9a')).leased === 0, 'every handed-in item settled');
    assert.deepEqual(handledInto.sort(), ['d1#1', 'd2#1', 'd3#1']);
    assert.equal(leaseCalls, 1, 'no lease call for handed-in items (the worker still waits out its 60 s poll)');
    assert.deepEqual(totals(await store.queueStats('nip9a')), { ready: 1, leased: 0, dead: 0 }, 'd1, d3 acked; d2 back for a retry');
    controller.abort();
    await worker;
    assert.equal(inlet.push([]), false, 'detached at shutdown');
    await store.close();
  });
});
