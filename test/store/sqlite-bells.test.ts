/**
 * SQLite-only behaviour of bells: the TTL records (bell rate windows, fan-out enqueue markers)
 * expire by the injected clock, which Redis does by its own key expiry (tested there by TTL).
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { WATCHER_WALK_START } from '../../src/store/port-bells.ts';
import { IN_MEMORY_PATH, openSqliteStore, type SqliteStore } from '../../src/store/sqlite/index.ts';
import { ManualClock } from '../../src/util/clock.ts';

const SECOND_MS = 1000;
const SUBSCRIBER = 'a1'.repeat(32);
const CREATOR = 'c1'.repeat(32);

let clock: ManualClock;
let store: SqliteStore;

beforeEach(async () => {
  clock = new ManualClock();
  store = await openSqliteStore({ path: IN_MEMORY_PATH, clock });
});

afterEach(async () => {
  await store.close();
});

describe('SqliteStore bell TTL records', () => {
  test('a bell rate window ends when its TTL is over', async () => {
    await store.openNewPostRateWindow(SUBSCRIBER, CREATOR, 3600);
    clock.advance(3600 * SECOND_MS - 1);
    assert.equal(await store.isNewPostRateLimited(SUBSCRIBER, CREATOR), true);
    clock.advance(1);
    assert.equal(await store.isNewPostRateLimited(SUBSCRIBER, CREATOR), false);
  });

  test('a reopened window restarts its TTL', async () => {
    await store.openNewPostRateWindow(SUBSCRIBER, CREATOR, 60);
    clock.advance(50 * SECOND_MS);
    await store.openNewPostRateWindow(SUBSCRIBER, CREATOR, 60);
    clock.advance(50 * SECOND_MS);
    assert.equal(await store.isNewPostRateLimited(SUBSCRIBER, CREATOR), true);
  });

  test('an extended claim outlives its first TTL by the injected clock', async () => {
    const claim = await store.claimRecipientDelivery('event', SUBSCRIBER, 10);
    assert.ok(claim);
    assert.equal(await store.extendRecipientDelivery(claim, 600), true);
    clock.advance(599 * SECOND_MS);
    assert.equal(await store.claimRecipientDelivery('event', SUBSCRIBER, 10), null);
    clock.advance(SECOND_MS);
    assert.ok(await store.claimRecipientDelivery('event', SUBSCRIBER, 10));
  });

  test("a delivered bell's claim lapses when it was taken to, by the injected clock; a failed one's is extended", async () => {
    const [delivered, failed] = await store.claimRecipientDeliveries('event', [SUBSCRIBER, CREATOR], 10);
    assert.ok(delivered && failed);
    await store.recordBellBatch({
      video: { owner: CREATOR, dTag: 'vine' },
      delivered: [{ claim: delivered, tokens: [] }],
      failed: [failed],
      released: [],
      rateLimited: [],
      claimTtlSecs: 600,
      rateLimitSecs: 60,
      videoRecordTtlSecs: 60,
    });
    clock.advance(10 * SECOND_MS);
    assert.deepEqual(
      (await store.claimRecipientDeliveries('event', [SUBSCRIBER, CREATOR], 10)).map((claim) => claim !== null),
      [true, false],
      'the delivered claim is free again at its first expiry; the failed one is held',
    );
  });

  test('an expired claim is not extended', async () => {
    const claim = await store.claimRecipientDelivery('event', SUBSCRIBER, 10);
    assert.ok(claim);
    clock.advance(10 * SECOND_MS);
    assert.equal(await store.extendRecipientDelivery(claim, 600), false);
  });

  test('a video may be queued again once its enqueue marker expired', async () => {
    const job = { eventJson: '{}', cursor: WATCHER_WALK_START, senderName: null, attempt: 0, expiresAt: 0 };
    assert.equal(await store.enqueueFanoutJob('video', job, 10), true);
    clock.advance(10 * SECOND_MS - 1);
    assert.equal(await store.enqueueFanoutJob('video', job, 10), false);
    clock.advance(1);
    assert.equal(await store.enqueueFanoutJob('video', job, 10), true);
  });
});
