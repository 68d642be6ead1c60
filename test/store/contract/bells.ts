import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { WATCHER_WALK_START, type FanoutJob, type NotifyListReplacement } from '../../../src/store/port-bells.ts';
import { TOKEN_ACTIVITY_RESOLUTION_MS, type StorePort } from '../../../src/store/port.ts';
import { SECOND_MS, type ContractContext } from './context.ts';

/**
 * Bells: the notify-list replacement rules, watcher pages, the rate window and the fan-out job
 * queue. TTL expiry (rate windows, enqueue markers) runs on Redis's own key expiry in Redis mode,
 * so it is tested per adapter; a legacy bare-integer list version can only exist in a divine
 * Redis, so it is tested in `redis-bells.test.ts`.
 */

const hex = (seed: number, prefix = 'c'): string => `${prefix}${seed.toString(16).padStart(63, '0')}`;
const SUBSCRIBER = 'a1'.repeat(32);
const OTHER_SUBSCRIBER = 'a2'.repeat(32);
const CREATOR_A = 'c1'.repeat(32);
const CREATOR_B = 'c2'.repeat(32);
const CREATOR_C = 'c3'.repeat(32);
const LOW_ID = '10'.repeat(32);
const HIGH_ID = 'f0'.repeat(32);
const CREATED_AT = 1_767_225_600;
const MARKER_TTL_SECS = 7 * 86_400;
const LEASE_MS = 20 * 60 * SECOND_MS;
const MANY_WATCHERS = 150;
const PAGE_SIZE = 10;

function list(creators: string[], createdAt = CREATED_AT, eventId = LOW_ID, subscriber = SUBSCRIBER): NotifyListReplacement {
  return { subscriber, creators, createdAt, eventId };
}

const sorted = (values: string[]): string[] => [...values].sort();

async function watchersOf(store: StorePort, creator: string, pageSize = 1000): Promise<string[]> {
  const all: string[] = [];
  let cursor = WATCHER_WALK_START;
  for (let pages = 0; pages < 10_000; pages++) {
    const page = await store.notifyWatchersPage(creator, cursor, pageSize);
    all.push(...page.watchers);
    cursor = page.nextCursor;
    if (cursor === WATCHER_WALK_START) return sorted([...new Set(all)]);
  }
  throw new Error('the watcher walk did not end');
}

function job(overrides: Partial<FanoutJob> = {}): FanoutJob {
  return {
    eventJson: '{"id":"video"}',
    cursor: WATCHER_WALK_START,
    senderName: null,
    attempt: 0,
    expiresAt: CREATED_AT + MARKER_TTL_SECS,
    ...overrides,
  };
}

export function bellContract(ctx: ContractContext): void {
  describe('notify lists', () => {
    test('a list fills both indexes; a newer one shrinks and grows them', async () => {
      const store = ctx.store();
      assert.equal(await store.replaceNotifySubscriptions(list([CREATOR_A, CREATOR_B])), 'applied');
      assert.deepEqual(sorted(await store.notifySubscriptions(SUBSCRIBER)), [CREATOR_A, CREATOR_B]);
      assert.deepEqual(await watchersOf(store, CREATOR_A), [SUBSCRIBER]);
      assert.equal(await store.isNotifyWatcher(CREATOR_B, SUBSCRIBER), true);

      assert.equal(await store.replaceNotifySubscriptions(list([CREATOR_B, CREATOR_C], CREATED_AT + 1, HIGH_ID)), 'applied');
      assert.deepEqual(sorted(await store.notifySubscriptions(SUBSCRIBER)), [CREATOR_B, CREATOR_C]);
      assert.deepEqual(await watchersOf(store, CREATOR_A), [], 'the unbelled creator lost the watcher');
      assert.equal(await store.isNotifyWatcher(CREATOR_A, SUBSCRIBER), false);
      assert.deepEqual(await watchersOf(store, CREATOR_C), [SUBSCRIBER]);
    });

    test('an older list is rejected and changes nothing', async () => {
      const store = ctx.store();
      await store.replaceNotifySubscriptions(list([CREATOR_A], CREATED_AT + 10));
      assert.equal(await store.replaceNotifySubscriptions(list([CREATOR_B], CREATED_AT + 9, '00'.repeat(32))), 'stale');
      assert.deepEqual(await store.notifySubscriptions(SUBSCRIBER), [CREATOR_A]);
      assert.deepEqual(await watchersOf(store, CREATOR_B), []);
    });

    test('at an equal created_at the lower id applies and the higher id is rejected', async () => {
      const store = ctx.store();
      assert.equal(await store.replaceNotifySubscriptions(list([CREATOR_A], CREATED_AT, HIGH_ID)), 'applied');
      assert.equal(await store.replaceNotifySubscriptions(list([CREATOR_B], CREATED_AT, LOW_ID)), 'applied', 'a lower id wins the tie');
      assert.deepEqual(await store.notifySubscriptions(SUBSCRIBER), [CREATOR_B]);
      assert.equal(await store.replaceNotifySubscriptions(list([CREATOR_C], CREATED_AT, HIGH_ID)), 'stale', 'a higher id loses it');
      assert.deepEqual(await store.notifySubscriptions(SUBSCRIBER), [CREATOR_B]);
      assert.deepEqual(await watchersOf(store, CREATOR_C), []);
    });

    test('an exact replay is applied again and repairs a lost reverse-index entry', async () => {
      const store = ctx.store();
      const applied = list([CREATOR_A, CREATOR_B]);
      await store.replaceNotifySubscriptions(applied);
      assert.equal(await store.removeNotifyWatcher(CREATOR_A, SUBSCRIBER), true);
      assert.equal(await store.removeNotifyWatcher(CREATOR_A, SUBSCRIBER), false, 'already gone');
      assert.equal(await store.isNotifyWatcher(CREATOR_A, SUBSCRIBER), false);
      assert.deepEqual(sorted(await store.notifySubscriptions(SUBSCRIBER)), [CREATOR_A, CREATOR_B], 'the forward index was left alone');

      assert.equal(await store.replaceNotifySubscriptions(applied), 'applied');
      assert.deepEqual(await watchersOf(store, CREATOR_A), [SUBSCRIBER]);
      assert.deepEqual(await watchersOf(store, CREATOR_B), [SUBSCRIBER]);
    });

    test('an empty list unbells everyone: both indexes are cleared', async () => {
      const store = ctx.store();
      await store.replaceNotifySubscriptions(list([CREATOR_A, CREATOR_B, CREATOR_C]));
      assert.equal(await store.replaceNotifySubscriptions(list([], CREATED_AT + 1)), 'applied');
      assert.deepEqual(await store.notifySubscriptions(SUBSCRIBER), []);
      for (const creator of [CREATOR_A, CREATOR_B, CREATOR_C]) {
        assert.deepEqual(await watchersOf(store, creator), []);
        assert.equal(await store.isNotifyWatcher(creator, SUBSCRIBER), false);
      }
      assert.equal(await store.replaceNotifySubscriptions(list([CREATOR_A], CREATED_AT)), 'stale', 'the empty list is the applied version');
    });

    test('one subscriber unbelling leaves the other watcher of the creator in place', async () => {
      const store = ctx.store();
      await store.replaceNotifySubscriptions(list([CREATOR_A]));
      await store.replaceNotifySubscriptions(list([CREATOR_A], CREATED_AT, LOW_ID, OTHER_SUBSCRIBER));
      assert.deepEqual(await watchersOf(store, CREATOR_A), sorted([SUBSCRIBER, OTHER_SUBSCRIBER]));
      await store.replaceNotifySubscriptions(list([], CREATED_AT + 1));
      assert.deepEqual(await watchersOf(store, CREATOR_A), [OTHER_SUBSCRIBER]);
    });

    test(`${MANY_WATCHERS} watchers walked in pages of ${PAGE_SIZE} are each returned`, async () => {
      const store = ctx.store();
      const subscribers = Array.from({ length: MANY_WATCHERS }, (_, i) => hex(i, 'b'));
      for (const subscriber of subscribers) await store.replaceNotifySubscriptions(list([CREATOR_A], CREATED_AT, LOW_ID, subscriber));
      let cursor = WATCHER_WALK_START;
      let pages = 0;
      const seen = new Set<string>();
      do {
        const page = await store.notifyWatchersPage(CREATOR_A, cursor, PAGE_SIZE);
        assert.equal(new Set(page.watchers).size, page.watchers.length, 'no repeats within a page');
        for (const watcher of page.watchers) seen.add(watcher);
        cursor = page.nextCursor;
        pages++;
      } while (cursor !== WATCHER_WALK_START && pages < 1000);
      assert.equal(cursor, WATCHER_WALK_START, 'the walk ends');
      assert.ok(pages > 1, 'more than one page');
      assert.deepEqual(sorted([...seen]), sorted(subscribers));
      assert.deepEqual(await store.notifyWatchersPage(CREATOR_B, WATCHER_WALK_START, PAGE_SIZE), {
        watchers: [],
        nextCursor: WATCHER_WALK_START,
      });
    });
  });

  describe('bell delivery claims', () => {
    const EVENT = 'e1'.repeat(32);

    test('extendRecipientDelivery extends only a claim still held by its owner', async () => {
      const store = ctx.store();
      const claim = await store.claimRecipientDelivery(EVENT, SUBSCRIBER, 60);
      assert.ok(claim);
      assert.equal(await store.extendRecipientDelivery(claim, 3600), true);
      assert.equal(await store.extendRecipientDelivery({ ...claim, owner: 'forged' }, 3600), false);
      assert.equal(await store.claimRecipientDelivery(EVENT, SUBSCRIBER, 60), null, 'still held');
      assert.equal(await store.releaseRecipientDelivery(claim), true);
      assert.equal(await store.extendRecipientDelivery(claim, 3600), false, 'a released claim is not brought back');
      assert.ok(await store.claimRecipientDelivery(EVENT, SUBSCRIBER, 60), 'and stays free');
    });
  });

  describe('bell pages', () => {
    const EVENT = 'e2'.repeat(32);
    const VIDEO_D = 'vine';
    const video = { owner: CREATOR_A, dTag: VIDEO_D };
    const [ready, tokenless, muted, recorded, limited] = [1, 2, 3, 4, 5].map((n) => hex(n, 'b'));

    test('readBellWatchers reads every gate input of each watcher, in order', async () => {
      const store = ctx.store();
      for (const watcher of [ready, muted, recorded, limited])
        await store.registerToken(watcher ?? '', { token: `token-${watcher}`, transport: 'fcm' });
      await store.setPreferences(muted ?? '', { kinds: [1, 7], campaignsEnabled: false });
      await store.writeVideoRecords({ owner: CREATOR_A, dTag: VIDEO_D, recipient: recorded ?? '' }, ['newPost'], 3600);
      await store.writeVideoRecords({ owner: CREATOR_A, dTag: VIDEO_D, recipient: ready ?? '' }, ['mention'], 3600);
      await store.openNewPostRateWindow(limited ?? '', CREATOR_A, 3600);
      const states = await store.readBellWatchers(video, [ready, tokenless, muted, recorded, limited] as string[]);
      assert.deepEqual(
        states.map((s) => [s.watcher, s.devices.map((d) => d.token), s.preferenceKinds, s.alreadyNotified, s.rateLimited]),
        [
          [ready, [`token-${ready}`], null, false, false],
          [tokenless, [], null, false, false],
          [muted, [`token-${muted}`], [1, 7], false, false],
          [recorded, [`token-${recorded}`], null, true, false],
          [limited, [`token-${limited}`], null, false, true],
        ],
        'a mention record is not a bell record',
      );
      assert.deepEqual(await store.readBellWatchers(video, []), []);
    });

    test('claimRecipientDeliveries claims each recipient once, in order', async () => {
      const store = ctx.store();
      const held = await store.claimRecipientDelivery(EVENT, muted ?? '', 60);
      assert.ok(held);
      const claims = await store.claimRecipientDeliveries(EVENT, [ready, muted, tokenless] as string[], 60);
      assert.deepEqual(
        claims.map((c) => c?.recipient ?? null),
        [ready, null, tokenless],
      );
      assert.equal(new Set(claims.filter((c) => c !== null).map((c) => c.owner)).size, 2, 'each claim has its own owner');
      assert.deepEqual(await store.claimRecipientDeliveries(EVENT, [ready] as string[], 60), [null]);
      assert.deepEqual(await store.claimRecipientDeliveries(EVENT, [], 60), []);
    });

    test('recordBellBatch writes windows, records, failed claims extended and releases, leaves delivered claims as taken, and refreshes token activity', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      for (const watcher of [ready, muted]) await store.registerToken(watcher ?? '', { token: `token-${watcher}`, transport: 'fcm' });
      // An activity slice later, so the delivery's refresh has something to raise.
      clock.advance(TOKEN_ACTIVITY_RESOLUTION_MS);
      const [deliveredClaim, failedClaim, releasedClaim] = await store.claimRecipientDeliveries(
        EVENT,
        [ready, muted, tokenless] as string[],
        60,
      );
      assert.ok(deliveredClaim && failedClaim && releasedClaim);
      clock.advance(30 * SECOND_MS); // inside the claims' 60 s
      await store.recordBellBatch({
        video,
        delivered: [{ claim: deliveredClaim, tokens: [`token-${ready}`] }],
        failed: [failedClaim],
        released: [releasedClaim],
        rateLimited: [limited ?? ''],
        claimTtlSecs: 3600,
        rateLimitSecs: 3600,
        videoRecordTtlSecs: 3600,
      });
      assert.equal(await store.isNewPostRateLimited(ready ?? '', CREATOR_A), true);
      assert.equal(await store.isNewPostRateLimited(muted ?? '', CREATOR_A), false, 'a failed bell opens no window');
      const record = (recipient: string | undefined, type = 'newPost') =>
        store.hasVideoRecord({ type, owner: CREATOR_A, dTag: VIDEO_D, recipient: recipient ?? '' });
      assert.equal(await record(ready), true);
      assert.equal(await record(ready, 'mention'), false, 'a bell writes only its own record');
      assert.equal(await record(limited), true, 'a rate-limited bell is recorded');
      assert.equal(await record(muted), false);
      assert.deepEqual(
        await store.claimRecipientDeliveries(EVENT, [ready, muted, tokenless] as string[], 60).then((c) => c.map((x) => x !== null)),
        [false, false, true],
        'delivered and failed claims held, the released one free',
      );
      assert.equal(await store.extendRecipientDelivery(deliveredClaim, 60), true, 'the delivered claim kept its owner');
      assert.equal(await store.extendRecipientDelivery(failedClaim, 60), true, 'the failed claim kept its owner');
      const sliceStart = Math.floor(clock.nowMs() / TOKEN_ACTIVITY_RESOLUTION_MS) * TOKEN_ACTIVITY_RESOLUTION_MS;
      assert.equal(await store.tokenActivityMs(`token-${ready}`), sliceStart, 'the delivered token was refreshed to the current slice');
      assert.ok(((await store.tokenActivityMs(`token-${muted}`)) ?? 0) < sliceStart, 'the failed one was not');
    });
  });

  describe('bell rate window', () => {
    test('a window opened for (subscriber, creator) limits that pair only', async () => {
      const store = ctx.store();
      assert.equal(await store.isNewPostRateLimited(SUBSCRIBER, CREATOR_A), false);
      await store.openNewPostRateWindow(SUBSCRIBER, CREATOR_A, 3600);
      assert.equal(await store.isNewPostRateLimited(SUBSCRIBER, CREATOR_A), true);
      assert.equal(await store.isNewPostRateLimited(SUBSCRIBER, CREATOR_B), false);
      assert.equal(await store.isNewPostRateLimited(OTHER_SUBSCRIBER, CREATOR_A), false);
    });

    test('a non-positive TTL is refused', async () => {
      await assert.rejects(ctx.store().openNewPostRateWindow(SUBSCRIBER, CREATOR_A, 0), RangeError);
    });
  });

  describe('fan-out jobs', () => {
    test('a video is queued once', async () => {
      const store = ctx.store();
      assert.equal(await store.enqueueFanoutJob('video-1', job(), MARKER_TTL_SECS), true);
      assert.equal(await store.enqueueFanoutJob('video-1', job({ senderName: 'other' }), MARKER_TTL_SECS), false);
      assert.deepEqual(await store.fanoutJobStats(), { due: 1, waiting: 0 });
      assert.equal(await store.enqueueFanoutJob('video-2', job({ eventJson: '{"id":"video-2"}' }), MARKER_TTL_SECS), true);
      assert.deepEqual(await store.fanoutJobStats(), { due: 2, waiting: 0 });
    });

    test('the marker outlives the job: a video completed and seen again is not queued again', async () => {
      const store = ctx.store();
      await store.enqueueFanoutJob('video-1', job(), MARKER_TTL_SECS);
      const claimed = await store.claimFanoutJob(LEASE_MS);
      assert.ok(claimed);
      await store.completeFanoutJob(claimed, null);
      assert.equal(await store.enqueueFanoutJob('video-1', job(), MARKER_TTL_SECS), false);
      assert.deepEqual(await store.fanoutJobStats(), { due: 0, waiting: 0 });
    });

    test('a claimed job is leased: no second claim until the lease expires, then it returns', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      const queued = job({ senderName: 'Alice', cursor: '17' });
      await store.enqueueFanoutJob('video-1', queued, MARKER_TTL_SECS);
      const claimed = await store.claimFanoutJob(LEASE_MS);
      assert.ok(claimed);
      assert.deepEqual(claimed.job, queued);
      assert.equal(await store.claimFanoutJob(LEASE_MS), null, 'a live lease blocks other claims');
      assert.deepEqual(await store.fanoutJobStats(), { due: 0, waiting: 1 });
      clock.advance(LEASE_MS - 1);
      assert.equal(await store.claimFanoutJob(LEASE_MS), null);
      clock.advance(1);
      const again = await store.claimFanoutJob(LEASE_MS);
      assert.ok(again, 'a crashed worker’s page returns when its lease expires');
      assert.equal(again.member, claimed.member);
    });

    test('rescoring to 0 releases a leased job at once; rescoring a completed job reports it gone', async () => {
      const store = ctx.store();
      await store.enqueueFanoutJob('video-1', job(), MARKER_TTL_SECS);
      const claimed = await store.claimFanoutJob(LEASE_MS);
      assert.ok(claimed);
      assert.equal(await store.rescoreFanoutJob(claimed, 0), true);
      const again = await store.claimFanoutJob(LEASE_MS);
      assert.equal(again?.member, claimed.member);
      await store.completeFanoutJob(claimed, null);
      assert.equal(await store.rescoreFanoutJob(claimed, 0), false);
      assert.deepEqual(await store.fanoutJobStats(), { due: 0, waiting: 0 });
    });

    test('completing with a successor queues it due now and removes the current job', async () => {
      const store = ctx.store();
      await store.enqueueFanoutJob('video-1', job(), MARKER_TTL_SECS);
      const claimed = await store.claimFanoutJob(LEASE_MS);
      assert.ok(claimed);
      const successor = job({ cursor: '42', senderName: 'Alice' });
      await store.completeFanoutJob(claimed, successor);
      assert.deepEqual(await store.fanoutJobStats(), { due: 1, waiting: 0 });
      const next = await store.claimFanoutJob(LEASE_MS);
      assert.deepEqual(next?.job, successor);
      assert.ok(next);
      await store.completeFanoutJob(next, null);
      assert.deepEqual(await store.fanoutJobStats(), { due: 0, waiting: 0 }, 'completion without a successor empties the queue');
      assert.equal(await store.claimFanoutJob(LEASE_MS), null);
    });

    test('a retry swaps the job for its next attempt, due after the delay', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      await store.enqueueFanoutJob('video-1', job(), MARKER_TTL_SECS);
      const claimed = await store.claimFanoutJob(LEASE_MS);
      assert.ok(claimed);
      const retry = job({ attempt: 1 });
      await store.retryFanoutJob(claimed, retry, 5 * SECOND_MS);
      assert.deepEqual(await store.fanoutJobStats(), { due: 0, waiting: 1 }, 'exactly one job: the swap left no copy behind');
      clock.advance(5 * SECOND_MS - 1);
      assert.equal(await store.claimFanoutJob(LEASE_MS), null);
      clock.advance(1);
      const next = await store.claimFanoutJob(LEASE_MS);
      assert.deepEqual(next?.job, retry, 'the attempt count persists');
    });

    test('the job due longest is claimed first', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      await store.enqueueFanoutJob('video-1', job({ eventJson: 'first' }), MARKER_TTL_SECS);
      clock.advance(SECOND_MS);
      await store.enqueueFanoutJob('video-2', job({ eventJson: 'second' }), MARKER_TTL_SECS);
      assert.equal((await store.claimFanoutJob(LEASE_MS))?.job?.eventJson, 'first');
      assert.equal((await store.claimFanoutJob(LEASE_MS))?.job?.eventJson, 'second');
    });
  });
}
