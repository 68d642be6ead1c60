import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { ClaimedDelivery, RecipientClaim } from '../../../src/store/port.ts';
import { totals, type ContractContext } from './context.ts';
import { LEASE } from './queues.ts';

/** The batched steps of routing a content event: reading recipients' gate state, claiming and queueing deliveries. */

const EVENT_ID = 'd1'.repeat(32);
const ALICE = 'a1'.repeat(32);
const BOB = 'b1'.repeat(32);
const CAROL = 'c1'.repeat(32);
const CLAIM_TTL_SECS = 7 * 24 * 60 * 60;

function delivery(recipient: string, payload: unknown = { to: recipient }): ClaimedDelivery {
  const claim: RecipientClaim = { eventId: EVENT_ID, recipient, owner: randomUUID() };
  return { claim, item: { id: `${EVENT_ID}:${recipient}`, payload } };
}

export function deliveryContract(ctx: ContractContext): void {
  describe('content deliveries: readRecipients and claimAndEnqueueDeliveries', () => {
    test('readRecipients returns each user’s devices and preference categories, in the order asked', async () => {
      const store = ctx.store();
      await store.registerToken(ALICE, { token: 'alice-phone', transport: 'fcm' });
      await store.registerToken(ALICE, {
        token: 'https://push.example/alice',
        transport: 'webpush',
        endpoint: 'https://push.example/alice',
        p256dh: 'key',
        auth: 'secret',
      });
      await store.setPreferences(ALICE, { kinds: [7, 16], campaignsEnabled: false });
      await store.registerToken(BOB, { token: 'bob-phone', transport: 'fcm', timezoneOffsetMinutes: 600 });
      const [bob, carol, alice] = await store.readRecipients([BOB, CAROL, ALICE]);
      assert.deepEqual(bob, { devices: [{ token: 'bob-phone', transport: 'fcm', timezoneOffsetMinutes: 600 }], preferenceKinds: null });
      assert.deepEqual(carol, { devices: [], preferenceKinds: null }, 'an unknown user has no devices and the defaults');
      assert.deepEqual(alice?.preferenceKinds, [7, 16]);
      assert.deepEqual(
        alice.devices.map((d) => d.token).sort(),
        (await store.listDevices(ALICE)).map((d) => d.token).sort(),
        'the same devices listDevices reads',
      );
      assert.deepEqual(await store.readRecipients([]), []);
    });

    test('a claimed delivery is queued; a second claim of the same (event, recipient) queues nothing', async () => {
      const store = ctx.store();
      const first = delivery(ALICE, { n: 1 });
      assert.deepEqual(await store.claimAndEnqueueDeliveries('outbound', CLAIM_TTL_SECS, [first]), [true]);
      assert.deepEqual(
        await store.claimAndEnqueueDeliveries('outbound', CLAIM_TTL_SECS, [
          { ...delivery(ALICE, { n: 2 }), item: { id: 'another-id', payload: { n: 2 } } },
        ]),
        [false],
      );
      assert.deepEqual(totals(await store.queueStats('outbound')), { ready: 1, leased: 0, dead: 0 });
      const [item] = await store.lease('outbound', LEASE);
      assert.deepEqual(item?.payload, { n: 1 });
      assert.equal(await store.claimRecipientDelivery(EVENT_ID, ALICE, CLAIM_TTL_SECS), null, 'the claim is held');
      assert.equal(await store.releaseRecipientDelivery(first.claim), true, 'under the owner the caller chose');
    });

    test('entries are independent: a held claim skips only its own entry', async () => {
      const store = ctx.store();
      const held = await store.claimRecipientDelivery(EVENT_ID, BOB, CLAIM_TTL_SECS);
      assert.ok(held);
      const results = await store.claimAndEnqueueDeliveries('outbound', CLAIM_TTL_SECS, [delivery(ALICE), delivery(BOB), delivery(CAROL)]);
      assert.deepEqual(results, [true, false, true]);
      const leased = await store.lease<{ to: string }>('outbound', LEASE);
      assert.deepEqual(leased.map((i) => i.payload.to).sort(), [ALICE, CAROL].sort());
      assert.deepEqual(await store.claimAndEnqueueDeliveries('outbound', CLAIM_TTL_SECS, []), []);
    });

    test('a released claim can be taken again, and its delivery queues again once the old item is gone', async () => {
      const store = ctx.store();
      const first = delivery(ALICE);
      await store.claimAndEnqueueDeliveries('outbound', CLAIM_TTL_SECS, [first]);
      const [item] = await store.lease('outbound', LEASE);
      assert.ok(item);
      assert.equal(await store.ack('outbound', item.id, item.leaseToken), true);
      assert.equal(await store.releaseRecipientDelivery(first.claim), true);
      assert.deepEqual(await store.claimAndEnqueueDeliveries('outbound', CLAIM_TTL_SECS, [delivery(ALICE)]), [true]);
      assert.deepEqual(totals(await store.queueStats('outbound')), { ready: 1, leased: 0, dead: 0 });
    });
  });
}
