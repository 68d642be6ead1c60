import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { deliverNotification } from '../../src/delivery/deliver.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import { VIDEO } from '../../src/nostr/kinds.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import type { StorePort } from '../../src/store/port.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { makeUser, type TestUser } from '../support/nostr-client.ts';
import { RecordingTransport, invalidRequest } from '../support/recording-transport.ts';
import { handleContentEvent, type ContentDeps } from '../../src/engine/content.ts';
import type { InboundEnvelope } from '../../src/engine/router.ts';
import { bellDelivery } from '../../src/engine/bells/rules.ts';
import { recordingOutboundQueue } from '../support/outbound-queue.ts';
import type { OutboundNotification } from '../../src/notification/types.ts';

const RATE_LIMIT_SECS = 3600;
const RECORD_TTL_SECS = 365 * 86_400;

describe('the bell fallback of a muted video mention', () => {
  let store: StorePort;
  let clock: ManualClock;
  let queued: OutboundNotification[];
  let deps: ContentDeps;
  let creator: TestUser;
  let watcher: TestUser;
  const now = () => Math.floor(clock.nowMs() / 1000);
  const live = (event: InboundEnvelope['event']): InboundEnvelope => ({
    event,
    context: 'live',
    relay: 'ws://r',
    receivedAtMs: clock.nowMs(),
  });
  const video = (d = 'vine', to = watcher.pubkey) =>
    signEvent(
      {
        kind: VIDEO,
        created_at: now(),
        tags: [
          ['d', d],
          ['p', to],
        ],
        content: 'hi',
      },
      creator.secret,
    );
  const bell = async () =>
    store.replaceNotifySubscriptions({
      subscriber: watcher.pubkey,
      creators: [creator.pubkey],
      createdAt: now(),
      eventId: 'aa'.repeat(32),
    });

  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 5, 1));
    store = await openSqliteStore({ path: ':memory:', clock });
    queued = [];
    creator = makeUser();
    watcher = makeUser();
    await store.registerToken(watcher.pubkey, { token: 'fcm-watcher', transport: 'fcm' });
    deps = {
      store,
      profiles: { displayName: async () => 'Alice' },
      allowedPubkeys: new Set(),
      defaultPreferenceKinds: [1, 7, 16, 1059, 30023, 34236],
      processedEventTtlSecs: 604_800,
      maxEventAgeSecs: 3600,
      clock,
      logger: createLogger({ level: 'silent' }),
      metrics: new Metrics(),
      outbound: recordingOutboundQueue(store, queued),
      bells: { rateLimitSecs: RATE_LIMIT_SECS, videoRecordTtlSecs: RECORD_TTL_SECS },
    };
  });
  afterEach(() => store.close());

  test('a watcher with mentions off and bells on gets the mention as a bell, with the bell’s record and rate window', async () => {
    await bell();
    await store.setPreferences(watcher.pubkey, { kinds: [34236], campaignsEnabled: false });
    const outcomes = await handleContentEvent(deps, live(video()));
    assert.deepEqual([...outcomes.values()], ['queued']);
    const n = queued[0];
    assert.equal(n?.type, 'newPost');
    assert.equal(n.message.data.type, 'newPost');
    assert.equal(n.message.data.title, 'New vine');
    assert.equal(n.message.data.body, 'Alice posted a new vine');
    assert.deepEqual(n.video, { owner: creator.pubkey, dTag: 'vine', recordTypes: ['newPost'] });
    assert.deepEqual(n.rateWindow, { subscriber: watcher.pubkey, creator: creator.pubkey, ttlSecs: RATE_LIMIT_SECS });
  });

  test('no fallback without a bell on the author, with bells off too, or without bell rules', async () => {
    await store.setPreferences(watcher.pubkey, { kinds: [34236], campaignsEnabled: false });
    assert.deepEqual([...(await handleContentEvent(deps, live(video('a')))).values()], ['preference_disabled'], 'not watching');
    await bell();
    await store.setPreferences(watcher.pubkey, { kinds: [7], campaignsEnabled: false });
    assert.deepEqual([...(await handleContentEvent(deps, live(video('b')))).values()], ['preference_disabled'], 'bells off');
    await store.setPreferences(watcher.pubkey, { kinds: [34236], campaignsEnabled: false });
    const { bells: _off, ...withoutBells } = deps;
    assert.deepEqual([...(await handleContentEvent(withoutBells, live(video('c')))).values()], ['preference_disabled'], 'fallback off');
    assert.equal(queued.length, 0);
  });

  test('a fallback bell inside the rate window is suppressed and recorded', async () => {
    await bell();
    await store.setPreferences(watcher.pubkey, { kinds: [34236], campaignsEnabled: false });
    await store.openNewPostRateWindow(watcher.pubkey, creator.pubkey, RATE_LIMIT_SECS);
    assert.deepEqual([...(await handleContentEvent(deps, live(video('limited')))).values()], ['rate_limited']);
    assert.equal(await store.hasVideoRecord({ type: 'newPost', owner: creator.pubkey, dTag: 'limited', recipient: watcher.pubkey }), true);
    assert.equal(queued.length, 0);
  });

  test('a mention that is enabled stays a mention, writes both records and opens no bell window', async () => {
    await bell();
    await handleContentEvent(deps, live(video('m')));
    assert.equal(queued[0]?.type, 'mention');
    assert.deepEqual(queued[0].video?.recordTypes, ['mention', 'newPost']);
    assert.equal(queued[0].rateWindow, undefined);
  });
});

describe('the bell rate window at delivery', () => {
  let store: StorePort;
  const creator = 'c1'.repeat(32);
  const watcher = 'b1'.repeat(32);

  beforeEach(async () => {
    store = await openSqliteStore({ path: ':memory:', clock: new ManualClock() });
    await store.registerToken(watcher, { token: 'fcm-watcher', transport: 'fcm' });
  });
  afterEach(() => store.close());

  const notification = (): OutboundNotification => ({
    eventId: 'e1'.repeat(32),
    recipient: watcher,
    type: 'newPost',
    message: { data: { type: 'newPost' } },
    claim: null,
    eventCreatedAt: 0,
    ...bellDelivery({ owner: creator, dTag: 'vine' }, watcher, RATE_LIMIT_SECS),
  });
  const deliveryDeps = (transport: RecordingTransport) => ({
    store,
    transports: [transport],
    videoRecordTtlSecs: RECORD_TTL_SECS,
    logger: createLogger({ level: 'silent' }),
    metrics: new Metrics(),
  });

  test('a delivered bell opens the window and writes only the newPost record', async () => {
    await deliverNotification(deliveryDeps(new RecordingTransport()), notification());
    assert.equal(await store.isNewPostRateLimited(watcher, creator), true);
    assert.equal(await store.hasVideoRecord({ type: 'newPost', owner: creator, dTag: 'vine', recipient: watcher }), true);
    assert.equal(await store.hasVideoRecord({ type: 'mention', owner: creator, dTag: 'vine', recipient: watcher }), false);
  });

  test('a failed send does not open the window', async () => {
    const transport = new RecordingTransport();
    transport.script.set('fcm-watcher', invalidRequest);
    await deliverNotification(deliveryDeps(transport), notification());
    assert.equal(await store.isNewPostRateLimited(watcher, creator), false);
  });
});
