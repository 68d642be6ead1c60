import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../util/clock.ts';
import type { RelayStatus } from '../listener/types.ts';
import type { PushTransport, SendOutcome } from '../delivery/types.ts';
import { createApiApp } from '../api/app.ts';
import { createLogger } from './logger.ts';
import { Metrics } from './metrics.ts';
import { HealthMonitor, notReadyReason, SendHealth, withSendHealth } from './health-monitor.ts';

const SECOND = 1000;
const relay = (url: string, connected: boolean): RelayStatus => ({
  url,
  connected,
  authenticated: false,
  historicalDone: connected,
  lastEventAt: null,
  reconnects: 0,
  lastError: connected ? null : 'connect ECONNREFUSED',
});
const ok: SendOutcome = { ok: true };
const down: SendOutcome = { ok: false, error: { kind: 'unauthorized', message: '401' } };
const gone: SendOutcome = { ok: false, error: { kind: 'token_not_registered', message: '404' } };

function fixture(options: { relays?: RelayStatus[]; ping?: () => Promise<void> } = {}) {
  const clock = new ManualClock();
  const sends = new SendHealth(() => clock.nowMs());
  let relays = options.relays ?? [relay('wss://a', false)];
  let oldestDue: Array<{ queue: string; dueAtMs: number | null }> = [{ queue: 'inbound', dueAtMs: null }];
  const monitor = new HealthMonitor({
    nowMs: () => clock.nowMs(),
    relayGraceMs: 60 * SECOND,
    transportFailingMs: 300 * SECOND,
    relays: () => relays,
    sends,
    ping: options.ping ?? (() => Promise.resolve()),
    queueAgeMs: 300 * SECOND,
    oldestDue: () => Promise.resolve(oldestDue),
  });
  const app = createApiApp({
    health: { pubkey: () => 'ab'.repeat(32), criticalFlags: () => ({ listener: true }), problems: () => monitor.problems() },
    metrics: new Metrics(),
    logger: createLogger({ level: 'silent' }),
  });
  return {
    clock,
    sends,
    monitor,
    app,
    setRelays: (next: RelayStatus[]) => (relays = next),
    setOldestDue: (next: typeof oldestDue) => (oldestDue = next),
  };
}

describe('/health problems', () => {
  test('no relay connected: fine within the grace from the start, degraded (200) after it, ok again once one connects', async () => {
    const f = fixture();
    f.clock.advance(60 * SECOND - 1);
    assert.deepEqual(await f.monitor.problems(), []);
    f.clock.advance(1);
    const res = await f.app.request('/health');
    assert.equal(res.status, 200);
    const body = (await res.json()) as { status: string; problems: Array<{ code: string; message: string }> };
    assert.equal(body.status, 'degraded');
    assert.deepEqual(
      body.problems.map((p) => [p.code, p.message]),
      [['no_relay', 'no relay connected for 60 s: wss://a (connect ECONNREFUSED)']],
    );
    f.setRelays([relay('wss://a', true)]);
    assert.deepEqual(await f.monitor.problems(), []);
    // The grace counts again from the last time one was seen connected.
    f.setRelays([relay('wss://a', false)]);
    f.clock.advance(59 * SECOND);
    assert.deepEqual(await f.monitor.problems(), []);
    f.clock.advance(SECOND);
    assert.equal((await f.monitor.problems())[0]?.code, 'no_relay');
  });

  test('a process without the listener has no relay problem', async () => {
    const f = fixture({ relays: [] });
    f.clock.advance(3600 * SECOND);
    assert.deepEqual(await f.monitor.problems(), []);
  });

  test('a transport failing every send for the window is degraded; a success clears it; device-level failures do not count', async () => {
    const f = fixture({ relays: [] });
    f.sends.record('fcm', [down]);
    f.sends.record('apns', [gone, gone]);
    f.clock.advance(299 * SECOND);
    f.sends.record('fcm', [down, down]);
    assert.deepEqual(await f.monitor.problems(), []);
    f.clock.advance(SECOND);
    assert.deepEqual(
      (await f.monitor.problems()).map((p) => [p.code, p.severity, p.message]),
      [['transport_failing', 'degraded', 'fcm: every send failed for 300 s']],
    );
    f.sends.record('fcm', [down, ok]);
    assert.deepEqual(await f.monitor.problems(), []);
  });

  test('a queue whose oldest due item waited the window is degraded', async () => {
    const f = fixture({ relays: [] });
    const now = f.clock.nowMs();
    f.setOldestDue([
      { queue: 'inbound', dueAtMs: now - 299 * SECOND },
      { queue: 'outbound', dueAtMs: null },
    ]);
    assert.deepEqual(await f.monitor.problems(), []);
    f.clock.advance(SECOND);
    assert.deepEqual(
      (await f.monitor.problems()).map((p) => [p.code, p.severity, p.message]),
      [['queue_stalled', 'degraded', 'queue inbound: the oldest due item has waited 300 s']],
    );
  });

  test('a store that does not answer is failing (503)', async () => {
    const f = fixture({ relays: [], ping: () => Promise.reject(new Error('Connection is closed.')) });
    const res = await f.app.request('/health');
    assert.equal(res.status, 503);
    const body = (await res.json()) as { status: string; problems: Array<{ code: string; message: string }> };
    assert.equal(body.status, 'failing');
    assert.deepEqual(body.problems, [
      { code: 'store_unreachable', severity: 'failing', message: 'the store does not answer: Connection is closed.' },
    ]);
  });

  test('the send-health wrapper records each batch and passes everything through', async () => {
    const clock = new ManualClock();
    const sends = new SendHealth(() => clock.nowMs());
    let closed = false;
    const inner: PushTransport = {
      handles: () => true,
      sendBatch: () => Promise.resolve(new Map([['t', down]])),
      close: () => ((closed = true), Promise.resolve()),
    };
    const wrapped = withSendHealth(inner, sends);
    assert.equal(wrapped.inner, inner);
    const outcomes = await wrapped.sendBatch([], { data: {} });
    assert.deepEqual([...outcomes], [['t', down]]);
    clock.advance(10 * SECOND);
    assert.deepEqual(sends.failing(10 * SECOND), [{ name: 'other', sinceMs: clock.nowMs() - 10 * SECOND, lastSuccessAtMs: null }]);
    await wrapped.close();
    assert.equal(closed, true);
  });
});

describe('/ready', () => {
  test('503 while starting or stopping or when the store does not answer; 200 when serving', async () => {
    const ping = () => Promise.resolve();
    assert.equal(await notReadyReason({ serving: false, stopping: false, ping }), 'starting');
    assert.equal(await notReadyReason({ serving: true, stopping: true, ping }), 'stopping');
    assert.equal(await notReadyReason({ serving: true, stopping: false, ping }), null);
    assert.equal(
      await notReadyReason({ serving: true, stopping: false, ping: () => Promise.reject(new Error('ECONNREFUSED')) }),
      'the store does not answer: ECONNREFUSED',
    );
    const app = (reason: string | null) =>
      createApiApp({
        health: { pubkey: () => null, criticalFlags: () => ({}), notReady: () => Promise.resolve(reason) },
        metrics: new Metrics(),
        logger: createLogger({ level: 'silent' }),
      });
    const ready = await app(null).request('/ready');
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { ready: true });
    const starting = await app('starting').request('/ready');
    assert.equal(starting.status, 503);
    assert.deepEqual(await starting.json(), { ready: false, reason: 'starting' });
  });
});
