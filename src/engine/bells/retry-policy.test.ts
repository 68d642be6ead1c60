import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { WATCHER_WALK_START, type FanoutJob } from '../../store/port-bells.ts';
import { MAX_FANOUT_ATTEMPTS, clampToLifetime, fanoutRetryDelaySecs, isFanoutJobExpired, nextFanoutRetry } from './retry-policy.ts';

const job = (attempt: number, expiresAt = 1_000_000): FanoutJob => ({
  eventJson: '{}',
  cursor: WATCHER_WALK_START,
  senderName: null,
  attempt,
  expiresAt,
});

describe('fan-out retry policy', () => {
  test("divine's backoff vectors (base, attempt, Retry-After)", () => {
    const vectors: Array<[number, number, number, number]> = [
      [5, 1, 0, 5],
      [5, 2, 0, 10],
      [5, 7, 0, 300],
      [5, 65535, 0, 300],
      [5, 1, 120, 120],
      [5, 1, 3600, 3600],
    ];
    for (const [base, attempt, retryAfter, expected] of vectors) {
      assert.equal(fanoutRetryDelaySecs(base, attempt, retryAfter), expected, `(${base}, ${attempt}, ${retryAfter})`);
    }
  });

  test('a delay is clamped to the job’s remaining lifetime (expires_at 10000, now 100)', () => {
    assert.equal(clampToLifetime(Number.MAX_SAFE_INTEGER, 10_000, 100), 9900);
    assert.equal(clampToLifetime(Infinity, 10_000, 100), 9900);
    assert.equal(clampToLifetime(5, 10_000, 100), 5);
    assert.equal(clampToLifetime(5, 100, 200), 0, 'never negative');
  });

  test('a retry raises the attempt count, which persists in the job', () => {
    const decision = nextFanoutRetry(job(0), 5, 0, 0);
    assert.deepEqual(decision, { kind: 'retry', job: job(1), delaySecs: 5 });
    assert.deepEqual(nextFanoutRetry(job(3), 5, 0, 0), { kind: 'retry', job: job(4), delaySecs: 40 });
  });

  test('a Retry-After longer than the cap stays the floor, bounded by the lifetime', () => {
    assert.deepEqual(nextFanoutRetry(job(0, 1000), 5, 3600, 0), { kind: 'retry', job: job(1, 1000), delaySecs: 1000 });
    assert.deepEqual(nextFanoutRetry(job(0), 5, 3600, 0), { kind: 'retry', job: job(1), delaySecs: 3600 });
  });

  test(`the page is exhausted at its ${MAX_FANOUT_ATTEMPTS}th attempt, with the delay a successor inherits`, () => {
    assert.equal(nextFanoutRetry(job(MAX_FANOUT_ATTEMPTS - 2), 5, 0, 0).kind, 'retry');
    assert.deepEqual(nextFanoutRetry(job(MAX_FANOUT_ATTEMPTS - 1), 5, 0, 0), { kind: 'exhausted', delaySecs: 300 });
    assert.deepEqual(nextFanoutRetry(job(MAX_FANOUT_ATTEMPTS - 1, 60), 5, 0, 0), { kind: 'exhausted', delaySecs: 60 });
  });

  test('about 30 minutes of default backoff come before a page is given up', () => {
    let total = 0;
    for (let attempt = 1; attempt < MAX_FANOUT_ATTEMPTS; attempt++) total += fanoutRetryDelaySecs(5, attempt, 0);
    assert.equal(total, 5 + 10 + 20 + 40 + 80 + 160 + 300 * 5);
    assert.ok(total > 25 * 60 && total < 35 * 60);
  });

  test('expiry is at expires_at: 99 is live, 100 and 101 are expired', () => {
    assert.equal(isFanoutJobExpired(job(0, 100), 99), false);
    assert.equal(isFanoutJobExpired(job(0, 100), 100), true);
    assert.equal(isFanoutJobExpired(job(0, 100), 101), true);
  });
});
