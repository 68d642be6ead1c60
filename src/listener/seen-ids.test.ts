import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SeenIds } from './seen-ids.ts';

test('SeenIds evicts the oldest id when full', () => {
  const seen = new SeenIds(3);
  for (const id of ['a', 'b', 'c']) seen.add(id);
  seen.add('d');
  assert.equal(seen.has('a'), false);
  assert.ok(seen.has('b') && seen.has('c') && seen.has('d'));
  assert.equal(seen.size, 3);
});

test('SeenIds refreshes an id added again, so it is evicted last', () => {
  const seen = new SeenIds(2);
  seen.add('a');
  seen.add('b');
  seen.add('a');
  seen.add('c');
  assert.ok(seen.has('a'));
  assert.equal(seen.has('b'), false);
});

test('SeenIds forgets a deleted id and rejects a non-positive capacity', () => {
  const seen = new SeenIds(2);
  seen.add('a');
  seen.delete('a');
  assert.equal(seen.has('a'), false);
  assert.throws(() => new SeenIds(0), RangeError);
});
