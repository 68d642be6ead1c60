import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { StoredNip9aRegistration } from '../../../src/store/port-nip9a-gateway.ts';
import { DAY_MS, SECOND_MS, type ContractContext } from './context.ts';

const ALICE = 'a'.repeat(64);
const BOB = 'b'.repeat(64);
const RELAY_1 = 'wss://one.example.com/';
const RELAY_2 = 'wss://two.example.com/';
const RELAY_3 = 'wss://three.example.com/';
const CAROL = 'c'.repeat(64);
const LIMITS = { perAuthor: 4, perAuthorPerRelay: 4, maxWatchedRelays: 1000 };

function reg(pubkey: string, d: string, eventId: string, createdAt: number, relays: string[] = [RELAY_1]): StoredNip9aRegistration {
  return { pubkey, d, eventId, createdAt, relays, eventJson: JSON.stringify({ id: eventId, d, createdAt }) };
}

const id = (c: string): string => c.repeat(64);

/** The contract of port-nip9a-gateway.ts: registrations under NIP-01 addressable rules and limits, and the outcome record. */
export function nip9aGatewayContract(ctx: ContractContext): void {
  describe('NIP-9a gateway registrations', () => {
    test('a new address is stored and read back exactly, by address, by author and in the full list', async () => {
      const store = ctx.store();
      const stored = reg(ALICE, 'inbox', id('1'), 100, [RELAY_2, RELAY_1]);
      assert.deepEqual(await store.putNip9aRegistration(stored, LIMITS), { outcome: 'stored' });
      const expected = { ...stored, relays: [RELAY_1, RELAY_2] };
      assert.deepEqual(await store.getNip9aRegistration(ALICE, 'inbox'), expected);
      assert.deepEqual(await store.listNip9aRegistrations(ALICE), [expected]);
      assert.deepEqual(await store.listAllNip9aRegistrations(), [expected]);
      assert.deepEqual(await store.listNip9aRegistrations(BOB), []);
      assert.equal(await store.getNip9aRegistration(ALICE, 'other'), null);
    });

    test('a newer created_at replaces; an older one is stale; a tie goes to the lower id', async () => {
      const store = ctx.store();
      await store.putNip9aRegistration(reg(ALICE, 'x', id('5'), 100), LIMITS);
      assert.deepEqual(await store.putNip9aRegistration(reg(ALICE, 'x', id('6'), 99), LIMITS), {
        outcome: 'stale',
        currentEventId: id('5'),
      });
      assert.deepEqual(await store.putNip9aRegistration(reg(ALICE, 'x', id('7'), 100), LIMITS), {
        outcome: 'stale',
        currentEventId: id('5'),
      });
      assert.deepEqual(await store.putNip9aRegistration(reg(ALICE, 'x', id('5'), 100), LIMITS), {
        outcome: 'stale',
        currentEventId: id('5'),
      });
      assert.deepEqual(await store.putNip9aRegistration(reg(ALICE, 'x', id('3'), 100), LIMITS), {
        outcome: 'replaced',
        previousEventId: id('5'),
      });
      assert.deepEqual(await store.putNip9aRegistration(reg(ALICE, 'x', id('9'), 101, [RELAY_2]), LIMITS), {
        outcome: 'replaced',
        previousEventId: id('3'),
      });
      const current = await store.getNip9aRegistration(ALICE, 'x');
      assert.equal(current?.eventId, id('9'));
      assert.deepEqual(current.relays, [RELAY_2]);
      assert.equal((await store.listAllNip9aRegistrations()).length, 1);
    });

    test('an author may hold perAuthor registrations; replacing one of them is not a new one', async () => {
      const store = ctx.store();
      for (const d of ['a', 'b', 'c', 'd'])
        assert.equal((await store.putNip9aRegistration(reg(ALICE, d, id('1'), 100), LIMITS)).outcome, 'stored');
      assert.deepEqual(await store.putNip9aRegistration(reg(ALICE, 'e', id('1'), 100), LIMITS), { outcome: 'author_limit' });
      assert.equal((await store.putNip9aRegistration(reg(ALICE, 'a', id('2'), 101), LIMITS)).outcome, 'replaced');
      assert.equal((await store.putNip9aRegistration(reg(BOB, 'e', id('1'), 100), LIMITS)).outcome, 'stored');
      assert.equal(await store.getNip9aRegistration(ALICE, 'e'), null);
    });

    test('an author may name one relay in perAuthorPerRelay registrations; replacing one keeps its place; others are not counted', async () => {
      const store = ctx.store();
      const limits = { perAuthor: 4, perAuthorPerRelay: 2, maxWatchedRelays: 1000 };
      assert.equal((await store.putNip9aRegistration(reg(ALICE, 'a', id('1'), 100, [RELAY_1]), limits)).outcome, 'stored');
      assert.equal((await store.putNip9aRegistration(reg(ALICE, 'b', id('1'), 100, [RELAY_1, RELAY_2]), limits)).outcome, 'stored');
      assert.deepEqual(await store.putNip9aRegistration(reg(ALICE, 'c', id('1'), 100, [RELAY_2, RELAY_1]), limits), {
        outcome: 'author_relay_limit',
        relay: RELAY_1,
      });
      assert.equal(await store.getNip9aRegistration(ALICE, 'c'), null);
      // Replacing one of the two keeps its place; another relay is still open to her.
      assert.equal((await store.putNip9aRegistration(reg(ALICE, 'a', id('2'), 101, [RELAY_1]), limits)).outcome, 'replaced');
      assert.equal((await store.putNip9aRegistration(reg(ALICE, 'c', id('1'), 100, [RELAY_2]), limits)).outcome, 'stored');
      // Bob's registrations on the same relay are his own count.
      for (const d of ['a', 'b'])
        assert.equal((await store.putNip9aRegistration(reg(BOB, d, id('1'), 100, [RELAY_1]), limits)).outcome, 'stored');
      // Moving one away frees its place.
      assert.equal((await store.putNip9aRegistration(reg(ALICE, 'b', id('2'), 101, [RELAY_2]), limits)).outcome, 'replaced');
      assert.equal((await store.putNip9aRegistration(reg(ALICE, 'd', id('1'), 100, [RELAY_1]), limits)).outcome, 'stored');
    });

    test('no shared total per relay: nine authors at their cap on one relay, and a tenth still registers there', async () => {
      const store = ctx.store();
      const authors = Array.from({ length: 10 }, (_, i) => i.toString(16).padStart(2, '0').repeat(32));
      for (const author of authors.slice(0, 9))
        for (const d of ['a', 'b', 'c', 'd'])
          assert.equal((await store.putNip9aRegistration(reg(author, d, id('1'), 100, [RELAY_1]), LIMITS)).outcome, 'stored');
      assert.equal((await store.putNip9aRegistration(reg(authors[9] as string, 'a', id('1'), 100, [RELAY_1]), LIMITS)).outcome, 'stored');
    });

    test('maxWatchedRelays refuses only a registration that adds a relay; freed relays make room', async () => {
      const store = ctx.store();
      const limits = { perAuthor: 4, perAuthorPerRelay: 4, maxWatchedRelays: 2 };
      assert.equal((await store.putNip9aRegistration(reg(ALICE, 'a', id('1'), 100, [RELAY_1]), limits)).outcome, 'stored');
      assert.equal((await store.putNip9aRegistration(reg(BOB, 'a', id('1'), 100, [RELAY_2]), limits)).outcome, 'stored');
      assert.deepEqual(await store.putNip9aRegistration(reg(CAROL, 'a', id('1'), 100, [RELAY_3]), limits), {
        outcome: 'watched_relays_limit',
        relay: RELAY_3,
      });
      assert.deepEqual(await store.putNip9aRegistration(reg(CAROL, 'a', id('1'), 100, [RELAY_1, RELAY_3]), limits), {
        outcome: 'watched_relays_limit',
        relay: RELAY_3,
      });
      assert.equal(await store.getNip9aRegistration(CAROL, 'a'), null);
      // Relays already watched stay open to everyone.
      assert.equal((await store.putNip9aRegistration(reg(CAROL, 'a', id('1'), 100, [RELAY_1, RELAY_2]), limits)).outcome, 'stored');
      // Bob moving from RELAY_2 to RELAY_3 would make three: Carol still holds RELAY_2.
      assert.equal((await store.putNip9aRegistration(reg(BOB, 'a', id('2'), 101, [RELAY_3]), limits)).outcome, 'watched_relays_limit');
      // Once Carol leaves RELAY_2, Bob's move frees it as it adds RELAY_3: two again.
      assert.equal((await store.putNip9aRegistration(reg(CAROL, 'a', id('2'), 101, [RELAY_1]), limits)).outcome, 'replaced');
      assert.equal((await store.putNip9aRegistration(reg(BOB, 'a', id('2'), 101, [RELAY_3]), limits)).outcome, 'replaced');
      assert.equal((await store.putNip9aRegistration(reg(CAROL, 'b', id('1'), 100, [RELAY_2]), limits)).outcome, 'watched_relays_limit');
      // A deletion frees its relay.
      assert.equal(await store.deleteNip9aRegistration(BOB, 'a'), true);
      assert.equal((await store.putNip9aRegistration(reg(CAROL, 'b', id('1'), 100, [RELAY_2]), limits)).outcome, 'stored');
    });

    test('delete removes; with an event id only that version (compare-and-delete)', async () => {
      const store = ctx.store();
      await store.putNip9aRegistration(reg(ALICE, 'x', id('1'), 100), LIMITS);
      assert.equal(await store.deleteNip9aRegistration(ALICE, 'x', id('2')), false);
      assert.notEqual(await store.getNip9aRegistration(ALICE, 'x'), null);
      assert.equal(await store.deleteNip9aRegistration(ALICE, 'x', id('1')), true);
      assert.equal(await store.getNip9aRegistration(ALICE, 'x'), null);
      assert.equal(await store.deleteNip9aRegistration(ALICE, 'x'), false);
      assert.deepEqual(await store.listNip9aRegistrations(ALICE), []);
      // The author's place is free again.
      for (const d of ['a', 'b', 'c', 'd'])
        assert.equal((await store.putNip9aRegistration(reg(ALICE, d, id('1'), 100), LIMITS)).outcome, 'stored');
    });

    test('the version moves on every change and only then', async () => {
      const store = ctx.store();
      assert.equal(await store.nip9aRegistrationsVersion(), 0);
      await store.putNip9aRegistration(reg(ALICE, 'x', id('1'), 100), LIMITS);
      const v1 = await store.nip9aRegistrationsVersion();
      assert.ok(v1 > 0);
      await store.putNip9aRegistration(reg(ALICE, 'x', id('1'), 99), LIMITS);
      await store.deleteNip9aRegistration(ALICE, 'nothing');
      assert.equal(await store.nip9aRegistrationsVersion(), v1);
      await store.deleteNip9aRegistration(ALICE, 'x');
      assert.ok((await store.nip9aRegistrationsVersion()) > v1);
    });
  });

  describe('NIP-9a delivery outcomes', () => {
    const recorded = async (store: ReturnType<ContractContext['store']>, keys: string[]): Promise<boolean[]> =>
      (
        await store.readNip9aDeliveryStates(
          keys.map((key) => ({ key, pubkey: ALICE, d: 'x' })),
          7 * DAY_MS,
        )
      ).map((s) => s.outcomeRecorded);

    test('an outcome is recorded once, also when listed twice in one call', async () => {
      const store = ctx.store();
      assert.deepEqual(await recorded(store, ['k1']), [false]);
      assert.deepEqual(await store.recordNip9aOutcomes(['k1'], 2048, 7 * DAY_MS), [true]);
      assert.deepEqual(
        await store.recordNip9aOutcomes(['k1', 'k2', 'k2'], 2048, 7 * DAY_MS),
        [false, true, false],
        'k1 known, k2 new once',
      );
      assert.deepEqual(await recorded(store, ['k1', 'k2', 'k3']), [true, true, false]);
      assert.deepEqual(await store.recordNip9aOutcomes([], 2048, 7 * DAY_MS), []);
    });

    test('outcomes older than the age bound are gone', async () => {
      const store = ctx.store();
      await store.recordNip9aOutcomes(['old'], 2048, 7 * DAY_MS);
      ctx.clock().advance(7 * DAY_MS + SECOND_MS);
      assert.deepEqual(await recorded(store, ['old']), [false]);
      assert.deepEqual(await store.recordNip9aOutcomes(['old'], 2048, 7 * DAY_MS), [true]);
    });

    test('only the newest maxEntries outcomes are kept, whether recorded one by one or many at once', async () => {
      const store = ctx.store();
      const keys = Array.from({ length: 10 }, (_, i) => `k${i}`);
      for (const key of keys) {
        await store.recordNip9aOutcomes([key], 4, 7 * DAY_MS);
        ctx.clock().advance(SECOND_MS);
      }
      assert.deepEqual(await recorded(store, keys), [false, false, false, false, false, false, true, true, true, true]);
      await store.recordNip9aOutcomes(['m0', 'm1', 'm2'], 4, 7 * DAY_MS);
      assert.deepEqual(
        await recorded(store, ['k8', 'k9', 'm0', 'm1', 'm2']),
        [false, true, true, true, true],
        'the 4 newest: k9 and the three',
      );
    });

    test('a delivery state carries the registration version now stored at its address', async () => {
      const store = ctx.store();
      const stored = reg(ALICE, 'x', id('1'), 100);
      await store.putNip9aRegistration(stored, LIMITS);
      await store.recordNip9aOutcomes(['done'], 2048, 7 * DAY_MS);
      const states = await store.readNip9aDeliveryStates(
        [
          { key: 'done', pubkey: ALICE, d: 'x' },
          { key: 'open', pubkey: ALICE, d: 'missing' },
          { key: 'open', pubkey: BOB, d: 'x' },
        ],
        7 * DAY_MS,
      );
      assert.deepEqual(states, [
        { outcomeRecorded: true, registrationEventId: stored.eventId },
        { outcomeRecorded: false, registrationEventId: null },
        { outcomeRecorded: false, registrationEventId: null },
      ]);
      await store.putNip9aRegistration(reg(ALICE, 'x', id('2'), 101), LIMITS);
      const [replaced] = await store.readNip9aDeliveryStates([{ key: 'done', pubkey: ALICE, d: 'x' }], 7 * DAY_MS);
      assert.equal(replaced?.registrationEventId, id('2'), 'the newer version once replaced');
      assert.deepEqual(await store.readNip9aDeliveryStates([], 7 * DAY_MS), []);
    });
  });
}
