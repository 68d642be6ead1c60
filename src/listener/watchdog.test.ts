import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LiveFlowWatchdog } from './watchdog.ts';

const WINDOW = 300_000;
const A = 'push-live-events';
const B = 'push-live-notify-lists';

describe('LiveFlowWatchdog: silence', () => {
  test('the first silence resubscribes; a second one with no event between reconnects', () => {
    const watchdog = new LiveFlowWatchdog({ silenceTimeoutMs: WINDOW }, 0);
    assert.equal(watchdog.deadlineMs, WINDOW);
    assert.deepEqual(watchdog.onSilence(WINDOW), { action: 'resubscribe', delayMs: 0, trigger: 'silence' });
    assert.equal(watchdog.deadlineMs, 2 * WINDOW);
    assert.equal(watchdog.onSilence(2 * WINDOW).action, 'reconnect');
  });

  test('an event after the resubscription clears the recovery and pushes the deadline', () => {
    const watchdog = new LiveFlowWatchdog({ silenceTimeoutMs: WINDOW }, 0);
    watchdog.onSilence(WINDOW);
    watchdog.onLiveEvent(WINDOW + 10);
    assert.equal(watchdog.deadlineMs, 2 * WINDOW + 10);
    assert.equal(watchdog.onSilence(2 * WINDOW + 10).action, 'resubscribe');
  });
});

describe('LiveFlowWatchdog: CLOSED', () => {
  test('a CLOSED resubscribes; the sibling closing within the grace is ignored once', () => {
    const watchdog = new LiveFlowWatchdog({ silenceTimeoutMs: WINDOW }, 0);
    assert.deepEqual(watchdog.onClosed(A, 'error: x', 1_000), { action: 'resubscribe', delayMs: 0, trigger: 'closed' });
    assert.deepEqual(watchdog.onClosed(B, 'error: x', 2_000), { action: 'none' });
    assert.equal(watchdog.onClosed(B, 'error: x', 3_000).action, 'reconnect');
  });

  test('the recovered subscription closing again before flow resumed reconnects', () => {
    const watchdog = new LiveFlowWatchdog({ silenceTimeoutMs: WINDOW }, 0);
    watchdog.onClosed(A, 'error: x', 1_000);
    const action = watchdog.onClosed(A, 'error: x', 1_500);
    assert.equal(action.action, 'reconnect');
    assert.match(action.why, /closed recovered subscription/);
  });

  test('a CLOSED during a pending silence recovery reconnects', () => {
    const watchdog = new LiveFlowWatchdog({ silenceTimeoutMs: WINDOW }, 0);
    watchdog.onSilence(WINDOW);
    assert.equal(watchdog.onClosed(A, 'error: x', WINDOW + 1).action, 'reconnect');
  });

  test('after flow resumed and the grace passed, a new CLOSED is a new recovery, at most 3 per window', () => {
    const watchdog = new LiveFlowWatchdog({ silenceTimeoutMs: WINDOW, closedGraceMs: 5_000 }, 0);
    let now = 0;
    for (let i = 0; i < 3; i++) {
      now += 10_000;
      assert.equal(watchdog.onClosed(A, 'error: x', now).action, 'resubscribe', `recovery ${i + 1}`);
      watchdog.onLiveEvent(now + 1_000);
    }
    now += 10_000;
    const fourth = watchdog.onClosed(A, 'error: x', now);
    assert.equal(fourth.action, 'reconnect');
    assert.match(fourth.why, /3 recoveries/);
  });

  test('recoveries older than the window no longer count', () => {
    const watchdog = new LiveFlowWatchdog({ silenceTimeoutMs: 100_000, closedGraceMs: 5_000 }, 0);
    let now = 0;
    for (let i = 0; i < 3; i++) {
      now += 10_000;
      watchdog.onClosed(A, 'error: x', now);
      watchdog.onLiveEvent(now + 1_000);
    }
    now += 100_000;
    watchdog.onLiveEvent(now - 1);
    assert.equal(watchdog.onClosed(A, 'error: x', now).action, 'resubscribe');
  });

  test('rate-limited: waits 5 s before resubscribing', () => {
    const watchdog = new LiveFlowWatchdog({ silenceTimeoutMs: WINDOW }, 0);
    assert.deepEqual(watchdog.onClosed(A, 'rate-limited: slow down', 1_000), { action: 'resubscribe', delayMs: 5_000, trigger: 'closed' });
  });

  test('postpone moves the deadline without clearing a pending recovery', () => {
    const watchdog = new LiveFlowWatchdog({ silenceTimeoutMs: WINDOW }, 0);
    watchdog.onSilence(WINDOW);
    watchdog.postpone(WINDOW + 50);
    assert.equal(watchdog.deadlineMs, 2 * WINDOW + 50);
    assert.equal(watchdog.onSilence(2 * WINDOW + 50).action, 'reconnect');
  });
});
