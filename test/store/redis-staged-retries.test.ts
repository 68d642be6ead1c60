/**
 * Issue 42, on the Redis cluster layout (run on a private single redis-server: the steps are the
 * same on a cluster): a like or a gift-wrap push whose claim-and-queue stopped between two of its
 * three steps (stage, claim, commit), because the replica acknowledgement after a step was refused
 * once the step had been applied, is queued exactly once by the inbound item's retry. A retry that
 * took the held claim for "done" would leave the staged item behind forever.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import { GIFT_WRAP, REACTION } from '../../src/nostr/kinds.ts';
import type { StorePort } from '../../src/store/port.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { handleContentEvent, type ContentDeps } from '../../src/engine/content.ts';
import { createCoalesceIngester } from '../../src/engine/coalesce/ingest.ts';
import { storeOutboundQueue } from '../../src/engine/outbound-queue.ts';
import { handleGiftWrap } from '../../src/engine/events/gift-wraps.ts';
import type { InboundEnvelope } from '../../src/engine/router.ts';
import { makeUser } from '../support/nostr-client.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';

/** The replica acknowledgements of claimAndEnqueue's three steps, in order. */
const STEPS = ['stage', 'claim', 'commit'] as const;
const TTL_SECS = 604_800;
const POST = 'ee'.repeat(32);

describe('claim-and-queue retried after a refused acknowledgement (cluster layout)', () => {
  let server: PrivateRedisServer;
  let store: StorePort;
  let clock: ManualClock;
  /** Answers the next acknowledgements: true refuses one (after its step was applied). */
  let refusals: boolean[] = [];
  const alice = makeUser();

  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    await server.stop();
  });
  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 11, 6));
    refusals = [];
    store = await openRedisStore({
      url: server.url,
      layout: 'cluster',
      keyPrefix: `staged-${Math.random().toString(36).slice(2)}:`,
      clock,
      // One Redis without replicas: the WAIT answers at once, and the injector decides.
      waitReplicas: 1,
      waitTimeoutMs: 1,
      refuseAcknowledgement: () => refusals.shift() ?? false,
      logger: createLogger({ level: 'silent' }),
    });
    await store.registerToken(alice.pubkey, { token: 'fcm-alice', transport: 'fcm' });
    await store.setPreferences(alice.pubkey, { kinds: [7, 1059], campaignsEnabled: false });
  });
  afterEach(async () => {
    await store.close();
  });

  const envelope = (event: InboundEnvelope['event']): InboundEnvelope => ({
    event,
    context: 'live',
    relay: 'ws://relay.test',
    receivedAtMs: clock.nowMs(),
  });
  const contentDeps = (): ContentDeps => {
    const metrics = new Metrics();
    const logger = createLogger({ level: 'silent' });
    return {
      store,
      profiles: { displayName: async () => null },
      allowedPubkeys: new Set(),
      defaultPreferenceKinds: [7],
      processedEventTtlSecs: TTL_SECS,
      maxEventAgeSecs: 3600,
      clock,
      logger,
      metrics,
      outbound: storeOutboundQueue(store, () => undefined),
      coalesce: createCoalesceIngester({
        store,
        policy: {
          windowSecs: 7200,
          immediateLimit: 3,
          groupTtlSecs: 86_400,
          graceSecs: 3600,
          throttleCapacity: 20,
          throttleRefillSecs: 60,
          dailyWindowSecs: 86_400,
          dailyCap: 20,
        },
        logger,
        metrics,
      }),
    };
  };
  const outboundItems = async () => {
    const stats = await store.queueStats('outbound');
    return stats.ready + stats.leased;
  };

  for (const [index, step] of STEPS.entries()) {
    test(`a like whose ${step} acknowledgement was refused is queued once by the retry`, async () => {
      const deps = contentDeps();
      const like = signEvent(
        {
          kind: REACTION,
          created_at: Math.floor(clock.nowMs() / 1000),
          tags: [
            ['e', POST],
            ['p', alice.pubkey],
          ],
          content: '+',
        },
        makeUser().secret,
      );
      refusals = STEPS.map((_, i) => i === index);
      await assert.rejects(handleContentEvent(deps, envelope(like)), /replica acknowledgement/);
      refusals = [];
      assert.deepEqual([...(await handleContentEvent(deps, envelope(like))).values()], [index === 2 ? 'claimed' : 'queued']);
      assert.equal(await outboundItems(), 1, 'one item queued, never none and never two');
      assert.deepEqual([...(await handleContentEvent(deps, envelope(like))).values()], ['claimed'], 'a third attempt changes nothing');
      assert.equal(await outboundItems(), 1);
    });

    test(`a gift-wrap push whose ${step} acknowledgement was refused is queued once by the retry`, async () => {
      const deps = contentDeps();
      const giftWraps = {
        store,
        allowedPubkeys: new Set<string>(),
        processedEventTtlSecs: TTL_SECS,
        minIntervalSecs: 60,
        outbound: deps.outbound,
        countInbox: false,
        metrics: deps.metrics,
        logger: deps.logger,
      };
      const wrap = signEvent(
        { kind: GIFT_WRAP, created_at: Math.floor(clock.nowMs() / 1000), tags: [['p', alice.pubkey]], content: 'x' },
        makeUser().secret,
      );
      refusals = STEPS.map((_, i) => i === index);
      await assert.rejects(handleGiftWrap(giftWraps, wrap, 'work-owner'), /replica acknowledgement/);
      refusals = [];
      assert.equal(await handleGiftWrap(giftWraps, wrap, 'work-owner'), index === 2 ? 'duplicate' : 'queued');
      assert.equal(await outboundItems(), 1, 'one item queued, never none and never two');
    });
  }
});
