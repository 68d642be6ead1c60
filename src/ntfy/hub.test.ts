import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { createLogger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import type { StorePort } from '../store/port.ts';
import type { NtfyAppendEvent, NtfyReadResult } from '../store/port-ntfy.ts';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { ManualClock } from '../util/clock.ts';
import {
  DRAIN_RETRY_MS,
  NtfyHub,
  SLOW_SUBSCRIBER_TIMEOUT_MS,
  SUBSCRIBER_HIGH_WATER_BYTES,
  type FrameSink,
  type NtfyHubDeps,
} from './hub.ts';
import { ManualScheduler } from './scheduler.ts';
import { notifyClosed, type CloseListener } from './subscriber.ts';

const TTL_MS = 60_000;
const WAIT_MS = 5_000;

/** A sink that records frames and can play a peer that stopped reading (and later resumes). */
class RecordingSink implements FrameSink {
  readonly frames: string[] = [];
  closed = false;
  private stalledFlag = false;
  private closeListeners: CloseListener[] = [];
  private waiters: Array<() => void> = [];
  private drainWaiters: Array<() => void> = [];

  write(frame: string): void {
    this.frames.push(frame);
    this.notify();
  }
  get bufferedBytes(): number {
    return this.stalledFlag ? SUBSCRIBER_HIGH_WATER_BYTES + 1 : 0;
  }
  set stalled(value: boolean) {
    this.stalledFlag = value;
    if (!value) for (const waiter of this.drainWaiters.splice(0)) waiter();
  }
  whenDrained(): Promise<void> {
    return this.stalledFlag ? new Promise((resolve) => this.drainWaiters.push(resolve)) : Promise.resolve();
  }
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const listener of this.closeListeners) notifyClosed(listener);
    this.notify();
  }
  onClose(listener: CloseListener): void {
    this.closeListeners.push(listener);
  }
  messages(): string[] {
    return this.frames.map((f) => String((JSON.parse(f) as { message: unknown }).message));
  }
  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }
  async until(done: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + WAIT_MS;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; frames: ${this.messages().join(', ')}`);
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

/** Let pending promise continuations and immediates run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A store whose reads can be counted and held, and whose append events can be filtered. */
function instrumented(store: StorePort) {
  const control = {
    reads: 0,
    /** While set, a read waits for {@link release} before it runs (so appends meanwhile are in its snapshot). */
    holdBefore: false,
    /** While set, a read runs, then waits for {@link release} before it answers. */
    holdAfter: false,
    failNext: false,
    dropEvent: (_event: NtfyAppendEvent): boolean => false,
    /** While set, events are kept until {@link flushEvents} (a slow pub/sub). */
    delayEvents: false,
    flushEvents: (): void => undefined,
    release: (): void => undefined,
  };
  const wrapped = new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'readNtfyMessages') {
        return async (...args: Parameters<StorePort['readNtfyMessages']>): Promise<NtfyReadResult> => {
          control.reads += 1;
          if (control.failNext) {
            control.failNext = false;
            throw new Error('store down');
          }
          if (control.holdBefore) {
            control.holdBefore = false;
            await new Promise<void>((resolve) => (control.release = resolve));
          }
          const result = await target.readNtfyMessages(...args);
          if (control.holdAfter) {
            control.holdAfter = false;
            await new Promise<void>((resolve) => (control.release = resolve));
          }
          return result;
        };
      }
      if (property === 'onNtfyAppend') {
        return (listener: (event: NtfyAppendEvent) => void) => {
          const delayed: NtfyAppendEvent[] = [];
          control.flushEvents = () => {
            for (const event of delayed.splice(0)) listener(event);
          };
          return target.onNtfyAppend((event) => {
            if (control.dropEvent(event)) return;
            if (control.delayEvents) delayed.push(event);
            else listener(event);
          });
        };
      }
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
  return { store: wrapped, control };
}

describe('NtfyHub', () => {
  let store: StorePort;
  let scheduler: ManualScheduler;
  let metrics: Metrics;
  let hub: NtfyHub;
  const make = (s: StorePort, options: Partial<NtfyHubDeps> = {}) =>
    new NtfyHub({ store: s, scheduler, logger: createLogger({ level: 'silent' }), metrics, safetyRedrainMs: 30_000, ...options });
  const append = (topic: string, message: string) => store.appendNtfyMessage(topic, { message }, TTL_MS);
  const counter = async (c: { get(): Promise<{ values: { value: number }[] }> }) => (await c.get()).values[0]?.value ?? 0;

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
    hub = make(store, { drainBatchSize: 2 });
    for (let i = 0; i < 7; i++) await append('t', `m${i}`);
    const sink = new RecordingSink();
    hub.subscribe(['t'], 't', 'json', sink, null);
    await sink.until(() => sink.frames.length === 7, 'seven messages');
    assert.deepEqual(sink.messages(), ['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6']);
  });

  test('a live subscriber gets the appends of its topics from the events, without reading the store', async () => {
    const { store: counted, control } = instrumented(store);
    hub = make(counted);
    const a = new RecordingSink();
    const b = new RecordingSink();
    const ab = new RecordingSink();
    hub.subscribe(['a'], 'a', 'json', a, await store.ntfyHeadId());
    hub.subscribe(['b'], 'b', 'json', b, await store.ntfyHeadId());
    hub.subscribe(['a', 'b'], 'a,b', 'sse', ab, await store.ntfyHeadId());
    await settle();
    const readsWhenLive = control.reads;
    for (let i = 0; i < 5; i++) await append(i % 2 ? 'b' : 'a', `m${i}`);
    await a.until(() => a.frames.length === 3 && b.frames.length === 2 && ab.frames.length === 5, 'every message');
    assert.deepEqual(
      [a.messages(), b.messages()],
      [
        ['m0', 'm2', 'm4'],
        ['m1', 'm3'],
      ],
    );
    assert.deepEqual(
      ab.frames.map((f) => (JSON.parse(f.replace(/^data: /, '')) as { message: string }).message),
      ['m0', 'm1', 'm2', 'm3', 'm4'],
    );
    assert.equal(control.reads, readsWhenLive, 'no read per message');
    assert.equal(await counter(metrics.ntfyFeedBridges), 0);
  });

  test('a subscriber whose cursor the feed has reached goes live without a read', async () => {
    const { store: counted, control } = instrumented(store);
    hub = make(counted);
    await append('t', 'before everyone');
    const first = new RecordingSink();
    hub.subscribe(['t'], 't', 'json', first, await store.ntfyHeadId());
    await settle();
    const readsBefore = control.reads;
    const late = new RecordingSink();
    const behind = new RecordingSink();
    hub.subscribe(['t'], 't', 'json', late, await store.ntfyHeadId());
    hub.subscribe(['t'], 't', 'json', behind, null);
    await behind.until(() => behind.frames.length === 1, 'the replay of the subscriber behind');
    assert.equal(control.reads, readsBefore + 1, 'only the subscriber behind the feed reads');
    await append('t', 'after');
    await late.until(() => late.frames.length === 1 && first.frames.length === 1 && behind.frames.length === 2, 'the live message');
    assert.deepEqual([first.messages(), late.messages(), behind.messages()], [['after'], ['after'], ['before everyone', 'after']]);
  });

  test('the first subscriber waits for the store to hear appends: a message committed before that reaches it by its catch-up', async () => {
    // A Redis store hears appends only once its pub/sub subscription is confirmed; until then
    // events are lost, and nothing says so (no later event need follow to reveal the gap).
    let confirm = (): void => undefined;
    const confirmed = new Promise<void>((resolve) => (confirm = resolve));
    let hearing = false;
    void confirmed.then(() => (hearing = true));
    const { store: subscribing, control } = instrumented(
      new Proxy(store, {
        get: (target, property, receiver): unknown =>
          property === 'ntfyAppendsHeard' ? () => confirmed : Reflect.get(target, property, receiver),
      }),
    );
    control.dropEvent = () => !hearing;
    hub = make(subscribing);
    const sink = new RecordingSink();
    hub.subscribe(['t'], 't', 'json', sink, await store.ntfyHeadId());
    await settle();
    await append('t', 'while the subscription is confirmed');
    await settle();
    assert.deepEqual(sink.messages(), [], 'nothing yet: the subscriber is parked');
    confirm();
    await sink.until(() => sink.frames.length === 1, 'the message committed before appends were heard');
    await append('t', 'live');
    await sink.until(() => sink.frames.length === 2, 'the live message');
    assert.deepEqual(sink.messages(), ['while the subscription is confirmed', 'live']);
  });

  test('a subscriber registered while a bridge read runs catches up itself (the bridge did not read its topics)', async () => {
    const { store: lossy, control } = instrumented(store);
    hub = make(lossy);
    const first = new RecordingSink();
    hub.subscribe(['t'], 't', 'json', first, await store.ntfyHeadId());
    await settle();
    const cursor = await store.ntfyHeadId();
    control.dropEvent = (event) => event.message.message === 'lost';
    control.holdBefore = true;
    await append('t', 'lost');
    await append('t', 'reveals the gap');
    await append('u', 'before the subscription');
    const second = new RecordingSink();
    hub.subscribe(['u'], 'u', 'json', second, cursor);
    control.release();
    await first.until(() => first.frames.length === 2 && second.frames.length === 1, 'both subscribers’ messages');
    await append('u', 'live');
    await second.until(() => second.frames.length === 2, 'the live message');
    assert.deepEqual(second.messages(), ['before the subscription', 'live']);
  });

  test('a message appended while a subscriber catches up follows the replay, once', async () => {
    const { store: held, control } = instrumented(store);
    hub = make(held);
    await append('t', 'before');
    const sink = new RecordingSink();
    control.holdAfter = true;
    hub.subscribe(['t'], 't', 'json', sink, null);
    await settle();
    await append('t', 'during the read');
    assert.deepEqual(sink.frames, [], 'buffered, not written, while the replay is out');
    control.release();
    await sink.until(() => sink.frames.length === 2, 'both messages');
    await append('t', 'live');
    await sink.until(() => sink.frames.length === 3, 'the live message');
    assert.deepEqual(sink.messages(), ['before', 'during the read', 'live']);
  });

  test('a message both in the replay and offered meanwhile is sent once', async () => {
    const { store: held, control } = instrumented(store);
    hub = make(held);
    const sink = new RecordingSink();
    control.holdBefore = true;
    hub.subscribe(['t'], 't', 'json', sink, null);
    await settle();
    await append('t', 'in the read and in the buffer');
    control.release();
    await sink.until(() => sink.frames.length === 1, 'the message');
    await append('t', 'next');
    await sink.until(() => sink.frames.length === 2, 'the next message');
    assert.deepEqual(sink.messages(), ['in the read and in the buffer', 'next']);
  });

  test('a catching-up subscriber whose buffer overflows reads again and loses nothing', async () => {
    const { store: held, control } = instrumented(store);
    hub = make(held, { catchUpBufferMessages: 2 });
    const sink = new RecordingSink();
    control.holdAfter = true;
    hub.subscribe(['t'], 't', 'json', sink, await store.ntfyHeadId());
    await settle();
    for (let i = 0; i < 5; i++) await append('t', `m${i}`);
    const readsBefore = control.reads;
    control.release();
    await sink.until(() => sink.frames.length === 5, 'all five');
    assert.deepEqual(sink.messages(), ['m0', 'm1', 'm2', 'm3', 'm4']);
    assert.equal(control.reads, readsBefore + 1, 'one more read after the overflow');
  });

  test('missed append events are bridged with one read of the held topics, in order', async () => {
    const { store: lossy, control } = instrumented(store);
    hub = make(lossy);
    const sink = new RecordingSink();
    const other = new RecordingSink();
    hub.subscribe(['t'], 't', 'json', sink, await store.ntfyHeadId());
    hub.subscribe(['u'], 'u', 'json', other, await store.ntfyHeadId());
    await settle();
    control.dropEvent = (event) => event.message.message === 'lost' || event.message.message === 'lost too';
    await append('t', 'lost');
    await append('u', 'lost too');
    await append('t', 'heard');
    await sink.until(() => sink.frames.length === 2 && other.frames.length === 1, 'the bridged messages');
    assert.deepEqual([sink.messages(), other.messages()], [['lost', 'heard'], ['lost too']]);
    assert.equal(await counter(metrics.ntfyFeedBridges), 1);
    control.dropEvent = () => false;
    await append('t', 'after');
    await sink.until(() => sink.frames.length === 3, 'the chain resumed');
    assert.equal(await counter(metrics.ntfyFeedBridges), 1, 'no further bridge');
  });

  test('events heard while a bridge reads are followed afterwards; too many are dropped and bridged again', async () => {
    const { store: held, control } = instrumented(store);
    hub = make(held, { feedQueueEvents: 3 });
    const sink = new RecordingSink();
    hub.subscribe(['t'], 't', 'json', sink, await store.ntfyHeadId());
    await settle();
    control.dropEvent = (event) => event.message.message === 'lost';
    control.holdAfter = true;
    await append('t', 'lost');
    await append('t', 'reveals the gap');
    control.dropEvent = () => false;
    for (let i = 0; i < 6; i++) await append('t', `while reading ${i}`);
    control.release();
    await sink.until(() => sink.frames.length === 8, 'all eight');
    assert.deepEqual(sink.messages(), ['lost', 'reveals the gap', ...Array.from({ length: 6 }, (_, i) => `while reading ${i}`)]);
    assert.equal(await counter(metrics.ntfyFeedBridges), 2);
  });

  test('an append nobody heard is delivered by the safety check', async () => {
    const { store: quiet, control } = instrumented(store);
    control.dropEvent = () => true;
    hub = make(quiet);
    const sink = new RecordingSink();
    hub.subscribe(['t'], 't', 'json', sink, await store.ntfyHeadId());
    await settle();
    await append('t', 'unheard');
    assert.equal(await hub.safetyCheck(), true);
    await sink.until(() => sink.frames.length === 1, 'the bridged message');
    assert.equal(await hub.safetyCheck(), false, 'the feed is at the head now');
  });

  test('a catch-up that fails on a store error is tried again after a delay', async () => {
    const { store: flaky, control } = instrumented(store);
    hub = make(flaky);
    await append('t', 'after the failure');
    control.failNext = true;
    const sink = new RecordingSink();
    hub.subscribe(['t'], 't', 'json', sink, null);
    const deadline = Date.now() + WAIT_MS;
    while ((await counter(metrics.ntfyDrainFailures)) === 0 && Date.now() < deadline) await settle();
    assert.equal(await counter(metrics.ntfyDrainFailures), 1);
    assert.deepEqual(sink.frames, []);
    scheduler.advance(DRAIN_RETRY_MS);
    await sink.until(() => sink.frames.length === 1, 'the retried catch-up');
  });

  test('a live subscriber whose socket backs up is not written to; it catches up from the store once the socket drains', async () => {
    const sink = new RecordingSink();
    hub.subscribe(['t'], 't', 'json', sink, await store.ntfyHeadId());
    await settle();
    await append('t', 'm0');
    await sink.until(() => sink.frames.length === 1, 'the first message');
    sink.stalled = true;
    await append('t', 'm1');
    await append('t', 'm2');
    await settle();
    assert.equal(sink.frames.length, 1, 'nothing written to a congested socket');
    sink.stalled = false;
    await sink.until(() => sink.frames.length === 3, 'the rest');
    await append('t', 'm3');
    await sink.until(() => sink.frames.length === 4, 'live again');
    assert.deepEqual(sink.messages(), ['m0', 'm1', 'm2', 'm3']);
  });

  test('a subscriber that stops reading is not read for, and is disconnected after the timeout', async () => {
    const sink = new RecordingSink();
    sink.stalled = true;
    await append('t', 'waits in the store');
    hub.subscribe(['t'], 't', 'json', sink, null);
    await settle();
    assert.equal(sink.frames.length, 0);
    scheduler.advance(SLOW_SUBSCRIBER_TIMEOUT_MS);
    await sink.until(() => sink.closed, 'the disconnect');
    assert.equal(hub.size, 0);
    assert.equal(await counter(metrics.ntfySlowSubscribersDropped), 1);
  });

  test('a message that expired before its event arrived is not offered', async () => {
    const clock = new ManualClock();
    await store.close();
    store = await openSqliteStore({ path: ':memory:', clock });
    const { store: slow, control } = instrumented(store);
    hub = make(slow);
    const sink = new RecordingSink();
    hub.subscribe(['t'], 't', 'json', sink, await store.ntfyHeadId());
    await settle();
    control.delayEvents = true;
    await store.appendNtfyMessage('t', { message: 'expires first' }, 1_000);
    await store.appendNtfyMessage('t', { message: 'kept' }, TTL_MS);
    clock.advance(1_000);
    control.flushEvents();
    await sink.until(() => sink.frames.length >= 1, 'a message');
    await settle();
    assert.deepEqual(sink.messages(), ['kept']);
  });

  test('close ends every subscription and forgets it', async () => {
    const sinks = [new RecordingSink(), new RecordingSink()];
    hub.subscribe(['a', 'b'], 'a,b', 'json', sinks[0] as RecordingSink, null);
    hub.subscribe(['b'], 'b', 'ws', sinks[1] as RecordingSink, null);
    assert.equal(hub.size, 2);
    hub.close();
    assert.deepEqual(
      sinks.map((s) => s.closed),
      [true, true],
    );
    assert.equal(hub.size, 0);
  });
});
