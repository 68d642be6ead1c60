import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DeviceRegistration } from '../../../src/store/port.ts';
import { NO_RELAY_LIST_FOUND, type UserRelayList, type UserRelaySource } from '../../../src/store/port-user-relays.ts';
import { SECOND_MS, type ContractContext } from './context.ts';

const ALICE = 'a1'.repeat(32);
const BOB = 'b2'.repeat(32);
const CAROL = 'c3'.repeat(32);
const DAVE = 'd4'.repeat(32);
const RELAY_A = 'wss://a.relay.example';
const RELAY_B = 'wss://b.relay.example';
const RELAY_C = 'wss://c.relay.example';

const ID_LOW = '01'.repeat(32);
const ID_HIGH = 'fe'.repeat(32);

function list(source: UserRelaySource, createdAt: number, relays: string[], eventId = ID_HIGH): UserRelayList {
  return { source, eventId, createdAt, relays };
}

const device = (token: string): DeviceRegistration => ({ token, transport: 'fcm' });

/** The contract of port-user-relays.ts: a user's relay lists (issue 36) and the relays ranked by users covered. */
export function userRelayContract(ctx: ContractContext): void {
  describe('user relay lists', () => {
    test('put then get round-trips each source, in the order asked, empty where none is stored', async () => {
      const store = ctx.store();
      const read = list('nip65', 100, [RELAY_A, RELAY_B]);
      const dm = list('dm', 90, [RELAY_C]);
      const app = list('app', 80, [RELAY_B]);
      assert.equal(await store.putUserRelayList(ALICE, read), 'stored');
      assert.equal(await store.putUserRelayList(ALICE, dm), 'stored');
      assert.equal(await store.putUserRelayList(BOB, app), 'stored');
      assert.deepEqual(await store.getUserRelayLists([BOB, CAROL, ALICE, ALICE]), [
        { nip65: null, dm: null, app },
        { nip65: null, dm: null, app: null },
        { nip65: read, dm, app: null },
        { nip65: read, dm, app: null },
      ]);
      assert.deepEqual(await store.getUserRelayLists([]), []);
    });

    test('the newest list of a source wins: a higher created_at replaces, an older one is stale and changes nothing', async () => {
      const store = ctx.store();
      await store.putUserRelayList(ALICE, list('nip65', 100, [RELAY_A]));
      assert.equal(await store.putUserRelayList(ALICE, list('nip65', 99, [RELAY_C])), 'stale');
      assert.deepEqual((await store.getUserRelayLists([ALICE]))[0]?.nip65?.relays, [RELAY_A]);
      assert.equal(await store.putUserRelayList(ALICE, list('nip65', 101, [RELAY_B])), 'stored');
      assert.deepEqual((await store.getUserRelayLists([ALICE]))[0]?.nip65?.relays, [RELAY_B]);
      // Another source is its own replaceable: an older dm list is still stored.
      assert.equal(await store.putUserRelayList(ALICE, list('dm', 5, [RELAY_C])), 'stored');
    });

    test('on equal created_at the lower event id wins (NIP-01); the same event again is stale', async () => {
      const store = ctx.store();
      await store.putUserRelayList(ALICE, list('nip65', 100, [RELAY_A], ID_HIGH));
      assert.equal(await store.putUserRelayList(ALICE, list('nip65', 100, [RELAY_B], ID_LOW)), 'stored');
      assert.equal(await store.putUserRelayList(ALICE, list('nip65', 100, [RELAY_C], ID_HIGH)), 'stale');
      assert.equal(await store.putUserRelayList(ALICE, list('nip65', 100, [RELAY_C], ID_LOW)), 'stale');
      assert.deepEqual((await store.getUserRelayLists([ALICE]))[0]?.nip65?.relays, [RELAY_B]);
    });

    test('an empty list is stored and replaces the relays before it', async () => {
      const store = ctx.store();
      await store.putUserRelayList(ALICE, list('nip65', 100, [RELAY_A]));
      assert.equal(await store.putUserRelayList(ALICE, list('nip65', 200, [])), 'stored');
      assert.deepEqual((await store.getUserRelayLists([ALICE]))[0]?.nip65?.relays, []);
    });
  });

  describe('user relay coverage', () => {
    test('ranks relays by users with devices covered, most first, ties by URL; read, app and dm lists all count', async () => {
      const store = ctx.store();
      await store.registerToken(ALICE, device('token-alice'));
      await store.registerToken(BOB, device('token-bob'));
      await store.registerToken(CAROL, device('token-carol'));
      await store.putUserRelayList(ALICE, list('nip65', 1, [RELAY_A, RELAY_B]));
      await store.putUserRelayList(ALICE, list('dm', 1, [RELAY_C]));
      await store.putUserRelayList(BOB, list('app', 1, [RELAY_B]));
      await store.putUserRelayList(BOB, list('nip65', 1, [RELAY_B]));
      await store.putUserRelayList(CAROL, list('dm', 1, [RELAY_B]));
      assert.deepEqual(await store.userRelayCoverage(), [
        { url: RELAY_B, readers: [ALICE, BOB].sort(), dmReaders: [CAROL], users: 3 },
        { url: RELAY_A, readers: [ALICE], dmReaders: [], users: 1 },
        { url: RELAY_C, readers: [], dmReaders: [ALICE], users: 1 },
      ]);
    });

    test('users without a device cover nothing; a device removed takes its user out, one registered brings them in', async () => {
      const store = ctx.store();
      await store.putUserRelayList(DAVE, list('nip65', 1, [RELAY_A]));
      assert.deepEqual(await store.userRelayCoverage(), []);
      await store.registerToken(DAVE, device('token-dave'));
      assert.deepEqual(await store.userRelayCoverage(), [{ url: RELAY_A, readers: [DAVE], dmReaders: [], users: 1 }]);
      assert.equal(await store.removeToken(DAVE, 'token-dave'), true);
      assert.deepEqual(await store.userRelayCoverage(), []);
    });

    test('a replaced list moves its user: the relay it no longer names stops covering them', async () => {
      const store = ctx.store();
      await store.registerToken(ALICE, device('token-alice'));
      await store.putUserRelayList(ALICE, list('nip65', 1, [RELAY_A, RELAY_B]));
      await store.putUserRelayList(ALICE, list('nip65', 2, [RELAY_C]));
      assert.deepEqual(await store.userRelayCoverage(), [{ url: RELAY_C, readers: [ALICE], dmReaders: [], users: 1 }]);
    });

    test('many users over several relays are all counted', async () => {
      const store = ctx.store();
      const users = Array.from({ length: 120 }, (_, i) => i.toString(16).padStart(64, '0'));
      for (const [i, pubkey] of users.entries()) {
        await store.registerToken(pubkey, device(`token-${i}`));
        await store.putUserRelayList(pubkey, list('nip65', 1, i % 3 === 0 ? [RELAY_A, RELAY_B] : [RELAY_B]));
      }
      const ranked = await store.userRelayCoverage();
      assert.deepEqual(
        ranked.map((r) => [r.url, r.users]),
        [
          [RELAY_B, 120],
          [RELAY_A, 40],
        ],
      );
    });
  });

  describe('user relay changes', () => {
    test('a stored list and a noted change are recorded at the store clock, each user once with its latest time, oldest first', async () => {
      const store = ctx.store();
      const t0 = ctx.clock().nowMs();
      await store.putUserRelayList(ALICE, list('nip65', 10, [RELAY_A]));
      ctx.clock().advance(SECOND_MS);
      await store.noteUserRelayChange([BOB, CAROL]);
      ctx.clock().advance(SECOND_MS);
      await store.putUserRelayList(ALICE, list('dm', 10, [RELAY_C]));
      assert.deepEqual(await store.userRelayChangesSince(t0 - 1, 10), [
        { pubkey: BOB, changedMs: t0 + SECOND_MS },
        { pubkey: CAROL, changedMs: t0 + SECOND_MS },
        { pubkey: ALICE, changedMs: t0 + 2 * SECOND_MS },
      ]);
      // After a time: only what changed later; `limit` cuts the oldest first.
      assert.deepEqual(await store.userRelayChangesSince(t0 + SECOND_MS, 10), [{ pubkey: ALICE, changedMs: t0 + 2 * SECOND_MS }]);
      assert.deepEqual(
        (await store.userRelayChangesSince(t0 - 1, 1)).map((c) => c.pubkey),
        [BOB],
      );
      assert.deepEqual(await store.userRelayChangesSince(t0 + 2 * SECOND_MS, 10), []);
    });

    test('a stale list records no change', async () => {
      const store = ctx.store();
      await store.putUserRelayList(ALICE, list('nip65', 10, [RELAY_A]));
      const after = ctx.clock().nowMs();
      ctx.clock().advance(SECOND_MS);
      assert.equal(await store.putUserRelayList(ALICE, list('nip65', 9, [RELAY_B])), 'stale');
      assert.deepEqual(await store.userRelayChangesSince(after, 10), []);
    });

    test('changes older than a day are no longer answered', async () => {
      const store = ctx.store();
      const t0 = ctx.clock().nowMs();
      await store.noteUserRelayChange([ALICE]);
      ctx.clock().advance(SECOND_MS);
      await store.noteUserRelayChange([BOB]);
      ctx.clock().advance(86_400 * SECOND_MS);
      assert.deepEqual(
        (await store.userRelayChangesSince(t0 - 1, 10)).map((c) => c.pubkey),
        [BOB],
      );
    });
  });

  describe('users without relay lists', () => {
    /** Every pubkey of a whole walk, pages of `limit`. */
    async function walk(limit: number): Promise<string[]> {
      const store = ctx.store();
      const found = new Set<string>();
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: { pubkeys: string[]; cursor: string | null } = await store.usersWithoutRelayLists(cursor, limit);
        for (const pubkey of page.pubkeys) found.add(pubkey);
        cursor = page.cursor;
        assert.ok(++pages < 10_000, 'the walk ends');
      } while (cursor !== null);
      return [...found].sort();
    }

    test('users with a device and neither a 10002 nor a 10050 list; an app list or no device does not count', async () => {
      const store = ctx.store();
      await store.registerToken(ALICE, device('token-alice'));
      await store.registerToken(ALICE, device('token-alice-2'));
      await store.registerToken(BOB, device('token-bob'));
      await store.putUserRelayList(BOB, list('dm', 1, [RELAY_C]));
      await store.registerToken(CAROL, device('token-carol'));
      await store.putUserRelayList(CAROL, list('app', 1, [RELAY_B]));
      await store.putUserRelayList(DAVE, list('app', 1, [RELAY_B]));
      assert.deepEqual(await walk(10), [ALICE, CAROL].sort());
      // The mark of a lookup that found nothing takes the user out; a real 10002 replaces it.
      assert.equal(await store.putUserRelayList(ALICE, NO_RELAY_LIST_FOUND), 'stored');
      assert.deepEqual(await walk(10), [CAROL]);
      assert.equal(await store.putUserRelayList(ALICE, list('nip65', 1, [RELAY_A])), 'stored');
      assert.deepEqual((await store.getUserRelayLists([ALICE]))[0]?.nip65?.relays, [RELAY_A]);
    });

    test('small pages walk every such user', async () => {
      const store = ctx.store();
      const users = Array.from({ length: 75 }, (_, i) => (i + 1).toString(16).padStart(64, '0'));
      for (const [i, pubkey] of users.entries()) {
        await store.registerToken(pubkey, device(`token-${i}`));
        if (i % 5 === 0) await store.putUserRelayList(pubkey, list('nip65', 1, [RELAY_A]));
      }
      assert.deepEqual(
        await walk(7),
        users.filter((_, i) => i % 5 !== 0),
      );
    });
  });
}
