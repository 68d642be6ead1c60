/**
 * Gift-wrap pushes (`handleGiftWrap`) into the store's real outbound queue, on each store adapter:
 * the lane they wait in. Opt-in, dedupe and the DM window are in `optional-events.test.ts`.
 */
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { GIFT_WRAP } from '../../nostr/kinds.ts';
import { signEvent } from '../../nostr/keys.ts';
import { createLogger } from '../../observability/logger.ts';
import { Metrics } from '../../observability/metrics.ts';
import type { StorePort } from '../../store/port.ts';
import { ManualClock } from '../../util/clock.ts';
import { describeOnEachStore } from '../../../test/support/each-store.ts';
import { makeUser } from '../../../test/support/nostr-client.ts';
import { storeOutboundQueue } from '../outbound-queue.ts';
import { handleGiftWrap, type GiftWrapDeps } from './gift-wraps.ts';
import type { OutboundNotification } from '../../notification/types.ts';

const ALICE = 'a1'.repeat(32);

describeOnEachStore('gift-wrap pushes in the outbound queue', (open) => {
  let clock: ManualClock;
  let store: StorePort;
  let deps: GiftWrapDeps;

  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 11, 2));
    store = await open(clock);
    deps = {
      store,
      allowedPubkeys: new Set(),
      processedEventTtlSecs: 604_800,
      minIntervalSecs: 60,
      outbound: storeOutboundQueue(store, () => undefined),
      countInbox: false,
      metrics: new Metrics(),
      logger: createLogger({ level: 'silent' }),
    };
    await store.registerToken(ALICE, { token: 'alice-phone', transport: 'fcm' });
    await store.setPreferences(ALICE, { kinds: [GIFT_WRAP], campaignsEnabled: false });
  });
  afterEach(() => store.close());

  test('a direct-message push waits in the critical lane, ahead of relay notifications and campaigns', async () => {
    const wrap = signEvent(
      { kind: GIFT_WRAP, created_at: Math.floor(clock.nowMs() / 1000), tags: [['p', ALICE]], content: 'x' },
      makeUser().secret,
    );
    assert.equal(await handleGiftWrap(deps, wrap, 'owner-1'), 'queued');
    const { lanes } = await store.queueStats('outbound');
    assert.deepEqual([lanes.critical.ready, lanes.normal.ready, lanes.low.ready], [1, 0, 0]);
    const [item] = await store.lease<OutboundNotification>('outbound', { max: 10, leaseMs: 60_000, maxAttempts: 5 });
    assert.equal(item?.payload.type, 'directMessage');
    assert.equal(item.payload.recipient, ALICE);
  });
});
