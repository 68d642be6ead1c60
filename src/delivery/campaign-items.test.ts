import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../store/sqlite/index.ts';
import type { LeasedItem, StorePort } from '../store/port.ts';
import type { CampaignRecord, CampaignRequest } from '../store/port-campaigns.ts';
import { ManualClock } from '../util/clock.ts';
import { RecordingTransport } from '../../test/support/recording-transport.ts';
import { testOutboundDeps } from '../../test/support/outbound-deps.ts';
import { npubEncode } from '../nostr/nip19.ts';
import { expandCampaignPage } from '../platform/campaign-worker.ts';
import { SendWakeup } from '../platform/send-worker.ts';
import { handleOutbound, type OutboundHandlerDeps } from './outbound.ts';
import {
  CAMPAIGN_RECORD_MISSING,
  CampaignCopies,
  campaignDeliveryKey,
  campaignItemId,
  campaignNotification,
  isCampaignItemRef,
  type OutboundPayload,
} from './campaign-items.ts';

const APP = 'default';
const DAY = 'a1'.repeat(32);
const NIGHT = 'b2'.repeat(32);
/** 2026-12-02 00:00 UTC: 10:00 at UTC+10, midnight at UTC. */
const START_MS = Date.UTC(2026, 11, 2);
const REQUEST: CampaignRequest = {
  idempotencyKey: 'spring',
  title: 'Spring sale',
  body: '21% off',
  data: { url: 'https://example.com/sale' },
  audience: 'all',
};

describe('campaign items queued as references to their campaign', () => {
  let store: StorePort;
  let clock: ManualClock;
  let transport: RecordingTransport;
  let deps: OutboundHandlerDeps;

  beforeEach(async () => {
    clock = new ManualClock(START_MS);
    store = await openSqliteStore({ path: ':memory:', clock });
    transport = new RecordingTransport();
    deps = testOutboundDeps(store, [transport], { maxEventAgeSecs: 86_400 });
    for (const [pubkey, token, offset] of [
      [DAY, 'day-phone', 600],
      [NIGHT, 'night-phone', 0],
    ] as const) {
      await store.setPreferences(pubkey, { kinds: [7], campaignsEnabled: true });
      await store.registerToken(pubkey, { token, transport: 'fcm', timezoneOffsetMinutes: offset });
    }
  });
  afterEach(() => store.close());

  async function expand(): Promise<CampaignRecord> {
    assert.deepEqual(await store.createCampaign({ appId: APP, id: 'c1', request: REQUEST, requestHash: 'h' }), { created: true });
    const claimed = await store.claimDueCampaign(60_000);
    assert.ok(claimed, 'the new campaign is due at once');
    const page = await expandCampaignPage(
      {
        store,
        allowedPubkeys: new Set(),
        pageSize: 500,
        defaultPreferenceKinds: [],
        leaseMs: 60_000,
        pollMs: 1000,
        wakeup: new SendWakeup(),
        onQueued: () => {},
        logger: deps.logger,
        metrics: deps.metrics,
      },
      claimed,
    );
    assert.deepEqual(page, { consenting: 2, deferred: 1, done: true }, 'both devices queued, the one at midnight local deferred');
    return claimed.campaign;
  }

  async function leaseAll(): Promise<Array<LeasedItem<OutboundPayload>>> {
    return store.lease<OutboundPayload>('outbound', { max: 10, leaseMs: 60_000, maxAttempts: 5 });
  }

  test('the queue holds a small reference, and delivery sends exactly the notification the campaign builds', async () => {
    const campaign = await expand();
    const [item, ...rest] = await leaseAll();
    assert.ok(item, 'the daytime device is due now');
    assert.equal(rest.length, 0, 'the device at midnight local waits for 07:00');
    assert.ok(isCampaignItemRef(item.payload), 'a campaign item is queued as a reference');
    assert.equal(item.id, campaignItemId(APP, 'spring', 'day-phone'), 'the item id is the (campaign, device) one');
    assert.ok(item.id.startsWith('campaign:default:spring:day-phon:'), `ids sort like tokens: ${item.id}`);
    const whole = campaignNotification(campaign, DAY, { token: 'day-phone', transport: 'fcm', timezoneOffsetMinutes: 600 }, START_MS);
    assert.ok(
      JSON.stringify(item.payload).length * 2 < JSON.stringify(whole).length,
      `the reference (${JSON.stringify(item.payload).length} bytes) is under half the notification (${JSON.stringify(whole).length})`,
    );

    assert.deepEqual(await handleOutbound(deps, item), { kind: 'done' }, 'delivered');
    assert.deepEqual(
      transport.sent.map((s) => [s.token, s.message.data]),
      [
        [
          'day-phone',
          {
            url: 'https://example.com/sale',
            type: 'campaign',
            title: 'Spring sale',
            body: '21% off',
            campaignId: 'c1',
            notificationId: 'c1',
            receiverPubkey: DAY,
            receiverNpub: npubEncode(DAY),
            badge: '0',
          },
        ],
      ],
      "seed 000's campaign data map, from the record (and the badge every push carries)",
    );
    const key = campaignDeliveryKey(APP, 'spring', 'day-phone');
    assert.ok(((await store.campaignDeliveryTtlSecs(key)) ?? 0) > 600, 'the claim was extended past the in-flight window on acceptance');
    assert.equal((await store.getCampaign(APP, 'c1'))?.counts.sent, 1, 'counted as sent');
  });

  test('a deferred reference is held until 07:00 local and then sent', async () => {
    await expand();
    clock.advance(7 * 3_600_000);
    const due = await leaseAll();
    const night = due.find((i) => isCampaignItemRef(i.payload) && i.payload.campaignItem.recipient === NIGHT);
    assert.ok(night, 'the midnight device is due at its 07:00');
    assert.deepEqual(await handleOutbound(deps, night), { kind: 'done' }, 'delivered at 07:00 local');
    assert.deepEqual(
      transport.sent.map((s) => s.token),
      ['night-phone'],
      'pushed once, to its own device',
    );
  });

  test('a notification queued whole (by an earlier version) is delivered as it is', async () => {
    const campaign = await expand();
    const whole = campaignNotification(campaign, DAY, { token: 'day-phone', transport: 'fcm', timezoneOffsetMinutes: 600 }, START_MS);
    const item = { id: 'old', payload: whole, attempts: 1, leaseToken: 'x', leaseExpiresAtMs: 0, lastError: null };
    assert.deepEqual(await handleOutbound(deps, item), { kind: 'done' }, 'delivered');
    assert.deepEqual(
      transport.sent.map((s) => s.message.data.title),
      ['Spring sale'],
      'sent with its own copy',
    );
  });

  test('a reference whose campaign record is missing is dead-lettered, not sent', async () => {
    const item: LeasedItem<OutboundPayload> = {
      id: 'orphan',
      payload: {
        campaignItem: {
          appId: APP,
          campaignId: 'gone',
          recipient: DAY,
          device: { token: 'day-phone', transport: 'fcm' },
          sendAtMs: START_MS,
        },
      },
      attempts: 1,
      leaseToken: 'x',
      leaseExpiresAtMs: 0,
      lastError: null,
    };
    assert.deepEqual(await handleOutbound(deps, item), { kind: 'dead', reason: CAMPAIGN_RECORD_MISSING }, 'dead-lettered with its reason');
    assert.equal(transport.sent.length, 0, 'nothing sent');
  });
});

describe('CampaignCopies', () => {
  const record = (id: string): CampaignRecord => ({
    appId: APP,
    id,
    request: { ...REQUEST, audience: { pubkeys: [DAY, NIGHT] } },
    requestHash: 'h',
    state: 'running',
    createdAtMs: START_MS,
    cursor: '',
    counts: { consenting: 0, deferred: 0, sent: 0, failed: 0, opened: 0 },
  });

  test('reads a record once for every item of its run, and keeps no audience', async () => {
    const reads: string[] = [];
    const copies = new CampaignCopies({ getCampaign: async (_app, id) => (reads.push(id), record(id)) });
    const got = await Promise.all([copies.get(APP, 'c1'), copies.get(APP, 'c1'), copies.get(APP, 'c1')]);
    assert.deepEqual(reads, ['c1'], 'one read for concurrent items');
    const [copy] = got;
    assert.ok(copy, 'the record was found');
    assert.equal(copy.request.title, 'Spring sale', 'the copy is the record’s');
    assert.equal('audience' in copy.request, false, 'the audience list is not kept');
    await copies.get(APP, 'c1');
    assert.deepEqual(reads, ['c1'], 'later items are served from the cache');
  });

  test('a missing record or a failed read is asked again; beyond its capacity the oldest entry goes', async () => {
    const reads: string[] = [];
    let missing = true;
    let failing = true;
    const copies = new CampaignCopies(
      {
        getCampaign: async (_app, id) => {
          reads.push(id);
          if (id === 'flaky' && failing) throw new Error('store down');
          return id === 'late' && missing ? null : record(id);
        },
      },
      2,
    );
    assert.equal(await copies.get(APP, 'late'), null, 'missing at first');
    missing = false;
    assert.equal((await copies.get(APP, 'late'))?.id, 'late', 'found when asked again');
    await assert.rejects(copies.get(APP, 'flaky'), /store down/, 'a failed read fails its item');
    failing = false;
    assert.equal((await copies.get(APP, 'flaky'))?.id, 'flaky', 'and is retried by the next');
    await copies.get(APP, 'third');
    reads.length = 0;
    await copies.get(APP, 'flaky');
    await copies.get(APP, 'late');
    assert.deepEqual(reads, ['late'], 'capacity 2: the oldest entry was evicted, the newer kept');
  });
});
