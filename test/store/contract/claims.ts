import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ContractContext } from './context.ts';
import { dmPushWindowKey } from '../../../src/engine/events/gift-wraps.ts';

/**
 * Claims only: their expiry runs on Redis's own key TTL in Redis mode, so it is tested per
 * adapter, never here.
 */

const EVENT_ID = 'e1'.repeat(32);
const OTHER_EVENT_ID = 'e2'.repeat(32);
const RECIPIENT = 'r1'.repeat(32);
const OTHER_RECIPIENT = 'r2'.repeat(32);
const CLAIM_TTL_SECS = 7 * 24 * 60 * 60;
const CONTENDERS = 10;

export function claimContract(ctx: ContractContext): void {
  describe('claims', () => {
    test('claimEvent is taken once', async () => {
      const store = ctx.store();
      assert.equal(await store.claimEvent(EVENT_ID, CLAIM_TTL_SECS), true);
      assert.equal(await store.claimEvent(EVENT_ID, CLAIM_TTL_SECS), false);
      assert.equal(await store.claimEvent(OTHER_EVENT_ID, CLAIM_TTL_SECS), true, 'another event is independent');
    });

    test('claimEvent with an owner: taken again by that owner (a retried step), refused to anyone else (issue 42)', async () => {
      const store = ctx.store();
      assert.equal(await store.claimEvent(EVENT_ID, CLAIM_TTL_SECS, 'work-a'), true);
      assert.equal(await store.claimEvent(EVENT_ID, CLAIM_TTL_SECS, 'work-a'), true, 'the same owner finds its own claim');
      assert.equal(await store.claimEvent(EVENT_ID, CLAIM_TTL_SECS, 'work-b'), false, 'another owner is refused');
      assert.equal(await store.claimEvent(EVENT_ID, CLAIM_TTL_SECS), false, 'a claim without an owner is refused');
      assert.equal(await store.claimEvent(OTHER_EVENT_ID, CLAIM_TTL_SECS), true);
      assert.equal(await store.claimEvent(OTHER_EVENT_ID, CLAIM_TTL_SECS, 'work-a'), false, 'an unowned claim belongs to nobody');
      await store.releaseEvent(EVENT_ID);
      assert.equal(await store.claimEvent(EVENT_ID, CLAIM_TTL_SECS, 'work-b'), true, 'released, it is free for another owner');
    });

    test('isRecipientClaimed says whether anyone holds the (event, recipient) claim', async () => {
      const store = ctx.store();
      assert.equal(await store.isRecipientClaimed(EVENT_ID, RECIPIENT), false);
      const claim = await store.claimRecipientDelivery(EVENT_ID, RECIPIENT, CLAIM_TTL_SECS);
      assert.ok(claim);
      assert.equal(await store.isRecipientClaimed(EVENT_ID, RECIPIENT), true);
      assert.equal(await store.isRecipientClaimed(EVENT_ID, OTHER_RECIPIENT), false, 'per recipient');
      assert.equal(await store.isRecipientClaimed(OTHER_EVENT_ID, RECIPIENT), false, 'per event');
      await store.releaseRecipientDelivery(claim);
      assert.equal(await store.isRecipientClaimed(EVENT_ID, RECIPIENT), false, 'released');
    });

    test('claimRecipientDelivery returns a claim once per (event, recipient)', async () => {
      const store = ctx.store();
      const claim = await store.claimRecipientDelivery(EVENT_ID, RECIPIENT, CLAIM_TTL_SECS);
      assert.ok(claim, 'first claim is taken');
      assert.equal(claim.eventId, EVENT_ID);
      assert.equal(claim.recipient, RECIPIENT);
      assert.equal(typeof claim.owner, 'string');
      assert.ok(claim.owner.length > 0);
      assert.equal(await store.claimRecipientDelivery(EVENT_ID, RECIPIENT, CLAIM_TTL_SECS), null);

      const other = await store.claimRecipientDelivery(EVENT_ID, OTHER_RECIPIENT, CLAIM_TTL_SECS);
      assert.ok(other, 'another recipient of the same event is independent');
      assert.notEqual(other.owner, claim.owner, 'every claim has its own owner token');
      assert.ok(await store.claimRecipientDelivery(OTHER_EVENT_ID, RECIPIENT, CLAIM_TTL_SECS), 'another event is independent');
    });

    test('claimEvent and claimRecipientDelivery do not share a claim', async () => {
      const store = ctx.store();
      assert.equal(await store.claimEvent(EVENT_ID, CLAIM_TTL_SECS), true);
      assert.ok(await store.claimRecipientDelivery(EVENT_ID, RECIPIENT, CLAIM_TTL_SECS));
    });

    test('releaseRecipientDelivery by the owner frees the claim for a new taker', async () => {
      const store = ctx.store();
      const claim = await store.claimRecipientDelivery(EVENT_ID, RECIPIENT, CLAIM_TTL_SECS);
      assert.ok(claim);
      assert.equal(await store.releaseRecipientDelivery(claim), true);
      const again = await store.claimRecipientDelivery(EVENT_ID, RECIPIENT, CLAIM_TTL_SECS);
      assert.ok(again, 'the released claim can be taken again');
      assert.equal(await store.releaseRecipientDelivery(claim), false, 'the old owner cannot release the new claim');
      assert.equal(await store.claimRecipientDelivery(EVENT_ID, RECIPIENT, CLAIM_TTL_SECS), null, 'the new claim is still held');
    });

    test('releaseRecipientDelivery with a forged owner is refused and the claim stays held', async () => {
      const store = ctx.store();
      const claim = await store.claimRecipientDelivery(EVENT_ID, RECIPIENT, CLAIM_TTL_SECS);
      assert.ok(claim);
      assert.equal(await store.releaseRecipientDelivery({ ...claim, owner: 'forged-owner' }), false);
      assert.equal(await store.claimRecipientDelivery(EVENT_ID, RECIPIENT, CLAIM_TTL_SECS), null);
      assert.equal(await store.releaseRecipientDelivery(claim), true, 'the real owner still can');
    });

    test('releaseRecipientDelivery of a claim never taken returns false', async () => {
      const store = ctx.store();
      assert.equal(await store.releaseRecipientDelivery({ eventId: EVENT_ID, recipient: RECIPIENT, owner: 'nobody' }), false);
    });

    test(`${CONTENDERS} concurrent claimRecipientDelivery calls: exactly one wins`, async () => {
      const store = ctx.store();
      const results = await Promise.all(
        Array.from({ length: CONTENDERS }, () => store.claimRecipientDelivery(EVENT_ID, RECIPIENT, CLAIM_TTL_SECS)),
      );
      assert.equal(results.filter((claim) => claim !== null).length, 1);
    });

    test(`${CONTENDERS} concurrent claimEvent calls: exactly one wins`, async () => {
      const store = ctx.store();
      const results = await Promise.all(Array.from({ length: CONTENDERS }, () => store.claimEvent(EVENT_ID, CLAIM_TTL_SECS)));
      assert.equal(results.filter(Boolean).length, 1);
    });

    test("a recipient's DM push window (issue 21) is an event claim of its own key: once per window, per recipient", async () => {
      const store = ctx.store();
      const window = dmPushWindowKey(RECIPIENT);
      assert.equal(await store.claimEvent(window, 60), true);
      assert.equal(await store.claimEvent(window, 60), false, 'a second wrap within the window');
      assert.equal(await store.claimEvent(dmPushWindowKey(OTHER_RECIPIENT), 60), true, 'another recipient has their own window');
      assert.equal(await store.claimEvent(RECIPIENT, 60), true, 'no clash with a claim named by the bare pubkey');
      await store.releaseEvent(window);
      assert.equal(await store.claimEvent(window, 60), true, 'given back after a failed enqueue, taken again');
    });

    test('releaseEvent frees a control-event claim for a retry', async () => {
      const store = ctx.store();
      assert.equal(await store.claimEvent(EVENT_ID, CLAIM_TTL_SECS), true);
      await store.releaseEvent(EVENT_ID);
      assert.equal(await store.claimEvent(EVENT_ID, CLAIM_TTL_SECS), true);
      await store.releaseEvent(OTHER_EVENT_ID);
      assert.equal(await store.claimEvent(EVENT_ID, CLAIM_TTL_SECS), false, 'releasing another event changes nothing');
    });
  });

  describe('video coordinate records', () => {
    const video = { owner: 'a0'.repeat(32), dTag: 'my-vine:with:colons', recipient: RECIPIENT };

    test('absent until written, then present for the written types only', async () => {
      const store = ctx.store();
      assert.equal(await store.hasVideoRecord({ ...video, type: 'mention' }), false);
      await store.writeVideoRecords(video, ['mention', 'newPost'], CLAIM_TTL_SECS);
      assert.equal(await store.hasVideoRecord({ ...video, type: 'mention' }), true);
      assert.equal(await store.hasVideoRecord({ ...video, type: 'newPost' }), true);
      await store.writeVideoRecords({ ...video, recipient: OTHER_RECIPIENT }, ['newPost'], CLAIM_TTL_SECS);
      assert.equal(await store.hasVideoRecord({ ...video, recipient: OTHER_RECIPIENT, type: 'newPost' }), true);
      assert.equal(
        await store.hasVideoRecord({ ...video, recipient: OTHER_RECIPIENT, type: 'mention' }),
        false,
        'a bell does not suppress a mention',
      );
    });

    test('records are per recipient and per coordinate', async () => {
      const store = ctx.store();
      await store.writeVideoRecords(video, ['mention'], CLAIM_TTL_SECS);
      assert.equal(await store.hasVideoRecord({ ...video, recipient: OTHER_RECIPIENT, type: 'mention' }), false);
      assert.equal(await store.hasVideoRecord({ ...video, dTag: 'other-vine', type: 'mention' }), false);
      await store.writeVideoRecords(video, [], CLAIM_TTL_SECS);
    });
  });
}
