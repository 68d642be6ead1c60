import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { throttleWindowStartMs } from '../../../src/store/port-throttle.ts';
import { MINUTE_MS, type ContractContext } from './context.ts';

const ALICE = 'a1'.repeat(32);
const BOB = 'b2'.repeat(32);
const HOUR_SECS = 3600;
const HOUR_MS = HOUR_SECS * 1000;

export function throttleContract(ctx: ContractContext): void {
  describe('per-user push throttle', () => {
    test('a limit of 2 lets two pushes through in a window and withholds the rest, counting both', async () => {
      const store = ctx.store();
      const startMs = throttleWindowStartMs(ctx.clock().nowMs(), HOUR_SECS);
      const decisions = [];
      for (let i = 0; i < 5; i++) decisions.push(await store.takeThrottleSlot(ALICE, 2, HOUR_SECS));
      assert.deepEqual(
        decisions.map((d) => d.allowed),
        [true, true, false, false, false],
      );
      assert.deepEqual(decisions[4]?.window, { startMs, pushed: 2, withheld: 3 });
      assert.deepEqual(await store.readThrottleWindow(ALICE, HOUR_SECS), { startMs, pushed: 2, withheld: 3 });
    });

    test('users count apart; a user never counted reads zeros', async () => {
      const store = ctx.store();
      await store.takeThrottleSlot(ALICE, 1, HOUR_SECS);
      assert.equal((await store.takeThrottleSlot(BOB, 1, HOUR_SECS)).allowed, true);
      assert.equal((await store.takeThrottleSlot(ALICE, 1, HOUR_SECS)).allowed, false);
      const carol = 'c3'.repeat(32);
      assert.deepEqual(await store.readThrottleWindow(carol, HOUR_SECS), {
        startMs: throttleWindowStartMs(ctx.clock().nowMs(), HOUR_SECS),
        pushed: 0,
        withheld: 0,
      });
    });

    test('windows follow the store clock: the next clock hour starts from zero, the last minute of one still counts in it', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      // To the first minute of a clock hour.
      clock.advance(HOUR_MS - (clock.nowMs() % HOUR_MS) + MINUTE_MS);
      const firstStart = throttleWindowStartMs(clock.nowMs(), HOUR_SECS);
      assert.equal((await store.takeThrottleSlot(ALICE, 1, HOUR_SECS)).allowed, true);
      clock.advance(58 * MINUTE_MS);
      const late = await store.takeThrottleSlot(ALICE, 1, HOUR_SECS);
      assert.deepEqual(late, { allowed: false, window: { startMs: firstStart, pushed: 1, withheld: 1 } });
      clock.advance(2 * MINUTE_MS);
      const next = await store.takeThrottleSlot(ALICE, 1, HOUR_SECS);
      assert.deepEqual(next, { allowed: true, window: { startMs: firstStart + HOUR_MS, pushed: 1, withheld: 0 } });
      assert.deepEqual(await store.readThrottleWindow(ALICE, HOUR_SECS), { startMs: firstStart + HOUR_MS, pushed: 1, withheld: 0 });
    });

    test('concurrent takes never let more than the limit through', async () => {
      const store = ctx.store();
      const decisions = await Promise.all(Array.from({ length: 20 }, () => store.takeThrottleSlot(ALICE, 7, HOUR_SECS)));
      assert.equal(decisions.filter((d) => d.allowed).length, 7);
      assert.deepEqual(await store.readThrottleWindow(ALICE, HOUR_SECS), {
        startMs: throttleWindowStartMs(ctx.clock().nowMs(), HOUR_SECS),
        pushed: 7,
        withheld: 13,
      });
    });
  });
}
