import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Nip9aAcceptance, Nip9aCallback, Nip9aReceipt } from '../../../src/store/port-nip9a-callbacks.ts';
import { LEASE, RICH_PAYLOAD } from './queues.ts';
import { SECOND_MS, type ContractContext } from './context.ts';

const ALICE = 'a1'.repeat(32);
const BOB = 'b2'.repeat(32);
const RELAY = 'wss://relay.example/';
const TTL_SECS = 3600;

function callback(id: string, owner: string, createdAtMs: number): Nip9aCallback {
  return {
    id,
    secretHash: `${id}-hash`.padEnd(64, '0'),
    secretHint: id.slice(0, 4),
    owner,
    relay: RELAY,
    createdAtMs,
  };
}

function receipt(eventId: string, overrides: Partial<Nip9aReceipt> = {}): Nip9aReceipt {
  return { callbackId: 'cb-1', relay: RELAY, eventId, ...overrides };
}

function acceptance(r: Nip9aReceipt, payload: unknown = { r }): Nip9aAcceptance {
  return { receipt: r, item: { id: `nip9a:${r.callbackId}:${r.eventId}:${r.relay}`, payload } };
}

/** The contract of port-nip9a-callbacks.ts: callback URLs (create, find, list, revoke) and relay-POST receipts. */
export function nip9aCallbackContract(ctx: ContractContext): void {
  describe('NIP-9a callbacks', () => {
    test('a created callback is found by its secret hash exactly as stored; an unknown hash finds nothing', async () => {
      const store = ctx.store();
      const created = callback('cb-1', ALICE, 1_700_000_000_123);
      await store.createNip9aCallback(created);
      assert.deepEqual(await store.findNip9aCallback(created.secretHash), created);
      assert.equal(await store.findNip9aCallback('0'.repeat(64)), null);
    });

    test("an owner's list holds only their callbacks, oldest first", async () => {
      const store = ctx.store();
      const now = ctx.clock().nowMs();
      const later = callback('cb-later', ALICE, now + 2 * SECOND_MS);
      const earlier = callback('cb-earlier', ALICE, now);
      const bobs = callback('cb-bob', BOB, now + SECOND_MS);
      for (const c of [later, bobs, earlier]) await store.createNip9aCallback(c);
      assert.deepEqual(await store.listNip9aCallbacks(ALICE), [earlier, later]);
      assert.deepEqual(await store.listNip9aCallbacks(BOB), [bobs]);
      assert.deepEqual(await store.listNip9aCallbacks('c3'.repeat(32)), []);
    });

    test('a repeated id or secret hash is refused and the first record stays', async () => {
      const store = ctx.store();
      const first = callback('cb-1', ALICE, 1);
      await store.createNip9aCallback(first);
      await assert.rejects(store.createNip9aCallback({ ...callback('cb-1', BOB, 2), secretHash: 'f'.repeat(64) }));
      await assert.rejects(store.createNip9aCallback({ ...callback('cb-2', BOB, 2), secretHash: first.secretHash }));
      assert.deepEqual(await store.findNip9aCallback(first.secretHash), first);
      assert.deepEqual(await store.listNip9aCallbacks(BOB), []);
    });

    test('revoking is for the owner only; a revoked callback is neither found nor listed, and revoking again is false', async () => {
      const store = ctx.store();
      const kept = callback('cb-kept', ALICE, 1);
      const revoked = callback('cb-revoked', ALICE, 2);
      await store.createNip9aCallback(kept);
      await store.createNip9aCallback(revoked);

      assert.equal(await store.revokeNip9aCallback(BOB, revoked.id), false, 'not bob’s');
      assert.deepEqual(await store.findNip9aCallback(revoked.secretHash), revoked);

      assert.equal(await store.revokeNip9aCallback(ALICE, revoked.id), true);
      assert.equal(await store.findNip9aCallback(revoked.secretHash), null);
      assert.deepEqual(await store.listNip9aCallbacks(ALICE), [kept]);
      assert.equal(await store.revokeNip9aCallback(ALICE, revoked.id), false);
      assert.equal(await store.revokeNip9aCallback(ALICE, 'never-existed'), false);
      assert.deepEqual(await store.findNip9aCallback(kept.secretHash), kept);
    });
  });

  describe('NIP-9a receipts', () => {
    test('a new receipt queues its item on the inbound queue, payload intact; the same receipt again queues nothing', async () => {
      const store = ctx.store();
      const first = acceptance(receipt('e1'), RICH_PAYLOAD);
      assert.deepEqual(await store.acceptNip9aReceipts(TTL_SECS, [first]), [true]);
      assert.deepEqual(await store.acceptNip9aReceipts(TTL_SECS, [acceptance(receipt('e1'), { other: true })]), [false]);

      const leased = await store.lease('inbound', LEASE);
      assert.deepEqual(
        leased.map((i) => [i.id, i.payload]),
        [[first.item.id, RICH_PAYLOAD]],
      );
      await store.ack('inbound', first.item.id, leased.map((i) => i.leaseToken).join(''));
      assert.deepEqual(await store.acceptNip9aReceipts(TTL_SECS, [first]), [false], 'still a duplicate after its item was handled');
      const stats = await store.queueStats('inbound');
      assert.deepEqual([stats.ready, stats.leased, stats.dead], [0, 0, 0]);
    });

    test('receipts differ by callback, relay and event id; entries of one call are independent and in order', async () => {
      const store = ctx.store();
      const entries = [
        acceptance(receipt('e1')),
        acceptance(receipt('e1', { callbackId: 'cb-2' })),
        acceptance(receipt('e1', { relay: 'wss://other.example/' })),
        acceptance(receipt('e2')),
        acceptance(receipt('e1')),
      ];
      assert.deepEqual(await store.acceptNip9aReceipts(TTL_SECS, entries), [true, true, true, true, false]);
      assert.equal((await store.queueStats('inbound')).ready, 4);
    });

    test('a receipt is recorded even when an item of the same id is already queued, which stays as it was', async () => {
      const store = ctx.store();
      const entry = acceptance(receipt('e1'), { first: true });
      await store.enqueue('inbound', { id: entry.item.id, payload: { first: true } });
      assert.deepEqual(await store.acceptNip9aReceipts(TTL_SECS, [{ ...entry, item: { ...entry.item, payload: { second: true } } }]), [
        true,
      ]);
      const leased = await store.lease('inbound', LEASE);
      assert.deepEqual(
        leased.map((i) => i.payload),
        [{ first: true }],
      );
    });

    test('an empty list is an empty answer; a non-positive lifetime is refused', async () => {
      const store = ctx.store();
      assert.deepEqual(await store.acceptNip9aReceipts(TTL_SECS, []), []);
      await assert.rejects(store.acceptNip9aReceipts(0, [acceptance(receipt('e1'))]));
    });
  });
}
