import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NtfyError } from './errors.ts';
import { parseSince } from './since.ts';

const NOW = 1_800_000_000_000;

test('empty means none for a stream and all for a poll', () => {
  assert.deepEqual(parseSince(undefined, false, NOW), { kind: 'none' });
  assert.deepEqual(parseSince('', false, NOW), { kind: 'none' });
  assert.deepEqual(parseSince(undefined, true, NOW), { kind: 'all' });
});

test('keywords, ids, timestamps and durations', () => {
  assert.deepEqual(parseSince('all', false, NOW), { kind: 'all' });
  assert.deepEqual(parseSince('none', true, NOW), { kind: 'none' });
  assert.deepEqual(parseSince('latest', false, NOW), { kind: 'latest' });
  assert.deepEqual(parseSince('AbCdEf123456', false, NOW), { kind: 'id', id: 'AbCdEf123456' });
  assert.deepEqual(parseSince('123456789012', false, NOW), { kind: 'id', id: '123456789012' }, '12 digits are an id, as in ntfy');
  assert.deepEqual(parseSince('1700000000', false, NOW), { kind: 'time', ms: 1_700_000_000_000 });
  assert.deepEqual(parseSince('10m', false, NOW), { kind: 'time', ms: NOW - 600_000 });
  assert.deepEqual(parseSince('100ms', false, NOW), { kind: 'time', ms: NOW - 100 });
  assert.deepEqual(parseSince('1h30m', false, NOW), { kind: 'time', ms: NOW - 5_400_000 });
});

test('garbage is 400 40008', () => {
  for (const bad of ['INVALID', 'yesterday', 'AbCdEf12345', 'AbCdEf1234567', '10 m', '1e9', '99999999999999999999']) {
    assert.throws(
      () => parseSince(bad, false, NOW),
      (err: unknown) => err instanceof NtfyError && err.code === 40008,
      bad,
    );
  }
});
