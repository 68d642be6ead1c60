import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createEventVerifier, type NostrEvent } from '../nostr/event.ts';
import { generateSecretKey, publicKeyOf, signEvent } from '../nostr/keys.ts';
import { Metrics } from '../observability/metrics.ts';
import { FakeSocket, FakeTimers, MemoryCursorStore, RecordingSink, silentLogger } from '../../test/listener/fakes.ts';
import { RelayCursor } from './cursor.ts';
import { LogThrottle } from './log-throttle.ts';
import { FRAME_QUEUE_HIGH_WATER, RelaySession, SINK_RETRY_DELAYS_MS, type SessionPool } from './relay-session.ts';
import { SeenIds } from './seen-ids.ts';
import { LIVE_EVENTS_SUBSCRIPTION_ID, LIVE_NOTIFY_LISTS_SUBSCRIPTION_ID } from './subscriptions.ts';

const RELAY = 'wss://relay.example';
const WINDOW_MS = 1_000;
const serviceSecret = generateSecretKey();
const author = generateSecretKey();

async function setup(replay: { processWindowDays: number; notifyListHistoryLimit: number; pageTimeoutMs: number } | null = null) {
  const timers = new FakeTimers();
  const socket = new FakeSocket();
  const sink = new RecordingSink();
  const metrics = new Metrics();
  const store = new MemoryCursorStore();
  const seen = new SeenIds(1_000);
  const pool: SessionPool = {
    isSeen: (id) => seen.has(id),
    async deliver(event, context, relay, receivedAtMs) {
      if (seen.has(event.id)) return 'duplicate';
      seen.add(event.id);
      try {
        await sink.sink({ event, context, relay, receivedAtMs });
      } catch (error) {
        seen.delete(event.id);
        throw error;
      }
      return 'taken';
    },
  };
  const teardowns: string[] = [];
  const replayDone: boolean[] = [];
  const logger = silentLogger();
  const cursor = new RelayCursor({ relay: RELAY, store, clock: timers.clock, timers, logger });
  const session = new RelaySession({
    relay: RELAY,
    socket,
    clock: timers.clock,
    timers,
    logger,
    metrics,
    throttle: new LogThrottle(timers.clock),
    verifier: await createEventVerifier(),
    servicePubkey: publicKeyOf(serviceSecret),
    serviceSecretKeyHex: serviceSecret,
    liveKinds: [1, 3079, 3080, 3083],
    cursor,
    pool,
    watchdog: { silenceTimeoutMs: WINDOW_MS, closedGraceMs: 100, rateLimitBackoffMs: 500 },
    replay,
    onReplayDone: () => replayDone.push(true),
    onLiveEvent: () => {},
    onTeardown: (why) => teardowns.push(why),
  });
  const begun = session.begin();
  if (replay === null) await begun;
  const nowSecs = () => Math.floor(timers.clock.nowMs() / 1000);
  const note = (content = 'hi', createdAt = nowSecs()): NostrEvent =>
    signEvent({ kind: 1, created_at: createdAt, tags: [], content }, author);
  const feed = (frame: unknown) => session.receive(Buffer.from(typeof frame === 'string' ? frame : JSON.stringify(frame)), false);
  return { timers, socket, sink, metrics, store, session, teardowns, cursor, note, feed, nowSecs, begun, replayDone };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('RelaySession', () => {
  test('opens the two live subscriptions with since one hour back when there is no cursor', async () => {
    const { socket, nowSecs } = await setup();
    assert.deepEqual(socket.sentOf('REQ'), [
      ['REQ', LIVE_EVENTS_SUBSCRIPTION_ID, { kinds: [1, 3079, 3080, 3083], since: nowSecs() - 3_600 }],
      ['REQ', LIVE_NOTIFY_LISTS_SUBSCRIPTION_ID, { kinds: [30000], '#d': ['notify'], since: nowSecs() - 3_600 }],
    ]);
  });

  test('a slow sink pauses the socket and resumes it once the queue drained', async () => {
    const { socket, sink, feed, note } = await setup();
    sink.block();
    const events = Array.from({ length: FRAME_QUEUE_HIGH_WATER + 8 }, (_, i) => note(`n${i}`));
    for (const event of events) feed(['EVENT', LIVE_EVENTS_SUBSCRIPTION_ID, event]);
    assert.equal(socket.pauses, 1);
    assert.equal(socket.resumes, 0);
    sink.release();
    await sink.waitFor((a) => a.length === events.length);
    await settle();
    assert.equal(socket.resumes, 1);
    assert.deepEqual(
      sink.ids(),
      events.map((e) => e.id),
    );
  });

  test('no silence recovery fires while the sink is blocked', async () => {
    const { socket, sink, feed, note, timers } = await setup();
    sink.block();
    feed(['EVENT', LIVE_EVENTS_SUBSCRIPTION_ID, note()]);
    feed(['EVENT', LIVE_EVENTS_SUBSCRIPTION_ID, note('second')]);
    await settle();
    timers.advance(WINDOW_MS * 3);
    assert.equal(socket.sentOf('REQ').length, 2, 'only the initial REQs');
    sink.release();
    await sink.waitFor((a) => a.length === 2);
    await settle();
    timers.advance(WINDOW_MS);
    assert.equal(socket.sentOf('REQ').length, 4, 'silence after the backlog resubscribes');
  });

  test('silence resubscribes from the cursor minus the overlap, then tears the connection down', async () => {
    const { socket, sink, feed, note, timers, teardowns, metrics } = await setup();
    const event = note('x');
    feed(['EVENT', LIVE_EVENTS_SUBSCRIPTION_ID, event]);
    await sink.waitForId(event.id);
    await settle();
    timers.advance(WINDOW_MS);
    const reqs = socket.sentOf('REQ');
    assert.equal(reqs.length, 4);
    assert.deepEqual(reqs[2], ['REQ', LIVE_EVENTS_SUBSCRIPTION_ID, { kinds: [1, 3079, 3080, 3083], since: event.created_at - 600 }]);
    // A length, not deepEqual(teardowns, []): that would narrow the array to never[] for tsc.
    assert.equal(teardowns.length, 0);
    timers.advance(WINDOW_MS);
    assert.equal(teardowns.length, 1);
    assert.match(teardowns[0] ?? '', /did not resume/);
    const recoveries = (await metrics.relayRecoveries.get()).values;
    assert.ok(recoveries.some((v) => v.labels.trigger === 'silence' && v.labels.action === 'resubscribe' && v.value === 1));
    assert.ok(recoveries.some((v) => v.labels.trigger === 'silence' && v.labels.action === 'reconnect' && v.value === 1));
  });

  test('answers an AUTH challenge and re-sends a subscription closed with auth-required', async () => {
    const { socket, feed, metrics } = await setup();
    feed(['AUTH', 'challenge-123']);
    await settle();
    const auth = socket.sentOf('AUTH')[0];
    const authEvent = auth?.[1] as NostrEvent;
    assert.equal(authEvent.kind, 22242);
    assert.equal(authEvent.pubkey, publicKeyOf(serviceSecret));
    assert.deepEqual(authEvent.tags, [
      ['relay', RELAY],
      ['challenge', 'challenge-123'],
    ]);
    feed(['CLOSED', LIVE_EVENTS_SUBSCRIPTION_ID, 'auth-required: please authenticate']);
    await settle();
    assert.equal(socket.sentOf('REQ').length, 2);
    feed(['OK', authEvent.id, true, '']);
    await settle();
    assert.equal(socket.sentOf('REQ').length, 4, 'both live REQs again after AUTH');
    assert.equal((await metrics.relayRecoveries.get()).values.length, 0, 'not counted as a CLOSED recovery');
  });

  test('a rate-limited CLOSED waits before resubscribing', async () => {
    const { socket, feed, timers } = await setup();
    feed(['CLOSED', LIVE_EVENTS_SUBSCRIPTION_ID, 'rate-limited: slow down']);
    await settle();
    assert.equal(socket.sentOf('REQ').length, 2);
    timers.advance(499);
    assert.equal(socket.sentOf('REQ').length, 2);
    timers.advance(1);
    assert.equal(socket.sentOf('REQ').length, 4);
  });

  test('CLOSED or NOTICE for something we do not hold changes nothing', async () => {
    const { socket, feed, teardowns, metrics } = await setup();
    feed(['CLOSED', 'someone-else', 'error: x']);
    feed(['NOTICE', 'hello']);
    await settle();
    assert.equal(socket.sentOf('REQ').length, 2);
    assert.deepEqual(teardowns, []);
    assert.equal((await metrics.relayClosed.get()).values.length, 0);
  });

  test('a sink that keeps failing is asked again after each delay, then the event is forgotten, the cursor kept and a reconnect asked for', async () => {
    const { sink, feed, note, teardowns, cursor, timers, metrics } = await setup();
    sink.failWith = new Error('queue down');
    feed(['EVENT', LIVE_EVENTS_SUBSCRIPTION_ID, note()]);
    for (const delayMs of SINK_RETRY_DELAYS_MS) {
      await settle();
      await settle();
      assert.deepEqual(teardowns, [], 'no reconnect while retries remain');
      timers.advance(delayMs);
    }
    await settle();
    await settle();
    assert.deepEqual(teardowns, ['sink failed']);
    assert.equal(cursor.current, null);
    assert.equal((await metrics.relaySinkFailures.get()).values[0]?.value, SINK_RETRY_DELAYS_MS.length + 1, 'every failed attempt counted');
  });

  test('a sink failure that clears is retried in place: the event is taken once, the frames behind it follow in order, no reconnect', async () => {
    const { sink, feed, note, teardowns, cursor, timers, nowSecs } = await setup();
    sink.failWith = new Error('replica acknowledgement: 0 of 1');
    const first = note('first', nowSecs() - 2);
    const second = note('second', nowSecs() - 1);
    feed(['EVENT', LIVE_EVENTS_SUBSCRIPTION_ID, first]);
    feed(['EVENT', LIVE_EVENTS_SUBSCRIPTION_ID, second]);
    await settle();
    assert.deepEqual(sink.ids(), [], 'nothing taken while the sink fails');
    sink.failWith = null;
    timers.advance(SINK_RETRY_DELAYS_MS[0] ?? 0);
    await sink.waitForId(second.id);
    await settle();
    assert.deepEqual(sink.ids(), [first.id, second.id]);
    assert.deepEqual(teardowns, []);
    assert.equal(cursor.current, second.created_at);
  });

  test('accepted live events advance the cursor; duplicates are counted, not delivered twice', async () => {
    const { sink, feed, note, cursor, metrics, nowSecs } = await setup();
    const event = note('once', nowSecs() - 50);
    feed(['EVENT', LIVE_EVENTS_SUBSCRIPTION_ID, event]);
    feed(['EVENT', LIVE_NOTIFY_LISTS_SUBSCRIPTION_ID, event]);
    await sink.waitForId(event.id);
    await settle();
    assert.equal(sink.accepted.length, 1);
    assert.equal(sink.accepted[0]?.context, 'live');
    assert.equal(cursor.current, event.created_at);
    assert.equal((await metrics.eventsDuplicate.get()).values[0]?.value, 1);
  });

  test('the replay delivers as historical, closes each page, and a page timeout moves on', async () => {
    const { socket, sink, feed, timers, begun, replayDone, note } = await setup({
      processWindowDays: 7,
      notifyListHistoryLimit: 2,
      pageTimeoutMs: 500,
    });
    await settle();
    const [control] = socket.sentOf('REQ');
    assert.equal(control?.[1], 'push-history-control');
    const registration = note('ciphertext');
    feed(['EVENT', 'push-history-control', { ...registration }]);
    feed(['EOSE', 'push-history-control']);
    await sink.waitForId(registration.id);
    await settle();
    assert.deepEqual(socket.sentOf('CLOSE')[0], ['CLOSE', 'push-history-control']);
    assert.equal(sink.accepted[0]?.context, 'historical');
    assert.equal(socket.sentOf('REQ')[1]?.[1], 'push-history-lists-1');
    timers.advance(500);
    await begun;
    assert.deepEqual(socket.sentOf('CLOSE')[1], ['CLOSE', 'push-history-lists-1']);
    assert.deepEqual(replayDone, [true]);
    assert.deepEqual(
      socket
        .sentOf('REQ')
        .slice(2)
        .map((r) => r[1]),
      [LIVE_EVENTS_SUBSCRIPTION_ID, LIVE_NOTIFY_LISTS_SUBSCRIPTION_ID],
    );
  });

  test('a page does not time out while its events wait behind a slow sink', async () => {
    const { socket, sink, feed, timers, note } = await setup({ processWindowDays: 7, notifyListHistoryLimit: 2, pageTimeoutMs: 500 });
    await settle();
    sink.block();
    const registration = note('ciphertext');
    feed(['EVENT', 'push-history-control', registration]);
    feed(['EOSE', 'push-history-control']);
    await settle();
    timers.advance(2_000);
    assert.equal(socket.sentOf('CLOSE').length, 0, 'no timeout while the sink holds the page');
    sink.release();
    await sink.waitForId(registration.id);
    await settle();
    assert.deepEqual(socket.sentOf('CLOSE')[0], ['CLOSE', 'push-history-control']);
    assert.equal(socket.sentOf('REQ')[1]?.[1], 'push-history-lists-1');
  });
});
