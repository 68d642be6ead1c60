import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RecentValues } from './recent-values.ts';

test('RecentValues derives once per input while it is held', () => {
  const calls: string[] = [];
  const memo = new RecentValues((input) => {
    calls.push(input);
    return input.toUpperCase();
  }, 2);
  assert.equal(memo.get('a'), 'A');
  assert.equal(memo.get('a'), 'A', 'a hit answers the same value');
  assert.deepEqual(calls, ['a'], 'the second get of a held input does not derive again');
});

test('RecentValues holds at most its capacity, dropping the oldest input first', () => {
  const calls: string[] = [];
  const memo = new RecentValues((input) => {
    calls.push(input);
    return input.length;
  }, 2);
  memo.get('a');
  memo.get('bb');
  memo.get('ccc');
  assert.equal(memo.size, 2, 'the third input evicts one');
  memo.get('bb');
  memo.get('a');
  assert.deepEqual(calls, ['a', 'bb', 'ccc', 'a'], '"a", the oldest, was evicted and derived again; "bb" was still held');
});

test('RecentValues refuses a capacity that is not a positive integer', () => {
  assert.throws(() => new RecentValues((s) => s, 0), RangeError);
  assert.throws(() => new RecentValues((s) => s, 1.5), RangeError);
});

test('RecentValues does not hold a derivation that throws', () => {
  let fail = true;
  const memo = new RecentValues((input) => {
    if (fail) throw new Error(`no ${input}`);
    return input;
  }, 4);
  assert.throws(() => memo.get('x'), /no x/);
  fail = false;
  assert.equal(memo.get('x'), 'x', 'the next get derives again');
  assert.equal(memo.size, 1);
});
