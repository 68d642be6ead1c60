import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../observability/logger.ts';
import { Supervisor } from './supervisor.ts';
import { sleep } from '../util/async.ts';

const quiet = createLogger({ level: 'silent' });
const untilAbort = (signal: AbortSignal) =>
  new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));

describe('supervisor', () => {
  test('a critical task that throws is marked dead, stops the service and reports an unexpected exit', async () => {
    const sup = new Supervisor(quiet);
    sup.spawn('event_handler', 'critical', async () => {
      throw new Error('boom');
    });
    sup.spawn('nostr_listener', 'critical', untilAbort);
    assert.equal(await sup.stopped, true);
    assert.deepEqual(sup.criticalFlags(), { event_handler: false, nostr_listener: true });
    assert.equal(sup.signal.aborted, true);
  });

  test('a scoped view names its tasks {name}@{scope} beside the unscoped ones, and shares their fate', async () => {
    const sup = new Supervisor(quiet);
    const ofB = sup.scoped('b');
    sup.spawn('event_handler', 'critical', untilAbort);
    ofB.spawn('event_handler', 'critical', async () => {
      throw new Error('boom in b');
    });
    assert.equal(await sup.stopped, true, 'a death in one app stops the process');
    assert.deepEqual(sup.criticalFlags(), { event_handler: true, 'event_handler@b': false });
    assert.equal(ofB.signal.aborted, true);
  });

  test('a critical task that returns early is fatal too', async () => {
    const sup = new Supervisor(quiet);
    sup.spawn('nostr_listener', 'critical', async () => undefined);
    assert.equal(await sup.stopped, true);
    assert.equal(sup.criticalFlags().nostr_listener, false);
  });

  test('an exit during shutdown is clean', async () => {
    const sup = new Supervisor(quiet);
    sup.spawn('event_handler', 'critical', untilAbort);
    sup.shutdown();
    await sup.join(1000);
    assert.equal(sup.unexpectedExit, false);
    assert.deepEqual(sup.criticalFlags(), { event_handler: true });
  });

  test('a tolerated task may return; a tolerated throw still stops the service', async () => {
    const sup = new Supervisor(quiet);
    sup.spawn('token_cleanup', 'tolerated', async () => undefined);
    sup.spawn('event_handler', 'critical', untilAbort);
    await sleep(5);
    assert.equal(sup.signal.aborted, false);
    sup.spawn('other', 'tolerated', async () => {
      throw new Error('bad');
    });
    assert.equal(await sup.stopped, true);
    assert.deepEqual(sup.criticalFlags(), { event_handler: true }, 'a non-critical death keeps liveness green');
  });

  test('sleep rejects on abort', async () => {
    const controller = new AbortController();
    const pending = sleep(60_000, controller.signal);
    controller.abort();
    await assert.rejects(pending, { name: 'AbortError' });
  });

  test('a dozen tasks waiting on the shared signal at once raise no listener-leak warning, and all stop on shutdown', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const sup = new Supervisor(quiet);
      const woken: string[] = [];
      for (let i = 0; i < 12; i++) {
        sup.spawn(`poller_${i}`, 'tolerated', async (signal) => {
          await sleep(60_000, signal).catch(() => woken.push(`poller_${i}`));
        });
      }
      // The warning is emitted on the next tick after the eleventh listener.
      await new Promise((resolve) => setImmediate(resolve));
      sup.shutdown();
      await sup.join(5_000);
      assert.equal(woken.length, 12, 'every wait ended by the shutdown');
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(
        warnings.filter((name) => name === 'MaxListenersExceededWarning'),
        [],
        'no leak warning',
      );
    } finally {
      process.off('warning', onWarning);
    }
  });
});
