import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { NewDeliveryLogEntry } from '../../../src/store/port-delivery-log.ts';
import { DAY_MS, MINUTE_MS, type ContractContext } from './context.ts';

const ALICE = 'a'.repeat(64);
const BOB = 'b'.repeat(64);

const entry = (fields: Partial<NewDeliveryLogEntry> & Pick<NewDeliveryLogEntry, 'status'>): NewDeliveryLogEntry => ({
  appId: 'default',
  notificationId: 'n1',
  recipient: ALICE,
  type: 'payout',
  ...fields,
});

/** The contract of port-delivery-log.ts: append, read by app/recipient/notification/time, retention sweep, open rates. */
export function deliveryLogContract(ctx: ContractContext): void {
  describe('delivery log', () => {
    test('entries read back with every field, the store time, in append order; absent fields stay absent', async () => {
      const store = ctx.store();
      const sent = entry({
        status: 'sent',
        transport: 'fcm',
        tokenPrefix: 'fcm-tok',
        providerMessageId: 'projects/p/messages/1',
        latencyMs: 23,
      });
      const failed = entry({
        status: 'failed',
        recipient: BOB,
        transport: 'webpush',
        tokenPrefix: 'https://',
        error: 'gone',
        latencyMs: 4,
      });
      const queued = entry({ status: 'queued', notificationId: 'n2' });
      await store.appendDeliveryLog([sent, failed, queued]);
      const at = ctx.clock().nowMs();
      assert.deepEqual(await store.readDeliveryLog('default', { limit: 10 }), [
        { ...sent, atMs: at },
        { ...failed, atMs: at },
        { ...queued, atMs: at },
      ]);
      assert.deepEqual(await store.readDeliveryLog('beta', { limit: 10 }), [], 'another app sees none');
      await store.appendDeliveryLog([]);
    });

    test('reads by recipient, by notification and since a time, oldest first, bounded by limit', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      const t0 = clock.nowMs();
      await store.appendDeliveryLog([entry({ status: 'queued' }), entry({ status: 'queued', recipient: BOB })]);
      clock.advance(MINUTE_MS);
      await store.appendDeliveryLog([entry({ status: 'sent' }), entry({ status: 'sent', recipient: BOB, notificationId: 'n2' })]);
      const of = (entries: Array<{ recipient: string; status: string; atMs: number }>) =>
        entries.map((e) => [e.recipient === ALICE ? 'alice' : 'bob', e.status, e.atMs - t0]);
      assert.deepEqual(of(await store.readDeliveryLog('default', { recipient: ALICE, limit: 10 })), [
        ['alice', 'queued', 0],
        ['alice', 'sent', MINUTE_MS],
      ]);
      assert.deepEqual(of(await store.readDeliveryLog('default', { notificationId: 'n1', limit: 10 })), [
        ['alice', 'queued', 0],
        ['bob', 'queued', 0],
        ['alice', 'sent', MINUTE_MS],
      ]);
      assert.deepEqual(of(await store.readDeliveryLog('default', { sinceMs: t0 + MINUTE_MS, limit: 10 })), [
        ['alice', 'sent', MINUTE_MS],
        ['bob', 'sent', MINUTE_MS],
      ]);
      assert.equal((await store.readDeliveryLog('default', { limit: 3 })).length, 3);
      assert.deepEqual(of(await store.readDeliveryLog('default', { notificationId: 'n1', recipient: BOB, limit: 10 })), [
        ['bob', 'queued', 0],
      ]);
    });

    test('a sweep removes entries older than its cutoff from every view and keeps the rest', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      await store.appendDeliveryLog([entry({ status: 'sent' }), entry({ status: 'sent', recipient: BOB })]);
      clock.advance(8 * DAY_MS);
      await store.appendDeliveryLog([entry({ status: 'opened' })]);
      const cutoff = clock.nowMs() - 7 * DAY_MS;
      assert.equal(await store.sweepDeliveryLog('beta', cutoff, 100), 0, "another app's sweep touches nothing");
      assert.equal(await store.sweepDeliveryLog('default', cutoff, 1), 1, 'bounded by limit');
      assert.equal(await store.sweepDeliveryLog('default', cutoff, 100), 1);
      assert.equal(await store.sweepDeliveryLog('default', cutoff, 100), 0);
      assert.deepEqual(
        (await store.readDeliveryLog('default', { limit: 10 })).map((e) => e.status),
        ['opened'],
      );
      assert.deepEqual(
        (await store.readDeliveryLog('default', { recipient: ALICE, limit: 10 })).map((e) => e.status),
        ['opened'],
      );
      assert.deepEqual(await store.readDeliveryLog('default', { recipient: BOB, limit: 10 }), []);
      assert.deepEqual(
        (await store.readDeliveryLog('default', { notificationId: 'n1', limit: 10 })).map((e) => e.status),
        ['opened'],
      );
    });

    test('open rates count sent (notification, recipient) pairs once however many devices, and opens, per type', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      const t0 = clock.nowMs();
      await store.appendDeliveryLog([
        entry({ status: 'sent', tokenPrefix: 'phone' }),
        entry({ status: 'sent', tokenPrefix: 'tablet' }),
        entry({ status: 'sent', recipient: BOB }),
        entry({ status: 'failed', recipient: BOB, notificationId: 'n9' }),
        entry({ status: 'sent', type: 'moderation', notificationId: 'm1' }),
      ]);
      await store.appendDeliveryLog([entry({ status: 'opened' })]);
      assert.deepEqual(await store.deliveryOpenRates('default', t0), [
        { type: 'moderation', sent: 1, opened: 0 },
        { type: 'payout', sent: 2, opened: 1 },
      ]);
      assert.deepEqual(await store.deliveryOpenRates('beta', t0), []);
      clock.advance(3 * DAY_MS);
      await store.appendDeliveryLog([entry({ status: 'sent', notificationId: 'n3' })]);
      assert.deepEqual(
        await store.deliveryOpenRates('default', clock.nowMs()),
        [{ type: 'payout', sent: 1, opened: 0 }],
        'from a later day',
      );
      await store.sweepDeliveryLog('default', clock.nowMs() - DAY_MS, 100);
      assert.deepEqual(await store.deliveryOpenRates('default', t0), [{ type: 'payout', sent: 1, opened: 0 }], 'swept days count no more');
    });
  });
}
