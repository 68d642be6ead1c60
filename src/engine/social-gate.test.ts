/**
 * The mute and "only people I follow" gate where content routing applies it (`content.ts`), on
 * each store adapter, with the recipient's public lists on a real relay (kind 10000 mutes, kind 3
 * contacts) and their private 3083 filters in the store. The decision itself, as a pure function,
 * is in `social-lists.test.ts`; the flush-time check of summaries in `coalesce/flush.test.ts`.
 */
import { after, afterEach, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { createEventVerifier, type EventVerifier, type NostrEvent } from '../nostr/event.ts';
import { signEvent } from '../nostr/keys.ts';
import { CONTACTS, MUTE_LIST, REACTION } from '../nostr/kinds.ts';
import { createLogger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import type { StorePort } from '../store/port.ts';
import { ManualClock } from '../util/clock.ts';
import { describeOnEachStore } from '../../test/support/each-store.ts';
import { makeUser, type TestUser } from '../../test/support/nostr-client.ts';
import { recordingOutboundQueue } from '../../test/support/outbound-queue.ts';
import { publish } from '../../test/support/publisher.ts';
import { startTestRelay, type TestRelay } from '../../test/support/relay.ts';
import { handleContentEvent, type ContentDeps } from './content.ts';
import { createRelayQuery } from './relay-query.ts';
import type { InboundEnvelope } from './router.ts';
import { SocialListCache, socialListQueryCap } from './social-lists.ts';
import type { OutboundNotification } from '../notification/types.ts';
import { defaultConfig } from '../config/defaults.ts';

let relay: TestRelay;
let verifier: EventVerifier;
before(async () => {
  relay = await startTestRelay();
  verifier = await createEventVerifier();
});
after(async () => {
  await relay.stop();
});

describeOnEachStore('content routing through the mute and follow gate', (open) => {
  let store: StorePort;
  let clock: ManualClock;
  let queued: OutboundNotification[];
  let deps: ContentDeps;
  let alice: TestUser;
  let friend: TestUser;
  let publiclyMuted: TestUser;
  let privatelyMuted: TestUser;
  let stranger: TestUser;
  const now = () => Math.floor(clock.nowMs() / 1000);
  const likeFrom = (from: TestUser): InboundEnvelope => ({
    event: signEvent(
      {
        kind: REACTION,
        created_at: now(),
        tags: [
          ['e', 'ee'.repeat(32)],
          ['p', alice.pubkey],
        ],
        content: '+',
      },
      from.secret,
    ),
    context: 'live',
    relay: relay.url,
    receivedAtMs: clock.nowMs(),
  });
  const outcomeFor = async (from: TestUser) => [...(await handleContentEvent(deps, likeFrom(from))).values()];

  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 11, 2));
    store = await open(clock);
    queued = [];
    // Fresh users per test: the relay is shared, and each test's lists are its own.
    [alice, friend, publiclyMuted, privatelyMuted, stranger] = [makeUser(), makeUser(), makeUser(), makeUser(), makeUser()];
    const list = (kind: number, ...listed: TestUser[]): NostrEvent =>
      signEvent({ kind, created_at: now(), tags: listed.map((u) => ['p', u.pubkey]), content: '' }, alice.secret);
    await publish(relay.url, list(MUTE_LIST, publiclyMuted), list(CONTACTS, friend, publiclyMuted, privatelyMuted));
    await store.registerToken(alice.pubkey, { token: 'fcm-alice', transport: 'fcm' });
    const logger = createLogger({ level: 'silent' });
    deps = {
      store,
      profiles: { displayName: async () => null },
      allowedPubkeys: new Set(),
      defaultPreferenceKinds: [7],
      processedEventTtlSecs: 604_800,
      maxEventAgeSecs: 3600,
      clock,
      logger,
      metrics: new Metrics(),
      outbound: recordingOutboundQueue(store, queued),
      social: {
        lists: new SocialListCache({
          relays: [relay.url],
          queryRelays: createRelayQuery({ maxEventsPerRelay: socialListQueryCap() }),
          verifier,
          queryTimeoutMs: 5_000,
          ttlMs: 60_000,
          maxEntries: 100,
          maxMuteItems: defaultConfig().nostr.mute_list_max_items,
          maxCachedMuteItems: defaultConfig().nostr.list_cache_mute_items,
          logger,
          clock,
        }),
      },
    };
  });
  afterEach(() => store.close());

  test('a sender on the public mute list (kind 10000) or in the private 3083 mutes is muted; others are pushed', async () => {
    await store.setSocialFilters(alice.pubkey, { mutedPubkeys: [privatelyMuted.pubkey], onlyFollowing: null });
    assert.deepEqual(await outcomeFor(publiclyMuted), ['muted']);
    assert.deepEqual(await outcomeFor(privatelyMuted), ['muted']);
    assert.deepEqual(await outcomeFor(friend), ['queued']);
    assert.deepEqual(await outcomeFor(stranger), ['queued']);
    assert.equal(queued.length, 2, 'only the two unmuted likes are queued');
  });

  test('onlyFollowing for likes: a sender missing from the contact list (kind 3) is not followed; a mute still wins over a follow', async () => {
    await store.setSocialFilters(alice.pubkey, { mutedPubkeys: [], onlyFollowing: ['like'] });
    assert.deepEqual(await outcomeFor(stranger), ['not_followed']);
    assert.deepEqual(await outcomeFor(friend), ['queued']);
    assert.deepEqual(await outcomeFor(publiclyMuted), ['muted'], 'followed and muted: muted');
    assert.deepEqual(
      queued.map((n) => n.recipient),
      [alice.pubkey],
    );
  });
});
