import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  decodeNtfyId,
  encodeNtfyId,
  isNtfyMessageId,
  NTFY_MAX_MS,
  NTFY_MAX_SEQ,
  nextNtfyPosition,
  ntfyIdBefore,
  ntfyIdMs,
} from './ntfy-ids.ts';

const NOW = Date.UTC(2026, 0, 1);

test('ids are 12 alphanumeric characters that round-trip their position', () => {
  for (const position of [
    { ms: 0, seq: 0 },
    { ms: NOW, seq: 0 },
    { ms: NOW, seq: 12345 },
    { ms: NTFY_MAX_MS, seq: NTFY_MAX_SEQ },
  ]) {
    const id = encodeNtfyId(position);
    assert.ok(isNtfyMessageId(id), id);
    assert.deepEqual(decodeNtfyId(id), position);
  }
  assert.equal(encodeNtfyId({ ms: 0, seq: 0 }), '000000000000');
  assert.equal(encodeNtfyId({ ms: NTFY_MAX_MS, seq: NTFY_MAX_SEQ }), 'zzzzzzzzzzzz');
  assert.throws(() => encodeNtfyId({ ms: -1, seq: 0 }), RangeError);
  assert.throws(() => encodeNtfyId({ ms: 0, seq: NTFY_MAX_SEQ + 1 }), RangeError);
});

test('string order is position order', () => {
  const positions = [
    { ms: NOW - 1, seq: NTFY_MAX_SEQ },
    { ms: NOW, seq: 0 },
    { ms: NOW, seq: 1 },
    { ms: NOW, seq: 61 },
    { ms: NOW, seq: 62 },
    { ms: NOW + 1, seq: 0 },
    { ms: NOW * 10, seq: 0 },
  ];
  const ids = positions.map(encodeNtfyId);
  assert.deepEqual([...ids].sort(), ids);
});

test('the next position follows the clock, or the last id when the clock is not past it', () => {
  assert.deepEqual(nextNtfyPosition(null, NOW), { ms: NOW, seq: 0 });
  assert.deepEqual(nextNtfyPosition({ ms: NOW, seq: 4 }, NOW + 1), { ms: NOW + 1, seq: 0 });
  assert.deepEqual(nextNtfyPosition({ ms: NOW, seq: 4 }, NOW), { ms: NOW, seq: 5 });
  assert.deepEqual(nextNtfyPosition({ ms: NOW, seq: 4 }, NOW - 60_000), { ms: NOW, seq: 5 }, 'a clock behind the head');
  assert.deepEqual(nextNtfyPosition({ ms: NOW, seq: NTFY_MAX_SEQ }, NOW), { ms: NOW + 1, seq: 0 }, 'a full millisecond');
});

test('ntfyIdBefore is the last position before a millisecond', () => {
  const before = ntfyIdBefore(NOW) as string;
  assert.ok(before < encodeNtfyId({ ms: NOW, seq: 0 }));
  assert.ok(before >= encodeNtfyId({ ms: NOW - 1, seq: NTFY_MAX_SEQ }));
  assert.equal(ntfyIdBefore(0), null);
  assert.equal(ntfyIdMs(encodeNtfyId({ ms: NOW, seq: 9 })), NOW);
});

test('only exactly 12 characters of [0-9A-Za-z] are ids', () => {
  for (const bad of ['', 'abc', 'AbCdEf12345', 'AbCdEf1234567', 'AbCdEf12345-', 'AbCdEf12345é']) {
    assert.equal(isNtfyMessageId(bad), false, bad);
    assert.equal(decodeNtfyId(bad), null, bad);
  }
});
