/**
 * The locally decided shared counter (rate-limit-counters.ts, `decideLocally`): its own fixed
 * windows decide at once on an injected clock, allowed requests reach the shared count gathered
 * per interval and summed per key, and the shared count's refusal spends the key until the shared
 * window ends. The adapters' behaviour is the store contract's (test/store/contract/rate-limits.ts).
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, mock, test } from 'node:test';
import { createLogger } from '../observability/logger.ts';
import { SHARED_COUNT_INTERVAL_MS, sharedRateLimitCounter, type RateLimitIncrement } from './rate-limit-counters.ts';

const WINDOW = { name: 'unit-local', points: 2, windowSecs: 10, decideLocally: true };

describe('a locally decided shared rate-limit counter', () => {
  let nowMs: number;
  let counted: Array<[string, number]>;
  /** What the shared store answers: [consumed, ms until its window ends]. */
  let sharedAnswer: [number, number];
  const increment: RateLimitIncrement = (key, points) => {
    counted.push([key, points]);
    return Promise.resolve(sharedAnswer);
  };
  const counter = () => sharedRateLimitCounter(WINDOW, { increment, logger: createLogger({ level: 'silent' }), nowMs: () => nowMs });

  beforeEach(() => {
    nowMs = 1_000_000;
    counted = [];
    sharedAnswer = [1, 10_000];
    mock.timers.enable({ apis: ['setTimeout'] });
  });
  afterEach(() => mock.timers.reset());

  test('its own window gives a key its points, refuses the rest until the window ends, and says the first refusal only', async () => {
    const limit = counter();
    assert.deepEqual(await limit.take('a'), { allowed: true });
    assert.deepEqual(await limit.take('a'), { allowed: true });
    nowMs += 4_000;
    assert.deepEqual(await limit.take('a'), { allowed: false, retryAfterMs: 6_000, firstRefusal: true });
    assert.deepEqual(await limit.take('a'), { allowed: false, retryAfterMs: 6_000, firstRefusal: false });
    assert.deepEqual(await limit.take('b'), { allowed: true }, 'another key has its own window');
    nowMs += 6_000;
    assert.deepEqual(await limit.take('a'), { allowed: true }, 'a new window once the first ended');
  });

  test('allowed requests reach the shared count once an interval, summed per key', async () => {
    const limit = counter();
    await limit.take('a');
    await limit.take('b');
    await limit.take('a');
    await limit.take('a'); // refused here: not counted in the shared store
    assert.deepEqual(counted, [], 'nothing counted before the interval');
    mock.timers.tick(SHARED_COUNT_INTERVAL_MS);
    assert.deepEqual(counted, [
      ['a', 2],
      ['b', 1],
    ]);
  });

  test('a key the shared count finds over its budget is refused until the shared window ends', async () => {
    const limit = counter();
    sharedAnswer = [5, 8_000]; // other replicas spent the key's budget
    assert.deepEqual(await limit.take('a'), { allowed: true }, 'decided from this process’s own count');
    mock.timers.tick(SHARED_COUNT_INTERVAL_MS);
    await Promise.resolve(); // the shared answer's continuation
    nowMs += 1_000;
    assert.deepEqual(await limit.take('a'), { allowed: false, retryAfterMs: 9_000, firstRefusal: true });
    nowMs += 9_000;
    assert.deepEqual(await limit.take('a'), { allowed: true }, 'allowed again once the shared window ended');
  });
});
