import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { INBOX_TYPES, ALERT_WORDS_CEILING, type InboxHint } from '../../../src/store/port-inbox.ts';
import { DAY_MS, MINUTE_MS, type ContractContext } from './context.ts';

const ALICE = 'a1'.repeat(32);
const BOB = 'b2'.repeat(32);
const CAROL = 'c3'.repeat(32);
const STRANGER = 'd4'.repeat(32);
const TTL_SECS = 7 * 86_400;
const event = (n: number): string => n.toString(16).padStart(64, 'e');

/** Wait for `count` hints, or fail after a generous bound only a hang reaches. */
function collectHints(hints: InboxHint[], count: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 20_000;
    const poll = (): void => {
      if (hints.length >= count) resolve();
      else if (Date.now() > deadline) reject(new Error(`expected ${count} hints, got ${JSON.stringify(hints)}`));
      else setTimeout(poll, 5);
    };
    poll();
  });
}

/** The contract of port-inbox.ts: counters, viewed marks, badges, alert words, announcements, hints. */
export function inboxContract(ctx: ContractContext): void {
  describe('inbox', () => {
    test('a notification counts once per (event, recipient): a replay or a second relay adds nothing', async () => {
      const store = ctx.store();
      await store.rememberInboxUser(ALICE);
      assert.deepEqual(await store.countInboxNotifications([{ countKey: event(1), recipient: ALICE, type: 'like' }], TTL_SECS), [1]);
      assert.deepEqual(await store.countInboxNotifications([{ countKey: event(1), recipient: ALICE, type: 'like' }], TTL_SECS), [null]);
      assert.deepEqual(
        await store.countInboxNotifications(
          [
            { countKey: event(2), recipient: ALICE, type: 'like' },
            { countKey: event(2), recipient: ALICE, type: 'like' },
            { countKey: event(3), recipient: ALICE, type: 'comment' },
          ],
          TTL_SECS,
        ),
        [2, null, 3],
      );
      const counts = await store.readInboxCounts(ALICE);
      assert.deepEqual(counts.types.like, { total: 2, viewed: 0, new: 2 });
      assert.deepEqual(counts.types.comment, { total: 1, viewed: 0, new: 1 });
      assert.equal(counts.totalNew, 3);
    });

    test('read and count in one step: the gate states of a plain read and the counts of a plain count, each entry once', async () => {
      const store = ctx.store();
      await store.rememberInboxUser(ALICE);
      await store.registerToken(BOB, { token: 'bob-token', transport: 'fcm' });
      await store.registerToken(CAROL, { token: 'carol-token', transport: 'fcm' });
      const pubkeys = [ALICE, BOB, STRANGER, BOB];
      const entries = [
        { countKey: event(1), recipient: ALICE, type: 'like' as const },
        { countKey: event(1), recipient: BOB, type: 'mention' as const },
        { countKey: event(1), recipient: STRANGER, type: 'mention' as const },
        { countKey: event(2), recipient: BOB, type: 'like' as const },
        { countKey: event(2), recipient: BOB, type: 'like' as const },
      ];
      const first = await store.readRecipientsCountingInbox(pubkeys, entries, TTL_SECS);
      assert.deepEqual(first.states, await store.readRecipients(pubkeys), 'the states a plain read gives, in the order asked');
      assert.deepEqual(first.counted, [1, 1, null, 2, null], 'known users count, a repeated entry once, a stranger never');
      const again = await store.readRecipientsCountingInbox(pubkeys, entries, TTL_SECS);
      assert.deepEqual(again.counted, [null, null, null, null, null], 'a replay counts nothing');
      assert.deepEqual(again.states, first.states, 'counting changed no gate state');
      const bob = await store.readInboxCounts(BOB);
      assert.deepEqual([bob.types.like.total, bob.types.mention.total, bob.totalNew], [1, 1, 2], "Bob's counters");
      assert.equal((await store.readInboxCounts(STRANGER)).totalNew, 0, 'the stranger got no record');
      // An entry whose recipient is not among the users read still counts; a user read without an entry is only read.
      const apart = await store.readRecipientsCountingInbox([ALICE], [{ countKey: event(3), recipient: CAROL, type: 'comment' }], TTL_SECS);
      assert.deepEqual(apart.counted, [1], "Carol's count");
      assert.deepEqual(apart.states, await store.readRecipients([ALICE]), "Alice's state");
      const readOnly = await store.readRecipientsCountingInbox(
        [CAROL, ALICE],
        [{ countKey: event(4), recipient: ALICE, type: 'repost' }],
        TTL_SECS,
      );
      assert.deepEqual(readOnly.counted, [2], "Alice's repost on top of her like");
      assert.deepEqual(readOnly.states, await store.readRecipients([CAROL, ALICE]), 'Carol read without a count');
      assert.deepEqual(await store.readRecipientsCountingInbox([], [], TTL_SECS), { states: [], counted: [] }, 'nothing asked');
    });

    test('only known users count: remembered ones and those with a device; a merely tagged pubkey gets nothing', async () => {
      const store = ctx.store();
      await store.rememberInboxUser(ALICE);
      await store.registerToken(BOB, { token: 'bob-token', transport: 'fcm' });
      const results = await store.countInboxNotifications(
        [
          { countKey: event(1), recipient: ALICE, type: 'mention' },
          { countKey: event(1), recipient: BOB, type: 'mention' },
          { countKey: event(1), recipient: STRANGER, type: 'mention' },
        ],
        TTL_SECS,
      );
      assert.deepEqual(results, [1, 1, null]);
      assert.equal((await store.readInboxCounts(STRANGER)).totalNew, 0);
      // Bob stays known after his device is gone ("a registered device now or before").
      assert.equal(await store.removeToken(BOB, 'bob-token'), true);
      assert.deepEqual(await store.countInboxNotifications([{ countKey: event(2), recipient: BOB, type: 'like' }], TTL_SECS), [2]);
      // The stranger was not counted, so a later count of the same event (once known) still counts.
      await store.rememberInboxUser(STRANGER);
      assert.deepEqual(await store.countInboxNotifications([{ countKey: event(1), recipient: STRANGER, type: 'mention' }], TTL_SECS), [1]);
    });

    test('every counted type has its own counter; an unknown user reads zeros for every type', async () => {
      const store = ctx.store();
      const empty = await store.readInboxCounts(CAROL);
      assert.deepEqual(Object.keys(empty.types), [...INBOX_TYPES]);
      assert.equal(empty.totalNew, 0);
      await store.rememberInboxUser(CAROL);
      const counted = INBOX_TYPES.filter((type) => type !== 'announcement');
      const results = await store.countInboxNotifications(
        counted.map((type, i) => ({ countKey: event(100 + i), recipient: CAROL, type })),
        TTL_SECS,
      );
      assert.deepEqual(
        results,
        counted.map((_, i) => i + 1),
      );
      const counts = await store.readInboxCounts(CAROL);
      for (const type of counted) assert.deepEqual(counts.types[type], { total: 1, viewed: 0, new: 1 }, type);
      assert.equal(counts.totalNew, counted.length);
    });

    test('mark viewed sets viewed to total for the types named; the next count starts from there', async () => {
      const store = ctx.store();
      await store.rememberInboxUser(ALICE);
      for (let i = 0; i < 3; i++) await store.countInboxNotifications([{ countKey: event(i), recipient: ALICE, type: 'like' }], TTL_SECS);
      await store.countInboxNotifications([{ countKey: event(9), recipient: ALICE, type: 'comment' }], TTL_SECS);
      assert.deepEqual(await store.readInboxBadges([ALICE, STRANGER]), [4, 0]);
      const afterLikes = await store.markInboxViewed(ALICE, ['like']);
      assert.deepEqual(afterLikes.types.like, { total: 3, viewed: 3, new: 0 });
      assert.deepEqual(afterLikes.types.comment, { total: 1, viewed: 0, new: 1 });
      assert.equal(afterLikes.totalNew, 1);
      const afterAll = await store.markInboxViewed(ALICE, INBOX_TYPES);
      assert.equal(afterAll.totalNew, 0);
      assert.deepEqual(await store.countInboxNotifications([{ countKey: event(10), recipient: ALICE, type: 'like' }], TTL_SECS), [1]);
      assert.deepEqual(await store.readInboxBadges([ALICE]), [1]);
      assert.deepEqual((await store.readInboxCounts(ALICE)).types.like, { total: 4, viewed: 3, new: 1 });
    });

    test('announcements: ids increase; new ones are the active ones above the high-water mark; an expired unseen one stops counting', async () => {
      const store = ctx.store();
      const clock = ctx.clock();
      await store.rememberInboxUser(ALICE);
      const now = clock.nowMs();
      const first = await store.publishAnnouncement('Maintenance tonight', now + DAY_MS);
      const second = await store.publishAnnouncement('Short-lived', now + MINUTE_MS);
      assert.ok(second.id > first.id);
      assert.deepEqual(
        (await store.activeAnnouncements()).map((a) => [a.id, a.text]),
        [
          [second.id, 'Short-lived'],
          [first.id, 'Maintenance tonight'],
        ],
      );
      assert.deepEqual((await store.readInboxCounts(ALICE)).types.announcement, { total: 2, viewed: 0, new: 2 });
      assert.deepEqual(await store.readInboxBadges([ALICE]), [2]);

      clock.advance(2 * MINUTE_MS);
      assert.deepEqual(
        (await store.activeAnnouncements()).map((a) => a.id),
        [first.id],
      );
      assert.deepEqual((await store.readInboxCounts(ALICE)).types.announcement, { total: 1, viewed: 0, new: 1 });

      const viewed = await store.markInboxViewed(ALICE, ['announcement']);
      assert.deepEqual(viewed.types.announcement, { total: 1, viewed: 1, new: 0 });
      const third = await store.publishAnnouncement('New feature', clock.nowMs() + DAY_MS);
      assert.ok(third.id > second.id);
      const counts = await store.readInboxCounts(ALICE);
      assert.deepEqual(counts.types.announcement, { total: 2, viewed: 1, new: 1 });
      assert.equal(counts.totalNew, 1);
      // Another user, who never looked, sees both active ones.
      assert.deepEqual(await store.readInboxBadges([BOB]), [2]);
      // The badge a count returns includes the announcements.
      assert.deepEqual(await store.countInboxNotifications([{ countKey: event(1), recipient: ALICE, type: 'like' }], TTL_SECS), [2]);
    });

    test('alert words: replace, read back, the global index with its watchers, and removal from the index', async () => {
      const store = ctx.store();
      assert.equal(await store.alertWordCount(), 0);
      await store.replaceAlertWords(ALICE, ['pizza', 'café', '猫咪']);
      await store.replaceAlertWords(BOB, ['pizza', 'sunset']);
      assert.deepEqual(await store.readAlertWords(ALICE), ['café', 'pizza', '猫咪'].sort());
      assert.equal(await store.alertWordCount(), 4);
      const watchers = await store.alertWordWatchers(['pizza', 'sunset', 'café', 'nobody', 'pizza']);
      assert.deepEqual(
        [...watchers].sort(([a], [b]) => a.localeCompare(b)),
        [
          ['café', [ALICE]],
          ['pizza', [ALICE, BOB].sort()],
          ['sunset', [BOB]],
        ],
      );
      await store.replaceAlertWords(ALICE, ['sunset']);
      assert.deepEqual(await store.readAlertWords(ALICE), ['sunset']);
      assert.equal(await store.alertWordCount(), 2);
      assert.deepEqual([...(await store.alertWordWatchers(['café', 'pizza', 'sunset', '猫咪']))].sort(), [
        ['pizza', [BOB]],
        ['sunset', [ALICE, BOB].sort()],
      ]);
      await store.replaceAlertWords(BOB, []);
      await store.replaceAlertWords(ALICE, []);
      assert.equal(await store.alertWordCount(), 0);
      assert.equal((await store.alertWordWatchers(['pizza', 'sunset'])).size, 0);
    });

    test(`alert words: more than ${ALERT_WORDS_CEILING} are refused; setting words makes the user known`, async () => {
      const store = ctx.store();
      const many = Array.from({ length: ALERT_WORDS_CEILING + 1 }, (_, i) => `word${String.fromCharCode(97 + (i % 26))}${i}`);
      await assert.rejects(store.replaceAlertWords(ALICE, many), RangeError);
      assert.deepEqual(await store.readAlertWords(ALICE), []);
      await store.replaceAlertWords(ALICE, many.slice(0, ALERT_WORDS_CEILING));
      assert.equal((await store.readAlertWords(ALICE)).length, ALERT_WORDS_CEILING);
      assert.deepEqual(
        await store.countInboxNotifications([{ countKey: `${event(1)}#pizza`, recipient: ALICE, type: 'keyword' }], TTL_SECS),
        [1],
      );
    });

    test('hints: a count and a mark-viewed each reach a subscriber with the new total; nothing after unsubscribing', async () => {
      const store = ctx.store();
      const hints: InboxHint[] = [];
      const unsubscribe = await store.subscribeInboxHints((hint) => hints.push(hint));
      await store.rememberInboxUser(ALICE);
      await store.countInboxNotifications([{ countKey: event(1), recipient: ALICE, type: 'like' }], TTL_SECS);
      await store.countInboxNotifications([{ countKey: event(1), recipient: ALICE, type: 'like' }], TTL_SECS);
      await store.countInboxNotifications([{ countKey: event(2), recipient: ALICE, type: 'comment' }], TTL_SECS);
      await store.markInboxViewed(ALICE, ['like']);
      await store.markInboxViewed(ALICE, ['like']);
      await collectHints(hints, 3);
      // Sentinel: one more change, received, proves nothing else was published before it.
      await store.countInboxNotifications([{ countKey: event(3), recipient: ALICE, type: 'repost' }], TTL_SECS);
      await collectHints(hints, 4);
      assert.deepEqual(hints, [
        { pubkey: ALICE, type: 'like', totalNew: 1 },
        { pubkey: ALICE, type: 'comment', totalNew: 2 },
        { pubkey: ALICE, type: 'like', totalNew: 1 },
        { pubkey: ALICE, type: 'repost', totalNew: 2 },
      ]);
      await unsubscribe();
      await store.countInboxNotifications([{ countKey: event(4), recipient: ALICE, type: 'like' }], TTL_SECS);
      const sentinel: InboxHint[] = [];
      const unsubscribeSentinel = await store.subscribeInboxHints((hint) => sentinel.push(hint));
      await store.countInboxNotifications([{ countKey: event(5), recipient: ALICE, type: 'like' }], TTL_SECS);
      await collectHints(sentinel, 1);
      await unsubscribeSentinel();
      assert.equal(hints.length, 4);
    });
  });
}
