/**
 * The suppression gate and the per-user throttle of the delivery stage, through the outbound
 * handler the delivery role runs, on each store adapter, with a manual clock and a recording
 * transport: which app's suppressions a push is checked against, that the checks of one turn
 * (read together) each get their own answer, that a retry is checked again, what a suppressed
 * push leaves behind; and that a push to nobody takes no throttle slot. Quiet hours and the basic
 * suppression cases are in `quiet-hours.test.ts`, the throttle's counting in
 * `src/delivery/throttle.test.ts`.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import type { DeliveryReport } from '../../src/delivery/deliver.ts';
import { handleOutbound, type OutboundHandlerDeps } from '../../src/delivery/outbound.ts';
import { storeQuietHoursGate } from '../../src/delivery/quiet-hours-gate.ts';
import { storeSuppressionGate } from '../../src/delivery/suppression-gate.ts';
import type { DeviceRegistration, LeasedItem, RecipientClaim, StorePort } from '../../src/store/port.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { describeOnEachStore } from '../support/each-store.ts';
import { RecordingTransport } from '../support/recording-transport.ts';
import { testOutboundDeps } from '../support/outbound-deps.ts';
import { type OutboundNotification, THROTTLE_WINDOW_SECS } from '../../src/notification/types.ts';

const ALICE = 'a1'.repeat(32);
const BOB = 'b2'.repeat(32);
const CAROL = 'c3'.repeat(32);
const CLAIM_TTL_SECS = 86_400;
const EVENT = 'e1'.repeat(32);

describeOnEachStore('delivery gates: suppressions and the throttle', (open) => {
  let store: StorePort;
  let clock: ManualClock;
  let transport: RecordingTransport;
  let deps: OutboundHandlerDeps;
  let reports: Array<[string, DeliveryReport]>;

  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 6, 1, 12));
    store = await open(clock);
    transport = new RecordingTransport();
    reports = [];
    deps = testOutboundDeps(store, [transport], {
      suppressionGate: storeSuppressionGate(store),
      quietHoursGate: storeQuietHoursGate(store),
      recordAttempt: (notification: OutboundNotification, report: DeliveryReport) => {
        reports.push([notification.eventId, report]);
      },
    });
    await store.registerToken(ALICE, { token: 'alice-phone', transport: 'fcm' });
    await store.registerToken(BOB, { token: 'bob-phone', transport: 'fcm' });
    await store.registerToken(BOB, { token: 'bob-tablet', transport: 'fcm' });
    await store.registerToken(CAROL, { token: 'carol-phone', transport: 'fcm' });
  });
  afterEach(() => store.close());

  let n = 0;
  /** A like to `recipient` (attempt 1 unless told), or with `appId` a send API notification of that app. */
  const item = (
    recipient: string,
    options: { appId?: string; attempts?: number; devices?: DeviceRegistration[]; claim?: RecipientClaim } = {},
  ): LeasedItem<OutboundNotification> => {
    const eventId = (++n).toString(16).padStart(64, '0');
    const payload: OutboundNotification = {
      eventId,
      recipient,
      type: options.appId ? 'app:payout' : 'like',
      message: { data: { type: 'like', title: 't', body: 'b' } },
      claim: options.claim ?? null,
      eventCreatedAt: Math.floor(clock.nowMs() / 1000),
      ...(options.appId ? { send: { appId: options.appId, notificationId: eventId, type: 'payout' } } : {}),
      ...(options.devices ? { devices: options.devices } : {}),
    };
    return { id: eventId, payload, attempts: options.attempts ?? 1, leaseToken: 'x', leaseExpiresAtMs: 0, lastError: null };
  };
  const sentTokens = () => transport.sent.map((s) => s.token).sort();

  test("a push is checked against its own app's suppressions: a send of app beta, or the default app's relay push", async () => {
    await store.addSuppression('beta', { kind: 'pubkey', value: ALICE });
    await store.addSuppression('default', { kind: 'token', value: 'bob-tablet' });
    await handleOutbound(deps, item(ALICE, { appId: 'beta' }));
    await handleOutbound(deps, item(BOB, { appId: 'beta' }));
    assert.deepEqual(
      sentTokens(),
      ['bob-phone', 'bob-tablet'],
      "beta's suppression of Alice holds; the default app's of bob-tablet does not",
    );
    transport.sent.length = 0;
    await handleOutbound(deps, item(ALICE));
    await handleOutbound(deps, item(BOB));
    assert.deepEqual(sentTokens(), ['alice-phone', 'bob-phone'], "a relay push is the default app's: bob-tablet left out, Alice pushed");
  });

  test('the checks of one turn are read together, and each push gets its own answer', async () => {
    await store.addSuppression('default', { kind: 'pubkey', value: ALICE });
    await store.addSuppression('default', { kind: 'token', value: 'bob-tablet' });
    await store.addSuppression('beta', { kind: 'token', value: 'carol-phone' });
    await Promise.all([
      handleOutbound(deps, item(CAROL)),
      handleOutbound(deps, item(ALICE)),
      handleOutbound(deps, item(BOB)),
      handleOutbound(deps, item(CAROL, { appId: 'beta' })),
      handleOutbound(deps, item(ALICE, { appId: 'beta' })),
      handleOutbound(deps, item(BOB, { appId: 'beta' })),
    ]);
    assert.deepEqual(sentTokens(), ['alice-phone', 'bob-phone', 'bob-phone', 'bob-tablet', 'carol-phone']);
  });

  test('a suppressed push is recorded as suppressed and keeps its claim: no later replay pushes it', async () => {
    await store.addSuppression('default', { kind: 'pubkey', value: ALICE });
    const claim = await store.claimRecipientDelivery(EVENT, ALICE, CLAIM_TTL_SECS);
    assert.ok(claim, 'claimed, as the engine does when it queues the push');
    const suppressed = item(ALICE, { claim });
    assert.deepEqual(await handleOutbound(deps, suppressed), { kind: 'done' });
    assert.equal(transport.sent.length, 0);
    assert.deepEqual(
      reports.map(([, report]) => report.suppressed),
      ['suppression'],
    );
    assert.equal(await store.claimRecipientDelivery(EVENT, ALICE, 60), null, 'the claim is still held');
  });

  test('a retry is checked against the suppressions of its own attempt, with only the suppression gate configured', async () => {
    const { quietHoursGate: _quietHours, ...onlySuppression } = deps;
    await handleOutbound(onlySuppression, item(BOB, { attempts: 2 }));
    assert.deepEqual(sentTokens(), ['bob-phone', 'bob-tablet']);
    transport.sent.length = 0;
    await store.addSuppression('default', { kind: 'token', value: 'bob-tablet' });
    await handleOutbound(onlySuppression, item(BOB, { attempts: 2 }));
    assert.deepEqual(sentTokens(), ['bob-phone'], 'the tablet suppressed since is left out');
  });

  test('a push whose gates found no device takes no throttle slot', async () => {
    deps.throttlePerUserPerHour = 1;
    assert.deepEqual(await handleOutbound(deps, item(ALICE, { devices: [] })), { kind: 'done' });
    assert.deepEqual((await store.readThrottleWindow(ALICE, THROTTLE_WINDOW_SECS)).pushed, 0, 'no slot taken');
    await handleOutbound(deps, item(ALICE, { devices: [{ token: 'alice-phone', transport: 'fcm' }] }));
    assert.deepEqual(sentTokens(), ['alice-phone'], "the hour's one slot is still there for a push with a device");
  });
});
