import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { NewSend, SendRequest } from '../../../src/store/port-sends.ts';
import { DAY_MS, MINUTE_MS, SECOND_MS, type ContractContext } from './context.ts';

const RECORD_TTL_SECS = 7 * 86_400;
const LEASE_MS = 30 * SECOND_MS;
const request = (title = 'Payout sent'): SendRequest => ({
  recipients: ['a'.repeat(64), 'b'.repeat(64)],
  type: 'payout',
  title,
  body: '21 sats',
  data: { amount: '21' },
  priority: 'critical',
});
const idem = (key: string, requestHash: string) => ({ key, requestHash, ttlSecs: 86_400 });

/** The contract of port-sends.ts: send records, idempotency records, the due schedule, cancel. */
export function sendContract(ctx: ContractContext): void {
  describe('sends', () => {
    const newSend = (id: string, appId = 'default', sendAtMs = ctx.clock().nowMs()): NewSend => ({
      appId,
      id,
      request: request(),
      sendAtMs,
    });

    test('a created send reads back scheduled, with its request exactly as given; another app does not see it', async () => {
      const store = ctx.store();
      assert.deepEqual(await store.createSend(newSend('n1'), RECORD_TTL_SECS, null), { created: true });
      assert.deepEqual(await store.getSend('default', 'n1'), {
        ...newSend('n1'),
        state: 'scheduled',
        createdAtMs: ctx.clock().nowMs(),
        offset: 0,
      });
      assert.equal(await store.getSend('other', 'n1'), null);
      assert.equal(await store.getSend('default', 'n2'), null);
    });

    test('an idempotency key answers the first send for the same app: same request or not; another app may reuse it', async () => {
      const store = ctx.store();
      assert.deepEqual(await store.createSend(newSend('n1'), RECORD_TTL_SECS, idem('key-1', 'hash-a')), { created: true });
      assert.deepEqual(await store.createSend(newSend('n2'), RECORD_TTL_SECS, idem('key-1', 'hash-a')), {
        created: false,
        existingId: 'n1',
        sameRequest: true,
      });
      assert.deepEqual(await store.createSend(newSend('n3'), RECORD_TTL_SECS, idem('key-1', 'hash-b')), {
        created: false,
        existingId: 'n1',
        sameRequest: false,
      });
      assert.equal(await store.getSend('default', 'n2'), null, 'a duplicate writes nothing');
      assert.deepEqual(await store.createSend(newSend('n4', 'beta'), RECORD_TTL_SECS, idem('key-1', 'hash-a')), { created: true });
      assert.deepEqual(await store.createSend(newSend('n5'), RECORD_TTL_SECS, idem('key-2', 'hash-a')), { created: true });
    });

    test('a second send with an existing id is refused', async () => {
      const store = ctx.store();
      await store.createSend(newSend('n1'), RECORD_TTL_SECS, null);
      await assert.rejects(store.createSend(newSend('n1'), RECORD_TTL_SECS, null));
    });

    test('a scheduled send is not due before sendAt and is handed out, started, at sendAt', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      const sendAtMs = clock.nowMs() + 10 * MINUTE_MS;
      await store.createSend(newSend('later', 'default', sendAtMs), RECORD_TTL_SECS, null);
      assert.equal(await store.claimDueSend(LEASE_MS), null);
      clock.advance(10 * MINUTE_MS - 1);
      assert.equal(await store.claimDueSend(LEASE_MS), null, 'one ms early');
      clock.advance(1);
      const claimed = await store.claimDueSend(LEASE_MS);
      assert.equal(claimed?.send.id, 'later');
      assert.equal(claimed.send.state, 'started');
      assert.equal(claimed.leaseExpiresAtMs, clock.nowMs() + LEASE_MS);
      assert.equal((await store.getSend('default', 'later'))?.state, 'started');
    });

    test('the send due longest goes first; a held send is due again only when its lease runs out', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      const t0 = clock.nowMs();
      await store.createSend(newSend('second', 'default', t0 - 1 * SECOND_MS), RECORD_TTL_SECS, null);
      await store.createSend(newSend('first', 'beta', t0 - 2 * SECOND_MS), RECORD_TTL_SECS, null);
      assert.equal((await store.claimDueSend(LEASE_MS))?.send.id, 'first');
      assert.equal((await store.claimDueSend(LEASE_MS))?.send.id, 'second');
      assert.equal(await store.claimDueSend(LEASE_MS), null, 'both held');
      clock.advance(LEASE_MS);
      const again = await store.claimDueSend(LEASE_MS);
      assert.equal(again?.send.id, 'first', 'a crashed page returns');
      assert.equal(again.send.appId, 'beta');
    });

    test('a due critical send is handed out before normal and low ones due longer; a held one does not block the next lane', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      const t0 = clock.nowMs();
      const withPriority = (id: string, priority: SendRequest['priority'], sendAtMs: number): NewSend => ({
        appId: 'default',
        id,
        request: { ...request(), priority },
        sendAtMs,
      });
      await store.createSend(withPriority('low-old', 'low', t0 - 3 * MINUTE_MS), RECORD_TTL_SECS, null);
      await store.createSend(withPriority('normal-old', 'normal', t0 - 2 * MINUTE_MS), RECORD_TTL_SECS, null);
      await store.createSend(withPriority('critical-new', 'critical', t0), RECORD_TTL_SECS, null);
      await store.createSend(withPriority('critical-later', 'critical', t0 + MINUTE_MS), RECORD_TTL_SECS, null);
      assert.equal((await store.claimDueSend(LEASE_MS))?.send.id, 'critical-new');
      assert.equal((await store.claimDueSend(LEASE_MS))?.send.id, 'normal-old', 'a critical not yet due does not block');
      assert.equal(await store.advanceSend('default', 'normal-old', 1, false), true);
      assert.equal((await store.claimDueSend(LEASE_MS))?.send.id, 'normal-old', 'its next page, due now, before low');
      assert.equal((await store.claimDueSend(LEASE_MS))?.send.id, 'low-old');
      assert.equal(await store.claimDueSend(LEASE_MS), null, 'everything due is held');
      clock.advance(MINUTE_MS);
      assert.equal((await store.claimDueSend(LEASE_MS))?.send.id, 'critical-new', 'its lease ran out: the critical lane first again');
    });

    test('pages advance the offset and make the send due at once; the last page finishes it', async () => {
      const store = ctx.store();
      await store.createSend(newSend('n1'), RECORD_TTL_SECS, null);
      await store.claimDueSend(LEASE_MS);
      assert.equal(await store.advanceSend('default', 'n1', 500, false), true);
      const next = await store.claimDueSend(LEASE_MS);
      assert.equal(next?.send.offset, 500);
      assert.equal(await store.advanceSend('default', 'n1', 700, true), true);
      assert.deepEqual([(await store.getSend('default', 'n1'))?.state, (await store.getSend('default', 'n1'))?.offset], ['done', 700]);
      ctx.clock().advance(DAY_MS);
      assert.equal(await store.claimDueSend(LEASE_MS), null, 'a done send is never due again');
      assert.equal(await store.advanceSend('default', 'n1', 900, false), false, 'nor advanced');
      assert.equal(await store.advanceSend('default', 'unknown', 1, false), false);
    });

    test('a scheduled send can be cancelled (and then never handed out); a started one cannot', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      await store.createSend(newSend('cancel-me', 'default', clock.nowMs() + MINUTE_MS), RECORD_TTL_SECS, null);
      await store.createSend(newSend('started'), RECORD_TTL_SECS, null);
      assert.equal((await store.claimDueSend(LEASE_MS))?.send.id, 'started');
      assert.equal(await store.cancelSend('default', 'cancel-me'), 'cancelled');
      assert.equal(await store.cancelSend('default', 'cancel-me'), 'cancelled', 'again: still cancelled');
      assert.equal(await store.cancelSend('default', 'started'), 'not_cancellable');
      assert.equal(await store.cancelSend('beta', 'cancel-me'), 'not_found', "another app's id");
      assert.equal(await store.cancelSend('default', 'unknown'), 'not_found');
      clock.advance(DAY_MS);
      const due = await store.claimDueSend(LEASE_MS);
      assert.equal(due?.send.id, 'started', 'the cancelled send is never due');
      assert.equal(await store.advanceSend('default', 'cancel-me', 1, false), false);
      assert.equal((await store.getSend('default', 'cancel-me'))?.state, 'cancelled');
    });
  });
}
