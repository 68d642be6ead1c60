import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createApiApp } from './app.ts';
import { createLogger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';

function app(flags: Record<string, boolean>, metrics = new Metrics()) {
  return createApiApp({
    health: { pubkey: () => 'ab'.repeat(32), criticalFlags: () => flags },
    metrics,
    logger: createLogger({ level: 'silent' }),
  });
}

describe('GET /health', () => {
  test('200 ok with the pubkey and every task flag', async () => {
    const res = await app({ nostr_listener: true, event_handler: true }).request('/health');
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      status: 'ok',
      pubkey: 'ab'.repeat(32),
      tasks: { nostr_listener: true, event_handler: true },
      problems: [],
    });
  });

  test('503 when a critical task died (divine’s 503, now status failing), other flags still reported, pubkey present', async () => {
    const res = await app({ nostr_listener: true, event_handler: false }).request('/health');
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), {
      status: 'failing',
      pubkey: 'ab'.repeat(32),
      tasks: { nostr_listener: true, event_handler: false },
      problems: [{ code: 'critical_flag_down', severity: 'failing', message: 'critical tasks or checks down: event_handler' }],
    });
  });
});

describe('GET /metrics', () => {
  test('Prometheus text, never cached', async () => {
    const metrics = new Metrics();
    metrics.eventsReceived.inc();
    const res = await app({}, metrics).request('/metrics');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
    assert.match(await res.text(), /^push_events_received_total 1$/m);
  });
});

describe('errors', () => {
  test('unknown routes answer 404 with a JSON body and a stable code', async () => {
    const res = await app({}).request('/nope');
    assert.equal(res.status, 404);
    assert.deepEqual(await res.json(), { error: 'Not found', code: 'NOT_FOUND' });
  });
});
