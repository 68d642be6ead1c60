/**
 * The campaign scheduler's expansion of one page (`expandCampaignPage`) on each store adapter,
 * with a manual clock: the lane and the availability time of what it queues. What delivery makes
 * of the items is in `src/delivery/campaign-items.test.ts` and `campaign.test.ts`.
 */
import { isBellItemRef } from '../notification/bell-item.ts';
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { isCampaignItemRef, type OutboundPayload } from '../delivery/campaign-items.ts';
import { ANNOUNCEMENT_PREFERENCE_CATEGORY } from '../engine/content.ts';
import { createLogger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import type { CampaignRequest } from '../store/port-campaigns.ts';
import type { StorePort } from '../store/port.ts';
import { ManualClock } from '../util/clock.ts';
import { describeOnEachStore } from '../../test/support/each-store.ts';
import { expandCampaignPage, type CampaignWorkerDeps } from './campaign-worker.ts';
import { SendWakeup } from './send-worker.ts';

const DAY = 'a1'.repeat(32);
const NIGHT = 'b2'.repeat(32);
/** 2026-12-02 00:00 UTC: 10:00 at UTC+10 (daytime), midnight at UTC. */
const START_MS = Date.UTC(2026, 11, 2);
const HOUR_MS = 3_600_000;
const LEASE = { max: 10, leaseMs: 60_000, maxAttempts: 5 };

describeOnEachStore('campaign scheduler: what one page queues', (open) => {
  let clock: ManualClock;
  let store: StorePort;
  let deps: CampaignWorkerDeps;

  beforeEach(async () => {
    clock = new ManualClock(START_MS);
    store = await open(clock);
    deps = {
      store,
      allowedPubkeys: new Set(),
      pageSize: 500,
      defaultPreferenceKinds: [],
      leaseMs: 60_000,
      pollMs: 1000,
      wakeup: new SendWakeup(),
      onQueued: () => undefined,
      logger: createLogger({ level: 'silent' }),
      metrics: new Metrics(),
    };
    for (const [pubkey, token, offset] of [
      [DAY, 'day-phone', 600],
      [NIGHT, 'night-phone', 0],
    ] as const) {
      await store.setPreferences(pubkey, { kinds: [ANNOUNCEMENT_PREFERENCE_CATEGORY], campaignsEnabled: true });
      await store.registerToken(pubkey, { token, transport: 'fcm', timezoneOffsetMinutes: offset });
    }
  });
  afterEach(() => store.close());

  async function expand(request: Partial<CampaignRequest> = {}): Promise<void> {
    const full: CampaignRequest = { idempotencyKey: 'spring', title: 'Spring sale', body: '21% off', audience: 'all', ...request };
    assert.deepEqual(await store.createCampaign({ appId: 'default', id: 'c1', request: full, requestHash: 'h' }), { created: true });
    const claimed = await store.claimDueCampaign(60_000);
    assert.ok(claimed, 'the new campaign is due at once');
    await expandCampaignPage(deps, claimed);
  }

  const laneCounts = async () => {
    const { lanes } = await store.queueStats('outbound');
    return { critical: lanes.critical.ready, normal: lanes.normal.ready, low: lanes.low.ready };
  };
  /** The recipients of the items due now, leased and acknowledged (as delivered). */
  const dueRecipients = async () => {
    const due = await store.lease<OutboundPayload>('outbound', LEASE);
    for (const item of due) await store.ack('outbound', item.id, item.leaseToken);
    return due.map((item) => {
      const payload = item.payload;
      if (isCampaignItemRef(payload)) return payload.campaignItem.recipient;
      return isBellItemRef(payload) ? payload.bellItem.recipient : payload.recipient;
    });
  };

  test('every campaign item is queued on the low lane, the deferred one too', async () => {
    await expand();
    assert.deepEqual(await laneCounts(), { critical: 0, normal: 0, low: 2 });
  });

  test('the device at midnight local is available at its 07:00, not before', async () => {
    await expand();
    assert.deepEqual(await dueRecipients(), [DAY], 'only the daytime device is due now');
    clock.advance(7 * HOUR_MS - 1);
    assert.deepEqual(await dueRecipients(), [], 'not at 06:59:59.999 local');
    clock.advance(1);
    assert.deepEqual(await dueRecipients(), [NIGHT], 'due at 07:00 local');
  });

  test('announcements are queued on the low lane too, at once whatever the local time', async () => {
    await expand({ kind: 'announcement' });
    assert.deepEqual(await laneCounts(), { critical: 0, normal: 0, low: 2 });
    assert.deepEqual((await dueRecipients()).sort(), [DAY, NIGHT].sort());
  });
});
