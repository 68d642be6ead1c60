import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { DeviceRegistration } from '../../src/store/port.ts';
import type { StorePort } from '../../src/store/port.ts';
import type { SendOutcome } from '../../src/delivery/types.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import { VIDEO } from '../../src/nostr/kinds.ts';
import type { NostrEvent } from '../../src/nostr/event.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { WATCHER_WALK_START, type ClaimedFanoutJob } from '../../src/store/port-bells.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { makeUser, type TestUser } from '../support/nostr-client.ts';
import { RecordingTransport, invalidRequest, retryable } from '../support/recording-transport.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { drainOutbound } from '../support/delivery-drain.ts';
import { storeOutboundQueue, type OutboundQueue } from '../../src/engine/outbound-queue.ts';
import { processFanoutJob, runClaimedJob, runNewPostFanout, type NewPostFanoutDeps } from '../../src/engine/bells/fanout-worker.ts';
import { MAX_FANOUT_ATTEMPTS } from '../../src/engine/bells/retry-policy.ts';
import { initialFanoutJob, withNewPostFanout } from '../../src/engine/bells/video.ts';
import type { PushMessage } from '../../src/notification/types.ts';

const SECOND_MS = 1000;
const LEASE_SECS = 1200;
const watcherKey = (n: number): string => n.toString(16).padStart(64, 'b');

/** A transport whose sends take a tick, counting how many are in flight at once. */
class CountingTransport extends RecordingTransport {
  inFlight = 0;
  maxInFlight = 0;
  onSend: ((token: string) => void) | null = null;

  override async sendBatch(devices: DeviceRegistration[], message: PushMessage): Promise<Map<string, SendOutcome>> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    for (const device of devices) this.onSend?.(device.token);
    await new Promise((resolve) => setTimeout(resolve, 1));
    try {
      return await super.sendBatch(devices, message);
    } finally {
      this.inFlight--;
    }
  }
}

interface Harness {
  store: StorePort;
  clock: ManualClock;
  transport: CountingTransport;
  deps: NewPostFanoutDeps;
  creator: TestUser;
  video(tags?: string[][], d?: string): NostrEvent;
  addWatchers(count: number): Promise<string[]>;
  /** Claim and process pages until none is due, then run the delivery stage over the outbound queue; returns the page outcomes. */
  drain(signal?: AbortSignal): Promise<string[]>;
  /** Claim and process pages until none is due (bells queued, nothing sent); returns the page outcomes. */
  drainPages(signal?: AbortSignal, deps?: NewPostFanoutDeps): Promise<string[]>;
  /** One pass of the delivery stage over what is queued. */
  deliver(): Promise<void>;
  enqueue(event: NostrEvent): Promise<void>;
}

async function makeHarness(store: StorePort, clock: ManualClock): Promise<Harness> {
  const transport = new CountingTransport();
  const logger = createLogger({ level: 'silent' });
  const metrics = new Metrics();
  const creator = makeUser();
  const deps: NewPostFanoutDeps = {
    store,
    outbound: storeOutboundQueue(store, () => undefined),
    profiles: { displayName: async () => 'Alice' },
    allowedPubkeys: new Set(),
    defaultPreferenceKinds: [1, 7, 16, 1059, 30023, 34236],
    processedEventTtlSecs: 604_800,
    rateLimitSecs: 3600,
    videoRecordTtlSecs: 365 * 86_400,
    pageSize: 10,
    leaseSecs: LEASE_SECS,
    retrySecs: 5,
    pollMs: 5,
    logger,
    metrics,
  };
  const now = () => Math.floor(clock.nowMs() / SECOND_MS);
  let watcherCount = 0;
  const drainPages = async (signal = new AbortController().signal, pageDeps = deps): Promise<string[]> => {
    const outcomes: string[] = [];
    for (
      let claimed = await store.claimFanoutJob(LEASE_SECS * SECOND_MS);
      claimed;
      claimed = await store.claimFanoutJob(LEASE_SECS * SECOND_MS)
    ) {
      outcomes.push(await processFanoutJob(pageDeps, claimed, signal));
      if (outcomes.length > 10_000) throw new Error('the fan-out does not end');
    }
    return outcomes;
  };
  const deliver = async (): Promise<void> => {
    await drainOutbound(store, [transport], metrics, { videoRecordTtlSecs: 365 * 86_400 });
  };
  return {
    store,
    clock,
    transport,
    deps,
    creator,
    video: (tags = [], d = `vine-${randomUUID()}`) =>
      signEvent({ kind: VIDEO, created_at: now(), tags: [['d', d], ...tags], content: 'look' }, creator.secret),
    async addWatchers(count) {
      const added: string[] = [];
      for (let i = 0; i < count; i++) {
        const watcher = watcherKey(watcherCount++);
        await store.registerToken(watcher, { token: `token-${watcher}`, transport: 'fcm' });
        await store.replaceNotifySubscriptions({
          subscriber: watcher,
          creators: [creator.pubkey],
          createdAt: now(),
          eventId: 'aa'.repeat(32),
        });
        added.push(watcher);
      }
      return added;
    },
    drainPages,
    async drain(signal = new AbortController().signal) {
      const outcomes = await drainPages(signal);
      await deliver();
      return outcomes;
    },
    deliver,
    async enqueue(event) {
      await withNewPostFanout(
        { store, processedEventTtlSecs: 604_800, maxEventAgeSecs: 3600, clock, logger },
        { event, context: 'live', relay: 'ws://r', receivedAtMs: clock.nowMs() },
        async () => undefined,
      );
    },
  };
}

const tokensSent = (h: Harness): string[] => h.transport.sent.map((s) => s.token);

function countsPerToken(tokens: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
  return counts;
}

let redis: PrivateRedisServer | undefined;
before(async () => {
  redis = await startRedisServer();
});
after(async () => {
  await redis?.stop();
});

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`new-post fan-out worker (${adapter})`, () => {
    let h: Harness;

    beforeEach(async () => {
      const clock = new ManualClock(Date.UTC(2026, 4, 1));
      if (!redis) throw new Error('redis-server did not start');
      const store =
        adapter === 'sqlite'
          ? await openSqliteStore({ path: ':memory:', clock })
          : await openRedisStore({ url: redis.url, clock, keyPrefix: `t-${randomUUID()}:` });
      h = await makeHarness(store, clock);
    });
    afterEach(() => h.store.close());

    test('150 watchers, pages of 10: the handler only queues the fan-out, the pages only queue bells, the delivery stage sends exactly 150', async () => {
      const watchers = await h.addWatchers(150);
      const video = h.video();
      await h.enqueue(video);
      assert.equal(h.transport.sent.length, 0, 'the engine only queues the fan-out');
      assert.deepEqual(await h.store.fanoutJobStats(), { due: 1, waiting: 0 });

      const outcomes = await h.drainPages(undefined, { ...h.deps, enqueueBatchSize: 4 });
      assert.ok(outcomes.length > 1, `more than one page (${outcomes.length})`);
      assert.ok(outcomes.every((o) => o === 'completed'));
      assert.equal(h.transport.sent.length, 0, 'the pages only queue');
      assert.deepEqual((await h.store.queueStats('outbound')).lanes.normal, { ready: 150, leased: 0 }, 'relay notifications: normal lane');
      await h.deliver();
      const counts = countsPerToken(tokensSent(h));
      assert.equal(h.transport.sent.length, 150);
      assert.deepEqual([...counts.keys()].sort(), watchers.map((w) => `token-${w}`).sort());
      const data = h.transport.sent[0]?.message.data;
      assert.equal(data?.type, 'newPost');
      assert.equal(data.title, 'New vine');
      assert.equal(data.body, 'Alice posted a new vine');
      assert.equal(data.referencedAddress, `${VIDEO}:${h.creator.pubkey}:${video.tags[0]?.[1]}`);
      assert.deepEqual(await h.store.fanoutJobStats(), { due: 0, waiting: 0 });

      await h.enqueue(video);
      assert.deepEqual(await h.store.fanoutJobStats(), { due: 0, waiting: 0 }, 'the same video is never queued twice');
    });
  });
}

describe('new-post fan-out worker rules', () => {
  let h: Harness;

  beforeEach(async () => {
    const clock = new ManualClock(Date.UTC(2026, 4, 1));
    h = await makeHarness(await openSqliteStore({ path: ':memory:', clock }), clock);
  });
  afterEach(() => h.store.close());

  test('a cancelled page sends nothing and is released at once', async () => {
    await h.addWatchers(3);
    await h.enqueue(h.video());
    const claimed = await h.store.claimFanoutJob(LEASE_SECS * SECOND_MS);
    assert.ok(claimed);
    const controller = new AbortController();
    controller.abort();
    assert.equal(await processFanoutJob(h.deps, claimed, controller.signal), 'released');
    assert.equal((await h.store.queueStats('outbound')).ready, 0, 'nothing queued');
    assert.deepEqual(await h.store.fanoutJobStats(), { due: 1, waiting: 0 }, 'due now for the next worker');
  });

  test('shutdown mid-page stops between queueing steps and releases the page; the next worker queues the rest, nobody twice', async () => {
    await h.addWatchers(10);
    await h.enqueue(h.video());
    const controller = new AbortController();
    const real = h.deps.outbound;
    const stopping: OutboundQueue = {
      enqueue: (n, lane) => real.enqueue(n, lane),
      async claimAndEnqueue(notifications, ttl, lane) {
        const taken = await real.claimAndEnqueue(notifications, ttl, lane);
        controller.abort();
        return taken;
      },
    };
    const claimed = await h.store.claimFanoutJob(LEASE_SECS * SECOND_MS);
    assert.ok(claimed);
    const deps = { ...h.deps, outbound: stopping, enqueueBatchSize: 3 };
    assert.equal(await processFanoutJob(deps, claimed, controller.signal), 'released');
    assert.equal((await h.store.queueStats('outbound')).ready, 3, 'the step under way finished; no more began');
    assert.deepEqual(await h.drain(), ['completed']);
    assert.equal(h.transport.sent.length, 10, 'the next worker queues the rest; nobody twice');
    assert.equal(new Set(tokensSent(h)).size, 10);
  });

  test('a worker killed mid-page leaves its claimed bells queued: the returned page skips them, nobody is lost or belled twice', async () => {
    await h.addWatchers(3);
    const video = h.video();
    await h.enqueue(video);
    const claimed = await h.store.claimFanoutJob(LEASE_SECS * SECOND_MS);
    assert.ok(claimed, 'the killed worker’s lease');
    const real = h.deps.outbound;
    let steps = 0;
    const dying: OutboundQueue = {
      enqueue: (n, lane) => real.enqueue(n, lane),
      async claimAndEnqueue(notifications, ttl, lane) {
        if (++steps > 1) return new Promise<boolean[]>(() => undefined); // the process is gone
        return real.claimAndEnqueue(notifications, ttl, lane);
      },
    };
    void processFanoutJob({ ...h.deps, outbound: dying, enqueueBatchSize: 1 }, claimed, new AbortController().signal);
    await new Promise((resolve) => setImmediate(resolve));
    while ((await h.store.queueStats('outbound')).ready < 1) await new Promise((resolve) => setImmediate(resolve));
    h.clock.advance(LEASE_SECS * SECOND_MS);
    assert.deepEqual(await h.drain(), ['completed']);
    assert.equal(h.transport.sent.length, 3);
    assert.equal(new Set(tokensSent(h)).size, 3, 'each watcher once');
    h.clock.advance(LEASE_SECS * SECOND_MS);
    const [watcher] = tokensSent(h);
    assert.equal(
      await h.store.claimRecipientDelivery(video.id, (watcher ?? '').replace('token-', ''), 60),
      null,
      'a queued bell’s claim holds for the processed-event TTL',
    );
  });

  test('mentioned watchers are left to the mention: the page excludes them', async () => {
    const [mentioned, other] = await h.addWatchers(2);
    await h.enqueue(h.video([['p', mentioned ?? '']]));
    await h.drain();
    assert.deepEqual(tokensSent(h), [`token-${other}`]);
  });

  test('a retryable failure is retried by the outbound queue after Retry-After, not by the page; only the failed watcher is sent again', async () => {
    const [first, second, third] = await h.addWatchers(3);
    h.transport.script.set(`token-${second}`, retryable(120));
    await h.enqueue(h.video());
    assert.deepEqual(await h.drain(), ['completed'], 'the page is done once its bells are queued');
    assert.deepEqual(tokensSent(h).sort(), [`token-${first}`, `token-${third}`].sort());
    assert.equal(await h.store.isNewPostRateLimited(second ?? '', h.creator.pubkey), false, 'a failed send opens no rate window');
    assert.equal((await h.store.queueStats('outbound')).ready, 1, 'the failed bell waits in the outbound queue');

    h.transport.script.delete(`token-${second}`);
    h.clock.advance(120 * SECOND_MS - 1);
    await h.deliver();
    assert.equal(h.transport.sent.length, 2, 'Retry-After is a floor');
    h.clock.advance(1);
    await h.deliver();
    assert.deepEqual([...countsPerToken(tokensSent(h)).values()], [1, 1, 1]);
    assert.equal(await h.store.isNewPostRateLimited(second ?? '', h.creator.pubkey), true);
  });

  test('one bell per creator per rate window: a second video is suppressed and recorded, so its edit stays quiet', async () => {
    const [watcher] = await h.addWatchers(1);
    await h.enqueue(h.video());
    await h.drain();
    assert.equal(await h.store.isNewPostRateLimited(watcher ?? '', h.creator.pubkey), true, 'the delivered bell opened the window');

    const second = h.video([], 'second-vine');
    await h.enqueue(second);
    await h.drain();
    assert.equal(h.transport.sent.length, 1, 'rate-limited');
    const record = { type: 'newPost', owner: h.creator.pubkey, dTag: 'second-vine', recipient: watcher ?? '' };
    assert.equal(await h.store.hasVideoRecord(record), true, 'the suppressed video is recorded');

    h.clock.advance(3601 * SECOND_MS);
    await h.enqueue(h.video([], 'second-vine'));
    await h.drain();
    assert.equal(h.transport.sent.length, 1, 'an edit of the suppressed video is not announced after the window');
  });

  test('a failed send (not retryable) keeps the claim and opens no window', async () => {
    const [watcher] = await h.addWatchers(1);
    h.transport.script.set(`token-${watcher}`, invalidRequest);
    await h.enqueue(h.video());
    assert.deepEqual(await h.drain(), ['completed']);
    assert.equal(await h.store.isNewPostRateLimited(watcher ?? '', h.creator.pubkey), false);
  });

  test('a bell does not stop a later mention of the same video; a watcher without bells enabled gets nothing', async () => {
    const [belled, muted] = await h.addWatchers(2);
    await h.store.setPreferences(muted ?? '', { kinds: [1], campaignsEnabled: false });
    const video = h.video([], 'shared');
    await h.enqueue(video);
    await h.drain();
    assert.deepEqual(tokensSent(h), [`token-${belled}`]);
    const record = { owner: h.creator.pubkey, dTag: 'shared', recipient: belled ?? '' };
    assert.equal(await h.store.hasVideoRecord({ ...record, type: 'newPost' }), true);
    assert.equal(await h.store.hasVideoRecord({ ...record, type: 'mention' }), false, 'a bell writes only its own record');
  });

  test('a job past its expires_at is discarded and counted', async () => {
    await h.addWatchers(1);
    await h.enqueue(h.video());
    h.clock.advance(604_800 * SECOND_MS);
    assert.deepEqual(await h.drain(), ['discarded']);
    assert.equal(h.transport.sent.length, 0);
    assert.match(await h.deps.metrics.render(), /push_new_post_fanout_retries_total\{reason="lifetime",outcome="expired"\} 1/);
  });

  test('a job that holds no usable video is discarded', async () => {
    await h.store.enqueueFanoutJob(
      'bad',
      { eventJson: 'not json', cursor: WATCHER_WALK_START, senderName: null, attempt: 0, expiresAt: 2_000_000_000 },
      60,
    );
    await h.store.enqueueFanoutJob(
      'note',
      {
        eventJson: JSON.stringify({ ...h.video(), kind: 1 }),
        cursor: WATCHER_WALK_START,
        senderName: null,
        attempt: 0,
        expiresAt: 2_000_000_000,
      },
      60,
    );
    assert.deepEqual(await h.drain(), ['discarded', 'discarded']);
  });

  test(`after ${MAX_FANOUT_ATTEMPTS} attempts a page is dropped, but its known successor is queued with the inherited delay`, async () => {
    await h.addWatchers(12);
    const video = h.video();
    const nowSecs = Math.floor(h.clock.nowMs() / SECOND_MS);
    await h.store.enqueueFanoutJob(video.id, { ...initialFanoutJob(video, nowSecs, 604_800), attempt: MAX_FANOUT_ATTEMPTS - 1 }, 60);
    const failingQueue: OutboundQueue = {
      enqueue: async () => Promise.reject(new Error('store down')),
      claimAndEnqueue: async () => Promise.reject(new Error('store down')),
    };
    assert.deepEqual(await h.drainPages(undefined, { ...h.deps, outbound: failingQueue }), ['discarded']);
    assert.deepEqual(await h.store.fanoutJobStats(), { due: 0, waiting: 1 }, 'the successor waits, it is not due at once');
    assert.match(await h.deps.metrics.render(), /push_new_post_fanout_retries_total\{reason="delivery",outcome="exhausted"\} 1/);
    h.clock.advance(300 * SECOND_MS);
    const successor = await h.store.claimFanoutJob(LEASE_SECS * SECOND_MS);
    assert.ok(successor?.job);
    assert.notEqual(successor.job.cursor, WATCHER_WALK_START);
    assert.equal(successor.job.attempt, 0);
    assert.equal(successor.job.senderName, 'Alice', 'the resolved name is carried forward');
  });

  test('a watcher-page read failure schedules a retry', async () => {
    await h.addWatchers(1);
    await h.enqueue(h.video());
    const broken = Object.create(h.store) as StorePort;
    broken.notifyWatchersPage = async () => {
      throw new Error('read failed');
    };
    const claimed = await h.store.claimFanoutJob(LEASE_SECS * SECOND_MS);
    assert.ok(claimed);
    assert.equal(await processFanoutJob({ ...h.deps, store: broken }, claimed, new AbortController().signal), 'retried');
    assert.match(await h.deps.metrics.render(), /reason="watcher_page_read",outcome="scheduled"\} 1/);
  });

  test('a store error on the queue preserves the page as it is, due after the base delay', async () => {
    await h.addWatchers(1);
    await h.enqueue(h.video());
    const broken = Object.create(h.store) as StorePort;
    broken.completeFanoutJob = async () => {
      throw new Error('write failed');
    };
    const claimed = (await h.store.claimFanoutJob(LEASE_SECS * SECOND_MS)) as ClaimedFanoutJob;
    assert.equal(await runClaimedJob({ ...h.deps, store: broken }, claimed, new AbortController().signal), null);
    assert.match(await h.deps.metrics.render(), /reason="worker_error",outcome="preserved"\} 1/);
    h.clock.advance(5 * SECOND_MS);
    const again = await h.store.claimFanoutJob(LEASE_SECS * SECOND_MS);
    assert.equal(again?.member, claimed.member, 'the same member, attempt count unchanged');
    assert.equal(await processFanoutJob(h.deps, again, new AbortController().signal), 'completed');
    await h.deliver();
    assert.equal(h.transport.sent.length, 1, 'the watcher already queued is not queued again');
  });

  test('runNewPostFanout walks queued jobs until aborted', async () => {
    await h.addWatchers(25);
    await h.enqueue(h.video());
    const controller = new AbortController();
    const done = runNewPostFanout(h.deps, controller.signal);
    const deadline = Date.now() + 30_000;
    while ((await h.store.fanoutJobStats()).due + (await h.store.fanoutJobStats()).waiting > 0) {
      assert.ok(Date.now() < deadline, 'the walk ends');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    controller.abort();
    await done;
    await h.deliver();
    assert.equal(h.transport.sent.length, 25);
    assert.deepEqual(await h.store.fanoutJobStats(), { due: 0, waiting: 0 });
  });
});
