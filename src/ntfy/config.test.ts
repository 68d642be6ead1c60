import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultConfig } from '../config/defaults.ts';
import { ntfyConfigProblems, ntfySettings } from './config.ts';

test('the defaults are valid: 12 h cache, 45 s keepalive, 60 s WebSocket timeout, everything open', () => {
  const config = defaultConfig().ntfy;
  assert.deepEqual(ntfyConfigProblems(config), []);
  const settings = ntfySettings(config);
  assert.equal(settings.cacheDurationMs, 12 * 3_600_000);
  assert.equal(settings.keepaliveIntervalMs, 45_000);
  assert.equal(settings.websocketTimeoutMs, 60_000);
  assert.equal(settings.authorizer.enforcing, false);
});

test('cache_duration takes Go durations or seconds', () => {
  assert.equal(ntfySettings({ ...defaultConfig().ntfy, cache_duration: '1h30m' }).cacheDurationMs, 5_400_000);
  assert.equal(ntfySettings({ ...defaultConfig().ntfy, cache_duration: '600' }).cacheDurationMs, 600_000);
});

test('one problem line per wrong key', () => {
  const problems = ntfyConfigProblems({
    ...defaultConfig().ntfy,
    cache_duration: 'forever',
    message_size_limit_bytes: 1000,
    websocket_timeout_secs: 30,
    base_url: 'push.example.com',
    auth_default_access: 'open',
    auth_tokens: ['tk_x:rw'],
    visitor_exempt_hosts: ['localhost'],
    visitor_request_burst: -1,
  });
  assert.equal(problems.length, 8, problems.join('\n'));
  for (const key of [
    'cache_duration',
    'message_size_limit_bytes',
    'websocket_timeout_secs',
    'base_url',
    'auth_default_access',
    'auth_tokens',
    'visitor_exempt_hosts',
    'visitor_request_burst',
  ]) {
    assert.ok(
      problems.some((p) => p.startsWith(`ntfy.${key}`)),
      key,
    );
  }
});

test("delay bounds: ntfy's 10 s and 3 days by default, configurable, checked", () => {
  const settings = ntfySettings(defaultConfig().ntfy);
  assert.deepEqual([settings.minDelayMs, settings.maxDelayMs], [10_000, 3 * 86_400_000]);
  const custom = { ...defaultConfig().ntfy, min_delay: '1m', max_delay: '12h' };
  assert.deepEqual(ntfyConfigProblems(custom), []);
  assert.deepEqual([ntfySettings(custom).minDelayMs, ntfySettings(custom).maxDelayMs], [60_000, 43_200_000]);
  for (const [min, max, key] of [
    ['soon', '3d', 'ntfy.min_delay'],
    ['500ms', '3d', 'ntfy.min_delay'],
    ['10s', 'never', 'ntfy.max_delay'],
    ['1h', '30m', 'ntfy.max_delay'],
  ] as const) {
    const problems = ntfyConfigProblems({ ...defaultConfig().ntfy, min_delay: min, max_delay: max });
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.ok(problems[0]?.startsWith(key), problems[0]);
  }
});
