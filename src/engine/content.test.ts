import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../store/sqlite/index.ts';
import type { StorePort } from '../store/port.ts';
import { ManualClock } from '../util/clock.ts';
import { createLogger } from '../observability/logger.ts';
import { Metrics } from '../observability/metrics.ts';
import { signEvent } from '../nostr/keys.ts';
import { COMMENT, REACTION, VIDEO } from '../nostr/kinds.ts';
import { makeUser, type TestUser } from '../../test/support/nostr-client.ts';
import { handleContentEvent, type ContentDeps } from './content.ts';
import type { InboundEnvelope } from './router.ts';
import { failingOutboundQueue, recordingOutboundQueue } from '../../test/support/outbound-queue.ts';
import type { OutboundNotification } from '../notification/types.ts';

describe('content routing', () => {
  let store: StorePort;
  let clock: ManualClock;
  let queued: OutboundNotification[];
  let deps: ContentDeps;
  let lookups: number;
  let alice: TestUser;
  let bob: TestUser;
  const now = () => Math.floor(clock.nowMs() / 1000);
  const live = (event: InboundEnvelope['event']): InboundEnvelope => ({
    event,
    context: 'live',
    relay: 'ws://r',
    receivedAtMs: clock.nowMs(),
  });

  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 11, 2));
    store = await openSqliteStore({ path: ':memory:', clock });
    queued = [];
    lookups = 0;
    alice = makeUser();
    bob = makeUser();
    await store.registerToken(alice.pubkey, { token: 'fcm-alice', transport: 'fcm' });
    deps = {
      store,
      profiles: { displayName: async (pk) => (lookups++, pk === bob.pubkey ? 'Bob' : null) },
      allowedPubkeys: new Set(),
      defaultPreferenceKinds: [1, 7, 16, 1059, 30023, 34236],
      processedEventTtlSecs: 604800,
      maxEventAgeSecs: 3600,
      clock,
      logger: createLogger({ level: 'silent' }),
      metrics: new Metrics(),
      outbound: recordingOutboundQueue(store, queued),
    };
  });
  afterEach(() => store.close());

  const like = (from: TestUser, to: string, createdAt = now(), extra: string[][] = []) =>
    signEvent({ kind: REACTION, created_at: createdAt, tags: [['e', 'ee'.repeat(32)], ['p', to], ...extra], content: '+' }, from.secret);

  test('a like queues one claimed notification with the payload contract', async () => {
    const outcomes = await handleContentEvent(deps, live(like(bob, alice.pubkey)));
    assert.deepEqual([...outcomes.values()], ['queued']);
    assert.equal(queued.length, 1);
    const n = queued[0] as OutboundNotification;
    assert.equal(n.type, 'like');
    assert.equal(n.message.data.body, 'Bob liked your post');
    assert.equal(n.message.data.senderName, 'Bob');
    assert.ok(n.claim);
    assert.equal(n.video, undefined);
  });

  test('the same like again is suppressed by the recipient claim', async () => {
    const event = like(bob, alice.pubkey);
    await handleContentEvent(deps, live(event));
    assert.deepEqual([...(await handleContentEvent(deps, live(event))).values()], ['claimed']);
    assert.equal(queued.length, 1);
  });

  test('a self-like resolves nobody and looks up no profile', async () => {
    assert.equal((await handleContentEvent(deps, live(like(alice, alice.pubkey)))).size, 0);
    assert.equal(lookups, 0);
  });

  test('gates: no tokens, preference disabled, allowlist; no profile lookup when nobody passes', async () => {
    const carol = makeUser();
    assert.deepEqual([...(await handleContentEvent(deps, live(like(bob, carol.pubkey)))).values()], ['no_tokens']);
    await store.setPreferences(alice.pubkey, { kinds: [1], campaignsEnabled: false });
    assert.deepEqual([...(await handleContentEvent(deps, live(like(bob, alice.pubkey)))).values()], ['preference_disabled']);
    await store.setPreferences(alice.pubkey, { kinds: [7], campaignsEnabled: false });
    const allowlisted = { ...deps, allowedPubkeys: new Set([carol.pubkey]) };
    assert.deepEqual([...(await handleContentEvent(allowlisted, live(like(bob, alice.pubkey)))).values()], ['not_allowlisted']);
    assert.equal(lookups, 0);
    assert.equal(queued.length, 0);
  });

  test('content older than max_event_age_secs is not pushed', async () => {
    assert.equal((await handleContentEvent(deps, live(like(bob, alice.pubkey, now() - 3601)))).size, 0);
    assert.equal(queued.length, 0);
  });

  test('a NIP-22 comment notifies root and parent authors once each, sender resolved once', async () => {
    const carol = makeUser();
    await store.registerToken(carol.pubkey, { token: 'fcm-carol', transport: 'fcm' });
    const comment = signEvent(
      {
        kind: COMMENT,
        created_at: now(),
        tags: [
          ['E', 'aa'.repeat(32)],
          ['P', alice.pubkey],
          ['e', 'cc'.repeat(32)],
          ['p', carol.pubkey],
          ['p', alice.pubkey],
        ],
        content: 'nice one',
      },
      bob.secret,
    );
    await handleContentEvent(deps, live(comment));
    assert.deepEqual(
      queued.map((n) => n.recipient),
      [alice.pubkey, carol.pubkey],
    );
    assert.equal(queued[0]?.message.data.body, 'Bob: nice one');
    assert.equal(queued[0].message.data.referencedEventId, 'aa'.repeat(32));
    assert.equal(lookups, 1);
  });

  test('a video mention carries its coordinate records; a recorded coordinate (an edit) is not announced again', async () => {
    const video = (d: string) =>
      signEvent(
        {
          kind: VIDEO,
          created_at: now(),
          tags: [
            ['d', d],
            ['p', alice.pubkey],
          ],
          content: 'look',
        },
        bob.secret,
      );
    await handleContentEvent(deps, live(video('vine-1')));
    assert.deepEqual(queued[0]?.video, { owner: bob.pubkey, dTag: 'vine-1', recordTypes: ['mention', 'newPost'] });
    await store.writeVideoRecords({ owner: bob.pubkey, dTag: 'vine-1', recipient: alice.pubkey }, ['mention', 'newPost'], 3600);
    assert.deepEqual([...(await handleContentEvent(deps, live(video('vine-1')))).values()], ['already_notified']);
    assert.deepEqual([...(await handleContentEvent(deps, live(video('')))).values()], ['video_without_d']);
  });

  test('a failed enqueue releases the claim and fails the event for a retry', async () => {
    const event = like(bob, alice.pubkey);
    await assert.rejects(handleContentEvent({ ...deps, outbound: failingOutboundQueue('queue down') }, live(event)), /queue down/);
    assert.deepEqual([...(await handleContentEvent(deps, live(event))).values()], ['queued']);
  });

  test('an event restricted to one recipient (a NIP-9a callback) notifies that recipient only, through the same gates', async () => {
    const carol = makeUser();
    await store.registerToken(carol.pubkey, { token: 'fcm-carol', transport: 'fcm' });
    const event = like(bob, alice.pubkey, now(), [['p', carol.pubkey]]);
    const outcomes = await handleContentEvent(deps, { ...live(event), onlyRecipient: carol.pubkey });
    assert.deepEqual([...outcomes.entries()], [[carol.pubkey, 'queued']]);
    assert.deepEqual(
      queued.map((n) => n.recipient),
      [carol.pubkey],
    );
    await store.setPreferences(alice.pubkey, { kinds: [1], campaignsEnabled: false });
    const muted = like(bob, alice.pubkey, now(), [['e', 'ab'.repeat(32)]]);
    assert.deepEqual(
      [...(await handleContentEvent(deps, { ...live(muted), onlyRecipient: alice.pubkey })).values()],
      ['preference_disabled'],
    );
    const untagged = like(bob, carol.pubkey, now(), [['e', 'cd'.repeat(32)]]);
    assert.equal((await handleContentEvent(deps, { ...live(untagged), onlyRecipient: alice.pubkey })).size, 0, 'the owner is not tagged');
  });
});
