/**
 * User relays (issue 36) against real relays: the listener watches the relays users read from,
 * with chunked `#p` filters, one connection per relay, bounded and ranked, and hands their events
 * to the same sink (and dedupe) as the configured relays'.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { generateSecretKey, publicKeyOf } from '../../src/nostr/keys.ts';
import { GIFT_WRAP, REACTION } from '../../src/nostr/kinds.ts';
import type { UserRelaySource } from '../../src/store/port-user-relays.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { ManualClock } from '../../src/util/clock.ts';
import type { Listener } from '../../src/listener/index.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { waitUntil } from './fakes.ts';
import { note, nowSecs, publish, startListener, type TestListener } from './harness.ts';
import type { UserRelayListenerOptions } from '../../src/listener/listener.ts';

const REFRESH_MS = 50;

function user(): { secret: string; pubkey: string } {
  const secret = generateSecretKey();
  return { secret, pubkey: publicKeyOf(secret) };
}

describe('user relays against real relays', () => {
  let configured: TestRelay;
  let relayB: TestRelay;
  let relayC: TestRelay;
  let store: StorePort;
  let running: TestListener | null = null;
  let listCreatedAt = 1;

  before(async () => {
    [configured, relayB, relayC] = await Promise.all([startTestRelay(), startTestRelay(), startTestRelay()]);
  });
  after(async () => {
    await Promise.all([configured.stop(), relayB.stop(), relayC.stop()]);
  });
  beforeEach(async () => {
    store = await openSqliteStore({ path: ':memory:' });
  });
  afterEach(async () => {
    await running?.listener.stop();
    running = null;
    await store.close();
  });

  async function withDevice(pubkey: string, lists: Partial<Record<UserRelaySource, string[]>>): Promise<void> {
    await store.registerToken(pubkey, { token: `token-${pubkey}`, transport: 'fcm' });
    for (const [source, relays] of Object.entries(lists) as Array<[UserRelaySource, string[]]>)
      await store.putUserRelayList(pubkey, { source, eventId: 'ab'.repeat(32), createdAt: listCreatedAt++, relays });
  }

  async function listen(overrides: Partial<UserRelayListenerOptions> = {}): Promise<TestListener> {
    running = await startListener([configured.url], {
      store: undefined,
      userRelays: {
        store,
        kinds: [REACTION],
        giftWraps: true,
        maxConnections: 10,
        maxPubkeysPerFilter: 100,
        refreshMs: REFRESH_MS,
        policy: { allowLoopback: true },
        ...overrides,
      },
    });
    return running;
  }

  const summary = (listener: Listener) => {
    const found = listener.userRelays();
    assert.ok(found, 'user relays are on');
    return found;
  };

  test("a like only on the user's read relay and a gift wrap only on their DM relay are heard; untagged events are not", async () => {
    const alice = user();
    await withDevice(alice.pubkey, { nip65: [relayB.url], dm: [relayC.url] });
    const { listener, sink } = await listen();
    await waitUntil(() => summary(listener).connected === 2, 5_000, 'both user relays connected');
    assert.equal(summary(listener).watched, 2);

    const liker = user();
    const untagged = note(liker.secret, '+', nowSecs(), REACTION, [['p', liker.pubkey]]);
    const like = note(liker.secret, '+', nowSecs(), REACTION, [['p', alice.pubkey]]);
    const wrap = note(generateSecretKey(), 'sealed', nowSecs() - 3_600, GIFT_WRAP, [['p', alice.pubkey]]);
    await publish(relayB.url, untagged, like);
    await publish(relayC.url, wrap);
    await sink.waitForId(like.id);
    await sink.waitForId(wrap.id);
    assert.equal(sink.accepted.find((a) => a.event.id === like.id)?.relay, relayB.url);
    // The untagged like was published before the tagged one on the same relay, which delivers in order.
    // @nostr-relay broadcasts live events without checking tag filters: the listener's own check drops it.
    assert.equal(
      sink.accepted.some((a) => a.event.id === untagged.id),
      false,
    );
  });

  test('an event heard on a configured relay and a user relay reaches the sink once', async () => {
    const alice = user();
    await withDevice(alice.pubkey, { nip65: [relayB.url] });
    const { listener, sink } = await listen();
    await waitUntil(() => summary(listener).connected === 1, 5_000, 'user relay connected');
    const like = note(user().secret, '+', nowSecs(), REACTION, [['p', alice.pubkey]]);
    await publish(relayB.url, like);
    await publish(configured.url, like);
    const marker = note(user().secret, 'marker', nowSecs(), 1);
    await publish(configured.url, marker);
    await sink.waitForId(marker.id);
    await sink.waitForId(like.id);
    assert.equal(sink.accepted.filter((a) => a.event.id === like.id).length, 1);
  });

  test('a changed list moves the subscription: a relay nobody reads any more is closed, the new one opened', async () => {
    const alice = user();
    await withDevice(alice.pubkey, { nip65: [relayB.url] });
    const { listener, sink } = await listen({ giftWraps: false });
    await waitUntil(() => relayB.connectionCount() === 1, 5_000, 'B watched');
    await store.putUserRelayList(alice.pubkey, {
      source: 'nip65',
      eventId: 'cd'.repeat(32),
      createdAt: listCreatedAt++,
      relays: [relayC.url],
    });
    await waitUntil(() => relayB.connectionCount() === 0 && summary(listener).connected === 1, 5_000, 'moved from B to C');
    const onB = note(user().secret, '+', nowSecs(), REACTION, [['p', alice.pubkey]]);
    const onC = note(user().secret, '+', nowSecs(), REACTION, [['p', alice.pubkey]]);
    await publish(relayB.url, onB);
    await publish(relayC.url, onC);
    await sink.waitForId(onC.id);
    assert.equal(
      sink.accepted.some((a) => a.event.id === onB.id),
      false,
    );
    assert.equal(summary(listener).fullReads, 1, 'the change was followed from the change log, without a second full read');
  });

  test('a device gone with its change noted leaves the relay at the next refresh, without a full read', async () => {
    const alice = user();
    await withDevice(alice.pubkey, { nip65: [relayB.url] });
    const { listener } = await listen({ giftWraps: false });
    await waitUntil(() => relayB.connectionCount() === 1, 5_000, 'B watched');
    assert.equal(await store.removeToken(alice.pubkey, `token-${alice.pubkey}`), true);
    await store.noteUserRelayChange([alice.pubkey]);
    await waitUntil(() => relayB.connectionCount() === 0, 5_000, 'B closed');
    assert.equal(summary(listener).fullReads, 1);
  });

  test('a device gone without a noted change (a janitor sweep) leaves the relay at the periodic full read', async () => {
    const clock = new ManualClock(Date.now());
    await store.close();
    store = await openSqliteStore({ path: ':memory:', clock });
    const alice = user();
    await withDevice(alice.pubkey, { nip65: [relayB.url] });
    // Her list's change is older than any change read's overlap when the listener starts.
    clock.advance(60_000);
    const { listener } = await listen({ giftWraps: false, fullReadIntervalMs: 200 });
    await waitUntil(() => relayB.connectionCount() === 1, 5_000, 'B watched');
    const readsBefore = summary(listener).fullReads;
    assert.equal(await store.removeToken(alice.pubkey, `token-${alice.pubkey}`), true);
    await waitUntil(() => relayB.connectionCount() === 0, 5_000, 'B closed');
    assert.ok(summary(listener).fullReads > readsBefore, 'found by a full read');
  });

  test('many users on one relay share one connection and chunked filters; a new user re-sends only the chunk that changed', async () => {
    const users = Array.from({ length: 250 }, (_, i) => (i + 1).toString(16).padStart(64, '0'));
    for (const pubkey of users) await withDevice(pubkey, { nip65: [relayB.url] });
    const before = relayB.requests().length;
    const { listener } = await listen({ giftWraps: false });
    await waitUntil(() => relayB.requests().length - before === 3, 5_000, 'three chunked REQs');
    const sent = relayB.requests().slice(before);
    assert.equal(relayB.connectionCount(), 1);
    assert.deepEqual(
      sent.map((request) => (request[1] as { '#p': string[] })['#p'].length),
      [100, 100, 50],
    );
    assert.deepEqual(sent.map((request) => request[0]).sort(), ['push-user-0', 'push-user-1', 'push-user-2']);
    assert.equal(summary(listener).requestsSent, 3);

    // Sorts last: only the last chunk changes.
    await withDevice('f'.repeat(64), { nip65: [relayB.url] });
    await waitUntil(() => relayB.requests().length - before === 4, 5_000, 'one more REQ');
    const resent = relayB.requests().at(-1) ?? [];
    assert.equal(resent[0], 'push-user-2');
    assert.equal((resent[1] as { '#p': string[] })['#p'].length, 51);
  });

  test('max_connections keeps the relays covering the most users and counts the rest as dropped', async () => {
    const [alice, bob] = [user(), user()];
    await withDevice(alice.pubkey, { nip65: [relayB.url, relayC.url] });
    await withDevice(bob.pubkey, { nip65: [relayB.url] });
    const { listener, metrics } = await listen({ maxConnections: 1, giftWraps: false });
    await waitUntil(() => summary(listener).connected === 1, 5_000, 'one user relay connected');
    assert.equal(relayB.connectionCount(), 1);
    assert.equal(relayC.connectionCount(), 0);
    assert.equal(summary(listener).dropped, 1);
    assert.equal(summary(listener).uncoveredUsers, 0, 'both users read from B');
    assert.match(await metrics.render(), /push_user_relays_dropped 1/);
  });

  test('without the loopback acknowledgement a ws:// loopback relay is refused and its users counted uncovered', async () => {
    const alice = user();
    await withDevice(alice.pubkey, { nip65: [relayB.url] });
    const { listener, metrics } = await listen({ policy: { allowLoopback: false } });
    assert.equal(summary(listener).watched, 0);
    assert.equal(summary(listener).dropped, 1);
    assert.equal(summary(listener).uncoveredUsers, 1);
    assert.equal(relayB.connectionCount(), 0);
    assert.match(await metrics.render(), /push_user_relay_users_uncovered 1/);
  });

  test('a relay that is also configured is not opened twice', async () => {
    const alice = user();
    await withDevice(alice.pubkey, { nip65: [configured.url] });
    const { listener } = await listen();
    assert.equal(summary(listener).watched, 0);
    assert.equal(summary(listener).uncoveredUsers, 0);
    assert.equal(configured.connectionCount(), 1);
  });
});
