/**
 * Pruning on a dead-token answer that says since when (APNs 410 `timestamp`), through the outbound
 * handler on each store adapter, with a manual clock and a recording transport: a token the app
 * registered again after that moment is kept, any other is pruned (`stillDeadAfterRegistration`).
 * The APNs sender's parsing of the 410 is in `apns/sender.test.ts`; the wire path end to end in
 * `test/e2e/apns.test.ts`.
 */
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LeasedItem, StorePort } from '../store/port.ts';
import type { SendOutcome } from './types.ts';
import { ManualClock } from '../util/clock.ts';
import { RecordingTransport } from '../../test/support/recording-transport.ts';
import { testOutboundDeps } from '../../test/support/outbound-deps.ts';
import { describeOnEachStore } from '../../test/support/each-store.ts';
import { handleOutbound, type OutboundHandlerDeps } from './outbound.ts';
import type { OutboundNotification } from '../notification/types.ts';

const ALICE = 'a1'.repeat(32);
const MINUTE_MS = 60_000;
const START_MS = Date.UTC(2026, 5, 1, 12);

/** APNs 410 Unregistered with Apple's `timestamp`: the token has been invalid since `sinceMs`. */
const unregisteredSince = (sinceMs: number): SendOutcome => ({
  ok: false,
  error: { kind: 'token_not_registered', message: 'Unregistered', status: 410, unregisteredAtMs: sinceMs },
});

describeOnEachStore('delivery: a dead-token answer against a later registration', (open) => {
  let clock: ManualClock;
  let store: StorePort;
  let transport: RecordingTransport;
  let deps: OutboundHandlerDeps;
  let registeredActivityMs: number;

  beforeEach(async () => {
    clock = new ManualClock(START_MS);
    store = await open(clock);
    transport = new RecordingTransport();
    deps = testOutboundDeps(store, [transport]);
    clock.advance(30 * MINUTE_MS);
    await store.registerToken(ALICE, { token: 'iphone', transport: 'fcm' });
    registeredActivityMs = (await store.tokenActivityMs('iphone')) ?? assert.fail('a registration records activity');
    clock.advance(10 * MINUTE_MS);
  });
  afterEach(() => store.close());

  let events = 0;
  const item = (): LeasedItem<OutboundNotification> => {
    const eventId = (++events).toString(16).padStart(64, '0');
    const payload: OutboundNotification = {
      eventId,
      recipient: ALICE,
      type: 'mention',
      message: { data: { type: 'mention', title: 't', body: 'b' } },
      claim: null,
      eventCreatedAt: Math.floor(clock.nowMs() / 1000),
    };
    return { id: eventId, payload, attempts: 1, leaseToken: 'x', leaseExpiresAtMs: 0, lastError: null };
  };

  test('unregistered since before the registration: the token was registered again since, and is kept', async () => {
    transport.script.set('iphone', unregisteredSince(registeredActivityMs - 1));
    assert.deepEqual(await handleOutbound(deps, item()), { kind: 'done' });
    assert.equal(await store.tokenOwner('iphone'), ALICE, 'kept');
  });

  test('unregistered since the registration or later: pruned', async () => {
    transport.script.set('iphone', unregisteredSince(registeredActivityMs));
    assert.deepEqual(await handleOutbound(deps, item()), { kind: 'done' });
    assert.equal(await store.tokenOwner('iphone'), null, 'pruned at the very moment of its activity');
    await store.registerToken(ALICE, { token: 'iphone', transport: 'fcm' });
    transport.script.set('iphone', unregisteredSince(clock.nowMs()));
    await handleOutbound(deps, item());
    assert.equal(await store.tokenOwner('iphone'), null, 'pruned when unregistered after the registration');
  });

  test('a dead-token answer without a time prunes, however recent the registration', async () => {
    transport.script.set('iphone', { ok: false, error: { kind: 'token_not_registered', message: 'Unregistered', status: 410 } });
    await handleOutbound(deps, item());
    assert.equal(await store.tokenOwner('iphone'), null);
  });
});
