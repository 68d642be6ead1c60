import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../store/sqlite/index.ts';
import type { StorePort } from '../store/port.ts';
import { ManualClock } from '../util/clock.ts';
import { createLogger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import {
  COMMENT,
  DEREGISTER_TOKEN,
  GENERIC_REPOST,
  LONG_FORM,
  PREFERENCES,
  REGISTER_TOKEN,
  PEOPLE_LIST,
  REACTION,
  VIDEO,
  NOTIFY_LIST_D_TAG,
} from '../nostr/kinds.ts';
import { signEvent } from '../nostr/keys.ts';
import { controlEvent, makeUser, type TestUser } from '../../test/support/nostr-client.ts';
import { describeOnEachStore } from '../../test/support/each-store.ts';
import { createNip44ControlDecryptor } from './nip44-decryptor.ts';
import {
  REPLAY_HORIZON_SECS,
  inboundOrderingKey,
  isBeyondReplayHorizon,
  routeInbound,
  type InboundEnvelope,
  type RouterDeps,
} from './router.ts';

const DAY = 86_400;

describe('engine router: control events', () => {
  let store: StorePort;
  let clock: ManualClock;
  let service: TestUser;
  let deps: RouterDeps;
  let metrics: Metrics;
  const nowSecs = () => Math.floor(clock.nowMs() / 1000);
  const live = (event: InboundEnvelope['event']): InboundEnvelope => ({
    event,
    context: 'live',
    relay: 'ws://relay.test',
    receivedAtMs: clock.nowMs(),
  });

  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 11, 1));
    store = await openSqliteStore({ path: ':memory:', clock });
    service = makeUser();
    metrics = new Metrics();
    deps = {
      store,
      decryptor: createNip44ControlDecryptor(service.secret),
      servicePubkey: service.pubkey,
      processedEventTtlSecs: 7 * DAY,
      clock,
      logger: createLogger({ level: 'silent' }),
      metrics,
    };
  });
  afterEach(() => store.close());

  const register = (user: TestUser, token: string, extra: Record<string, unknown> = {}, createdAt = nowSecs()) =>
    controlEvent(user, REGISTER_TOKEN, { token, ...extra }, service.pubkey, { createdAt });

  test('an encrypted 3079 addressed to the service stores the device', async () => {
    const alice = makeUser();
    const result = await routeInbound(deps, live(register(alice, 'fcm-A', { timezoneOffsetMinutes: 600 })));
    assert.deepEqual(result, { route: 'control', outcome: 'registered' });
    assert.deepEqual(await store.listDevices(alice.pubkey), [{ token: 'fcm-A', transport: 'fcm', timezoneOffsetMinutes: 600 }]);
  });

  test('historical control events are applied too (they never push, but state must be rebuilt)', async () => {
    const alice = makeUser();
    await routeInbound(deps, { ...live(register(alice, 'fcm-H')), context: 'historical' });
    assert.equal(await store.tokenOwner('fcm-H'), alice.pubkey);
  });

  test('a 3079 addressed to another service is ignored', async () => {
    const alice = makeUser();
    const event = controlEvent(alice, REGISTER_TOKEN, { token: 'fcm-X' }, service.pubkey, { pTag: makeUser().pubkey });
    assert.deepEqual(await routeInbound(deps, live(event)), { route: 'not_addressed' });
    assert.equal(await store.tokenOwner('fcm-X'), null);
  });

  test('tenancy: a 3079 addressed to another configured app is that app’s (not counted); to no app, counted by the reporting engine only', async () => {
    const alice = makeUser();
    const otherApp = makeUser();
    const unaddressed = /push_control_events_total\{kind="3079",outcome="not_addressed"\} (\d+)/;
    const counted = async () => Number(unaddressed.exec(await metrics.render())?.[1] ?? 0);
    const toOther = controlEvent(alice, REGISTER_TOKEN, { token: 'fcm-O' }, otherApp.pubkey);
    const withPeers = { ...deps, otherAppPubkeys: new Set([otherApp.pubkey]) };
    assert.deepEqual(await routeInbound(withPeers, live(toOther)), { route: 'other_app' });
    assert.equal(await counted(), 0);
    const toNobody = controlEvent(alice, REGISTER_TOKEN, { token: 'fcm-N' }, makeUser().pubkey);
    assert.deepEqual(await routeInbound({ ...withPeers, reportUnaddressed: false }, live(toNobody)), { route: 'not_addressed' });
    assert.equal(await counted(), 0, 'a non-reporting engine (another app’s) does not count it');
    assert.deepEqual(await routeInbound(withPeers, live(toNobody)), { route: 'not_addressed' });
    assert.equal(await counted(), 1);
    assert.equal(await store.tokenOwner('fcm-O'), null);
    assert.equal(await store.tokenOwner('fcm-N'), null);
  });

  test('a plaintext 3079 is rejected', async () => {
    const alice = makeUser();
    const event = controlEvent(alice, REGISTER_TOKEN, { token: 'fcm-plain' }, service.pubkey, { plaintext: true });
    assert.deepEqual(await routeInbound(deps, live(event)), { route: 'control', outcome: 'plaintext_rejected' });
    assert.equal(await store.tokenOwner('fcm-plain'), null);
  });

  test('a ciphertext that fails to decrypt is counted and dropped', async () => {
    const alice = makeUser();
    const stranger = makeUser();
    // Encrypted to a different key: the MAC check fails under the service key.
    const event = controlEvent(alice, REGISTER_TOKEN, { token: 'fcm-wrongkey' }, stranger.pubkey, { pTag: service.pubkey });
    assert.deepEqual(await routeInbound(deps, live(event)), { route: 'control', outcome: 'decrypt_failed' });
    assert.equal(await store.tokenOwner('fcm-wrongkey'), null);
    assert.match(await metrics.render(), /push_control_events_total\{kind="3079",outcome="decrypt_failed"\} 1/);
  });

  test('the seven-day replay horizon: 8 days old ignored, 6 days applied', async () => {
    const alice = makeUser();
    const old = register(alice, 'fcm-old', {}, nowSecs() - 8 * DAY);
    assert.deepEqual(await routeInbound(deps, live(old)), { route: 'too_old' });
    assert.equal(await store.tokenOwner('fcm-old'), null);
    const recent = register(alice, 'fcm-recent', {}, nowSecs() - 6 * DAY);
    assert.deepEqual(await routeInbound(deps, live(recent)), { route: 'control', outcome: 'registered' });
  });

  test('horizon vectors (reference §13.2 #17, #18)', () => {
    const now = 2_000_000_000;
    const at = (createdAt: number, kind = REGISTER_TOKEN, tags: string[][] = []) => ({
      id: '0'.repeat(64),
      pubkey: '0'.repeat(64),
      sig: '0'.repeat(128),
      kind,
      created_at: createdAt,
      tags,
      content: '',
    });
    assert.equal(isBeyondReplayHorizon(at(now - 8 * DAY), now), true);
    assert.equal(isBeyondReplayHorizon(at(now - DAY), now), false);
    assert.equal(isBeyondReplayHorizon(at(now - REPLAY_HORIZON_SECS + 60), now), false);
    assert.equal(isBeyondReplayHorizon(at(now - REPLAY_HORIZON_SECS - 60), now), true);
    assert.equal(isBeyondReplayHorizon(at(now + 3600), now), false);
    assert.equal(isBeyondReplayHorizon(at(now - 90 * DAY, PEOPLE_LIST, [['d', 'notify']]), now), false);
    assert.equal(isBeyondReplayHorizon(at(now - 90 * DAY, PEOPLE_LIST, [['d', 'mute']]), now), true);
  });

  test('the same event twice is handled once (per-event claim)', async () => {
    const alice = makeUser();
    const event = register(alice, 'fcm-dup');
    await routeInbound(deps, live(event));
    await store.removeToken(alice.pubkey, 'fcm-dup');
    // Another arrival of it: another relay, a later time (a new inbound item).
    const again: InboundEnvelope = { ...live(event), relay: 'ws://other-relay.test', receivedAtMs: clock.nowMs() + 1 };
    assert.deepEqual(await routeInbound(deps, again), { route: 'duplicate' });
    assert.equal(await store.tokenOwner('fcm-dup'), null, 'a replayed registration must not resurrect a removed token');
  });

  test('the retry of one inbound item whose claim was applied but reported failed handles the event (issue 42)', async () => {
    const alice = makeUser();
    const envelope = live(register(alice, 'fcm-lost-answer'));
    // The claim is written, then its answer is lost (a replica acknowledgement that timed out).
    let lostAnswers = 1;
    const faulty: RouterDeps = {
      ...deps,
      store: new Proxy(store, {
        get(target, property, receiver) {
          if (property !== 'claimEvent') return Reflect.get(target, property, receiver) as unknown;
          return async (...args: Parameters<StorePort['claimEvent']>) => {
            const taken = await target.claimEvent(...args);
            if (lostAnswers-- > 0) throw new Error('answer lost');
            return taken;
          };
        },
      }),
    };
    await assert.rejects(routeInbound(faulty, envelope), /answer lost/);
    assert.deepEqual(await routeInbound(faulty, envelope), { route: 'control', outcome: 'registered' }, 'the retry finds its own claim');
    assert.equal(await store.tokenOwner('fcm-lost-answer'), alice.pubkey);
  });

  test('3080 from the owner removes the token; from someone else it does not', async () => {
    const alice = makeUser();
    const mallory = makeUser();
    await routeInbound(deps, live(register(alice, 'fcm-D')));
    const forged = controlEvent(mallory, DEREGISTER_TOKEN, { token: 'fcm-D' }, service.pubkey);
    assert.deepEqual(await routeInbound(deps, live(forged)), { route: 'control', outcome: 'deregistration_refused' });
    assert.equal(await store.tokenOwner('fcm-D'), alice.pubkey);
    const own = controlEvent(alice, DEREGISTER_TOKEN, { token: 'fcm-D' }, service.pubkey);
    assert.deepEqual(await routeInbound(deps, live(own)), { route: 'control', outcome: 'deregistered' });
    assert.equal(await store.tokenOwner('fcm-D'), null);
  });

  test('re-registration by another pubkey transfers the token', async () => {
    const alice = makeUser();
    const bob = makeUser();
    await routeInbound(deps, live(register(alice, 'fcm-T')));
    assert.deepEqual(await routeInbound(deps, live(register(bob, 'fcm-T'))), { route: 'control', outcome: 'transferred' });
    assert.equal(await store.tokenOwner('fcm-T'), bob.pubkey);
    assert.deepEqual(await store.listDevices(alice.pubkey), []);
  });

  test('3083 stores preferences, and a deregistration keeps them', async () => {
    const alice = makeUser();
    await routeInbound(deps, live(register(alice, 'fcm-P')));
    const prefs = controlEvent(alice, PREFERENCES, { kinds: [7, 16], campaignsEnabled: true }, service.pubkey);
    assert.deepEqual(await routeInbound(deps, live(prefs)), { route: 'control', outcome: 'preferences_set' });
    await routeInbound(deps, live(controlEvent(alice, DEREGISTER_TOKEN, { token: 'fcm-P' }, service.pubkey)));
    assert.deepEqual(await store.getPreferences(alice.pubkey), { kinds: [7, 16], campaignsEnabled: true });
  });

  test('an undecodable payload inside valid encryption is an invalid payload', async () => {
    const alice = makeUser();
    const event = controlEvent(alice, REGISTER_TOKEN, { nottoken: 1 }, service.pubkey);
    assert.deepEqual(await routeInbound(deps, live(event)), { route: 'control', outcome: 'invalid_payload' });
  });

  test('historical content never reaches content routing', async () => {
    let called = 0;
    const like = signEvent({ kind: REACTION, created_at: nowSecs(), tags: [['p', makeUser().pubkey]], content: '+' }, makeUser().secret);
    const withContent = {
      ...deps,
      handleContent: async () => {
        called++;
      },
    };
    assert.deepEqual(await routeInbound(withContent, { ...live(like), context: 'historical' }), { route: 'historical_content' });
    assert.deepEqual(await routeInbound(withContent, live(like)), { route: 'content' });
    assert.equal(called, 1);
  });

  test('a store failure while handling gives the claim back, so the retry applies the event', async () => {
    const alice = makeUser();
    const event = register(alice, 'fcm-retry');
    const failing = Object.create(store, {
      registerToken: { value: async () => Promise.reject(new Error('store unavailable')) },
    }) as StorePort;
    await assert.rejects(routeInbound({ ...deps, store: failing }, live(event)), /store unavailable/);
    assert.deepEqual(await routeInbound(deps, live(event)), { route: 'control', outcome: 'registered' });
  });
});

describeOnEachStore('engine router: an envelope restricted to one NIP-9a callback owner', (open) => {
  let store: StorePort;
  let clock: ManualClock;
  let service: TestUser;
  let alice: TestUser;
  let deps: RouterDeps;
  let notifyLists: number;
  let content: number;
  const nowSecs = () => Math.floor(clock.nowMs() / 1000);
  /** What arrived on Alice's own callback URL: it may notify Alice and no one else. */
  const onAlicesCallback = (event: InboundEnvelope['event']): InboundEnvelope => ({
    event,
    context: 'live',
    relay: 'wss://relay.test',
    receivedAtMs: clock.nowMs(),
    onlyRecipient: alice.pubkey,
  });

  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 11, 1));
    store = await open(clock);
    service = makeUser();
    alice = makeUser();
    notifyLists = 0;
    content = 0;
    deps = {
      store,
      decryptor: createNip44ControlDecryptor(service.secret),
      servicePubkey: service.pubkey,
      processedEventTtlSecs: 7 * DAY,
      clock,
      logger: createLogger({ level: 'silent' }),
      metrics: new Metrics(),
      handleNotifyList: async () => {
        notifyLists++;
      },
      handleContent: async () => {
        content++;
      },
    };
    // Alice's device, registered the ordinary way (from a relay).
    const registration = controlEvent(alice, REGISTER_TOKEN, { token: 'fcm-alice' }, service.pubkey);
    assert.deepEqual(await routeInbound(deps, { ...onAlicesCallback(registration), onlyRecipient: undefined }), {
      route: 'control',
      outcome: 'registered',
    });
  });
  afterEach(() => store.close());

  test('control events are never applied: no registration, no deregistration, no preferences', async () => {
    const events = [
      controlEvent(alice, REGISTER_TOKEN, { token: 'fcm-callback' }, service.pubkey),
      controlEvent(alice, DEREGISTER_TOKEN, { token: 'fcm-alice' }, service.pubkey),
      controlEvent(alice, PREFERENCES, { kinds: [7], campaignsEnabled: true }, service.pubkey),
    ];
    for (const event of events)
      assert.deepEqual(await routeInbound(deps, onAlicesCallback(event)), { route: 'ignored' }, `kind ${event.kind}`);
    assert.equal(await store.tokenOwner('fcm-callback'), null, 'not registered');
    assert.equal(await store.tokenOwner('fcm-alice'), alice.pubkey, 'not deregistered');
    assert.equal(await store.getPreferences(alice.pubkey), null, 'no preferences stored');
    // The same registration from a relay is applied: the envelope's restriction alone stopped it.
    assert.deepEqual(await routeInbound(deps, { ...onAlicesCallback(events[0] as InboundEnvelope['event']), onlyRecipient: undefined }), {
      route: 'control',
      outcome: 'registered',
    });
  });

  test('a notify list is never applied; content events still reach content routing', async () => {
    const notifyList = signEvent(
      {
        kind: PEOPLE_LIST,
        created_at: nowSecs(),
        tags: [
          ['d', NOTIFY_LIST_D_TAG],
          ['p', makeUser().pubkey],
        ],
        content: '',
      },
      alice.secret,
    );
    assert.deepEqual(await routeInbound(deps, onAlicesCallback(notifyList)), { route: 'ignored' });
    assert.equal(notifyLists, 0, 'the notify-list handler was not called');
    const like = signEvent({ kind: REACTION, created_at: nowSecs(), tags: [['p', alice.pubkey]], content: '+' }, makeUser().secret);
    assert.deepEqual(await routeInbound(deps, onAlicesCallback(like)), { route: 'content' });
    assert.equal(content, 1);
  });
});

test("inbound ordering: likes, reposts and comments run side by side; every other kind stays in its author's order", () => {
  const author = makeUser();
  const event = (kind: number, n: number) => signEvent({ kind, created_at: 1_700_000_000 + n, tags: [], content: `${n}` }, author.secret);
  for (const kind of [REACTION, GENERIC_REPOST, COMMENT]) {
    const [a, b] = [event(kind, 1), event(kind, 2)];
    assert.equal(inboundOrderingKey(a), a.id);
    assert.notEqual(inboundOrderingKey(a), inboundOrderingKey(b), `kind ${kind}: two of one author are independent`);
  }
  for (const kind of [REGISTER_TOKEN, DEREGISTER_TOKEN, PREFERENCES, PEOPLE_LIST, VIDEO, LONG_FORM]) {
    assert.equal(inboundOrderingKey(event(kind, 1)), author.pubkey, `kind ${kind}`);
    assert.equal(inboundOrderingKey(event(kind, 2)), author.pubkey);
  }
});

test('inbound ordering: the optional kinds (issue 21) run side by side too', () => {
  const provider = makeUser();
  for (const kind of [1, 1059, 9735]) {
    const [a, b] = [0, 1].map((n) => signEvent({ kind, created_at: 1_700_000_000 + n, tags: [], content: `${n}` }, provider.secret));
    assert.ok(a && b);
    assert.equal(inboundOrderingKey(a), a.id, `kind ${kind}`);
    assert.notEqual(inboundOrderingKey(a), inboundOrderingKey(b));
  }
});
