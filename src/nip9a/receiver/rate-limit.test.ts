import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../util/clock.ts';
import { CallbackRateLimiter } from './rate-limit.ts';

test('a callback gets its burst, then its rate, each callback on its own', () => {
  const clock = new ManualClock();
  const limiter = new CallbackRateLimiter(2, 3, clock);
  for (let i = 0; i < 3; i++) assert.deepEqual(limiter.take('a'), { allowed: true });
  assert.deepEqual(limiter.take('a'), { allowed: false, retryAfterSecs: 1, firstRefusal: true });
  assert.deepEqual(limiter.take('a'), { allowed: false, retryAfterSecs: 1, firstRefusal: false }, 'the same flood');
  assert.deepEqual(limiter.take('b'), { allowed: true }, 'another callback is untouched');
  clock.advance(500);
  assert.deepEqual(limiter.take('a'), { allowed: true }, 'one token back after half a second at 2/s');
  assert.deepEqual(limiter.take('a'), { allowed: false, retryAfterSecs: 1, firstRefusal: true }, 'a new flood after an allowed POST');
  clock.advance(60_000);
  for (let i = 0; i < 3; i++) assert.equal(limiter.take('a').allowed, true, 'refilled to the burst, never past it');
  assert.equal(limiter.take('a').allowed, false);
});

test('Retry-After covers the wait for one token at a slow rate', () => {
  const limiter = new CallbackRateLimiter(0.1, 1, new ManualClock());
  assert.equal(limiter.take('a').allowed, true);
  assert.deepEqual(limiter.take('a'), { allowed: false, retryAfterSecs: 10, firstRefusal: true });
});

test('past its bound the limiter forgets full buckets (they would be recreated full), never a draining one', () => {
  const clock = new ManualClock();
  const limiter = new CallbackRateLimiter(1, 2, clock, 2);
  limiter.take('busy');
  limiter.take('busy');
  limiter.take('idle-1');
  clock.advance(1_000);
  limiter.take('new');
  assert.equal(limiter.size, 2, 'idle-1 refilled and was dropped; busy kept');
  assert.equal(limiter.take('busy').allowed, true, 'busy got one token back over the second');
  assert.equal(limiter.take('busy').allowed, false);
});
