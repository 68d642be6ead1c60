import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RateLimitDecision } from '../../../src/store/port-rate-limits.ts';
import { MINUTE_MS, type ContractContext } from './context.ts';

/** Long enough that no window ends during a test, however slow the machine. */
const HOUR_SECS = 3600;
const ADDRESS = '203.0.113.7';
const OTHER_ADDRESS = '2001:db8::7';

function refused(decision: RateLimitDecision | undefined): { retryAfterMs: number; firstRefusal: boolean } {
  assert.ok(decision && !decision.allowed, `expected a refusal, got ${JSON.stringify(decision)}`);
  return decision;
}

export function rateLimitContract(ctx: ContractContext): void {
  describe('rate-limit counters', () => {
    test('a key gets its points in a window, then refusals until the window ends; only the first refusal says so', async () => {
      const counter = ctx.store().rateLimitCounter({ name: 'contract', points: 3, windowSecs: HOUR_SECS });
      const decisions: RateLimitDecision[] = [];
      for (let i = 0; i < 6; i++) decisions.push(await counter.take(ADDRESS));
      assert.deepEqual(
        decisions.map((d) => d.allowed),
        [true, true, true, false, false, false],
      );
      const first = refused(decisions[3]);
      assert.equal(first.firstRefusal, true);
      assert.ok(first.retryAfterMs <= HOUR_SECS * 1000, `retry after ${first.retryAfterMs} ms, beyond the window`);
      assert.ok(first.retryAfterMs > HOUR_SECS * 1000 - MINUTE_MS, `retry after ${first.retryAfterMs} ms, the window is an hour`);
      for (const later of decisions.slice(4)) {
        const refusal = refused(later);
        assert.equal(refusal.firstRefusal, false);
        assert.ok(refusal.retryAfterMs > 0 && refusal.retryAfterMs <= first.retryAfterMs);
      }
    });

    test('keys count apart, and so do counters of different names', async () => {
      const store = ctx.store();
      const logins = store.rateLimitCounter({ name: 'contract-a', points: 1, windowSecs: HOUR_SECS });
      const sockets = store.rateLimitCounter({ name: 'contract-b', points: 1, windowSecs: HOUR_SECS });
      assert.equal((await logins.take(ADDRESS)).allowed, true);
      assert.equal((await logins.take(ADDRESS)).allowed, false);
      assert.equal((await logins.take(OTHER_ADDRESS)).allowed, true, 'another key has its own budget');
      assert.equal((await sockets.take(ADDRESS)).allowed, true, 'another counter has its own budget');
    });

    test('counters of one name share their counts', async () => {
      const store = ctx.store();
      const window = { name: 'contract-shared', points: 2, windowSecs: HOUR_SECS };
      assert.equal((await store.rateLimitCounter(window).take(ADDRESS)).allowed, true);
      assert.equal((await store.rateLimitCounter(window).take(ADDRESS)).allowed, true);
      assert.equal((await store.rateLimitCounter(window).take(ADDRESS)).allowed, false);
    });

    test('many keys checked in one turn: each counted in its own window, repeats of a key in turn', async () => {
      const counter = ctx.store().rateLimitCounter({ name: 'contract-turn', points: 2, windowSecs: HOUR_SECS });
      const keys = Array.from({ length: 40 }, (_, i) => `198.51.100.${i}`);
      // Three checks of every key, all made in one turn (one store call per turn on Redis).
      const decisions = await Promise.all(keys.flatMap((key) => [counter.take(key), counter.take(key), counter.take(key)]));
      keys.forEach((key, i) => {
        const ofKey = decisions.slice(3 * i, 3 * i + 3);
        assert.deepEqual(
          ofKey.map((d) => d.allowed),
          [true, true, false],
          `${key}: its first two allowed, in the order taken`,
        );
        assert.equal(refused(ofKey[2]).firstRefusal, true);
      });
      assert.equal((await counter.take(keys[0] as string)).allowed, false, 'the counts stay after the turn');
    });

    test('a counter that decides locally gives a key its points, then refuses at once; only the first refusal says so', async () => {
      const counter = ctx.store().rateLimitCounter({ name: 'contract-local', points: 3, windowSecs: HOUR_SECS, decideLocally: true });
      const decisions: RateLimitDecision[] = [];
      for (let i = 0; i < 5; i++) decisions.push(await counter.take(ADDRESS));
      assert.deepEqual(
        decisions.map((d) => d.allowed),
        [true, true, true, false, false],
      );
      assert.equal(refused(decisions[3]).firstRefusal, true);
      assert.equal(refused(decisions[4]).firstRefusal, false);
      assert.equal((await counter.take(OTHER_ADDRESS)).allowed, true, 'another key has its own budget');
    });

    test('concurrent takes never let more than the points through', async () => {
      const counter = ctx.store().rateLimitCounter({ name: 'contract-concurrent', points: 7, windowSecs: HOUR_SECS });
      const decisions = await Promise.all(Array.from({ length: 30 }, () => counter.take(ADDRESS)));
      assert.equal(decisions.filter((d) => d.allowed).length, 7);
      assert.equal(decisions.filter((d) => !d.allowed && d.firstRefusal).length, 1, 'one first refusal');
    });

    test('a window that is not whole seconds, or no points, is refused when the counter is made', () => {
      const store = ctx.store();
      assert.throws(() => store.rateLimitCounter({ name: 'contract-bad', points: 0, windowSecs: 60 }), RangeError);
      assert.throws(() => store.rateLimitCounter({ name: 'contract-bad', points: 5, windowSecs: 0.5 }), RangeError);
    });
  });
}
