/**
 * The NIP-9a gateway's delivery policy with an injected clock, on both stores: a real relay, the
 * real gateway watching it, the real durable queue and a real HTTP receiver on loopback. Time
 * only moves when the test moves it, so the retry schedule (30 s, then 120 s) is asserted to the
 * millisecond without waiting for it.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { defaultConfig } from '../../src/config/defaults.ts';
import { gatewaySettings, type GatewaySettings } from '../../src/nip9a/gateway/config.ts';
import { nip9aDeliveryHandler } from '../../src/nip9a/gateway/delivery.ts';
import { createCallbackPoster } from '../../src/nip9a/gateway/callback-post.ts';
import { OutboundPolicy } from '../../src/net/public-connect.ts';
import { Nip9aGateway, type Nip9aDelivery } from '../../src/nip9a/gateway/gateway.ts';
import { gatewayMetrics, type GatewayMetrics } from '../../src/nip9a/gateway/metrics.ts';
import { parseNip9aRegistration } from '../../src/nip9a/registration.ts';
import { createEventVerifier, type NostrEvent } from '../../src/nostr/event.ts';
import { signEvent } from '../../src/nostr/keys.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import type { LeasedItem, StorePort } from '../../src/store/port.ts';
import { openRedisStore } from '../../src/store/redis/index.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { startCallbackReceiver, type CallbackReceiver } from '../support/callback-receiver.ts';
import { makeUser, type TestUser } from '../support/nostr-client.ts';
import { publish } from '../support/publisher.ts';
import { startRedisServer, type PrivateRedisServer } from '../support/redis-server.ts';
import { startTestRelay, type TestRelay } from '../support/relay.ts';
import { QueueSignal, type WorkOutcome } from '../../src/store/queue-work.ts';

const LEASE = { max: 10, leaseMs: 30_000, maxAttempts: 4 };
const REGISTERED_AT = Math.floor(Date.UTC(2026, 0, 1) / 1000);
const logger = createLogger({ level: 'silent' });

/** Poll a condition the test cannot be signalled about (a socket in another component); generous bound. */
async function until(what: string, predicate: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

let redis: PrivateRedisServer | undefined;
before(async () => {
  redis = await startRedisServer();
});
after(async () => {
  await redis?.stop();
});

const stores: Array<[string, (clock: ManualClock) => Promise<StorePort>]> = [
  ['sqlite', (clock) => openSqliteStore({ path: ':memory:', clock })],
  [
    'redis',
    (clock) => {
      if (!redis) throw new Error('no redis');
      return openRedisStore({ url: redis.url, clock, keyPrefix: `t-${randomUUID()}:` });
    },
  ],
];

for (const [storeName, makeStore] of stores) {
  describe(`NIP-9a gateway delivery (${storeName})`, () => {
    let clock: ManualClock;
    let store: StorePort;
    let relay: TestRelay;
    let receiver: CallbackReceiver;
    let callbacks: ReturnType<typeof createCallbackPoster>;
    /** Ids of the events the gateway checked (id and signature). */
    let checkedIds: string[];
    let gateway: Nip9aGateway;
    let metrics: GatewayMetrics;
    let settings: GatewaySettings;
    let handle: (item: LeasedItem<Nip9aDelivery>) => Promise<WorkOutcome>;
    let wake: QueueSignal;
    const author: TestUser = makeUser();
    const poster: TestUser = makeUser();
    const recipient = makeUser().pubkey;
    // The test relay is on loopback, admitted as the test-suite setting admits it.
    const relayPolicy = new OutboundPolicy({ purpose: 'nip9a_relay', rules: { allowLoopback: true, allowPrivate: false } });

    beforeEach(async () => {
      clock = new ManualClock();
      store = await makeStore(clock);
      relay = await startTestRelay();
      receiver = await startCallbackReceiver();
      settings = gatewaySettings({ ...defaultConfig().nip9a, allow_loopback_callbacks: 'true' });
      metrics = gatewayMetrics(new Metrics());
      wake = new QueueSignal();
      const inline = await createEventVerifier();
      checkedIds = [];
      // As the crypto pool's verifier: checked through verifyAsync (here on this thread, counted).
      const verifier = {
        verify: (e: NostrEvent) => inline.verify(e),
        verifyAsync: async (e: NostrEvent) => (checkedIds.push(e.id), inline.verify(e)),
      };
      gateway = new Nip9aGateway({ store, settings, verifier, clock, logger, metrics, wake, relayPolicy });
      callbacks = createCallbackPoster({ allowLoopback: true });
      handle = nip9aDeliveryHandler({
        store,
        settings,
        metrics,
        logger,
        post: callbacks.post,
        reportRefusal: () => assert.fail('no refusal expected'),
        onSettled: (r) => gateway.settled(r),
      });
    });

    afterEach(async () => {
      gateway.stop();
      await callbacks.close();
      await receiver.stop();
      await relay.stop();
      await store.close();
    });

    async function register(extraTags: string[][] = []): Promise<NostrEvent> {
      const event = signEvent(
        {
          kind: 30390,
          created_at: REGISTERED_AT,
          content: '',
          tags: [
            ['d', 'inbox'],
            ['relay', relay.url],
            ['filter', JSON.stringify({ kinds: [1], '#p': [recipient] })],
            ['ignore', JSON.stringify({ '#t': ['muted'] })],
            ['callback', `${receiver.baseUrl}/cb/secret-token`],
            ...extraTags,
          ],
        },
        author.secret,
      );
      const checked = parseNip9aRegistration(event, { callbackPolicy: settings.policy });
      assert.ok(checked.ok, checked.ok ? '' : checked.reason);
      const result = await store.putNip9aRegistration(
        {
          pubkey: event.pubkey,
          d: 'inbox',
          eventId: event.id,
          createdAt: event.created_at,
          relays: checked.registration.relays,
          eventJson: JSON.stringify(event),
        },
        settings.registrationLimits,
      );
      assert.equal(result.outcome, 'stored');
      await gateway.start();
      await until('the gateway to subscribe at the relay', () => relay.requests().length > 0);
      return event;
    }

    function note(tags: string[][]): NostrEvent {
      return signEvent({ kind: 1, created_at: Math.floor(Date.now() / 1000), content: `hello ${randomUUID()}`, tags }, poster.secret);
    }

    /** Publish, and wait until the gateway queued its delivery. */
    async function publishMatching(tags: string[][] = [['p', recipient]]): Promise<NostrEvent> {
      const event = note(tags);
      await publish(relay.url, event);
      await until('the delivery to be queued', async () => (await store.queueStats('nip9a')).ready === 1);
      return event;
    }

    /** Lease what is due and run each item through the handler, settling it as the queue worker would. */
    async function runDue(): Promise<WorkOutcome[]> {
      const items = await store.lease<Nip9aDelivery>('nip9a', LEASE);
      const outcomes: WorkOutcome[] = [];
      for (const item of items) {
        const outcome = await handle(item);
        outcomes.push(outcome);
        if (outcome.kind === 'retry') await store.retry('nip9a', item.id, item.leaseToken, clock.nowMs() + outcome.afterMs, outcome.error);
        else await store.ack('nip9a', item.id, item.leaseToken);
      }
      return outcomes;
    }

    test('a delivery the store took but did not acknowledge (issue 42) is asked again in place and queued once', async () => {
      gateway.stop();
      let lostAnswers = 2;
      const flaky = new Proxy(store, {
        get(target, property, receiver) {
          if (property !== 'enqueue') return Reflect.get(target, property, receiver) as unknown;
          return async (...args: Parameters<StorePort['enqueue']>) => {
            const added = await target.enqueue(...args);
            if (lostAnswers-- > 0) throw new Error('applied, answer lost');
            return added;
          };
        },
      });
      gateway = new Nip9aGateway({
        store: flaky,
        settings,
        verifier: await createEventVerifier(),
        clock,
        logger,
        metrics,
        wake,
        relayPolicy,
      });
      await register();
      const event = await publishMatching();
      await until('both lost answers to be asked again', () => lostAnswers < 0);
      assert.equal((await store.queueStats('nip9a')).ready, 1, 'one delivery queued');
      assert.deepEqual(await runDue(), [{ kind: 'done' }]);
      assert.deepEqual(
        receiver.received.map((request) => (JSON.parse(request.body) as { id: string }).id),
        [event.id],
      );
    });

    test('503 is retried after 30 s, then after 120 s; the POST carries {id, relay} as JSON; success is recorded once', async () => {
      await register();
      const statuses = [503, 503, 200];
      receiver.answer = (_request, index) => ({ status: statuses[index] ?? 200 });
      const event = await publishMatching();

      assert.deepEqual(await runDue(), [{ kind: 'retry', afterMs: 30_000, error: '5xx' }]);
      clock.advance(29_999);
      assert.deepEqual(await runDue(), [], 'nothing is due one millisecond before 30 s');
      clock.advance(1);
      assert.deepEqual(await runDue(), [{ kind: 'retry', afterMs: 120_000, error: '5xx' }]);
      clock.advance(119_999);
      assert.deepEqual(await runDue(), []);
      clock.advance(1);
      assert.deepEqual(await runDue(), [{ kind: 'done' }]);

      assert.equal(receiver.received.length, 3);
      for (const request of receiver.received) {
        assert.equal(request.method, 'POST');
        assert.equal(request.path, '/cb/secret-token');
        assert.equal(request.headers['content-type'], 'application/json');
        assert.equal(request.headers.cookie, undefined);
        assert.equal(request.headers.authorization, undefined);
        assert.deepEqual(JSON.parse(request.body), { id: event.id, relay: `${relay.url}/` });
      }
      // The same event again (a resubscription overlap): the recorded outcome stops it.
      gateway.onEvent(`${relay.url}/`, event, clock.nowMs());
      await until('the repeat to be queued', async () => (await store.queueStats('nip9a')).ready === 1);
      assert.deepEqual(await runDue(), [{ kind: 'done' }]);
      assert.equal(receiver.received.length, 3, 'a delivery with a recorded outcome is not POSTed again');
    });

    test('include_event sends the complete event; an ignore match and a non-matching event queue nothing', async () => {
      await register([['include_event']]);
      await publish(
        relay.url,
        note([
          ['p', recipient],
          ['t', 'muted'],
        ]),
        note([['p', poster.pubkey]]),
      );
      const event = await publishMatching();
      assert.deepEqual(await runDue(), [{ kind: 'done' }]);
      assert.equal(receiver.received.length, 1);
      assert.deepEqual(JSON.parse(receiver.received[0]?.body ?? ''), { id: event.id, relay: `${relay.url}/`, event });
      assert.equal((await metrics.matched.get()).values[0]?.value, 1);
    });

    test('404 deletes the registration and ends the delivery', async () => {
      await register();
      receiver.answer = () => ({ status: 404 });
      await publishMatching();
      assert.deepEqual(await runDue(), [{ kind: 'done' }]);
      assert.equal(await store.getNip9aRegistration(author.pubkey, 'inbox'), null);
      const { ready, leased, dead } = await store.queueStats('nip9a');
      assert.deepEqual({ ready, leased, dead }, { ready: 0, leased: 0, dead: 0 });
    });

    test('a redirect (here to a private address) is never followed and ends the delivery', async () => {
      await register();
      receiver.answer = () => ({ status: 302, headers: { location: 'http://10.0.0.1/steal' } });
      await publishMatching();
      assert.deepEqual(await runDue(), [{ kind: 'done' }]);
      assert.equal(receiver.received.length, 1);
      const outcomes = (await metrics.outcomes.get()).values;
      assert.deepEqual(
        outcomes.map((v) => [v.labels.outcome, v.value]),
        [['redirect_refused', 1]],
      );
    });

    test('other 4xx end at once; 429 and 5xx stop after 4 attempts (30, 120, 600 s)', async () => {
      await register();
      receiver.answer = () => ({ status: 429 });
      await publishMatching();
      const delays: number[] = [];
      for (;;) {
        const [outcome] = await runDue();
        assert.ok(outcome);
        if (outcome.kind !== 'retry') break;
        delays.push(outcome.afterMs);
        clock.advance(outcome.afterMs);
      }
      assert.deepEqual(delays, [30_000, 120_000, 600_000]);
      assert.equal(receiver.received.length, 4);
    });

    test('each attempt re-checks the registration: deleted after queueing, nothing is POSTed', async () => {
      await register();
      await publishMatching();
      assert.equal(await store.deleteNip9aRegistration(author.pubkey, 'inbox'), true);
      assert.deepEqual(await runDue(), [{ kind: 'done' }]);
      assert.equal(receiver.received.length, 0);
    });

    test('after the relay drops the connection the gateway reconnects, resubscribes and keeps matching', async () => {
      await register();
      await publishMatching();
      const subscriptions = relay.requests().length;
      relay.dropConnections();
      await until('the gateway to subscribe again', () => relay.requests().length > subscriptions);
      await publish(relay.url, note([['p', recipient]]));
      await until('the second delivery to be queued', async () => (await store.queueStats('nip9a')).ready === 2);
    });

    test('only matched events are checked; a matched one with a bad signature is dropped and counted, never queued', async () => {
      await register();
      const unrelated = note([['p', 'f'.repeat(64)]]);
      const genuine = note([['p', recipient]]);
      const forged = { ...note([['p', recipient]]), sig: genuine.sig };
      const watched = gateway.status()[0]?.relay ?? assert.fail('the gateway watches the relay');
      gateway.onEvent(watched, unrelated, clock.nowMs());
      gateway.onEvent(watched, forged, clock.nowMs());
      gateway.onEvent(watched, genuine, clock.nowMs());
      await until('the genuine delivery to be queued', async () => (await store.queueStats('nip9a')).ready === 1);
      assert.deepEqual(checkedIds, [forged.id, genuine.id], 'the event nothing matched was never checked');
      const dropped = (await metrics.dropped.get()).values;
      assert.deepEqual(
        dropped.map((v) => [v.labels.reason, v.value]),
        [['bad_signature', 1]],
      );
      const [item] = await store.lease<Nip9aDelivery>('nip9a', LEASE);
      assert.equal(item?.payload.event.id, genuine.id);
    });

    test('a full relay drops new work and counts it, without blocking', async () => {
      settings.maxPendingPerRelay = 1;
      await register();
      await publishMatching();
      await publish(relay.url, note([['p', recipient]]));
      await until('the drop to be counted', async () => ((await metrics.dropped.get()).values[0]?.value ?? 0) === 1);
      assert.equal((await store.queueStats('nip9a')).ready, 1);
      const pendingGauge = async (): Promise<number> => (await metrics.pendingDeliveries.get()).values[0]?.value ?? -1;
      assert.equal(await pendingGauge(), 1, 'the queued delivery holds the one place, and the gauge shows it');
      assert.deepEqual(await runDue(), [{ kind: 'done' }]);
      assert.equal(receiver.received.length, 1, 'the queued delivery was POSTed');
      assert.equal(await pendingGauge(), 0, 'a settled delivery frees its place in the gauge too');
    });
  });
}
