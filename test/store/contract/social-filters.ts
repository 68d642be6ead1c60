import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SocialFilters } from '../../../src/store/port-social-filters.ts';
import type { ContractContext } from './context.ts';

const ALICE = 'a1'.repeat(32);
const BOB = 'b2'.repeat(32);
const CAROL = 'c3'.repeat(32);

/** The contract of port-social-filters.ts: a user's kind 3083 mutes and onlyFollowing. */
export function socialFilterContract(ctx: ContractContext): void {
  describe('social filters', () => {
    test('set then get round-trips every shape, in the order asked, null where none are stored', async () => {
      const store = ctx.store();
      const muting: SocialFilters = { mutedPubkeys: [BOB, CAROL], onlyFollowing: null };
      const following: SocialFilters = { mutedPubkeys: [], onlyFollowing: 'all' };
      await store.setSocialFilters(ALICE, muting);
      await store.setSocialFilters(BOB, following);
      assert.deepEqual(await store.getSocialFilters([BOB, CAROL, ALICE]), [following, null, muting]);
      assert.deepEqual(await store.getSocialFilters([]), []);
    });

    test('a later set replaces the whole document; filters that filter nothing, or null, remove it', async () => {
      const store = ctx.store();
      await store.setSocialFilters(ALICE, { mutedPubkeys: [BOB], onlyFollowing: 'all' });
      const typed: SocialFilters = { mutedPubkeys: [], onlyFollowing: ['like', 'repost'] };
      await store.setSocialFilters(ALICE, typed);
      assert.deepEqual(await store.getSocialFilters([ALICE]), [typed]);
      await store.setSocialFilters(ALICE, { mutedPubkeys: [], onlyFollowing: null });
      assert.deepEqual(await store.getSocialFilters([ALICE]), [null]);
      await store.setSocialFilters(ALICE, typed);
      await store.setSocialFilters(ALICE, null);
      assert.deepEqual(await store.getSocialFilters([ALICE]), [null]);
    });

    test('one pubkey asked twice is answered twice', async () => {
      const store = ctx.store();
      const filters: SocialFilters = { mutedPubkeys: [CAROL], onlyFollowing: null };
      await store.setSocialFilters(ALICE, filters);
      assert.deepEqual(await store.getSocialFilters([ALICE, ALICE]), [filters, filters]);
    });
  });
}
