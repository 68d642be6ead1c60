import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../util/clock.ts';
import { exemptHostProblem, VISITOR_SWEEP_INTERVAL_MS, VisitorLimits, visitorKey } from './visitor.ts';

const options = (clock: ManualClock, exemptHosts: string[] = []) => ({
  requestBurst: 3,
  requestReplenishMs: 5_000,
  subscriptionLimit: 2,
  exemptHosts,
  clock,
});

test('a visitor is an IPv4 address or an IPv6 /64', () => {
  assert.equal(visitorKey('9.9.9.9'), '9.9.9.9');
  assert.equal(visitorKey('::ffff:9.9.9.9'), '9.9.9.9');
  assert.equal(visitorKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  assert.equal(visitorKey('2001:db8:1:2:bbbb:cccc:dddd:eeee'), '2001:db8:1:2::/64');
  assert.equal(visitorKey('2001:db8::1'), '2001:db8:0:0::/64');
});

test('the request bucket: a burst, then one back per interval', () => {
  const clock = new ManualClock();
  const limits = new VisitorLimits(options(clock));
  assert.deepEqual(
    [1, 2, 3, 4].map(() => limits.takeRequest('9.9.9.9')),
    [true, true, true, false],
  );
  assert.equal(limits.takeRequest('8.8.8.8'), true, 'another visitor has its own bucket');
  clock.advance(5_000);
  assert.deepEqual([limits.takeRequest('9.9.9.9'), limits.takeRequest('9.9.9.9')], [true, false]);
  assert.equal(limits.takeRequest('2001:db8:1:2::1'), true);
  assert.equal(limits.takeRequest('2001:db8:1:2::2'), true);
  assert.equal(limits.takeRequest('2001:db8:1:2::3'), true);
  assert.equal(limits.takeRequest('2001:db8:1:2::4'), false, 'one /64, one bucket');
});

test('subscriptions: a limit per visitor, freed by release (once)', () => {
  const limits = new VisitorLimits(options(new ManualClock()));
  const first = limits.openSubscription('9.9.9.9');
  const second = limits.openSubscription('9.9.9.9');
  assert.ok(first && second);
  assert.equal(limits.openSubscription('9.9.9.9'), null);
  first();
  first();
  assert.ok(limits.openSubscription('9.9.9.9'));
  assert.equal(limits.openSubscription('9.9.9.9'), null, 'a double release freed one slot only');
});

test('exempt hosts and ranges bypass every limit', () => {
  const limits = new VisitorLimits(options(new ManualClock(), ['127.0.0.1', '10.0.0.0/8', '::1']));
  for (let i = 0; i < 10; i++) {
    assert.equal(limits.takeRequest('127.0.0.1'), true);
    assert.ok(limits.openSubscription('10.1.2.3'));
    assert.ok(limits.openSubscription('::1'));
  }
  assert.equal(limits.isExempt('::ffff:127.0.0.1'), true);
  assert.equal(limits.isExempt('11.0.0.1'), false);
  assert.equal(limits.size, 0, 'exempt visitors are never remembered');
  assert.equal(exemptHostProblem('10.0.0.0/8'), null);
  assert.equal(typeof exemptHostProblem('localhost'), 'string');
  assert.equal(typeof exemptHostProblem('10.0.0.0/33'), 'string');
});

test('idle visitors are forgotten, so the table does not grow with every address seen', () => {
  const clock = new ManualClock();
  const limits = new VisitorLimits(options(clock));
  for (let i = 0; i < 100; i++) limits.takeRequest(`9.9.${Math.floor(i / 250)}.${i % 250}`);
  const held = limits.openSubscription('1.1.1.1');
  assert.equal(limits.size, 101);
  clock.advance(VISITOR_SWEEP_INTERVAL_MS);
  limits.takeRequest('2.2.2.2');
  assert.equal(limits.size, 2, 'only the subscribed visitor and the new one remain');
  held?.();
});
