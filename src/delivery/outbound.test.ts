import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { TOKEN_ACTIVITY_RESOLUTION_MS, tokenActivitySliceStartMs, type LeasedItem, type StorePort } from '../store/port.ts';
import { ManualClock } from '../util/clock.ts';
import { RecordingTransport, invalidRequest, retryable, unregistered } from '../../test/support/recording-transport.ts';
import { testOutboundDeps } from '../../test/support/outbound-deps.ts';
import { batchedTokenActivity } from './deliver.ts';
import { decideAfterDelivery, handleOutbound, type OutboundHandlerDeps } from './outbound.ts';
import type { OutboundNotification } from '../notification/types.ts';

const ALICE = 'a1'.repeat(32);
const EVENT = 'e1'.repeat(32);

describe('delivery of an outbound notification', () => {
  let store: StorePort;
  let clock: ManualClock;
  let transport: RecordingTransport;
  let deps: OutboundHandlerDeps;
  let attempts: number;

  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 11, 2));
    store = await openSqliteStore({ path: ':memory:', clock });
    transport = new RecordingTransport();
    attempts = 0;
    deps = testOutboundDeps(store, [transport]);
    await store.registerToken(ALICE, { token: 'phone', transport: 'fcm' });
    await store.registerToken(ALICE, { token: 'tablet', transport: 'fcm' });
  });
  afterEach(() => store.close());

  async function item(overrides: Partial<OutboundNotification> = {}): Promise<LeasedItem<OutboundNotification>> {
    const claim = await store.claimRecipientDelivery(EVENT, ALICE, 604800);
    const payload: OutboundNotification = {
      eventId: EVENT,
      recipient: ALICE,
      type: 'mention',
      message: { data: { type: 'mention', title: 't', body: 'b' } },
      claim,
      eventCreatedAt: Math.floor(clock.nowMs() / 1000),
      ...overrides,
    };
    return { id: `${EVENT}:${ALICE}`, payload, attempts: ++attempts, leaseToken: 'x', leaseExpiresAtMs: 0, lastError: null };
  }

  test('success refreshes activity and writes the video records; the claim is kept', async () => {
    clock.advance(TOKEN_ACTIVITY_RESOLUTION_MS);
    const it = await item({ video: { owner: 'b2'.repeat(32), dTag: 'v', recordTypes: ['mention', 'newPost'] } });
    assert.deepEqual(await handleOutbound(deps, it), { kind: 'done' });
    assert.equal(transport.sent.length, 2);
    assert.equal(await store.tokenActivityMs('phone'), tokenActivitySliceStartMs(clock.nowMs()));
    assert.equal(await store.hasVideoRecord({ type: 'newPost', owner: 'b2'.repeat(32), dTag: 'v', recipient: ALICE }), true);
    assert.equal(await store.claimRecipientDelivery(EVENT, ALICE, 60), null);
  });

  test('a dead-token answer prunes only that token; the other device still gets it', async () => {
    transport.script.set('tablet', unregistered);
    assert.deepEqual(await handleOutbound(deps, await item()), { kind: 'done' });
    assert.equal(await store.tokenOwner('tablet'), null);
    assert.equal(await store.tokenOwner('phone'), ALICE);
  });

  test('a partial success keeps the claim and retries nothing', async () => {
    transport.script.set('tablet', retryable(5));
    assert.deepEqual(await handleOutbound(deps, await item()), { kind: 'done' });
    assert.equal(await store.claimRecipientDelivery(EVENT, ALICE, 60), null);
  });

  test('every device retryable: retry after max(Retry-After, backoff), claim held meanwhile', async () => {
    transport.script.set('phone', retryable(30));
    transport.script.set('tablet', retryable(12));
    const outcome = await handleOutbound(deps, await item());
    assert.equal(outcome.kind, 'retry');
    assert.equal(outcome.afterMs, 30_000);
    assert.equal(await store.claimRecipientDelivery(EVENT, ALICE, 60), null);
  });

  test('given up once the notification would be older than max_event_age_secs: dead-lettered, claim released', async () => {
    transport.script.set('phone', retryable(30));
    transport.script.set('tablet', retryable(30));
    const it = await item({ eventCreatedAt: Math.floor(clock.nowMs() / 1000) - 3590 });
    const outcome = await handleOutbound(deps, it);
    assert.equal(outcome.kind, 'dead');
    assert.ok(await store.claimRecipientDelivery(EVENT, ALICE, 60), 'the claim was released');
  });

  test('a final (non-retryable) failure on every device keeps the claim and is done', async () => {
    transport.script.set('phone', invalidRequest);
    transport.script.set('tablet', invalidRequest);
    assert.deepEqual(await handleOutbound(deps, await item()), { kind: 'done' });
    assert.equal(await store.claimRecipientDelivery(EVENT, ALICE, 60), null);
  });

  test('the first attempt sends to the devices the gates read; a retry reads the devices afresh', async () => {
    const first = await item({ devices: [{ token: 'phone', transport: 'fcm' }] });
    assert.equal(first.attempts, 1);
    await handleOutbound(deps, first);
    assert.deepEqual(
      transport.sent.map((s) => s.token),
      ['phone'],
      'only the device the gates saw',
    );
    transport.sent.length = 0;
    const retried = await item({ devices: [{ token: 'phone', transport: 'fcm' }] });
    assert.equal(retried.attempts, 2);
    await handleOutbound(deps, retried);
    assert.deepEqual(transport.sent.map((s) => s.token).sort(), ['phone', 'tablet'], 'every device registered now');
  });

  test('batchedTokenActivity writes the refreshes of one turn as one store call', async () => {
    let calls = 0;
    const counting: StorePort = Object.create(store, {
      refreshTokenActivity: { value: (tokens: string[]) => (calls++, store.refreshTokenActivity(tokens)) },
    }) as StorePort;
    const refresh = batchedTokenActivity(counting);
    clock.advance(TOKEN_ACTIVITY_RESOLUTION_MS);
    await Promise.all([refresh(['phone']), refresh(['tablet']), refresh([])]);
    assert.equal(calls, 1);
    assert.equal(await store.tokenActivityMs('phone'), tokenActivitySliceStartMs(clock.nowMs()));
    assert.equal(await store.tokenActivityMs('tablet'), tokenActivitySliceStartMs(clock.nowMs()));
  });

  test('decision table', () => {
    const n = { eventCreatedAt: 1000 } as OutboundNotification;
    const report = (r: Partial<{ devices: number; delivered: number; retryAfterSecs: number | null }>) => ({
      devices: 1,
      delivered: 0,
      failed: 1,
      pruned: 0,
      retryAfterSecs: null,
      ...r,
    });
    assert.deepEqual(decideAfterDelivery(report({ delivered: 1 }), n, 1, 1_000_000, 3600), {
      outcome: { kind: 'done' },
      releaseClaim: false,
    });
    assert.deepEqual(decideAfterDelivery(report({ devices: 0 }), n, 1, 1_000_000, 3600), { outcome: { kind: 'done' }, releaseClaim: true });
    assert.equal(decideAfterDelivery(report({ retryAfterSecs: 1 }), n, 3, 1_000_000, 3600).outcome.kind, 'retry');
    assert.equal(decideAfterDelivery(report({ retryAfterSecs: 1 }), n, 3, 4_599_000, 3600).outcome.kind, 'dead');
  });
});
