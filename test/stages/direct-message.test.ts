import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import type { StorePort } from '../../src/store/port.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { RecordingTransport, retryable, unregistered } from '../support/recording-transport.ts';
import { storeOutboundQueue } from '../../src/engine/outbound-queue.ts';
import { handleOutbound } from '../../src/delivery/outbound.ts';
import { createApiApp } from '../../src/api/app.ts';
import { directMessageRoutes } from '../../src/api/direct-message.ts';
import type { OutboundNotification } from '../../src/notification/types.ts';
import type { WorkOutcome } from '../../src/store/queue-work.ts';

const TOKEN = 'moderation-secret';
const WRAP = 'ab'.repeat(32);
const ALICE = 'a1'.repeat(32);

describe('POST /internal/v1/direct-message', () => {
  let store: StorePort;
  let transport: RecordingTransport;
  let metrics: Metrics;

  const app = (internalApiToken = TOKEN, allowed: string[] = []) => {
    const logger = createLogger({ level: 'silent' });
    const base = createApiApp({ health: { pubkey: () => null, criticalFlags: () => ({}) }, metrics, logger });
    base.route(
      '/',
      directMessageRoutes({
        internalApiToken,
        store,
        outbound: storeOutboundQueue(store, () => undefined),
        allowedPubkeys: new Set(allowed),
        defaultPreferenceKinds: [1, 7, 16, 1059, 30023, 34236],
        processedEventTtlSecs: 604800,
        metrics,
        logger,
      }),
    );
    return base;
  };
  const post = (body: unknown, headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }, a = app()) =>
    a.request('/internal/v1/direct-message', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const valid = { eventId: WRAP, recipientPubkey: ALICE, messageType: 'moderation_notice' };

  /** The delivery stage's handler over what is queued now: the outcome of each item, in lease order (acked when done). */
  const deliverQueued = async (): Promise<WorkOutcome[]> => {
    const logger = createLogger({ level: 'silent' });
    const deps = { store, transports: [transport], videoRecordTtlSecs: 3600, logger, metrics, maxEventAgeSecs: 3600 };
    const items = await store.lease<OutboundNotification>('outbound', { max: 10, leaseMs: 60_000, maxAttempts: 5 });
    const outcomes: WorkOutcome[] = [];
    for (const item of items) {
      const outcome = await handleOutbound(deps, item);
      if (outcome.kind === 'done') await store.ack('outbound', item.id, item.leaseToken);
      else if (outcome.kind === 'retry') await store.retry('outbound', item.id, item.leaseToken, store.clock.nowMs(), outcome.error);
      outcomes.push(outcome);
    }
    return outcomes;
  };

  beforeEach(async () => {
    store = await openSqliteStore({ path: ':memory:', clock: new ManualClock() });
    transport = new RecordingTransport();
    metrics = new Metrics();
    await store.registerToken(ALICE, { token: 'fcm-alice', transport: 'fcm' });
  });
  afterEach(() => store.close());

  test('503 when no internal token is configured', async () => {
    const res = await post(valid, {}, app(''));
    assert.equal(res.status, 503);
    assert.equal(((await res.json()) as { error?: string }).error, 'Internal push endpoint is not configured');
  });

  test('401 for a missing or wrong bearer, even with an invalid body', async () => {
    assert.equal((await post(valid, {})).status, 401);
    const wrong = await post('{not json', { authorization: 'Bearer nope' });
    assert.equal(wrong.status, 401);
    assert.equal(((await wrong.json()) as { error?: string }).error, 'Unauthorized');
    assert.equal((await post(valid, { authorization: TOKEN })).status, 401, 'the Bearer scheme is required');
    assert.equal(transport.sent.length, 0);
  });

  test('422 for unknown fields, missing fields and unknown message types', async () => {
    assert.equal((await post({ ...valid, extra: 1 })).status, 422);
    assert.equal((await post({ eventId: WRAP, recipientPubkey: ALICE })).status, 422);
    assert.equal((await post({ ...valid, messageType: 'reaction' })).status, 422);
    assert.equal((await post([valid])).status, 422);
  });

  test('400 with the exact texts for a bad eventId or recipientPubkey, and for non-JSON', async () => {
    const badId = await post({ ...valid, eventId: 'xyz' });
    assert.equal(badId.status, 400);
    assert.equal(((await badId.json()) as { error?: string }).error, 'Invalid eventId');
    const badPk = await post({ ...valid, recipientPubkey: 'npub1nope' });
    assert.equal(badPk.status, 400);
    assert.equal(((await badPk.json()) as { error?: string }).error, 'Invalid recipientPubkey');
    assert.equal((await post('{"eventId":')).status, 400);
  });

  test('413 for an oversized body', async () => {
    assert.equal((await post({ ...valid, padding: 'x'.repeat(20_000) })).status, 413);
  });

  test('204 once queued in the critical lane, then exactly one content-free push with the badge; a replay queues nothing and counts nothing', async () => {
    const res = await post(valid);
    assert.equal(res.status, 204);
    assert.equal(transport.sent.length, 0, 'the hook only queues: the delivery stage sends');
    assert.deepEqual((await store.queueStats('outbound')).lanes.critical, { ready: 1, leased: 0 });
    assert.equal((await deliverQueued()).length, 1);
    assert.equal(transport.sent.length, 1);
    const data = transport.sent[0]?.message.data ?? {};
    assert.deepEqual(Object.keys(data).sort(), [
      'badge',
      'body',
      'eventId',
      'eventKind',
      'receiverNpub',
      'receiverPubkey',
      'title',
      'type',
    ]);
    assert.equal(data.type, 'directMessage');
    assert.equal(data.eventKind, '1059');
    // The message was counted in the recipient's inbox before the push, so the push carries it.
    assert.equal(data.badge, '1');
    assert.equal((await post({ ...valid, messageType: 'report_outcome' })).status, 204);
    assert.deepEqual(await deliverQueued(), [], 'the claim on (gift wrap, recipient) suppresses the replay');
    assert.equal(transport.sent.length, 1);
    assert.match(await metrics.render(), /push_internal_dm_requests_total\{outcome="duplicate"\} 1/);
    assert.deepEqual((await store.readInboxCounts(valid.recipientPubkey)).types.directMessage, { total: 1, viewed: 0, new: 1 });
  });

  test('204 with nothing sent: no tokens, DMs disabled by preferences, not allowlisted', async () => {
    assert.equal((await post({ ...valid, recipientPubkey: 'b2'.repeat(32) })).status, 204);
    await store.setPreferences(ALICE, { kinds: [7], campaignsEnabled: false });
    assert.equal((await post(valid)).status, 204);
    await store.setPreferences(ALICE, { kinds: [1059], campaignsEnabled: false });
    assert.equal((await post(valid, undefined, app(TOKEN, ['c3'.repeat(32)]))).status, 204);
    assert.equal((await store.queueStats('outbound')).ready, 0, 'nothing queued');
    assert.equal(transport.sent.length, 0);
  });

  test('a terminal failure is a processed 204 and prunes a dead token', async () => {
    transport.script.set('fcm-alice', unregistered);
    assert.equal((await post(valid)).status, 204);
    assert.deepEqual(await deliverQueued(), [{ kind: 'done' }]);
    assert.equal(await store.tokenOwner('fcm-alice'), null);
  });

  test('an all-token retryable failure is retried by the queue, not the caller; the next attempt sends', async () => {
    transport.script.set('fcm-alice', retryable(30));
    assert.equal((await post(valid)).status, 204);
    const [first] = await deliverQueued();
    assert.equal(first?.kind, 'retry');
    transport.script.delete('fcm-alice');
    assert.deepEqual(await deliverQueued(), [{ kind: 'done' }]);
    assert.equal(transport.sent.length, 1);
    assert.match(await metrics.render(), /push_internal_dm_requests_total\{outcome="queued"\} 1/);
  });
});
