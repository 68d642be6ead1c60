import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { StoredVapidKeys } from '../../../src/store/port-vapid.ts';
import type { ContractContext } from './context.ts';

const CONCURRENT_CLAIMS = 12;

/** A pair of distinct strings per label (the store keeps them as given; validity is the caller's business). */
const pair = (label: string): StoredVapidKeys => ({
  publicKey: `BPub-${label}_`.padEnd(87, 'x'),
  privateKey: `priv-${label}_`.padEnd(43, 'y'),
});

/** The contract of port-vapid.ts: the fleet's VAPID key pair, set if absent. */
export function vapidContract(ctx: ContractContext): void {
  describe('shared VAPID key', () => {
    test('the first claim stores its candidate; every later claim gets the stored pair, whatever it offers', async () => {
      const store = ctx.store();
      const first = pair('first');
      assert.deepEqual(await store.claimVapidKeys(first), first);
      assert.deepEqual(await store.claimVapidKeys(pair('second')), first);
      assert.deepEqual(await store.claimVapidKeys(first), first);
    });

    test('claims made at once all get one and the same pair, one of the candidates', async () => {
      const store = ctx.store();
      const candidates = Array.from({ length: CONCURRENT_CLAIMS }, (_, i) => pair(`c${i}`));
      const results = await Promise.all(candidates.map((candidate) => store.claimVapidKeys(candidate)));
      const winner = results[0] as StoredVapidKeys;
      assert.ok(
        candidates.some((c) => c.publicKey === winner.publicKey && c.privateKey === winner.privateKey),
        'one of the candidates',
      );
      for (const result of results) assert.deepEqual(result, winner);
    });

    test('the pair is kept exactly, never expiring', async () => {
      const store = ctx.store();
      const kept = { publicKey: 'BA-_09azAZ', privateKey: '-_' };
      await store.claimVapidKeys(kept);
      ctx.clock().advance(400 * 24 * 3600 * 1000);
      assert.deepEqual(await store.claimVapidKeys(pair('later')), kept);
    });
  });
}
