import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../../store/sqlite/index.ts';
import type { StorePort } from '../../store/port.ts';
import type { CoalescePolicy } from '../../store/port-coalesce.ts';
import { ManualClock } from '../../util/clock.ts';
import { createLogger } from '../../observability/logger.ts';
import { Metrics } from '../../observability/metrics.ts';
import { signEvent } from '../../nostr/keys.ts';
import { COMMENT, GENERIC_REPOST, REACTION } from '../../nostr/kinds.ts';
import { makeUser, type TestUser } from '../../../test/support/nostr-client.ts';
import { handleContentEvent, type ContentDeps } from '../content.ts';
import type { InboundEnvelope } from '../router.ts';
import { createCoalesceIngester, type CoalesceIngester } from './ingest.ts';
import { collapseKeyForGroup } from './policy.ts';
import { failingOutboundQueue, lostAnswerOutboundQueue, recordingOutboundQueue } from '../../../test/support/outbound-queue.ts';
import type { OutboundNotification } from '../../notification/types.ts';

const POLICY: CoalescePolicy = {
  windowSecs: 7200,
  immediateLimit: 3,
  groupTtlSecs: 86_400,
  graceSecs: 3600,
  throttleCapacity: 20,
  throttleRefillSecs: 60,
  dailyWindowSecs: 86_400,
  dailyCap: 20,
};
const POST = 'ee'.repeat(32);
const OTHER_POST = 'ef'.repeat(32);

describe('coalescing at ingest', () => {
  let store: StorePort;
  let clock: ManualClock;
  let metrics: Metrics;
  let queued: OutboundNotification[];
  let deps: ContentDeps;
  let ingester: CoalesceIngester;
  let alice: TestUser;
  const nowSecs = () => Math.floor(clock.nowMs() / 1000);
  const live = (event: InboundEnvelope['event']): InboundEnvelope => ({
    event,
    context: 'live',
    relay: 'ws://r',
    receivedAtMs: clock.nowMs(),
  });
  const like = (tags: string[][] = [['e', POST]], kind = REACTION) =>
    signEvent({ kind, created_at: nowSecs(), tags: [...tags, ['p', alice.pubkey]], content: '+' }, makeUser().secret);

  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 11, 2));
    store = await openSqliteStore({ path: ':memory:', clock });
    metrics = new Metrics();
    queued = [];
    alice = makeUser();
    await store.registerToken(alice.pubkey, { token: 'fcm-alice', transport: 'fcm' });
    ingester = createCoalesceIngester({ store, policy: POLICY, logger: createLogger({ level: 'silent' }), metrics });
    deps = {
      store,
      profiles: { displayName: async () => null },
      allowedPubkeys: new Set(),
      defaultPreferenceKinds: [1, 7, 16, 1059, 30023, 34236],
      processedEventTtlSecs: 604800,
      maxEventAgeSecs: 3600,
      clock,
      logger: createLogger({ level: 'silent' }),
      metrics,
      outbound: recordingOutboundQueue(store, queued),
      coalesce: ingester,
    };
  });
  afterEach(() => store.close());

  const outcomeOf = async (event: InboundEnvelope['event']) => [...(await handleContentEvent(deps, live(event))).values()];

  test('the first three likes of a post are queued with one collapse key, the fourth is buffered and its claim kept', async () => {
    const likes = [like(), like(), like(), like()];
    const outcomes = [];
    for (const event of likes) outcomes.push(...(await outcomeOf(event)));
    assert.deepEqual(outcomes, ['queued', 'queued', 'queued', 'buffered']);
    assert.equal(queued.length, 3);
    const keys = new Set(queued.map((n) => n.message.collapseKey));
    assert.equal(keys.size, 1);
    const [key] = keys;
    assert.match(key ?? '', /^[0-9a-f]{32}$/);
    assert.match(queued[0]?.message.data.body ?? '', /liked your post$/, 'immediates keep the normal copy');
    assert.deepEqual(await outcomeOf(likes[3] as InboundEnvelope['event']), ['claimed'], 'a replay of the buffered like does nothing');
  });

  test('the collapse key is derived from the group id the store reports', async () => {
    const event = like();
    const decision = await ingester.decide(event, alice.pubkey, 'like');
    assert.equal(decision.kind, 'immediate');
    assert.equal(decision.groupId, `like:${alice.pubkey}:e:${POST}:${Math.floor(nowSecs() / POLICY.windowSecs)}`);
    assert.equal(decision.collapseKey, collapseKeyForGroup(decision.groupId));
  });

  test('two posts, a repost and a like group apart: each has its own slots and collapse key', async () => {
    for (let i = 0; i < 3; i++) await outcomeOf(like());
    assert.deepEqual(await outcomeOf(like([['e', OTHER_POST]])), ['queued']);
    assert.deepEqual(await outcomeOf(like([['e', POST]], GENERIC_REPOST)), ['queued']);
    assert.equal(new Set(queued.map((n) => n.message.collapseKey)).size, 3);
  });

  test('NIP-25: the last e tag is the target, so a reaction to a reply groups with the reply', async () => {
    const reply = 'cc'.repeat(32);
    const first = await ingester.decide(
      like([
        ['e', POST],
        ['e', reply],
      ]),
      alice.pubkey,
      'like',
    );
    const second = await ingester.decide(like([['e', reply]]), alice.pubkey, 'like');
    assert.equal(first.kind === 'immediate' && second.kind === 'immediate' && first.groupId === second.groupId, true);
  });

  test('comments and likes without a target are not coalesced', async () => {
    const comment = signEvent(
      {
        kind: COMMENT,
        created_at: nowSecs(),
        tags: [
          ['E', POST],
          ['P', alice.pubkey],
          ['p', alice.pubkey],
        ],
        content: 'nice',
      },
      makeUser().secret,
    );
    assert.deepEqual(await ingester.decide(comment, alice.pubkey, 'comment'), { kind: 'not_coalesced' });
    const bare = like([]);
    assert.deepEqual(await ingester.decide(bare, alice.pubkey, 'like'), { kind: 'not_coalesced' });
    assert.deepEqual(await outcomeOf(bare), ['queued']);
    assert.equal(queued[0]?.message.collapseKey, undefined, 'a like that is not coalesced has no collapse key');
  });

  test('a throttled like is buffered and counted in push_throttled_recipients_total', async () => {
    ingester = createCoalesceIngester({
      store,
      policy: { ...POLICY, throttleCapacity: 1, throttleRefillSecs: 3600 },
      logger: createLogger({ level: 'silent' }),
      metrics,
    });
    deps.coalesce = ingester;
    assert.deepEqual(await outcomeOf(like()), ['queued']);
    assert.deepEqual(await outcomeOf(like()), ['buffered']);
    assert.match(await metrics.render(), /push_throttled_recipients_total\{type="like"\} 1/);
  });

  test('a store error while coalescing releases the claim and fails the event, so its retry decides again', async () => {
    const event = like();
    deps.coalesce = { decide: async () => Promise.reject(new Error('redis down')) };
    await assert.rejects(handleContentEvent(deps, live(event)), /redis down/);
    deps.coalesce = ingester;
    assert.deepEqual(await outcomeOf(event), ['queued'], 'the claim was given back');
  });

  test('an immediate whose enqueue failed is replayed as the same immediate with the same collapse key', async () => {
    const event = like();
    deps.outbound = failingOutboundQueue('queue full');
    await assert.rejects(handleContentEvent(deps, live(event)), /queue full/);
    deps.outbound = recordingOutboundQueue(store, queued);
    assert.deepEqual(await outcomeOf(event), ['queued']);
    const decision = await ingester.decide(event, alice.pubkey, 'like');
    assert.equal(decision.kind === 'immediate' && decision.collapseKey === queued[0]?.message.collapseKey, true);
    assert.equal((await store.readCoalesceGroup(decision.kind === 'immediate' ? decision.groupId : ''))?.immediate, 1, 'counted once');
  });

  test('an immediate whose queue step was applied but reported failed is queued once: the retry finds its claim (issue 42)', async () => {
    const event = like();
    deps.outbound = lostAnswerOutboundQueue(recordingOutboundQueue(store, queued));
    await assert.rejects(handleContentEvent(deps, live(event)), /answer lost/);
    assert.deepEqual(await outcomeOf(event), ['claimed'], 'the retry stops at the claim its first attempt took');
    assert.equal(queued.length, 1);
    assert.equal((await store.queueStats('outbound')).ready, 1, 'one item queued, not two');
  });

  test('a like whose coalescing decision was applied but reported failed is still queued by the retry (issue 42)', async () => {
    const event = like();
    let lost = 1;
    deps.coalesce = {
      async decide(...args) {
        const decision = await ingester.decide(...args);
        if (lost-- > 0) throw new Error('applied, answer lost');
        return decision;
      },
    };
    await assert.rejects(handleContentEvent(deps, live(event)), /answer lost/);
    assert.deepEqual(await outcomeOf(event), ['queued']);
    assert.equal(queued.length, 1);
  });

  test('a buffered like whose claim was applied but reported failed stays counted once (issue 42)', async () => {
    for (let i = 0; i < POLICY.immediateLimit; i++) await outcomeOf(like());
    const event = like();
    const claimRecipientDelivery = store.claimRecipientDelivery.bind(store);
    let lost = 1;
    deps.store = Object.assign(Object.create(store) as StorePort, {
      async claimRecipientDelivery(...args: Parameters<StorePort['claimRecipientDelivery']>) {
        const claim = await claimRecipientDelivery(...args);
        if (lost-- > 0) throw new Error('applied, answer lost');
        return claim;
      },
    });
    await assert.rejects(handleContentEvent(deps, live(event)), /answer lost/);
    assert.deepEqual(await outcomeOf(event), ['claimed']);
    const decision = await ingester.decide(event, alice.pubkey, 'like');
    if (decision.kind !== 'buffered') assert.fail('still buffered');
    assert.equal((await store.readCoalesceGroup(decision.groupId))?.pending, 1, 'buffered once');
  });
});
