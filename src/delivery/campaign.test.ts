import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../store/sqlite/index.ts';
import type { DeviceRegistration, LeasedItem, StorePort } from '../store/port.ts';
import { ManualClock } from '../util/clock.ts';
import { RecordingTransport } from '../../test/support/recording-transport.ts';
import { testOutboundDeps } from '../../test/support/outbound-deps.ts';
import { describeOnEachStore } from '../../test/support/each-store.ts';
import { CAMPAIGN_CLAIM_IN_FLIGHT, CAMPAIGN_CLAIM_LAPSED, deliverCampaignItem, type CampaignDeliveryDeps } from './campaign.ts';
import type { OutboundNotification, CampaignDelivery } from '../notification/types.ts';

const ALICE = 'a1'.repeat(32);
const CLAIM_WINDOW_SECS = 2;
const DEDUP_SECS = 7 * 24 * 3600;

describe('a campaign item against its delivery claim', () => {
  let store: StorePort;
  let clock: ManualClock;
  let transport: RecordingTransport;
  let deps: CampaignDeliveryDeps;
  const campaign: CampaignDelivery = { appId: 'default', campaignId: 'c1', deliveryKey: 'default:spring:phone', token: 'phone' };
  const devices: DeviceRegistration[] = [{ token: 'phone', transport: 'fcm' }];
  const item: LeasedItem<OutboundNotification> = {
    id: 'campaign:c1:phone',
    payload: {
      eventId: 'campaign:c1',
      recipient: ALICE,
      type: 'app:campaign',
      message: { data: { type: 'campaign', title: 'Spring sale', body: '21% off' } },
      claim: null,
      eventCreatedAt: 0,
      campaign,
    },
    attempts: 2,
    leaseToken: 'x',
    leaseExpiresAtMs: 0,
    lastError: null,
  };

  beforeEach(async () => {
    // 12:00Z at offset 0: daytime, so the 21:00–06:59 rule lets it through.
    clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
    store = await openSqliteStore({ path: ':memory:', clock });
    transport = new RecordingTransport();
    deps = testOutboundDeps(store, [transport], { campaignClaimTtlSecs: CLAIM_WINDOW_SECS, campaignDedupTtlSecs: DEDUP_SECS });
  });
  afterEach(() => store.close());
  const sentTokens = () => transport.sent.map((s) => s.token);

  test('a free claim: the device is pushed and the claim kept as delivered', async () => {
    const outcome = await deliverCampaignItem(deps, item, campaign, devices);
    assert.equal(outcome.kind, 'done', JSON.stringify(outcome));
    assert.deepEqual(sentTokens(), ['phone'], 'one push');
    assert.ok(((await store.campaignDeliveryTtlSecs(campaign.deliveryKey)) ?? 0) > CLAIM_WINDOW_SECS, 'extended past the in-flight window');
  });

  test('a claim held within its window (a send in flight elsewhere): retried when the window ends, nothing sent', async () => {
    assert.notEqual(await store.claimCampaignDelivery(campaign.deliveryKey, CLAIM_WINDOW_SECS), null, 'held elsewhere');
    const outcome = await deliverCampaignItem(deps, item, campaign, devices);
    assert.deepEqual(outcome, { kind: 'retry', afterMs: CLAIM_WINDOW_SECS * 1000, error: CAMPAIGN_CLAIM_IN_FLIGHT });
    assert.equal(transport.sent.length, 0, 'not sent while held');
  });

  test('a claim held beyond its window (delivered): done, nothing sent', async () => {
    const owner = await store.claimCampaignDelivery(campaign.deliveryKey, CLAIM_WINDOW_SECS);
    assert.ok(owner, 'claimed');
    assert.equal(await store.extendCampaignDelivery(campaign.deliveryKey, owner, DEDUP_SECS), true);
    const outcome = await deliverCampaignItem(deps, item, campaign, devices);
    assert.equal(outcome.kind, 'done', JSON.stringify(outcome));
    assert.equal(transport.sent.length, 0, 'a delivered device is not pushed again');
  });

  test('a claim that lapses between the refused take and the read of its lifetime is retried at once, not taken as delivered', async () => {
    assert.notEqual(await store.claimCampaignDelivery(campaign.deliveryKey, CLAIM_WINDOW_SECS), null, 'held by a send killed mid-way');
    // The take is refused by the held claim; its window ends before the lifetime is read.
    const lapsing: CampaignDeliveryDeps = {
      ...deps,
      claimCampaignDelivery: async (key, ttlSecs) => {
        const owner = await store.claimCampaignDelivery(key, ttlSecs);
        clock.advance(CLAIM_WINDOW_SECS * 1000 + 1);
        return owner;
      },
    };
    const outcome = await deliverCampaignItem(lapsing, item, campaign, devices);
    assert.deepEqual(outcome, { kind: 'retry', afterMs: 0, error: CAMPAIGN_CLAIM_LAPSED }, 'the device still gets its push');
    assert.equal(transport.sent.length, 0);
    const retried = await deliverCampaignItem(deps, item, campaign, devices);
    assert.equal(retried.kind, 'done', JSON.stringify(retried));
    assert.deepEqual(sentTokens(), ['phone'], 'pushed on the retry');
  });
});

describeOnEachStore('a campaign item against the 21:00–06:59 local rule at delivery', (open) => {
  let store: StorePort;
  let clock: ManualClock;
  let transport: RecordingTransport;
  let deps: CampaignDeliveryDeps;
  /** A device at UTC+1: 21:00 local is 20:00Z, 07:00 local is 06:00Z. */
  const OFFSET_MINUTES = 60;
  const HOUR_MS = 3_600_000;
  const campaign: CampaignDelivery = {
    appId: 'default',
    campaignId: 'c1',
    deliveryKey: 'default:spring:phone',
    token: 'phone',
    timezoneOffsetMinutes: OFFSET_MINUTES,
  };
  const devices: DeviceRegistration[] = [{ token: 'phone', transport: 'fcm', timezoneOffsetMinutes: OFFSET_MINUTES }];
  const itemFor = (delivery: CampaignDelivery): LeasedItem<OutboundNotification> => ({
    id: 'campaign:c1:phone',
    payload: {
      eventId: 'campaign:c1',
      recipient: ALICE,
      type: 'app:campaign',
      message: { data: { type: 'campaign', title: 'Spring sale', body: '21% off' } },
      claim: null,
      eventCreatedAt: Math.floor(clock.nowMs() / 1000),
      campaign: delivery,
    },
    // A retry: the expansion queued it for daytime, and a retry after backoff landed at night.
    attempts: 2,
    leaseToken: 'x',
    leaseExpiresAtMs: 0,
    lastError: null,
  });

  beforeEach(async () => {
    // 22:00Z: 23:00 local at UTC+1.
    clock = new ManualClock(Date.UTC(2026, 5, 1, 22));
    store = await open(clock);
    transport = new RecordingTransport();
    deps = testOutboundDeps(store, [transport], {
      campaignClaimTtlSecs: CLAIM_WINDOW_SECS,
      campaignDedupTtlSecs: DEDUP_SECS,
      maxEventAgeSecs: 86_400,
    });
  });
  afterEach(() => store.close());

  test('an item due at 23:00 local is not sent and waits for 07:00 local; its claim is not taken', async () => {
    const outcome = await deliverCampaignItem(deps, itemFor(campaign), campaign, devices);
    assert.deepEqual(outcome, { kind: 'retry', afterMs: 8 * HOUR_MS, error: 'campaign quiet hours' });
    assert.equal(transport.sent.length, 0, 'nothing sent at night');
    assert.equal(await store.campaignDeliveryTtlSecs(campaign.deliveryKey), null, 'no claim taken: the 07:00 attempt may send');
  });

  test('06:59:59.999 local still waits; 07:00 local sends', async () => {
    clock.set(Date.UTC(2026, 5, 2, 6) - 1);
    assert.deepEqual(await deliverCampaignItem(deps, itemFor(campaign), campaign, devices), {
      kind: 'retry',
      afterMs: 1,
      error: 'campaign quiet hours',
    });
    clock.set(Date.UTC(2026, 5, 2, 6));
    assert.equal((await deliverCampaignItem(deps, itemFor(campaign), campaign, devices)).kind, 'done');
    assert.deepEqual(
      transport.sent.map((s) => s.token),
      ['phone'],
    );
  });

  test('an announcement (no offset on its delivery) goes out at 23:00 local', async () => {
    const { timezoneOffsetMinutes: _offset, ...announcement } = campaign;
    assert.equal((await deliverCampaignItem(deps, itemFor(announcement), announcement, devices)).kind, 'done');
    assert.equal(transport.sent.length, 1);
  });
});
