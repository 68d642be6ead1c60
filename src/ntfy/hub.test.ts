import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { createLogger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import type { StorePort } from '../store/port.ts';
import type { NtfyReadResult } from '../store/port-ntfy.ts';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { ManualClock } from '../util/clock.ts';
import { DRAIN_RETRY_MS, NtfyHub, SLOW_SUBSCRIBER_TIMEOUT_MS, SUBSCRIBER_HIGH_WATER_BYTES, type FrameSink } from './hub.ts';
import { ManualScheduler } from './scheduler.ts';

const TTL_MS = 60_000;
const WAIT_MS = 5_000;

/** A sink that records frames and can play a peer that stopped reading. */
class RecordingSink implements FrameSink {
  readonly frames: string[] = [];
  closed = false;
  stalled = false;
  private closeListeners: Array<() => void> = [];
  private waiters: Array<() => void> = [];

  write(frame: string): void {
    this.frames.push(frame);
    this.notify();
  }
  get bufferedBytes(): number {
    return this.stalled ? SUBSCRIBER_HIGH_WATER_BYTES + 1 : 0;
  }
  whenDrained(): Promise<void> {
    return this.stalled ? new Promise(() => undefined) : Promise.resolve();
  }
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const listener of this.closeListeners) listener();
    this.notify();
  }
  onClose(listener: () => void): void {
    this.closeListeners.push(listener);
  }
  messages(): string[] {
    return this.frames.map((f) => String((JSON.parse(f) as { message: string }).message));
  }
  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }
  async until(done: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + WAIT_MS;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; frames: ${this.frames.length}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}

describe('NtfyHub', () => {
  let store: StorePort;
  let scheduler: ManualScheduler;
  let metrics: Metrics;
  let hub: NtfyHub;
  const make = (s: StorePort, batch?: number) =>
    new NtfyHub({ store: s, scheduler, logger: createLogger({ level: 'silent' }), metrics, safetyRedrainMs: 30_000, drainBatchSize: batch });

  beforeEach(async () => {
    store = await openSqliteStore({ path: ':memory:', clock: new ManualClock() });
    scheduler = new ManualScheduler();
    metrics = new Metrics();
    hub = make(store);
  });
  afterEach(async () => {
    hub.close();
    await store.close();
  });

  test('a subscriber gets what follows its cursor, in order, across small read batches', async () => {
    hub = make(store, 2);
    for (let i = 0; i < 7; i++) await store.appendNtfyMessage('t', { message: `m${i}` }, TTL_MS);
    const sink = new RecordingSink();
    hub.subscribe(['t'], 't', 'json', sink, null);
    await sink.until(() => sink.frames.length === 7, 'seven messages');
    assert.deepEqual(sink.messages(), ['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6']);
  });

  test('an append wakes the subscribers of its topic only', async () => {
    const head = await store.ntfyHeadId();
    const a = new RecordingSink();
    const b = new RecordingSink();
    hub.subscribe(['a'], 'a', 'json', a, head);
    hub.subscribe(['b'], 'b', 'json', b, head);
    await store.appendNtfyMessage('a', { message: 'for a' }, TTL_MS);
    await a.until(() => a.frames.length === 1, 'the message for a');
    assert.deepEqual([a.messages(), b.frames], [['for a'], []]);
  });

  test('a wake-up during a drain runs the drain again, so nothing committed meanwhile waits', async () => {
    let releaseRead: () => void = () => undefined;
    let holdNextRead = false;
    const slowStore = new Proxy(store, {
      get(target, property, receiver) {
        if (property !== 'readNtfyMessages') return Reflect.get(target, property, receiver) as unknown;
        return async (...args: Parameters<StorePort['readNtfyMessages']>): Promise<NtfyReadResult> => {
          const result = await target.readNtfyMessages(...args);
          if (holdNextRead) {
            holdNextRead = false;
            await new Promise<void>((resolve) => (releaseRead = resolve));
          }
          return result;
        };
      },
    });
    hub = make(slowStore);
    const sink = new RecordingSink();
    holdNextRead = true;
    hub.subscribe(['t'], 't', 'json', sink, null);
    await new Promise((resolve) => setImmediate(resolve));
    await store.appendNtfyMessage('t', { message: 'during the first read' }, TTL_MS);
    releaseRead();
    await sink.until(() => sink.frames.length === 1, 'the message appended during the drain');
    assert.deepEqual(sink.messages(), ['during the first read']);
  });

  test('an append nobody was woken for is delivered by the safety re-drain', async () => {
    const quietStore = new Proxy(store, {
      get(target, property, receiver) {
        // A store whose wake-ups never arrive (another process on the same SQLite file).
        if (property === 'onNtfyAppend') return () => () => undefined;
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    hub = make(quietStore);
    const sink = new RecordingSink();
    hub.subscribe(['t'], 't', 'json', sink, await store.ntfyHeadId());
    await store.appendNtfyMessage('t', { message: 'unheard' }, TTL_MS);
    assert.equal(await hub.redrainBehind(), 1);
    await sink.until(() => sink.frames.length === 1, 'the re-drained message');
    assert.equal(await hub.redrainBehind(), 0, 'its cursor is at the head now');
  });

  test('a drain that fails on a store error is tried again after a delay', async () => {
    let failNext = true;
    const flakyStore = new Proxy(store, {
      get(target, property, receiver) {
        if (property !== 'readNtfyMessages') return Reflect.get(target, property, receiver) as unknown;
        return (...args: Parameters<StorePort['readNtfyMessages']>) => {
          if (failNext) {
            failNext = false;
            return Promise.reject(new Error('store down'));
          }
          return target.readNtfyMessages(...args);
        };
      },
    });
    hub = make(flakyStore);
    await store.appendNtfyMessage('t', { message: 'after the failure' }, TTL_MS);
    const sink = new RecordingSink();
    hub.subscribe(['t'], 't', 'json', sink, null);
    const failures = async () => (await metrics.ntfyDrainFailures.get()).values[0]?.value ?? 0;
    const deadline = Date.now() + WAIT_MS;
    while ((await failures()) === 0 && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(await failures(), 1);
    scheduler.advance(DRAIN_RETRY_MS);
    await sink.until(() => sink.frames.length === 1, 'the retried drain');
  });

  test('a subscriber that stops reading is not read for, and is disconnected after the timeout', async () => {
    const sink = new RecordingSink();
    sink.stalled = true;
    await store.appendNtfyMessage('t', { message: 'waits in the store' }, TTL_MS);
    hub.subscribe(['t'], 't', 'json', sink, null);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(sink.frames.length, 0);
    scheduler.advance(SLOW_SUBSCRIBER_TIMEOUT_MS);
    await sink.until(() => sink.closed, 'the disconnect');
    assert.equal(hub.size, 0);
    assert.equal((await metrics.ntfySlowSubscribersDropped.get()).values[0]?.value, 1);
  });

  test('close ends every subscription and forgets it', async () => {
    const sinks = [new RecordingSink(), new RecordingSink()];
    hub.subscribe(['a', 'b'], 'a,b', 'json', sinks[0] as RecordingSink, null);
    hub.subscribe(['b'], 'b', 'ws', sinks[1] as RecordingSink, null);
    assert.equal(hub.size, 2);
    hub.close();
    assert.deepEqual(sinks.map((s) => s.closed), [true, true]);
    assert.equal(hub.size, 0);
  });
});
