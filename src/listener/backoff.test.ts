import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RECONNECT_INITIAL_BACKOFF_MS, RECONNECT_MAX_BACKOFF_MS, reconnectDelayMs } from './backoff.ts';

const policy = (random: number) => ({ initialMs: RECONNECT_INITIAL_BACKOFF_MS, maxMs: RECONNECT_MAX_BACKOFF_MS, random: () => random });

test('the backoff ceiling doubles per attempt from 1 s up to 60 s', () => {
  const justBelowOne = 0.999999;
  assert.equal(reconnectDelayMs(0, policy(justBelowOne)), 999);
  assert.equal(reconnectDelayMs(1, policy(justBelowOne)), 1_999);
  assert.equal(reconnectDelayMs(5, policy(justBelowOne)), 31_999);
  assert.equal(reconnectDelayMs(6, policy(justBelowOne)), 59_999);
  assert.equal(reconnectDelayMs(10_000, policy(justBelowOne)), 59_999);
});

test('full jitter: the delay is uniform between zero and the ceiling', () => {
  assert.equal(reconnectDelayMs(3, policy(0)), 0);
  assert.equal(reconnectDelayMs(3, policy(0.5)), 4_000);
});
