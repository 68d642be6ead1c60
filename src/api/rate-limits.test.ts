import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Writable } from 'node:stream';
import { Hono } from 'hono';
import { defaultConfig, type Config } from '../config/defaults.ts';
import { createLogger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import { memoryRateLimitCounter } from '../store/rate-limit-counters.ts';
import type { RateLimitCounter, RateLimitStore, RateLimitWindow } from '../store/port-rate-limits.ts';
import { createClientAddressPolicy } from './client-address.ts';
import { HttpError } from './errors.ts';
import { createRateLimits, rateWindow, type RateLimits } from './rate-limits.ts';

/** The SQLite adapter's counters, and the windows asked for. */
function memoryStore(): RateLimitStore & { windows: RateLimitWindow[] } {
  const counters = new Map<string, RateLimitCounter>();
  const windows: RateLimitWindow[] = [];
  return {
    windows,
    rateLimitCounter(window) {
      windows.push(window);
      let counter = counters.get(window.name);
      if (!counter) counters.set(window.name, (counter = memoryRateLimitCounter(window)));
      return counter;
    },
  };
}

function limitsWith(change: (config: Config) => void, store = memoryStore()): { limits: RateLimits; metrics: Metrics; lines: unknown[] } {
  const config = defaultConfig();
  change(config);
  const lines: unknown[] = [];
  const sink = new Writable({ write: (chunk, _encoding, done) => (lines.push(JSON.parse(String(chunk))), done()) });
  const logger = createLogger({ level: 'warn', destination: sink });
  const metrics = new Metrics();
  const limits = createRateLimits({ config, store, policy: createClientAddressPolicy(['127.0.0.1']), metrics, logger });
  return { limits, metrics, lines };
}

describe('rateWindow', () => {
  test('a rate with a burst is a window of the burst lasting burst / rate seconds', () => {
    assert.deepEqual(rateWindow('a', 120 / 60, 60), { name: 'a', points: 60, windowSecs: 30 });
    assert.deepEqual(rateWindow('b', 200, 400), { name: 'b', points: 400, windowSecs: 2 });
    assert.deepEqual(rateWindow('c', 40, 200), { name: 'c', points: 200, windowSecs: 5 });
  });

  test('a burst under one second of the rate becomes a one-second window of the rate', () => {
    assert.deepEqual(rateWindow('d', 100, 10), { name: 'd', points: 100, windowSecs: 1 });
  });
});

describe('createRateLimits', () => {
  test('the defaults: 60 per 30 s per address and 30 per 30 s per pubkey on NIP-98 routes, 10 logins a minute', () => {
    const store = memoryStore();
    const { limits } = limitsWith(() => undefined, store);
    limits.caller('user_api');
    const byName = new Map(store.windows.map((w) => [w.name, w]));
    assert.deepEqual(byName.get('user_api:address'), { name: 'user_api:address', points: 60, windowSecs: 30 });
    assert.deepEqual(byName.get('user_api:pubkey'), { name: 'user_api:pubkey', points: 30, windowSecs: 30 });
    assert.deepEqual(byName.get('console_login:address'), { name: 'console_login:address', points: 10, windowSecs: 60 });
    // The receiver's hot path decides from the process's own count and counts in the store behind it.
    assert.deepEqual(byName.get('nip9a_receiver:owner'), { name: 'nip9a_receiver:owner', points: 200, windowSecs: 5, decideLocally: true });
  });

  test('a refusal is a 429 with Retry-After, counted every time and logged once per key and window', async () => {
    const { limits, metrics, lines } = limitsWith((c) => {
      c.rate_limits.console_login_per_minute = 1;
    });
    const app = new Hono();
    app.post('/login', limits.perAddress(limits.consoleLogin), (c) => c.text('ok'));
    app.onError((err, c) => (err instanceof HttpError ? c.json(err.toJSON(), err.status as 429, err.headers) : c.text('bug', 500)));
    const attempt = () => app.request('/login', { method: 'POST' });
    assert.equal((await attempt()).status, 200);
    const refused = await attempt();
    assert.equal(refused.status, 429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    assert.deepEqual(await refused.json(), { error: 'Too many requests; retry after the Retry-After header', code: 'RATE_LIMITED' });
    assert.equal((await attempt()).status, 429);
    const counted = await metrics.rateLimited.get();
    assert.deepEqual(
      counted.values.map((v) => [v.labels, v.value]),
      [[{ route_group: 'console_login', key_kind: 'address' }, 2]],
    );
    assert.equal(lines.length, 1, 'one warning for two refusals of one key');
  });

  test('off, nothing is counted and nothing is refused', async () => {
    const store = memoryStore();
    const { limits } = limitsWith((c) => {
      c.rate_limits.enabled = false;
      c.rate_limits.console_login_per_minute = 1;
    }, store);
    assert.equal(limits.enabled, false);
    for (let i = 0; i < 5; i++) assert.equal(await limits.consoleLogin.take('203.0.113.1'), null);
    assert.equal(await limits.callbackOwner.take('owner'), null);
    assert.equal(await limits.apiKey('default').take('key'), null);
    assert.deepEqual(store.windows, [], 'no counter was even made');
  });

  test('API keys are limited by their own app’s send_api settings', async () => {
    const config = defaultConfig();
    const store = memoryStore();
    const limits = createRateLimits({
      config,
      sendApiOf: (appId) => (appId === 'tiny' ? { ...config.send_api, rate_per_sec: 1, rate_burst: 1 } : undefined),
      store,
      policy: createClientAddressPolicy([]),
      metrics: new Metrics(),
      logger: createLogger({ level: 'silent' }),
    });
    assert.equal(await limits.apiKey('tiny').take('key_1'), null);
    assert.ok(await limits.apiKey('tiny').take('key_1'), 'the tiny app allows one a second');
    assert.equal(await limits.apiKey('default').take('key_1'), null, "the default app's budget is its own");
    assert.deepEqual(
      store.windows.filter((w) => w.name.startsWith('api_key:')).map((w) => [w.name, w.points, w.windowSecs]),
      [
        ['api_key:tiny', 1, 1],
        ['api_key:default', 400, 2],
      ],
    );
  });
});
