import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualScheduler } from './scheduler.ts';
import { TimerList } from './timer-list.ts';

const INTERVAL = 1_000;

describe('TimerList', () => {
  test('timers fire one interval after they were armed, in order, on one scheduler timer', () => {
    const scheduler = new ManualScheduler();
    const fired: string[] = [];
    const list = new TimerList<string>(scheduler, INTERVAL, false, (name) => fired.push(`${name}@${scheduler.now()}`));
    list.start('a');
    scheduler.advance(300);
    list.start('b');
    list.start('c');
    assert.equal(scheduler.pending, 1, 'one scheduler timer for the whole list');
    scheduler.advance(699);
    assert.deepEqual(fired, []);
    scheduler.advance(1);
    assert.deepEqual(fired, ['a@1000']);
    scheduler.advance(300);
    assert.deepEqual(fired, ['a@1000', 'b@1300', 'c@1300']);
    assert.equal(list.size, 0);
    assert.equal(scheduler.pending, 0, 'no scheduler timer once the list is empty');
  });

  test('repeating timers fire every interval until cancelled; refresh pushes a deadline back; cancel is idempotent', () => {
    const scheduler = new ManualScheduler();
    const fired: string[] = [];
    const repeating = new TimerList<string>(scheduler, INTERVAL, true, (name) => fired.push(`${name}@${scheduler.now()}`));
    const once = new TimerList<string>(scheduler, INTERVAL, false, (name) => fired.push(`${name}@${scheduler.now()}`));
    const ping = repeating.start('ping');
    const deadline = once.start('deadline');
    scheduler.advance(900);
    deadline.refresh();
    scheduler.advance(999);
    assert.deepEqual(fired, ['ping@1000'], 'the refreshed deadline is not due yet');
    scheduler.advance(101);
    assert.deepEqual(fired, ['ping@1000', 'deadline@1900', 'ping@2000']);
    ping.cancel();
    ping.cancel();
    deadline.cancel();
    scheduler.advance(5_000);
    assert.equal(fired.length, 3);
    assert.deepEqual([repeating.size, once.size], [0, 0]);
  });

  test('a target may cancel its own or another timer while the list fires', () => {
    const scheduler = new ManualScheduler();
    const fired: string[] = [];
    const timers = new Map<string, { cancel(): void }>();
    const list = new TimerList<string>(scheduler, INTERVAL, true, (name) => {
      fired.push(name);
      if (name === 'a') timers.get('b')?.cancel();
      if (name === 'c') timers.get('c')?.cancel();
    });
    for (const name of ['a', 'b', 'c']) timers.set(name, list.start(name));
    scheduler.advance(INTERVAL);
    scheduler.advance(INTERVAL);
    assert.deepEqual(fired, ['a', 'c', 'a']);
    assert.equal(list.size, 1);
  });
});
