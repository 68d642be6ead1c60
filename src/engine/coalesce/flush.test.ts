import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../../store/sqlite/index.ts';
import type { StorePort } from '../../store/port.ts';
import type { CoalesceEvent, CoalescePolicy, CoalesceType, GroupClaim } from '../../store/port-coalesce.ts';
import { ManualClock } from '../../util/clock.ts';
import { createLogger } from '../../observability/logger.ts';
import { Metrics } from '../../observability/metrics.ts';
import { npubEncode, shortNpub } from '../../nostr/nip19.ts';
import { makeUser, type TestUser } from '../../../test/support/nostr-client.ts';
import { RecordingTransport, retryable, unregistered } from '../../../test/support/recording-transport.ts';
import { drainOutbound } from '../../../test/support/delivery-drain.ts';
import { storeOutboundQueue } from '../outbound-queue.ts';
import { FlushCancelled, flushGroup, type FlushDeps } from './flush.ts';
import { collapseKeyForGroup } from './policy.ts';

const SECOND_MS = 1000;
const POLICY: CoalescePolicy = {
  windowSecs: 60,
  immediateLimit: 1,
  groupTtlSecs: 3600,
  graceSecs: 600,
  throttleCapacity: 20,
  throttleRefillSecs: 60,
  dailyWindowSecs: 86_400,
  dailyCap: 20,
};
const POST = 'f1'.repeat(32);
const VIDEO = `34236:${'c1'.repeat(32)}:my-vine`;

describe('summary flush', () => {
  let store: StorePort;
  let clock: ManualClock;
  let metrics: Metrics;
  let transport: RecordingTransport;
  let deps: FlushDeps;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let counter = 0;
  const names = new Map<string, string>();

  const likeBy = (actor: TestUser, overrides: Partial<CoalesceEvent> = {}): CoalesceEvent => ({
    type: 'like',
    owner: alice.pubkey,
    target: `e:${POST}`,
    actor: actor.pubkey,
    eventId: (++counter).toString(16).padStart(64, '0'),
    eventKind: 7,
    createdAt: Math.floor(clock.nowMs() / SECOND_MS) - 10 + counter,
    references: {
      referencedEventId: POST,
      referencedAddress: VIDEO,
      referencedKind: '34236',
      referencedAuthorPubkey: 'c1'.repeat(32),
      referencedDTag: 'my-vine',
    },
    ...overrides,
  });

  /** One immediate by carol, then `buffered` more actors; returns the claim once the group is due. */
  async function dueGroup(buffered: TestUser[], policy: CoalescePolicy = POLICY): Promise<GroupClaim> {
    await store.ingestCoalesceEvent(likeBy(carol), policy);
    for (const actor of buffered) await store.ingestCoalesceEvent(likeBy(actor), policy);
    clock.advance(policy.windowSecs * SECOND_MS);
    const { claim } = await store.claimDueCoalesceGroup(300);
    assert.ok(claim);
    return claim;
  }

  const metric = async (pattern: RegExp) => assert.match(await metrics.render(), pattern);
  /** The delivery stage over the outbound queue: the only way a summary reaches the transport. */
  const deliver = () => drainOutbound(store, [transport], metrics);

  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 0, 1));
    store = await openSqliteStore({ path: ':memory:', clock });
    metrics = new Metrics();
    transport = new RecordingTransport();
    alice = makeUser();
    bob = makeUser();
    carol = makeUser();
    names.clear();
    names.set(bob.pubkey, 'Bob');
    await store.registerToken(alice.pubkey, { token: 'alice-phone', transport: 'fcm' });
    deps = {
      store,
      outbound: storeOutboundQueue(store, () => undefined),
      processedEventTtlSecs: 86_400,
      profiles: { displayName: async (pubkey) => names.get(pubkey) ?? null },
      policy: POLICY,
      settings: { leaseSecs: 300, retrySecs: 5, pollMs: 10, flushTimeoutMs: 5000 },
      allowedPubkeys: new Set(),
      defaultPreferenceKinds: [1, 7, 16, 1059, 34236],
      logger: createLogger({ level: 'silent' }),
      metrics,
    };
  });
  afterEach(() => store.close());

  test('a due group becomes one summary with the distinct count, the first buffered actor named at flush, and the group collapse key', async () => {
    const dave = makeUser();
    const claim = await dueGroup([bob, dave, bob]);
    // The inbox counted Alice's two distinct likes as they came (the engine does, per event): the
    // summary carries her badge as it is at send time.
    await store.countInboxNotifications(
      [
        { countKey: 'like-from-bob', recipient: alice.pubkey, type: 'like' },
        { countKey: 'like-from-dave', recipient: alice.pubkey, type: 'like' },
      ],
      60,
    );
    const outcome = await flushGroup(deps, claim, new AbortController().signal);
    assert.deepEqual(outcome, { kind: 'queued', actorCount: 2 });
    assert.equal(transport.sent.length, 0, 'the flush only queues');
    assert.equal((await deliver()).length, 1);
    assert.equal(transport.sent.length, 1);
    const { message } = transport.sent[0] as (typeof transport.sent)[number];
    assert.equal(message.collapseKey, collapseKeyForGroup(claim.groupId));
    const firstBuffered = (2).toString(16).padStart(64, '0');
    assert.deepEqual(message.data, {
      type: 'like',
      eventId: firstBuffered,
      title: 'New likes',
      body: 'Bob and 1 other liked your post',
      senderPubkey: bob.pubkey,
      senderName: 'Bob',
      receiverPubkey: alice.pubkey,
      receiverNpub: npubEncode(alice.pubkey),
      eventKind: '7',
      timestamp: String(Math.floor(Date.UTC(2026, 0, 1) / SECOND_MS) - 10 + counter),
      referencedEventId: POST,
      referencedAddress: VIDEO,
      referencedKind: '34236',
      referencedAuthorPubkey: 'c1'.repeat(32),
      referencedDTag: 'my-vine',
      badge: '2',
    });
    assert.equal(await store.readCoalesceGroup(claim.groupId), null, 'completed');
    await metric(/push_coalesced_sends_total\{type="like"\} 1/);
  });

  test('an unnamed first actor reads as a short npub; one actor reads singular', async () => {
    const claim = await dueGroup([carol]);
    await flushGroup(deps, claim, new AbortController().signal);
    await deliver();
    assert.equal(transport.sent[0]?.message.data.body, `${shortNpub(carol.pubkey)} liked your post`);
    assert.equal(transport.sent[0].message.data.title, 'New like');
  });

  test('a repost summary', async () => {
    await store.ingestCoalesceEvent(likeBy(carol, { type: 'repost', eventKind: 16 }), POLICY);
    for (const actor of [bob, makeUser(), makeUser()])
      await store.ingestCoalesceEvent(likeBy(actor, { type: 'repost', eventKind: 16 }), POLICY);
    clock.advance(POLICY.windowSecs * SECOND_MS);
    const { claim } = await store.claimDueCoalesceGroup(300);
    assert.ok(claim);
    await flushGroup(deps, claim, new AbortController().signal);
    await deliver();
    assert.deepEqual(
      [transport.sent[0]?.message.data.title, transport.sent[0]?.message.data.body, transport.sent[0]?.message.data.eventKind],
      ['New reposts', 'Bob and 2 others reposted your post', '16'],
    );
  });

  test('a zap summary (issue 21) names the first payer and counts payers, for users with category 9735', async () => {
    await store.setPreferences(alice.pubkey, { kinds: [9735], campaignsEnabled: false });
    const zapBy = (actor: TestUser) => likeBy(actor, { type: 'zap', eventKind: 9735 });
    await store.ingestCoalesceEvent(zapBy(carol), POLICY);
    for (const actor of [bob, makeUser()]) await store.ingestCoalesceEvent(zapBy(actor), POLICY);
    clock.advance(POLICY.windowSecs * SECOND_MS);
    const { claim } = await store.claimDueCoalesceGroup(300);
    assert.ok(claim);
    await flushGroup(deps, claim, new AbortController().signal);
    await deliver();
    assert.deepEqual(
      [transport.sent[0]?.message.data.type, transport.sent[0]?.message.data.body, transport.sent[0]?.message.data.eventKind],
      ['zap', 'Bob and 1 other zapped you', '9735'],
    );
  });

  test('a group claimed after its logical lifetime is dropped loudly, not sent', async () => {
    const policy = { ...POLICY, groupTtlSecs: 120 };
    await store.ingestCoalesceEvent(likeBy(carol), policy);
    await store.ingestCoalesceEvent(likeBy(bob), policy);
    clock.advance(120 * SECOND_MS);
    const { claim } = await store.claimDueCoalesceGroup(300);
    assert.ok(claim);
    assert.deepEqual(await flushGroup({ ...deps, policy }, claim, new AbortController().signal), { kind: 'expired' });
    assert.deepEqual(await deliver(), [], 'nothing queued');
    assert.equal(transport.sent.length, 0);
    assert.equal(await store.readCoalesceGroup(claim.groupId), null);
    await metric(/push_coalesce_skipped_total\{reason="expired"\} 1/);
  });

  test('the gates are checked again: no tokens, likes disabled, not allowlisted', async () => {
    const noTokens = await dueGroup([bob]);
    await store.removeToken(alice.pubkey, 'alice-phone');
    assert.deepEqual(await flushGroup(deps, noTokens, new AbortController().signal), { kind: 'suppressed', reason: 'no_tokens' });

    await store.registerToken(alice.pubkey, { token: 'alice-phone', transport: 'fcm' });
    const muted = await dueGroup([bob]);
    await store.setPreferences(alice.pubkey, { kinds: [1, 16], campaignsEnabled: false });
    assert.deepEqual(await flushGroup(deps, muted, new AbortController().signal), { kind: 'suppressed', reason: 'preference_disabled' });

    await store.setPreferences(alice.pubkey, { kinds: [7], campaignsEnabled: false });
    const outside = await dueGroup([bob]);
    assert.deepEqual(await flushGroup({ ...deps, allowedPubkeys: new Set([bob.pubkey]) }, outside, new AbortController().signal), {
      kind: 'suppressed',
      reason: 'not_allowlisted',
    });
    assert.deepEqual(await deliver(), [], 'nothing queued');
    assert.equal(transport.sent.length, 0);
    assert.equal(await store.readCoalesceGroup(outside.groupId), null, 'a suppressed group is completed');
    await metric(/push_coalesce_skipped_total\{reason="preference_disabled"\} 1/);
  });

  test('an empty token bucket defers the summary until a token refills; then it is sent', async () => {
    // carol's immediate took the only token; one refills per hour, and the window took a minute.
    const policy = { ...POLICY, throttleCapacity: 1, throttleRefillSecs: 3600, groupTtlSecs: 7200 };
    const claim = await dueGroup([bob], policy);
    const outcome = await flushGroup({ ...deps, policy }, claim, new AbortController().signal);
    assert.deepEqual(outcome, { kind: 'throttled', afterSecs: 3540 });
    assert.equal(transport.sent.length, 0);
    await metric(/push_coalesce_deferred_total\{reason="recipient_throttled"\} 1/);
    assert.equal((await store.claimDueCoalesceGroup(300)).claim, null, 'requeued for later');
    clock.advance(3540 * SECOND_MS);
    const again = await store.claimDueCoalesceGroup(300);
    assert.ok(again.claim);
    assert.deepEqual(await flushGroup({ ...deps, policy }, again.claim, new AbortController().signal), {
      kind: 'queued',
      actorCount: 1,
    });
    await deliver();
    assert.equal(transport.sent.length, 1);
  });

  test('at the daily cap the summary waits for the oldest emission to age out; at the lifetime it is dropped as expired_throttled', async () => {
    const policy = { ...POLICY, dailyCap: 1, dailyWindowSecs: 3600, groupTtlSecs: 3000 };
    const claim = await dueGroup([bob], policy);
    const outcome = await flushGroup({ ...deps, policy }, claim, new AbortController().signal);
    assert.deepEqual(outcome, { kind: 'expired' }, 'the slot frees at 3600 s, after the group lifetime');
    await metric(/push_coalesce_deferred_total\{reason="recipient_daily_capped"\} 1/);
    await metric(/push_coalesce_skipped_total\{reason="expired_throttled"\} 1/);

    const longer = { ...policy, groupTtlSecs: 7200 };
    const second = await dueGroup([bob], longer);
    const deferred = await flushGroup({ ...deps, policy: longer }, second, new AbortController().signal);
    assert.equal(deferred.kind === 'throttled' && deferred.afterSecs > 3400 && deferred.afterSecs <= 3600, true);
  });

  test('every device gone: the summary is queued once, the group completed, and the delivery stage prunes the dead token', async () => {
    transport.script.set('alice-phone', unregistered);
    const claim = await dueGroup([bob]);
    assert.deepEqual(await flushGroup(deps, claim, new AbortController().signal), { kind: 'queued', actorCount: 1 });
    assert.equal(await store.readCoalesceGroup(claim.groupId), null);
    assert.deepEqual(
      (await deliver()).map((r) => r.outcome),
      [{ kind: 'done' }],
    );
    assert.equal(await store.tokenOwner('alice-phone'), null, 'the dead token was pruned');
  });

  test('an all-device retryable failure is retried by the outbound queue, not by requeueing the group', async () => {
    transport.script.set('alice-phone', retryable(600));
    const claim = await dueGroup([bob]);
    assert.deepEqual(await flushGroup(deps, claim, new AbortController().signal), { kind: 'queued', actorCount: 1 });
    assert.equal(await store.readCoalesceGroup(claim.groupId), null, 'completed: the queue owns the summary now');
    const [first] = await deliver();
    const outcome = first?.outcome;
    assert.ok(outcome?.kind === 'retry' && outcome.afterMs >= 600 * SECOND_MS, 'retried after the Retry-After at least');
    transport.script.clear();
    assert.deepEqual(await deliver(), [], 'not due before the Retry-After');
    clock.advance(600 * SECOND_MS);
    assert.equal((await deliver())[0]?.outcome.kind, 'done');
    assert.equal(transport.sent.length, 1);
  });

  test('a flush recovered after it queued but before it completed queues nothing twice', async () => {
    const claim = await dueGroup([bob]);
    // The first flush dies between queueing the summary and completing the group.
    const crashing: StorePort = Object.create(store, {
      completeCoalesceGroup: { value: () => Promise.reject(new Error('process killed')) },
    }) as StorePort;
    await assert.rejects(flushGroup({ ...deps, store: crashing }, claim, new AbortController().signal), /process killed/);
    clock.advance(301 * SECOND_MS);
    const { claim: recovered } = await store.claimDueCoalesceGroup(300);
    assert.ok(recovered, 'the lease expired and the group is due again');
    assert.deepEqual(await flushGroup(deps, recovered, new AbortController().signal), { kind: 'already_queued' });
    assert.equal(await store.readCoalesceGroup(claim.groupId), null, 'completed this time');
    await deliver();
    assert.equal(transport.sent.length, 1, 'one summary');
  });

  test('one device delivered and one failed: queued once, completed, delivered to the one', async () => {
    await store.registerToken(alice.pubkey, { token: 'alice-tablet', transport: 'fcm' });
    transport.script.set('alice-tablet', retryable(30));
    const claim = await dueGroup([bob]);
    assert.deepEqual(await flushGroup(deps, claim, new AbortController().signal), { kind: 'queued', actorCount: 1 });
    assert.equal(await store.readCoalesceGroup(claim.groupId), null);
    assert.deepEqual(
      (await deliver()).map((r) => r.outcome),
      [{ kind: 'done' }],
      'a partial success is never re-sent',
    );
    assert.equal(transport.sent.length, 1);
  });

  test('a recovered flush reuses its reservation instead of taking a second token', async () => {
    const policy = { ...POLICY, throttleCapacity: 2, throttleRefillSecs: 3600 };
    const claim = await dueGroup([bob], policy);
    assert.deepEqual(
      await store.consumeRecipientToken(alice.pubkey, claim.groupId, policy),
      { status: 'spent' },
      'the crashed flush spent it',
    );
    assert.equal((await flushGroup({ ...deps, policy }, claim, new AbortController().signal)).kind, 'queued');
    assert.equal(
      (await store.consumeRecipientToken(alice.pubkey, 'x', policy)).status,
      'bucket_empty',
      'two tokens: the immediate and one summary',
    );
  });

  test('a missing group and an unknown type end the flush as empty', async () => {
    const claim = await dueGroup([bob]);
    assert.equal(await store.completeCoalesceGroup({ ...claim }), 'completed');
    assert.deepEqual(await flushGroup(deps, claim, new AbortController().signal), { kind: 'empty', reason: 'missing_group' });
    await metric(/push_coalesce_skipped_total\{reason="missing_group"\} 1/);

    // A type this build does not know (written by another version sharing the store).
    const foreign = { ...POLICY, immediateLimit: 0 };
    await store.ingestCoalesceEvent({ ...likeBy(bob), type: 'tip' as CoalesceType }, foreign);
    clock.advance(POLICY.windowSecs * SECOND_MS);
    const { claim: zap } = await store.claimDueCoalesceGroup(300);
    assert.ok(zap);
    assert.deepEqual(await flushGroup(deps, zap, new AbortController().signal), { kind: 'empty', reason: 'unknown_type' });
    assert.equal(await store.readCoalesceGroup(zap.groupId), null);
    assert.deepEqual(await deliver(), []);
    assert.equal(transport.sent.length, 0);
  });

  test('a flush aborted before the send throws FlushCancelled and keeps the lease and the reservation', async () => {
    const claim = await dueGroup([bob]);
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(flushGroup(deps, claim, controller.signal), FlushCancelled);
    assert.equal((await store.readCoalesceGroup(claim.groupId))?.leaseToken, claim.leaseToken);
    assert.deepEqual(await deliver(), [], 'nothing queued');
  });

  test('an actor the recipient muted while the group waited is not named: the summary reads "Someone"', async () => {
    const dave = makeUser();
    const claim = await dueGroup([bob, dave]);
    await store.setSocialFilters(alice.pubkey, { mutedPubkeys: [bob.pubkey], onlyFollowing: null });
    await flushGroup({ ...deps, social: { lists: null } }, claim, new AbortController().signal);
    await deliver();
    const { message } = transport.sent[0] as (typeof transport.sent)[number];
    assert.equal(message.data.senderPubkey, '');
    assert.equal(message.data.senderName, 'Someone');
    assert.match(message.data.body ?? '', /^Someone and 1 other liked your post$/);
    assert.ok(!JSON.stringify(message).includes(bob.pubkey), 'the muted actor appears nowhere');
  });
});
