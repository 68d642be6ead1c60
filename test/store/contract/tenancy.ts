import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { StorePort } from '../../../src/store/port.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { totals } from './context.ts';

const ALICE = 'a1'.repeat(32);
const EVENT = 'e1'.repeat(32);
const LEASE = { max: 10, leaseMs: 60_000, maxAttempts: 5 };

/** The store views of several apps over one store (one Redis, one SQLite directory), in the order asked. */
export type MakeAppViews = (clock: ManualClock, apps: readonly string[]) => Promise<StorePort[]>;

/**
 * Tenancy: two apps' views of one store see nothing of each other's devices, preferences,
 * claims, inbox counters, queue items and dead letters, though they use the same pubkeys, tokens,
 * event ids and item ids.
 */
export function tenancyContract(name: string, makeViews: MakeAppViews): void {
  describe(`${name}: app views`, () => {
    let views: StorePort[] = [];
    const pair = (): [StorePort, StorePort] => {
      const [a, b] = views;
      assert.ok(a && b, 'views are only available inside a test');
      return [a, b];
    };

    beforeEach(async () => {
      views = await makeViews(new ManualClock(), ['default', 'b']);
    });
    afterEach(async () => {
      await Promise.all(views.map((v) => v.close()));
      views = [];
    });

    test('devices and preferences are the app’s own', async () => {
      const [a, b] = pair();
      await a.registerToken(ALICE, { token: 'tok-1', transport: 'fcm' });
      await a.setPreferences(ALICE, { kinds: [7], campaignsEnabled: false });
      assert.deepEqual(await b.listDevices(ALICE), []);
      assert.equal(await b.tokenOwner('tok-1'), null);
      assert.equal(await b.getPreferences(ALICE), null);
      assert.deepEqual((await b.readRecipients([ALICE]))[0]?.devices ?? [], []);
      // The same token registered in B is B's, and A keeps its own.
      await b.registerToken(ALICE, { token: 'tok-1', transport: 'apns' });
      assert.deepEqual(
        (await a.listDevices(ALICE)).map((d) => d.transport),
        ['fcm'],
      );
      assert.deepEqual(
        (await b.listDevices(ALICE)).map((d) => d.transport),
        ['apns'],
      );
      assert.equal(await a.sweepStaleTokens(0), 0, 'nothing is stale yet');
    });

    test('claims are the app’s own', async () => {
      const [a, b] = pair();
      assert.equal(await a.claimEvent(EVENT, 60), true);
      assert.equal(await b.claimEvent(EVENT, 60), true, 'B never saw A’s claim');
      assert.notEqual(await a.claimRecipientDelivery(EVENT, ALICE, 60), null);
      assert.notEqual(await b.claimRecipientDelivery(EVENT, ALICE, 60), null);
      assert.equal(await a.claimRecipientDelivery(EVENT, ALICE, 60), null, 'A still holds its own');
    });

    test('inbox counters are the app’s own', async () => {
      const [a, b] = pair();
      await a.rememberInboxUser(ALICE);
      await b.rememberInboxUser(ALICE);
      assert.deepEqual(await a.countInboxNotifications([{ countKey: EVENT, recipient: ALICE, type: 'like' }], 60), [1]);
      assert.equal((await b.readInboxCounts(ALICE)).totalNew, 0);
      assert.deepEqual(await b.countInboxNotifications([{ countKey: EVENT, recipient: ALICE, type: 'like' }], 60), [1]);
      assert.equal((await a.readInboxCounts(ALICE)).totalNew, 1);
    });

    test('queue items and dead letters are the app’s own', async () => {
      const [a, b] = pair();
      await a.enqueue('outbound', { id: 'item-1', payload: { app: 'a' } });
      assert.deepEqual(totals(await b.queueStats('outbound')), { ready: 0, leased: 0, dead: 0 });
      assert.deepEqual(await b.lease('outbound', LEASE), []);
      await b.enqueue('outbound', { id: 'item-1', payload: { app: 'b' } });
      const [leasedA] = await a.lease('outbound', LEASE);
      assert.deepEqual(leasedA?.payload, { app: 'a' });
      assert.ok(leasedA);
      assert.equal(await a.deadLetter('outbound', 'item-1', leasedA.leaseToken, 'poison'), true);
      assert.deepEqual((await b.listDeadPage('outbound', { limit: 10 })).items, []);
      assert.equal(await b.replayDead('outbound', 'item-1'), false);
      assert.equal((await a.listDeadPage('outbound', { limit: 10 })).items.length, 1);
      const [leasedB] = await b.lease('outbound', LEASE);
      assert.deepEqual(leasedB?.payload, { app: 'b' });
    });
  });
}
