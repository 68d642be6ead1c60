/**
 * The send scheduler's expansion of one page (`expandSendPage`) on each store adapter, with a
 * manual clock: what reaches the outbound queue and what is suppressed, and why. The whole API
 * path is in `test/platform/scheduled-send.test.ts` and `test/e2e/send-api.test.ts`; these pin
 * the gates themselves, fast.
 */
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import type { SendRequest } from '../store/port-sends.ts';
import type { StorePort } from '../store/port.ts';
import { ManualClock } from '../util/clock.ts';
import { describeOnEachStore } from '../../test/support/each-store.ts';
import { expandSendPage, SendWakeup, type SendWorkerDeps } from './send-worker.ts';
import type { OutboundNotification } from '../notification/types.ts';

const ALICE = 'a1'.repeat(32);
const BOB = 'b2'.repeat(32);
const CAROL = 'c3'.repeat(32);
/** `send_api.types`: the app type `payout` is enabled by preference category 1059. */
const PAYOUT_CATEGORY = 1059;
const START_MS = Date.UTC(2026, 5, 1, 12);
const SECOND_MS = 1000;
const LEASE = { max: 100, leaseMs: 60_000, maxAttempts: 5 };

describeOnEachStore('send scheduler: one page through the gates', (open) => {
  let clock: ManualClock;
  let store: StorePort;
  let deps: SendWorkerDeps;

  beforeEach(async () => {
    clock = new ManualClock(START_MS);
    store = await open(clock);
    deps = {
      store,
      typeCategories: new Map([['payout', PAYOUT_CATEGORY]]),
      defaultPreferenceKinds: [7, PAYOUT_CATEGORY],
      allowedPubkeys: new Set(),
      pageSize: 100,
      leaseMs: 60_000,
      pollMs: 1000,
      claimTtlSecs: 86_400,
      logEnabled: true,
      wakeup: new SendWakeup(),
      onQueued: () => undefined,
      logger: createLogger({ level: 'silent' }),
      metrics: new Metrics(),
    };
    for (const pubkey of [ALICE, BOB, CAROL]) await store.registerToken(pubkey, { token: `${pubkey.slice(0, 4)}-phone`, transport: 'fcm' });
  });
  afterEach(() => store.close());

  /** Create a send due now, claim it as the scheduler does, and expand its page. */
  async function expand(request: Partial<SendRequest>): Promise<Record<string, number>> {
    const full: SendRequest = { recipients: [ALICE], type: 'payout', title: 'Paid', body: '21 sats', priority: 'normal', ...request };
    assert.deepEqual(await store.createSend({ appId: 'default', id: 'n1', request: full, sendAtMs: START_MS }, 86_400, null), {
      created: true,
    });
    const claimed = await store.claimDueSend(deps.leaseMs);
    assert.ok(claimed, 'the send is due');
    return Object.fromEntries(await expandSendPage(deps, claimed));
  }

  const queuedRecipients = async () =>
    (await store.lease<OutboundNotification>('outbound', LEASE)).map((item) => item.payload.recipient).sort();
  const logged = async () =>
    (await store.readDeliveryLog('default', { notificationId: 'n1', limit: 100 }))
      .map((entry) => [entry.recipient, entry.status, entry.error ?? null])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])));

  test('ttlSecs: a page expanded exactly at sendAt + ttlSecs is queued', async () => {
    clock.set(START_MS + 60 * SECOND_MS);
    assert.deepEqual(await expand({ ttlSecs: 60 }), { queued: 1 });
    assert.deepEqual(await queuedRecipients(), [ALICE]);
  });

  test('ttlSecs: a page expanded after sendAt + ttlSecs queues nobody, and logs every recipient as expired', async () => {
    clock.set(START_MS + 60 * SECOND_MS + 1);
    assert.deepEqual(await expand({ recipients: [ALICE, BOB], ttlSecs: 60 }), { expired: 2 });
    assert.deepEqual(await queuedRecipients(), [], 'nothing reaches the outbound queue');
    assert.deepEqual(await logged(), [
      [ALICE, 'suppressed', 'expired'],
      [BOB, 'suppressed', 'expired'],
    ]);
    assert.equal((await store.getSend('default', 'n1'))?.state, 'done', 'the send is finished, not left due');
  });

  test('without ttlSecs a page expanded a day late is still queued', async () => {
    clock.set(START_MS + 86_400 * SECOND_MS);
    assert.deepEqual(await expand({}), { queued: 1 });
  });

  test("preferences: a recipient whose own categories leave out the type's is suppressed; stored or default ones that have it are queued", async () => {
    await store.setPreferences(ALICE, { kinds: [PAYOUT_CATEGORY], campaignsEnabled: false });
    await store.setPreferences(BOB, { kinds: [7], campaignsEnabled: false });
    // Carol never set preferences: the defaults, which have the category, apply.
    assert.deepEqual(await expand({ recipients: [ALICE, BOB, CAROL] }), { queued: 2, preference_disabled: 1 });
    assert.deepEqual(await queuedRecipients(), [ALICE, CAROL].sort(), 'Bob is not queued');
    assert.deepEqual(await logged(), [
      [ALICE, 'queued', null],
      [BOB, 'suppressed', 'preference_disabled'],
      [CAROL, 'queued', null],
    ]);
  });

  test('preferences: with defaults that leave the category out, a user who never set any is suppressed', async () => {
    deps = { ...deps, defaultPreferenceKinds: [7] };
    assert.deepEqual(await expand({ recipients: [CAROL] }), { preference_disabled: 1 });
    assert.deepEqual(await queuedRecipients(), []);
  });

  test('the notification is queued on the lane of its priority; critical also marks it for the throttle', async () => {
    assert.deepEqual(await expand({ priority: 'critical' }), { queued: 1 });
    const stats = await store.queueStats('outbound');
    assert.deepEqual([stats.lanes.critical.ready, stats.lanes.normal.ready, stats.lanes.low.ready], [1, 0, 0]);
    const [item] = await store.lease<OutboundNotification>('outbound', LEASE);
    assert.equal(item?.payload.lane, 'critical');
  });
});
