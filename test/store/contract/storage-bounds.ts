import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Nip9aCallback } from '../../../src/store/port-nip9a-callbacks.ts';
import { DAY_MS, type ContractContext } from './context.ts';

const ALICE = 'a1'.repeat(32);
const BOB = 'b2'.repeat(32);
const CAROL = 'c3'.repeat(32);
const RELAY = 'wss://relay.example/';
const IDLE_DAYS = 30;
const PAGE = 100;

function callback(id: string, owner: string, createdAtMs: number): Nip9aCallback {
  return { id, secretHash: `${id}-hash`.padEnd(64, '0'), secretHint: id.slice(0, 4), owner, relay: RELAY, createdAtMs };
}

/**
 * The contract of issue 35's storage bounds: per-client quotas (port-client-quotas.ts) and storage
 * that expires (port-inbox.ts `forgetIdleInboxUsers`, port-nip9a-callbacks.ts `touchNip9aCallback`
 * and `forgetIdleNip9aCallbacks`). Time moves only by the manual clock.
 */
export function storageBoundsContract(ctx: ContractContext): void {
  describe('per-client quotas', () => {
    const take = (client: string, member: string, limit = 2, scope = 'things') =>
      ctx.store().takeClientQuota({ scope, client, member, limit, windowMs: DAY_MS });

    test('a window admits `limit` distinct members; a member already in is always allowed; the next is refused with the time left', async () => {
      ctx.clock().set(Date.UTC(2026, 0, 1, 18));
      assert.deepEqual(await take('192.0.2.1', 'one'), { allowed: true, used: 1, retryAfterMs: 6 * 3_600_000 });
      assert.deepEqual(await take('192.0.2.1', 'two'), { allowed: true, used: 2, retryAfterMs: 6 * 3_600_000 });
      assert.deepEqual(await take('192.0.2.1', 'one'), { allowed: true, used: 2, retryAfterMs: 6 * 3_600_000 });
      assert.deepEqual(await take('192.0.2.1', 'three'), { allowed: false, used: 2, retryAfterMs: 6 * 3_600_000 });
      // A refusal added nothing: it is still refused, and the admitted members still pass.
      assert.equal((await take('192.0.2.1', 'three')).allowed, false);
      assert.equal((await take('192.0.2.1', 'two')).allowed, true);
    });

    test('clients and scopes have their own windows, and a new window starts empty', async () => {
      ctx.clock().set(Date.UTC(2026, 0, 1, 23, 59));
      await take('2001:db8::1', 'a', 1);
      assert.equal((await take('2001:db8::1', 'b', 1)).allowed, false);
      assert.equal((await take('2001:db8::2', 'b', 1)).allowed, true, 'another client');
      assert.equal((await take('2001:db8::1', 'b', 1, 'other')).allowed, true, 'another scope');
      ctx.clock().advance(60_000);
      assert.deepEqual(await take('2001:db8::1', 'b', 1), { allowed: true, used: 1, retryAfterMs: DAY_MS }, 'the next UTC day');
    });
  });

  describe('idle inbox users', () => {
    const idleBefore = () => ctx.clock().nowMs() - IDLE_DAYS * DAY_MS;

    test('a user with no device and no request for the TTL is forgotten with their counters and alert words; others keep theirs', async () => {
      const store = ctx.store();
      await store.rememberInboxUser(ALICE);
      await store.replaceAlertWords(ALICE, ['pizza', 'sunset']);
      await store.countInboxNotifications([{ countKey: 'e1', recipient: ALICE, type: 'like' }], 3600);
      await store.rememberInboxUser(BOB);
      await store.replaceAlertWords(BOB, ['pizza']);
      ctx.clock().advance(IDLE_DAYS * DAY_MS - DAY_MS);
      await store.rememberInboxUser(BOB);
      ctx.clock().advance(2 * DAY_MS);

      assert.deepEqual(await store.forgetIdleInboxUsers(idleBefore(), PAGE), { examined: 1, removed: 1 });
      assert.deepEqual(await store.readAlertWords(ALICE), []);
      assert.equal((await store.readInboxCounts(ALICE)).types.like.total, 0);
      assert.deepEqual([...(await store.alertWordWatchers(['pizza', 'sunset']))], [['pizza', [BOB]]]);
      assert.equal(await store.alertWordCount(), 1);
      // Forgotten means unknown: a notification no longer counts for them.
      assert.deepEqual(await store.countInboxNotifications([{ countKey: 'e2', recipient: ALICE, type: 'like' }], 3600), [null]);
      assert.deepEqual(await store.readAlertWords(BOB), ['pizza'], 'Bob asked within the TTL');
      assert.deepEqual(await store.forgetIdleInboxUsers(idleBefore(), PAGE), { examined: 0, removed: 0 });
    });

    test('a user with a registered device is never forgotten, and counts as active at the sweep', async () => {
      const store = ctx.store();
      await store.registerToken(ALICE, { token: 'alice-phone', transport: 'fcm' });
      await store.rememberInboxUser(ALICE);
      await store.replaceAlertWords(ALICE, ['pizza']);
      ctx.clock().advance((IDLE_DAYS + 1) * DAY_MS);
      assert.deepEqual(await store.forgetIdleInboxUsers(idleBefore(), PAGE), { examined: 1, removed: 0 });
      assert.deepEqual(await store.readAlertWords(ALICE), ['pizza']);
      // Active as of that sweep: not a candidate again until a whole TTL later, even without the device.
      await store.removeToken(ALICE, 'alice-phone');
      ctx.clock().advance(DAY_MS);
      assert.deepEqual(await store.forgetIdleInboxUsers(idleBefore(), PAGE), { examined: 0, removed: 0 });
      ctx.clock().advance(IDLE_DAYS * DAY_MS);
      assert.deepEqual(await store.forgetIdleInboxUsers(idleBefore(), PAGE), { examined: 1, removed: 1 });
      assert.deepEqual(await store.readAlertWords(ALICE), []);
    });

    test('the sweep goes in pages, oldest first, and a forgotten user who comes back is a new user', async () => {
      const store = ctx.store();
      for (const user of [ALICE, BOB, CAROL]) {
        await store.rememberInboxUser(user);
        await store.replaceAlertWords(user, ['pizza']);
        ctx.clock().advance(DAY_MS);
      }
      ctx.clock().advance(IDLE_DAYS * DAY_MS);
      assert.deepEqual(await store.forgetIdleInboxUsers(idleBefore(), 2), { examined: 2, removed: 2 });
      assert.deepEqual(await store.readAlertWords(CAROL), ['pizza'], 'the newest waits for the next page');
      assert.deepEqual(await store.forgetIdleInboxUsers(idleBefore(), 2), { examined: 1, removed: 1 });
      assert.equal(await store.alertWordCount(), 0);
      await store.rememberInboxUser(ALICE);
      assert.deepEqual(await store.countInboxNotifications([{ countKey: 'e3', recipient: ALICE, type: 'like' }], 3600), [1]);
      assert.deepEqual(await store.forgetIdleInboxUsers(idleBefore(), PAGE), { examined: 0, removed: 0 });
    });

    test('activity is kept per day: requests all day long leave the user active from that day', async () => {
      const store = ctx.store();
      ctx.clock().set(Date.UTC(2026, 0, 1, 0, 5));
      await store.rememberInboxUser(ALICE);
      ctx.clock().set(Date.UTC(2026, 0, 1, 23, 55));
      await store.rememberInboxUser(ALICE);
      ctx.clock().set(Date.UTC(2026, 0, 1 + IDLE_DAYS, 12));
      // Idle since the start of Jan 1: kept with a cutoff at that instant, forgotten past it.
      assert.deepEqual(await store.forgetIdleInboxUsers(Date.UTC(2026, 0, 1), PAGE), { examined: 0, removed: 0 });
      assert.deepEqual(await store.forgetIdleInboxUsers(Date.UTC(2026, 0, 1) + 1, PAGE), { examined: 1, removed: 1 });
    });
  });

  describe('idle NIP-9a callbacks', () => {
    test('a callback that received nothing for the TTL is deleted as a revoke would; one touched within it stays', async () => {
      const store = ctx.store();
      const start = ctx.clock().nowMs();
      const quiet = callback('cb-quiet', ALICE, start);
      const busy = callback('cb-busy', ALICE, start);
      await store.createNip9aCallback(quiet);
      await store.createNip9aCallback(busy);
      ctx.clock().advance(80 * DAY_MS);
      await store.touchNip9aCallback(busy.id, ctx.clock().nowMs());
      await store.touchNip9aCallback('cb-never-created', ctx.clock().nowMs());
      ctx.clock().advance(20 * DAY_MS);
      const idleBefore = ctx.clock().nowMs() - 90 * DAY_MS;
      assert.deepEqual(await store.forgetIdleNip9aCallbacks(idleBefore, PAGE), { examined: 1, removed: 1 });
      assert.equal(await store.findNip9aCallback(quiet.secretHash), null);
      assert.deepEqual(
        (await store.listNip9aCallbacks(ALICE)).map((c) => c.id),
        [busy.id],
      );
      assert.deepEqual(await store.forgetIdleNip9aCallbacks(idleBefore, PAGE), { examined: 0, removed: 0 });
      assert.equal(await store.revokeNip9aCallback(ALICE, quiet.id), false, 'gone, as after a revoke');
    });

    test('a touch only raises the time, and a revoked callback leaves nothing for the sweep', async () => {
      const store = ctx.store();
      const start = ctx.clock().nowMs();
      await store.createNip9aCallback(callback('cb-1', BOB, start));
      await store.createNip9aCallback(callback('cb-2', BOB, start));
      await store.touchNip9aCallback('cb-1', start + 50 * DAY_MS);
      await store.touchNip9aCallback('cb-1', start + 10 * DAY_MS);
      assert.equal(await store.revokeNip9aCallback(BOB, 'cb-2'), true);
      ctx.clock().advance(120 * DAY_MS);
      assert.deepEqual(await store.forgetIdleNip9aCallbacks(start + 40 * DAY_MS, PAGE), { examined: 0, removed: 0 });
      assert.deepEqual(await store.forgetIdleNip9aCallbacks(start + 60 * DAY_MS, PAGE), { examined: 1, removed: 1 });
    });

    test('the sweep goes in pages, oldest first', async () => {
      const store = ctx.store();
      for (let i = 0; i < 5; i += 1) {
        await store.createNip9aCallback(callback(`cb-${i}`, CAROL, ctx.clock().nowMs()));
        ctx.clock().advance(DAY_MS);
      }
      const idleBefore = ctx.clock().nowMs();
      assert.deepEqual(await store.forgetIdleNip9aCallbacks(idleBefore, 2), { examined: 2, removed: 2 });
      assert.deepEqual(
        (await store.listNip9aCallbacks(CAROL)).map((c) => c.id),
        ['cb-2', 'cb-3', 'cb-4'],
      );
      assert.deepEqual(await store.forgetIdleNip9aCallbacks(idleBefore, 2), { examined: 2, removed: 2 });
      assert.deepEqual(await store.forgetIdleNip9aCallbacks(idleBefore, 2), { examined: 1, removed: 1 });
      assert.deepEqual(await store.listNip9aCallbacks(CAROL), []);
    });
  });
}
