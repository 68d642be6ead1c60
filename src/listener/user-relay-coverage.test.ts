import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { noUserRelayLists, rankRelayCoverage, type UserRelayLists } from '../store/port-user-relays.ts';
import { coverageEntryOf, UserRelayCoverageIndex } from './user-relay-coverage.ts';

const RELAYS = ['wss://a.example', 'wss://b.example', 'wss://c.example', 'wss://d.example'];
const withDevice = { devices: [{ token: 't', transport: 'fcm' as const }] };
const pubkey = (i: number): string => i.toString(16).padStart(64, '0');

/** Lists of user `i` in round `round`: a spread of read, app and DM relays, some users with none. */
function listsOf(i: number, round: number): UserRelayLists {
  const lists = noUserRelayLists();
  const pick = (k: number) => RELAYS[(i + round + k) % RELAYS.length] ?? '';
  if ((i + round) % 5 !== 0) lists.nip65 = { source: 'nip65', eventId: '', createdAt: round, relays: [pick(0), pick(1)] };
  if (i % 3 === 0) lists.app = { source: 'app', eventId: '', createdAt: round, relays: [pick(2)] };
  if ((i + round) % 4 === 0) lists.dm = { source: 'dm', eventId: '', createdAt: round, relays: [pick(3)] };
  return lists;
}

describe('user relay coverage index', () => {
  test('moving users one by one answers as the store would rank the same lists', () => {
    const index = new UserRelayCoverageIndex();
    const users = Array.from({ length: 60 }, (_, i) => i);
    for (const i of users) index.set(pubkey(i), coverageEntryOf(listsOf(i, 0), withDevice));
    assert.deepEqual(index.ranked(), rankRelayCoverage(users.map((i) => ({ pubkey: pubkey(i), lists: listsOf(i, 0) }))));
    // A third of the users change their lists, a few lose their devices.
    const lost = new Set([7, 21, 40]);
    for (const i of users.filter((i) => i % 3 === 1 || lost.has(i)))
      index.set(pubkey(i), coverageEntryOf(listsOf(i, 1), lost.has(i) ? { devices: [] } : withDevice));
    const expected = users
      .filter((i) => !lost.has(i))
      .map((i) => ({ pubkey: pubkey(i), lists: i % 3 === 1 ? listsOf(i, 1) : listsOf(i, 0) }));
    assert.deepEqual(index.ranked(), rankRelayCoverage(expected));
  });

  test('a full read replaces everything; a user set to the same relays changes nothing, and untouched relays keep their answer', () => {
    const index = new UserRelayCoverageIndex();
    index.replaceAll(rankRelayCoverage([0, 1, 2].map((i) => ({ pubkey: pubkey(i), lists: listsOf(i, 0) }))));
    const first = index.ranked();
    const version = index.version;
    assert.equal(index.set(pubkey(1), coverageEntryOf(listsOf(1, 0), withDevice)), false);
    assert.equal(index.version, version);
    const onlyA = coverageEntryOf(
      { ...noUserRelayLists(), app: { source: 'app', eventId: '', createdAt: 1, relays: ['wss://new.example'] } },
      withDevice,
    );
    assert.equal(index.set(pubkey(9), onlyA), true);
    const second = index.ranked();
    for (const relay of first)
      assert.equal(
        second.find((r) => r.url === relay.url),
        relay,
        `${relay.url} kept its answer`,
      );
    assert.deepEqual(second.find((r) => r.url === 'wss://new.example')?.readers, [pubkey(9)]);
    assert.equal(index.set(pubkey(9), null), true);
    assert.equal(
      index.ranked().some((r) => r.url === 'wss://new.example'),
      false,
      'a relay nobody reads is gone',
    );
  });
});
