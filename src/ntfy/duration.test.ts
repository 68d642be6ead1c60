import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfigDuration, parseGoDuration } from './duration.ts';

test('Go durations parse to milliseconds, with fractions, several terms and a sign', () => {
  assert.equal(parseGoDuration('10m'), 600_000);
  assert.equal(parseGoDuration('30s'), 30_000);
  assert.equal(parseGoDuration('100ms'), 100);
  assert.equal(parseGoDuration('1h30m'), 5_400_000);
  assert.equal(parseGoDuration('1.5h'), 5_400_000);
  assert.equal(parseGoDuration('.5s'), 500);
  assert.equal(parseGoDuration('1500us'), 1.5);
  assert.equal(parseGoDuration('-30s'), -30_000);
  assert.equal(parseGoDuration('0'), 0);
  assert.equal(parseGoDuration('2d'), 172_800_000);
});

test('anything else is not a duration', () => {
  for (const bad of ['', '10', 'm', '10x', '1h30', 'h1', '1 h', 'ten minutes', '--1s', '1e3s', 'NaNs']) {
    assert.equal(parseGoDuration(bad), null, bad);
  }
});

test('configured durations also take whole seconds', () => {
  assert.equal(parseConfigDuration('43200'), 43_200_000);
  assert.equal(parseConfigDuration(' 12h '), 43_200_000);
  assert.equal(parseConfigDuration('soon'), null);
});
