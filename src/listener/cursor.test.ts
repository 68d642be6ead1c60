import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeTimers, MemoryCursorStore, silentLogger } from '../../test/listener/fakes.ts';
import { RelayCursor } from './cursor.ts';

const RELAY = 'wss://relay.example';

function setup() {
  const timers = new FakeTimers();
  const store = new MemoryCursorStore();
  const cursor = new RelayCursor({ relay: RELAY, store, clock: timers.clock, timers, logger: silentLogger(), flushIntervalMs: 1_000 });
  const nowSecs = Math.floor(timers.clock.nowMs() / 1000);
  return { timers, store, cursor, nowSecs };
}

/** Lets the promise chains started by a fired timer run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('RelayCursor', () => {
  test('batches writes: many accepted events, one store write per interval', async () => {
    const { timers, store, cursor, nowSecs } = setup();
    for (let i = 0; i < 50; i++) cursor.noteAccepted(nowSecs - 100 + i);
    assert.equal(store.writes, 0);
    timers.advance(1_000);
    await settle();
    assert.equal(store.writes, 1);
    assert.equal(store.cursors.get(RELAY), nowSecs - 51);
  });

  test('never moves backwards and clamps a future created_at to now', async () => {
    const { store, cursor, nowSecs } = setup();
    cursor.noteAccepted(nowSecs + 365 * 86_400);
    assert.equal(cursor.current, nowSecs);
    cursor.noteAccepted(nowSecs - 10);
    assert.equal(cursor.current, nowSecs);
    await cursor.close();
    assert.equal(store.cursors.get(RELAY), nowSecs);
  });

  test('loads the stored cursor once and flushes on close', async () => {
    const { store, cursor, nowSecs } = setup();
    store.cursors.set(RELAY, nowSecs - 500);
    assert.equal(await cursor.load(), nowSecs - 500);
    store.cursors.set(RELAY, 1);
    assert.equal(await cursor.load(), nowSecs - 500);
    cursor.noteAccepted(nowSecs - 5);
    await cursor.close();
    assert.equal(store.cursors.get(RELAY), nowSecs - 5);
    assert.equal(store.writes, 1);
  });

  test('a failed write is kept and retried; a failed read counts as no cursor', async () => {
    const { timers, store, cursor, nowSecs } = setup();
    store.failReads = true;
    assert.equal(await cursor.load(), null);
    store.failWrites = true;
    cursor.noteAccepted(nowSecs - 1);
    timers.advance(1_000);
    await settle();
    assert.equal(store.cursors.get(RELAY), undefined);
    store.failWrites = false;
    timers.advance(1_000);
    await settle();
    assert.equal(store.cursors.get(RELAY), nowSecs - 1);
  });
});
