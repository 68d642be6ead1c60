import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { makeUser, controlEvent, type TestUser } from '../../test/support/nostr-client.ts';
import { createEventVerifier, type NostrEvent } from '../nostr/event.ts';
import { signEvent } from '../nostr/keys.ts';
import { DM_RELAY_LIST, REGISTER_TOKEN, RELAY_LIST } from '../nostr/kinds.ts';
import { createLogger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import type { StorePort } from '../store/port.ts';
import { openSqliteStore } from '../store/sqlite/index.ts';
import { ManualClock } from '../util/clock.ts';
import { createNip44ControlDecryptor } from './nip44-decryptor.ts';
import type { RelayFilter } from './relay-query.ts';
import { REPLAY_HORIZON_SECS, routeInbound, type RouterDeps } from './router.ts';
import { NO_RELAY_LIST_FOUND } from '../store/port-user-relays.ts';
import { registrationRelays, relayListOf, storeUserRelayList, UserRelayListFetcher } from './user-relay-lists.ts';

const NOW = Math.floor(Date.UTC(2026, 11, 1) / 1000);

function relayList(user: TestUser, tags: string[][], createdAt = NOW, kind = RELAY_LIST): NostrEvent {
  return signEvent({ kind, created_at: createdAt, tags, content: '' }, user.secret);
}

describe('relay lists from events', () => {
  test('a 10002 gives its read and unmarked relays, never the write-only ones', () => {
    const alice = makeUser();
    const event = relayList(alice, [
      ['r', 'wss://both.example/'],
      ['r', 'wss://read.example', 'read'],
      ['r', 'wss://write.example', 'write'],
      ['r', 'https://not-a-relay.example'],
    ]);
    assert.deepEqual(relayListOf(event), {
      source: 'nip65',
      eventId: event.id,
      createdAt: NOW,
      relays: ['wss://both.example', 'wss://read.example'],
    });
  });

  test('a 10050 gives its relay tags as the DM list; other kinds give none', () => {
    const alice = makeUser();
    const event = relayList(
      alice,
      [
        ['relay', 'wss://dm.example'],
        ['r', 'wss://ignored.example'],
      ],
      NOW,
      DM_RELAY_LIST,
    );
    assert.deepEqual(relayListOf(event)?.relays, ['wss://dm.example']);
    assert.equal(relayListOf({ ...event, kind: 1 }), null);
  });

  test('a registration payload: absent relays are null, bad ones a reason, good ones normalised', () => {
    assert.equal(registrationRelays({ token: 't' }), null);
    assert.deepEqual(registrationRelays({ relays: 'wss://x' }), { invalid: 'relays must be a list of relay URLs' });
    assert.deepEqual(registrationRelays({ relays: ['wss://A.example/', 'ftp://no'] }), ['wss://a.example']);
  });
});

describe('storing relay lists', () => {
  let store: StorePort;
  let metrics: Metrics;
  let deps: RouterDeps;
  let service: TestUser;
  const registered: string[] = [];
  const clock = new ManualClock(NOW * 1000);
  const logger = createLogger({ level: 'silent' });

  beforeEach(async () => {
    store = await openSqliteStore({ path: ':memory:', clock });
    metrics = new Metrics();
    service = makeUser();
    registered.length = 0;
    const listDeps = { store, metrics, logger };
    deps = {
      store,
      decryptor: createNip44ControlDecryptor(service.secret),
      servicePubkey: service.pubkey,
      processedEventTtlSecs: 86_400,
      clock,
      logger,
      metrics,
      userRelays: { metrics, requestLists: (pubkey) => registered.push(pubkey) },
      handleUserRelayList: async (event) => {
        const list = relayListOf(event);
        if (list !== null) await storeUserRelayList(listDeps, event.pubkey, list);
      },
    };
  });
  afterEach(() => store.close());

  const live = (event: NostrEvent) => ({ event, context: 'live' as const, relay: 'ws://relay.test', receivedAtMs: NOW * 1000 });

  test('a 10002 of a user without a device is not stored; with a device it is, however old', async () => {
    const alice = makeUser();
    const event = relayList(alice, [['r', 'wss://b.example']], NOW - 2 * REPLAY_HORIZON_SECS);
    assert.deepEqual(await routeInbound(deps, live(event)), { route: 'user_relay_list' });
    assert.equal((await store.getUserRelayLists([alice.pubkey]))[0]?.nip65, null);
    await store.registerToken(alice.pubkey, { token: 'fcm-alice', transport: 'fcm' });
    await routeInbound(deps, live(event));
    assert.deepEqual((await store.getUserRelayLists([alice.pubkey]))[0]?.nip65?.relays, ['wss://b.example']);
    const counted = await metrics.render();
    assert.match(counted, /push_user_relay_lists_total\{source="nip65",outcome="no_device"\} 1/);
    assert.match(counted, /push_user_relay_lists_total\{source="nip65",outcome="stored"\} 1/);
  });

  test('without the handler (feature off) relay lists are ignored', async () => {
    const { handleUserRelayList: _, ...off } = deps;
    assert.deepEqual(await routeInbound(off, live(relayList(makeUser(), [['r', 'wss://b.example']]))), { route: 'ignored' });
  });

  test("a 3079's relays become the user's app list, and the registration asks for the user's lists", async () => {
    const alice = makeUser();
    const event = controlEvent(alice, REGISTER_TOKEN, { token: 'fcm-a', relays: ['wss://app.example/'] }, service.pubkey, {
      createdAt: NOW,
    });
    assert.deepEqual(await routeInbound(deps, live(event)), { route: 'control', outcome: 'registered' });
    assert.deepEqual((await store.getUserRelayLists([alice.pubkey]))[0]?.app, {
      source: 'app',
      eventId: event.id,
      createdAt: NOW,
      relays: ['wss://app.example'],
    });
    assert.deepEqual(registered, [alice.pubkey]);
  });

  test('a 3079 with bad relays still registers the device and stores no list', async () => {
    const alice = makeUser();
    const event = controlEvent(alice, REGISTER_TOKEN, { token: 'fcm-a', relays: 'wss://x' }, service.pubkey, { createdAt: NOW });
    assert.deepEqual(await routeInbound(deps, live(event)), { route: 'control', outcome: 'registered' });
    assert.equal((await store.getUserRelayLists([alice.pubkey]))[0]?.app, null);
  });

  test('the fetcher asks for every requested author in one query and stores the newest verified list of each kind', async () => {
    const alice = makeUser();
    const bob = makeUser();
    const mallory = makeUser();
    for (const user of [alice, bob]) await store.registerToken(user.pubkey, { token: `t-${user.pubkey}`, transport: 'fcm' });
    const older = relayList(alice, [['r', 'wss://old.example']], NOW - 10);
    const newer = relayList(alice, [['r', 'wss://new.example']], NOW);
    const dm = relayList(bob, [['relay', 'wss://dm.example']], NOW, DM_RELAY_LIST);
    const forged = { ...relayList(bob, [['r', 'wss://forged.example']], NOW + 5), sig: 'ab'.repeat(64) };
    const stranger = relayList(mallory, [['r', 'wss://stranger.example']]);
    const queries: Array<{ relays: readonly string[]; filter: RelayFilter }> = [];
    const fetcher = new UserRelayListFetcher({
      store,
      metrics,
      logger,
      relays: ['wss://configured.example'],
      verifier: await createEventVerifier(),
      queryTimeoutMs: 1000,
      query: async (relays, filter) => {
        queries.push({ relays, filter });
        return [newer, older, dm, forged, stranger, 'garbage'];
      },
    });
    fetcher.request(alice.pubkey);
    fetcher.request(bob.pubkey);
    await fetcher.flush();
    await fetcher.close();
    assert.equal(queries.length, 1);
    assert.deepEqual(queries[0]?.filter.authors?.sort(), [alice.pubkey, bob.pubkey].sort());
    const [aliceLists, bobLists, malloryLists] = await store.getUserRelayLists([alice.pubkey, bob.pubkey, mallory.pubkey]);
    assert.ok(aliceLists && bobLists && malloryLists);
    assert.deepEqual(aliceLists.nip65?.relays, ['wss://new.example']);
    assert.deepEqual(bobLists.dm?.relays, ['wss://dm.example']);
    assert.equal(bobLists.nip65, null, 'a list with a bad signature is not stored');
    assert.equal(malloryLists.nip65, null, 'an author nobody asked for is not stored');
  });

  test('a user no relay has lists for is marked looked up when a relay answered completely, not when none did', async () => {
    const [found, missing, unanswered] = [makeUser(), makeUser(), makeUser()];
    for (const user of [found, missing, unanswered])
      await store.registerToken(user.pubkey, { token: `t-${user.pubkey}`, transport: 'fcm' });
    let answer: 'eose' | 'timeout' = 'eose';
    const list = relayList(found, [['r', 'wss://found.example']], NOW);
    const fetcher = new UserRelayListFetcher({
      store,
      metrics,
      logger,
      relays: ['wss://configured.example', 'wss://profiles.example'],
      verifier: await createEventVerifier(),
      queryTimeoutMs: 1000,
      query: async (relays, _filter, _timeoutMs, onRelayDone) => {
        relays.forEach((relay, i) => onRelayDone?.(relay, i === 0 ? answer : 'timeout'));
        return [list];
      },
    });
    fetcher.requestAll([found.pubkey, missing.pubkey]);
    await fetcher.flush();
    answer = 'timeout';
    fetcher.request(unanswered.pubkey);
    await fetcher.flush();
    await fetcher.close();
    const [foundLists, missingLists, unansweredLists] = await store.getUserRelayLists([found.pubkey, missing.pubkey, unanswered.pubkey]);
    assert.deepEqual(foundLists?.nip65?.relays, ['wss://found.example']);
    assert.deepEqual(missingLists?.nip65, NO_RELAY_LIST_FOUND);
    assert.equal(unansweredLists?.nip65, null, 'no relay answered: asked again by the next backfill walk');
  });
});
