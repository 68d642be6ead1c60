/**
 * `push_device_outcomes_total` through the outbound handler on each store adapter: one count per
 * device by the delivering app and the device's own transport (UnifiedPush apart from Web Push, though one transport
 * serves both) and outcome, and a device whose transport the app has not configured counted as
 * `unconfigured` (issue 38: a push failing because FCM is off used to count nowhere, since only
 * the FCM transport counts FCM failures).
 */
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import type { DeviceRegistration, LeasedItem, StorePort } from '../store/port.ts';
import type { PushTransport, SendOutcome } from './types.ts';
import { ManualClock } from '../util/clock.ts';
import { invalidRequest, RecordingTransport } from '../../test/support/recording-transport.ts';
import { testOutboundDeps } from '../../test/support/outbound-deps.ts';
import { describeOnEachStore } from '../../test/support/each-store.ts';
import { handleOutbound } from './outbound.ts';
import type { OutboundNotification } from '../notification/types.ts';
import type { Metrics } from '../observability/metrics.ts';

const ALICE = 'a1'.repeat(32);
const START_MS = Date.UTC(2026, 11, 6, 12);

/** Serves Web Push and UnifiedPush devices, as the real Web Push transport does; every send succeeds. */
class WebPushLike implements PushTransport {
  handles(device: DeviceRegistration): boolean {
    return device.transport === 'webpush' || device.transport === 'unifiedpush';
  }
  async sendBatch(devices: DeviceRegistration[]): Promise<Map<string, SendOutcome>> {
    return new Map(devices.map((d) => [d.token, { ok: true }]));
  }
  async close(): Promise<void> {}
}

async function outcomes(metrics: Metrics): Promise<Record<string, number>> {
  const values: Record<string, number> = {};
  for (const { labels, value } of (await metrics.pushDeviceOutcomes.get()).values)
    values[`${String(labels.app)}/${String(labels.transport)}:${String(labels.outcome)}`] = value;
  return values;
}

describeOnEachStore('delivery: pushes counted per device, transport and outcome', (open) => {
  let clock: ManualClock;
  let store: StorePort;

  beforeEach(async () => {
    clock = new ManualClock(START_MS);
    store = await open(clock);
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

  test('an app without FCM: its FCM devices count as unconfigured failures, its UnifiedPush device as unifiedpush', async () => {
    await store.registerToken(ALICE, { token: 'android', transport: 'fcm' });
    await store.registerToken(ALICE, { token: 'https://up.example/abc', transport: 'unifiedpush', endpoint: 'https://up.example/abc' });
    await store.registerToken(ALICE, { token: 'https://wp.example/xyz', transport: 'webpush', endpoint: 'https://wp.example/xyz' });
    const deps = testOutboundDeps(store, [new WebPushLike()]);
    await handleOutbound(deps, item());
    assert.deepEqual(await outcomes(deps.metrics), { 'default/fcm:unconfigured': 1, 'default/unifiedpush:ok': 1, 'default/webpush:ok': 1 });
  });

  test('a configured transport’s answers: ok and failed; an APNs device of an app without APNs: unconfigured', async () => {
    await store.registerToken(ALICE, { token: 'phone-ok', transport: 'fcm' });
    await store.registerToken(ALICE, { token: 'phone-bad', transport: 'fcm' });
    await store.registerToken(ALICE, { token: 'ipad', transport: 'apns' });
    const fcm = new RecordingTransport();
    fcm.script.set('phone-bad', invalidRequest);
    const deps = testOutboundDeps(store, [fcm], { appId: 'clips' });
    await handleOutbound(deps, item());
    assert.deepEqual(
      await outcomes(deps.metrics),
      { 'clips/fcm:ok': 1, 'clips/fcm:failed': 1, 'clips/apns:unconfigured': 1 },
      'by the app delivering',
    );
  });
});
