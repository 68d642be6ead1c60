import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultConfig } from '../../config/defaults.ts';
import { eventsConfigProblems, validateConfig } from '../../config/validate.ts';
import { optionalEventKinds } from './handler.ts';

test('by default every optional kind is off: the live subscription gains nothing', () => {
  const config = defaultConfig();
  assert.deepEqual(config.events, {
    text_notes: false,
    zaps: false,
    zaps_allow_unverified: false,
    gift_wraps: false,
    dm_push_min_interval_secs: 60,
    lnurl_allow_loopback: false,
  });
  assert.deepEqual(optionalEventKinds(config.events), []);
  assert.deepEqual(eventsConfigProblems(config.events, 'production'), []);
});

test('each setting adds its kind', () => {
  const events = { ...defaultConfig().events, text_notes: true, zaps: true, gift_wraps: true };
  assert.deepEqual(optionalEventKinds(events), [1, 1059, 9735]);
  assert.deepEqual(optionalEventKinds({ ...events, text_notes: false, gift_wraps: false }), [9735]);
});

test('validation: a DM interval below one second, and unverified zaps without zaps, are refused', () => {
  const config = defaultConfig();
  config.events = { ...config.events, dm_push_min_interval_secs: 0, zaps_allow_unverified: true };
  assert.deepEqual(
    validateConfig(config).filter((p) => p.startsWith('events.')),
    [
      'events.dm_push_min_interval_secs must be a whole number of seconds, 1 or more',
      'events.zaps_allow_unverified is set without events.zaps',
    ],
  );
  config.events = { ...config.events, dm_push_min_interval_secs: 1.5, zaps_allow_unverified: false };
  assert.equal(eventsConfigProblems(config.events, 'test').length, 1);
  const loopback = { ...config.events, dm_push_min_interval_secs: 60, lnurl_allow_loopback: true };
  assert.deepEqual(eventsConfigProblems(loopback, 'production'), ['events.lnurl_allow_loopback is for test suites only (NODE_ENV=test)']);
  assert.deepEqual(eventsConfigProblems(loopback, 'test'), []);
});
