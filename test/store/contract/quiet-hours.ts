import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SECOND_MS, type ContractContext } from './context.ts';

const ALICE = 'a1'.repeat(32);
const BOB = 'b2'.repeat(32);
const LEASE_MS = 30 * SECOND_MS;
const NIGHT = { startMinute: 22 * 60, endMinute: 7 * 60, urgentTypes: ['comment'] };

/** The contract of port-quiet-hours.ts: the window per user, holds, the digest schedule. */
export function quietHoursContract(ctx: ContractContext): void {
  describe('quiet hours', () => {
    test('quiet hours are stored per user, read in the order asked, and removed with null', async () => {
      const store = ctx.store();
      await store.setQuietHours(ALICE, NIGHT);
      assert.deepEqual(await store.readQuietHours([BOB, ALICE]), [null, NIGHT]);
      await store.setQuietHours(ALICE, { ...NIGHT, urgentTypes: [] });
      assert.deepEqual(await store.readQuietHours([ALICE]), [{ ...NIGHT, urgentTypes: [] }]);
      await store.setQuietHours(ALICE, null);
      assert.deepEqual(await store.readQuietHours([ALICE]), [null]);
      assert.deepEqual(await store.readQuietHours([]), []);
    });

    test('held pushes are counted per type and their digest is due at the window end, not before', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      const endMs = clock.nowMs() + 3_600_000;
      for (const type of ['like', 'like', 'comment', 'like']) await store.holdForDigest(ALICE, type, endMs);
      assert.equal(await store.claimDueDigest(LEASE_MS), null);
      clock.advance(3_600_000 - 1);
      assert.equal(await store.claimDueDigest(LEASE_MS), null);
      clock.advance(1);
      const digest = await store.claimDueDigest(LEASE_MS);
      assert.deepEqual(digest, { pubkey: ALICE, counts: { comment: 1, like: 3 }, leaseExpiresAtMs: clock.nowMs() + LEASE_MS });
      assert.equal(await store.claimDueDigest(LEASE_MS), null, 'leased');
      await store.completeDigest(ALICE, digest.counts);
      clock.advance(LEASE_MS);
      assert.equal(await store.claimDueDigest(LEASE_MS), null, 'completed: nothing left');
    });

    test('a digest not completed is handed out again after its lease (a killed worker loses nothing)', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      await store.holdForDigest(ALICE, 'repost', clock.nowMs());
      assert.deepEqual((await store.claimDueDigest(LEASE_MS))?.counts, { repost: 1 });
      clock.advance(LEASE_MS);
      assert.deepEqual((await store.claimDueDigest(LEASE_MS))?.counts, { repost: 1 });
    });

    test('pushes held while a digest is out are kept for the next one, due at once after completion', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      await store.holdForDigest(ALICE, 'like', clock.nowMs());
      const digest = await store.claimDueDigest(LEASE_MS);
      assert.ok(digest);
      await store.holdForDigest(ALICE, 'like', clock.nowMs() + 3_600_000);
      await store.holdForDigest(ALICE, 'mention', clock.nowMs() + 3_600_000);
      await store.completeDigest(ALICE, digest.counts);
      assert.deepEqual((await store.claimDueDigest(LEASE_MS))?.counts, { like: 1, mention: 1 });
    });

    test('the earliest release time wins, and digests of several users are handed out oldest due first', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      const now = clock.nowMs();
      await store.holdForDigest(BOB, 'like', now + 2000);
      await store.holdForDigest(ALICE, 'like', now + 5000);
      await store.holdForDigest(ALICE, 'like', now + 1000);
      clock.advance(2000);
      assert.equal((await store.claimDueDigest(LEASE_MS))?.pubkey, ALICE);
      assert.equal((await store.claimDueDigest(LEASE_MS))?.pubkey, BOB);
    });
  });
}
