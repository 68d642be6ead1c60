/**
 * Quiet hours and suppressions in the delivery stage, on each store adapter (a private
 * redis-server for Redis), with a manual clock and a recording transport: the outbound handler
 * the delivery role runs, the digest sender the scheduler role runs, the store as it is.
 * - a social push inside the recipient's quiet hours is held, and one digest goes out when they
 *   end ("While you were away: 2 likes, 1 mention"), not before;
 * - urgent types and direct messages go out during quiet hours;
 * - a suppressed recipient or device gets no transport call, whatever the push kind.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, afterEach, describe, test } from 'node:test';
import { handleOutbound, type OutboundHandlerDeps } from '../../src/delivery/outbound.ts';
import { storeQuietHoursGate } from '../../src/delivery/quiet-hours-gate.ts';
import { storeSuppressionGate } from '../../src/delivery/suppression-gate.ts';
import { sendDigest } from '../../src/platform/digest-worker.ts';
import type { LeasedItem, StorePort } from '../../src/store/port.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { RecordingTransport } from '../support/recording-transport.ts';
import { testOutboundDeps } from '../support/outbound-deps.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import type { OutboundNotification, NotificationType } from '../../src/notification/types.ts';

const ALICE = 'a1'.repeat(32);
const BOB = 'b2'.repeat(32);
const CAROL = 'c3'.repeat(32);
const DAVE = 'd4'.repeat(32);
const MINUTE = 60_000;
/** 13:00Z: 23:00 local at +600, where Alice lives. */
const START_MS = Date.UTC(2026, 6, 1, 13);
const LEASE = { max: 100, leaseMs: 30_000, maxAttempts: 5 };

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`quiet hours and suppressions in the delivery stage (${adapter})`, () => {
    let redis: PrivateRedisServer | undefined;
    let store: StorePort;
    let clock: ManualClock;
    let transport: RecordingTransport;
    let deps: OutboundHandlerDeps;

    before(async () => {
      if (adapter === 'redis') redis = await startRedisServer();
    });
    after(async () => {
      await redis?.stop();
    });

    beforeEach(async () => {
      clock = new ManualClock(START_MS);
      store =
        adapter === 'redis' && redis
          ? await openRedisStore({ url: redis.url, clock, keyPrefix: `qh-${randomUUID()}:` })
          : await openSqliteStore({ path: ':memory:', clock });
      transport = new RecordingTransport();
      deps = testOutboundDeps(store, [transport], {
        suppressionGate: storeSuppressionGate(store),
        quietHoursGate: storeQuietHoursGate(store),
      });
      await store.registerToken(ALICE, { token: 'alice-phone', transport: 'fcm', timezoneOffsetMinutes: 600 });
      await store.registerToken(BOB, { token: 'bob-phone', transport: 'fcm', timezoneOffsetMinutes: 600 });
      await store.registerToken(BOB, { token: 'bob-tablet', transport: 'fcm', timezoneOffsetMinutes: 600 });
      await store.setQuietHours(ALICE, { startMinute: 22 * 60, endMinute: 7 * 60, urgentTypes: ['comment'] });
    });
    afterEach(() => store.close());

    let n = 0;
    const item = (recipient: string, type: NotificationType): LeasedItem<OutboundNotification> => {
      const eventId = (++n).toString(16).padStart(64, '0');
      const payload: OutboundNotification = {
        eventId,
        recipient,
        type,
        message: { data: { type, title: 't', body: 'b' } },
        claim: null,
        eventCreatedAt: Math.floor(clock.nowMs() / 1000),
      };
      return { id: eventId, payload, attempts: 1, leaseToken: 'x', leaseExpiresAtMs: 0, lastError: null };
    };

    /** Run what the scheduler and delivery roles would: due digests, then the outbound items they queued. */
    async function runDigests(): Promise<void> {
      for (let digest = await store.claimDueDigest(30_000); digest; digest = await store.claimDueDigest(30_000)) {
        await sendDigest({ store, leaseMs: 30_000, pollMs: 10, onQueued: () => undefined, logger: deps.logger }, digest);
      }
      for (const leased of await store.lease<OutboundNotification>('outbound', LEASE)) {
        await handleOutbound(deps, leased);
        await store.ack('outbound', leased.id, leased.leaseToken);
      }
    }

    test('social pushes at 23:00 local are held and go out as one digest at 07:00 local, not before', async () => {
      for (const type of ['like', 'mention', 'like'] as const)
        assert.deepEqual(await handleOutbound(deps, item(ALICE, type)), { kind: 'done' });
      assert.equal(transport.sent.length, 0, 'held');
      clock.advance(8 * 60 * MINUTE - 1); // 06:59:59.999 local
      await runDigests();
      assert.equal(transport.sent.length, 0, 'not before the end of quiet hours');
      clock.advance(1);
      await runDigests();
      assert.equal(transport.sent.length, 1);
      const digest = transport.sent[0];
      assert.equal(digest?.token, 'alice-phone');
      assert.equal(digest.message.data.type, 'digest');
      assert.equal(digest.message.data.body, 'While you were away: 2 likes, 1 mention');
      assert.equal(digest.message.data.count_like, '2');
      await runDigests();
      assert.equal(transport.sent.length, 1, 'one digest');
      // After quiet hours a like goes out at once.
      await handleOutbound(deps, item(ALICE, 'like'));
      assert.equal(transport.sent.length, 2);
    });

    test('urgent types, direct messages and users without quiet hours are pushed during them', async () => {
      await handleOutbound(deps, item(ALICE, 'comment'));
      await handleOutbound(deps, item(ALICE, 'directMessage'));
      await handleOutbound(deps, item(BOB, 'like'));
      assert.deepEqual(transport.sent.map((s) => [s.token, s.message.data.type]).sort(), [
        ['alice-phone', 'comment'],
        ['alice-phone', 'directMessage'],
        ['bob-phone', 'like'],
        ['bob-tablet', 'like'],
      ]);
    });

    test('local time is that of the first device that registered an offset, whatever devices come before it', async () => {
      await store.registerToken(DAVE, { token: 'dave-laptop', transport: 'fcm' });
      await store.registerToken(DAVE, { token: 'dave-phone', transport: 'fcm', timezoneOffsetMinutes: 600 });
      await store.setQuietHours(DAVE, { startMinute: 22 * 60, endMinute: 7 * 60, urgentTypes: [] });
      assert.deepEqual(await handleOutbound(deps, item(DAVE, 'like')), { kind: 'done' });
      assert.equal(transport.sent.length, 0, 'held: 23:00 at +10:00, though the laptop has no offset');
    });

    test('a user whose devices registered no timezone offset is never held, even inside their quiet hours in UTC', async () => {
      // 13:00Z is inside 12:00–14:00 read as UTC; without an offset there is no local time to read it in.
      await store.registerToken(CAROL, { token: 'carol-phone', transport: 'fcm' });
      await store.setQuietHours(CAROL, { startMinute: 12 * 60, endMinute: 14 * 60, urgentTypes: [] });
      assert.deepEqual(await handleOutbound(deps, item(CAROL, 'like')), { kind: 'done' });
      assert.deepEqual(
        transport.sent.map((s) => [s.token, s.message.data.type]),
        [['carol-phone', 'like']],
        'pushed at once',
      );
      clock.advance(2 * 60 * MINUTE);
      await runDigests();
      assert.equal(transport.sent.length, 1, 'and nothing was held for a digest');
    });

    test('a suppressed recipient gets no transport call for any push kind; a suppressed device is left out', async () => {
      await store.addSuppression('default', { kind: 'pubkey', value: ALICE });
      await store.addSuppression('default', { kind: 'token', value: 'bob-tablet' });
      for (const type of ['directMessage', 'comment', 'like', 'newPost'] as const) await handleOutbound(deps, item(ALICE, type));
      await handleOutbound(deps, item(BOB, 'directMessage'));
      assert.deepEqual(
        transport.sent.map((s) => s.token),
        ['bob-phone'],
      );
      // Nothing was held for Alice's digest either: suppression comes first.
      clock.advance(9 * 60 * MINUTE);
      await runDigests();
      assert.deepEqual(
        transport.sent.map((s) => s.token),
        ['bob-phone'],
      );
    });
  });
}
