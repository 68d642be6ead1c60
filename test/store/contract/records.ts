import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CachedProfile, Preferences } from '../../../src/store/port.ts';
import type { ContractContext } from './context.ts';

const ALICE = 'a1'.repeat(32);
const BOB = 'b2'.repeat(32);
const RELAY = 'wss://relay.example.com';
const OTHER_RELAY = 'wss://relay.example.org/nostr';
const PROFILE_TTL_SECS = 3600;

export function recordContract(ctx: ContractContext): void {
  describe('preferences', () => {
    test('getPreferences is null when never set', async () => {
      assert.equal(await ctx.store().getPreferences(ALICE), null);
    });

    test('setPreferences then getPreferences round-trips kinds and campaignsEnabled', async () => {
      const store = ctx.store();
      const alice: Preferences = { kinds: [1, 7, 16, 1059, 34236], campaignsEnabled: true };
      const bob: Preferences = { kinds: [1059], campaignsEnabled: false };
      await store.setPreferences(ALICE, alice);
      await store.setPreferences(BOB, bob);
      assert.deepEqual(await store.getPreferences(ALICE), alice);
      assert.deepEqual(await store.getPreferences(BOB), bob);
    });

    test('setPreferences replaces, and an empty kinds list is kept (not treated as unset)', async () => {
      const store = ctx.store();
      await store.setPreferences(ALICE, { kinds: [1, 7], campaignsEnabled: true });
      await store.setPreferences(ALICE, { kinds: [16], campaignsEnabled: false });
      assert.deepEqual(await store.getPreferences(ALICE), { kinds: [16], campaignsEnabled: false });
      await store.setPreferences(ALICE, { kinds: [], campaignsEnabled: false });
      assert.deepEqual(await store.getPreferences(ALICE), { kinds: [], campaignsEnabled: false });
    });
  });

  describe('relay cursors', () => {
    test('getRelayCursor is null before any advance', async () => {
      assert.equal(await ctx.store().getRelayCursor(RELAY), null);
    });

    test('advanceRelayCursor raises the cursor and never lowers it', async () => {
      const store = ctx.store();
      await store.advanceRelayCursor(RELAY, 1_767_225_600);
      assert.equal(await store.getRelayCursor(RELAY), 1_767_225_600);
      await store.advanceRelayCursor(RELAY, 1_767_225_700);
      assert.equal(await store.getRelayCursor(RELAY), 1_767_225_700);
      await store.advanceRelayCursor(RELAY, 1_767_225_650);
      assert.equal(await store.getRelayCursor(RELAY), 1_767_225_700, 'a lower value does not move it back');
    });

    test('each relay URL has its own cursor', async () => {
      const store = ctx.store();
      await store.advanceRelayCursor(RELAY, 2000);
      await store.advanceRelayCursor(OTHER_RELAY, 1000);
      assert.equal(await store.getRelayCursor(RELAY), 2000);
      assert.equal(await store.getRelayCursor(OTHER_RELAY), 1000);
    });
  });

  describe('profile cache', () => {
    test('a profile never cached is a miss', async () => {
      assert.equal(await ctx.store().getCachedProfile(ALICE), null);
    });

    test('cacheProfile then getCachedProfile hits, with absent names staying absent', async () => {
      const store = ctx.store();
      const alice: CachedProfile = { pubkey: ALICE, name: 'alice', display_name: 'Alice 🌸 Ållgren' };
      const bob: CachedProfile = { pubkey: BOB, name: 'bob' };
      await store.cacheProfile(alice, PROFILE_TTL_SECS);
      await store.cacheProfile(bob, PROFILE_TTL_SECS);
      assert.deepEqual(await store.getCachedProfile(ALICE), alice);
      assert.deepEqual(await store.getCachedProfile(BOB), bob);
    });

    test('caching a profile again replaces it', async () => {
      const store = ctx.store();
      await store.cacheProfile({ pubkey: ALICE, name: 'alice', display_name: 'Alice' }, PROFILE_TTL_SECS);
      await store.cacheProfile({ pubkey: ALICE, display_name: 'Alice v2' }, PROFILE_TTL_SECS);
      assert.deepEqual(await store.getCachedProfile(ALICE), { pubkey: ALICE, display_name: 'Alice v2' });
    });
  });
}
