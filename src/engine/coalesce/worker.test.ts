import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../../store/sqlite/index.ts';
import type { StorePort } from '../../store/port.ts';
import type { CoalescePolicy, GroupClaim } from '../../store/port-coalesce.ts';
import { ManualClock } from '../../util/clock.ts';
import { createLogger } from '../../observability/logger.ts';
import { Metrics } from '../../observability/metrics.ts';
import { makeUser, type TestUser } from '../../../test/support/nostr-client.ts';
import { storeOutboundQueue } from '../outbound-queue.ts';
import type { FlushDeps } from './flush.ts';
import { flushClaimed, runCoalesceFlush } from './worker.ts';
import type { OutboundNotification } from '../../notification/types.ts';

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

/** A profile resolver whose lookups wait until released: a flush held up before it queues its summary. */
class HangingProfiles {
  started = 0;
  private readonly waiters: Array<() => void> = [];
  private readonly held: Array<() => void> = [];
  displayName = async (): Promise<string | null> => {
    this.started++;
    for (const wake of this.waiters.splice(0)) wake();
    await new Promise<void>((resolve) => this.held.push(resolve));
    return null;
  };
  /** Resolves once a lookup is in flight. */
  inFlight(): Promise<void> {
    return this.started > 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
  release(): void {
    for (const resolve of this.held.splice(0)) resolve();
  }
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('coalescing flush worker', () => {
  let store: StorePort;
  let clock: ManualClock;
  let metrics: Metrics;
  let deps: FlushDeps;
  let alice: TestUser;
  let counter = 0;

  async function dueGroup(): Promise<void> {
    for (let i = 0; i < 3; i++) {
      await store.ingestCoalesceEvent(
        {
          type: 'like',
          owner: alice.pubkey,
          target: `e:${'f1'.repeat(32)}`,
          actor: makeUser().pubkey,
          eventId: (++counter).toString(16).padStart(64, '0'),
          eventKind: 7,
          createdAt: 1_767_225_600,
          references: {},
        },
        POLICY,
      );
    }
    clock.advance(POLICY.windowSecs * SECOND_MS);
  }

  async function claim(): Promise<GroupClaim> {
    const { claim: claimed } = await store.claimDueCoalesceGroup(300);
    assert.ok(claimed);
    return claimed;
  }

  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 0, 1));
    store = await openSqliteStore({ path: ':memory:', clock });
    metrics = new Metrics();
    alice = makeUser();
    await store.registerToken(alice.pubkey, { token: 'alice-phone', transport: 'fcm' });
    deps = {
      store,
      outbound: storeOutboundQueue(store, () => undefined),
      processedEventTtlSecs: 86_400,
      profiles: { displayName: async () => null },
      policy: POLICY,
      settings: { leaseSecs: 300, retrySecs: 5, pollMs: 5, flushTimeoutMs: 5000 },
      allowedPubkeys: new Set(),
      defaultPreferenceKinds: [7, 16],
      logger: createLogger({ level: 'silent' }),
      metrics,
    };
  });
  afterEach(() => store.close());

  test('the loop flushes due groups into the outbound queue, samples the oldest due age, and stops at shutdown', async () => {
    const queued = async (): Promise<number> => (await store.queueStats('outbound')).ready;
    await dueGroup();
    clock.advance(40 * SECOND_MS);
    const sampled: number[] = [];
    const real = deps.store;
    const sample = real.oldestCoalesceDueAgeSecs.bind(real);
    deps.store = Object.create(real, {
      oldestCoalesceDueAgeSecs: {
        value: async () => {
          const age = await sample();
          sampled.push(age);
          return age;
        },
      },
    }) as StorePort;
    const shutdown = new AbortController();
    const running = runCoalesceFlush(deps, shutdown.signal);
    await until(async () => (await queued()) === 1, 'the summary');
    assert.equal(sampled[0], 40, 'sampled before the claim');
    await until(
      async () => sampled.at(-1) === 0 && /push_coalesce_oldest_due_age_seconds 0/.test(await metrics.render()),
      'the gauge back at 0',
    );
    await dueGroup();
    await until(async () => (await queued()) === 2, 'a second summary');
    shutdown.abort();
    await running;
    const [first] = await store.lease<OutboundNotification>('outbound', { max: 1, leaseMs: 60_000, maxAttempts: 5 });
    assert.match(first?.payload.message.data.body ?? '', /and 1 other liked your post$/);
  });

  test('a flush over its timeout is counted and leaves its lease, so lease expiry returns the work', async () => {
    const hanging = new HangingProfiles();
    deps.profiles = hanging;
    deps.settings = { ...deps.settings, flushTimeoutMs: 50 };
    await dueGroup();
    const claimed = await claim();
    assert.equal(await flushClaimed(deps, claimed, new AbortController().signal), null);
    assert.match(await metrics.render(), /push_coalesce_flush_failures_total\{reason="timeout"\} 1/);
    await new Promise((resolve) => setImmediate(resolve));
    const group = await store.readCoalesceGroup(claimed.groupId);
    assert.equal(group?.leaseToken, claimed.leaseToken, 'still held by the timed-out flush');
    assert.equal(group.pending, 2);
    assert.equal((await store.claimDueCoalesceGroup(300)).claim, null);
    clock.advance(300 * SECOND_MS);
    assert.equal((await store.claimDueCoalesceGroup(300)).claim?.groupId, claimed.groupId, 'recovered after the lease');
    hanging.release();
  });

  test('shutdown before the summary is queued gives the group back at once, queueing nothing', async () => {
    const hanging = new HangingProfiles();
    deps.profiles = hanging;
    await dueGroup();
    const claimed = await claim();
    const shutdown = new AbortController();
    const flushing = flushClaimed(deps, claimed, shutdown.signal);
    await hanging.inFlight();
    shutdown.abort();
    hanging.release();
    assert.equal(await flushing, null);
    assert.equal((await store.queueStats('outbound')).ready, 0);
    const again = await store.claimDueCoalesceGroup(300);
    assert.equal(again.claim?.groupId, claimed.groupId, 'due again without waiting for the lease');
  });

  test('a failing flush is counted and requeued after coalesce_retry_secs', async () => {
    await dueGroup();
    const claimed = await claim();
    const failing = Object.create(store, {
      readCoalesceGroup: { value: async () => Promise.reject(new Error('store hiccup')) },
    }) as StorePort;
    assert.equal(await flushClaimed({ ...deps, store: failing }, claimed, new AbortController().signal), null);
    assert.match(await metrics.render(), /push_coalesce_flush_failures_total\{reason="error"\} 1/);
    assert.equal((await store.claimDueCoalesceGroup(300)).claim, null);
    clock.advance(5 * SECOND_MS);
    assert.equal((await store.claimDueCoalesceGroup(300)).claim?.groupId, claimed.groupId);
  });

  test('dropped entries are counted by the loop', async () => {
    const policy = { ...POLICY, groupTtlSecs: 120 };
    deps.policy = policy;
    for (let i = 0; i < 2; i++) {
      await store.ingestCoalesceEvent(
        {
          type: 'like',
          owner: alice.pubkey,
          target: 'e:x',
          actor: makeUser().pubkey,
          eventId: (++counter).toString(16).padStart(64, '0'),
          eventKind: 7,
          createdAt: 1,
          references: {},
        },
        policy,
      );
    }
    clock.advance(60 * SECOND_MS);
    await claim();
    clock.advance(400 * SECOND_MS);
    const shutdown = new AbortController();
    const running = runCoalesceFlush(deps, shutdown.signal);
    await until(async () => /push_coalesce_skipped_total\{reason="expired"\} 1/.test(await metrics.render()), 'the expired drop');
    shutdown.abort();
    await running;
  });
});
