/**
 * The delivery stage's per-device copy and per-user throttle, on a real (in-memory SQLite) store
 * with a recording transport: what each device is sent, what the throttle withholds, what the
 * delivery log records.
 */
import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import type { DeviceRegistration, LeasedItem, StorePort } from '../../src/store/port.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { RecordingTransport } from '../support/recording-transport.ts';
import { handleOutbound, type OutboundHandlerDeps } from '../../src/delivery/outbound.ts';
import { buildSocialPayload } from '../../src/engine/payload.ts';
import { notificationCopy } from '../../src/engine/copy.ts';
import { SHIPPED_COPYWRITER } from '../../src/notification/templates/compile.ts';
import { storeDeliveryLog } from '../../src/platform/delivery-log.ts';
import { DEFAULT_APP_ID } from '../../src/platform/apps.ts';
import type { NostrEvent } from '../../src/nostr/event.ts';
import type { OutboundNotification } from '../../src/notification/types.ts';
import { THROTTLE_WINDOW_SECS } from '../../src/notification/types.ts';

const ALICE = 'a1'.repeat(32);
const SENDER = 'c3'.repeat(32);

function like(n: number): NostrEvent {
  return {
    id: n.toString(16).padStart(64, '0'),
    pubkey: SENDER,
    created_at: 1_760_000_000,
    kind: 7,
    tags: [['p', ALICE]],
    content: '+',
    sig: '',
  };
}

describe('delivery: copy per device language and the per-user throttle', () => {
  let store: StorePort;
  let clock: ManualClock;
  let transport: RecordingTransport;
  let deps: OutboundHandlerDeps;
  let metrics: Metrics;

  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 11, 4, 8, 0, 0));
    store = await openSqliteStore({ path: ':memory:', clock });
    transport = new RecordingTransport();
    metrics = new Metrics();
    const logger = createLogger({ level: 'silent' });
    deps = {
      store,
      transports: [transport],
      videoRecordTtlSecs: 3600,
      maxEventAgeSecs: 3600,
      logger,
      metrics,
      copywriter: SHIPPED_COPYWRITER,
      readBadge: null,
      recordAttempt: storeDeliveryLog(store, metrics, logger),
    };
  });
  afterEach(() => store.close());

  let leases = 0;
  function leased(payload: OutboundNotification, attempts = 1): LeasedItem<OutboundNotification> {
    return {
      id: `${payload.eventId}:${payload.recipient}`,
      payload,
      attempts,
      leaseToken: `t${++leases}`,
      leaseExpiresAtMs: 0,
      lastError: null,
    };
  }

  function likeNotification(n: number, devices?: DeviceRegistration[]): OutboundNotification {
    const event = like(n);
    const message = buildSocialPayload({ type: 'like', event, recipient: ALICE, senderName: 'Ana', copy: notificationCopy('like', 'Ana') });
    return {
      eventId: event.id,
      recipient: ALICE,
      type: 'like',
      message,
      claim: null,
      eventCreatedAt: event.created_at,
      ...(devices ? { devices } : {}),
    };
  }

  test("each device reads its own language; en and locale-less devices get the engine's bytes; no template reaches the wire", async () => {
    const devices: DeviceRegistration[] = [
      { token: 'phone-pt', transport: 'fcm', locale: 'pt-BR' },
      { token: 'iphone-ja', transport: 'fcm', locale: 'ja' },
      { token: 'browser-en', transport: 'fcm', locale: 'en' },
      { token: 'tablet', transport: 'fcm' },
      { token: 'watch-sw', transport: 'fcm', locale: 'sw' },
    ];
    for (const device of devices) await store.registerToken(ALICE, device);
    const notification = likeNotification(1, devices);
    await handleOutbound(deps, leased(notification));
    const sent = new Map(transport.sent.map((s) => [s.token, s.message]));
    assert.equal(sent.size, 5);
    assert.deepEqual([sent.get('phone-pt')?.data.title, sent.get('phone-pt')?.data.body], ['Nova curtida', 'Ana curtiu sua publicação']);
    assert.deepEqual(
      [sent.get('iphone-ja')?.data.title, sent.get('iphone-ja')?.data.body],
      ['新しいいいね', 'Anaがあなたの投稿にいいねしました'],
    );
    for (const token of ['browser-en', 'tablet', 'watch-sw']) {
      assert.equal(JSON.stringify(sent.get(token)?.data), JSON.stringify(notification.message.data), token);
    }
    // Only title and body differ, key order kept.
    assert.deepEqual(Object.keys(sent.get('phone-pt')?.data ?? {}), Object.keys(notification.message.data));
    for (const message of sent.values()) assert.equal('copy' in message, false);
  });

  test('a send API push (no template) goes to every language as the app wrote it', async () => {
    const device: DeviceRegistration = { token: 'phone-pt', transport: 'fcm', locale: 'pt-BR' };
    await store.registerToken(ALICE, device);
    const message = { data: { type: 'payout', title: 'Paid', body: 'You were paid' } };
    await handleOutbound(
      deps,
      leased({
        eventId: 'n1',
        recipient: ALICE,
        type: 'app:payout',
        message,
        claim: null,
        eventCreatedAt: 1_760_000_000,
        devices: [device],
      }),
    );
    assert.deepEqual(transport.sent[0]?.message, message);
  });

  test('throttle 2 an hour: 2 of 4 likes pushed, 2 withheld, logged as suppressed: throttled, counted', async () => {
    deps.throttlePerUserPerHour = 2;
    const device: DeviceRegistration = { token: 'phone', transport: 'fcm' };
    await store.registerToken(ALICE, device);
    for (let n = 1; n <= 4; n++) assert.deepEqual(await handleOutbound(deps, leased(likeNotification(n, [device]))), { kind: 'done' });
    assert.deepEqual(
      transport.sent.map((s) => s.message.data.eventId),
      [like(1).id, like(2).id],
    );
    assert.deepEqual(await store.readThrottleWindow(ALICE, THROTTLE_WINDOW_SECS), {
      startMs: Date.UTC(2026, 11, 4, 8, 0, 0),
      pushed: 2,
      withheld: 2,
    });
    await new Promise((resolve) => setImmediate(resolve));
    const log = await store.readDeliveryLog(DEFAULT_APP_ID, { recipient: ALICE, limit: 10 });
    assert.deepEqual(
      log.map((e) => [e.notificationId, e.status, e.error]),
      [
        [like(1).id, 'sent', undefined],
        [like(2).id, 'sent', undefined],
        [like(3).id, 'suppressed', 'throttled'],
        [like(4).id, 'suppressed', 'throttled'],
      ],
    );
    assert.match(await metrics.registry.metrics(), /push_user_throttled_total\{type="like"\} 2/);

    // The next clock hour starts afresh.
    clock.advance(THROTTLE_WINDOW_SECS * 1000);
    await handleOutbound(deps, leased(likeNotification(5, [device])));
    assert.equal(transport.sent.length, 3);
  });

  test('urgent pushes are never throttled nor counted: direct messages and critical-lane sends', async () => {
    deps.throttlePerUserPerHour = 1;
    const device: DeviceRegistration = { token: 'phone', transport: 'fcm' };
    await store.registerToken(ALICE, device);
    await handleOutbound(deps, leased(likeNotification(1, [device])));
    const dm = { data: { type: 'directMessage', title: 'New message', body: 'You have a new message' } };
    await handleOutbound(
      deps,
      leased({ eventId: 'dm1', recipient: ALICE, type: 'directMessage', message: dm, claim: null, eventCreatedAt: 1, devices: [device] }),
    );
    const critical = { data: { type: 'security', title: 'Login', body: 'New login' } };
    await handleOutbound(
      deps,
      leased({
        eventId: 'n2',
        recipient: ALICE,
        type: 'app:security',
        lane: 'critical',
        message: critical,
        claim: null,
        eventCreatedAt: 1,
        devices: [device],
      }),
    );
    await handleOutbound(deps, leased(likeNotification(2, [device])));
    assert.deepEqual(
      transport.sent.map((s) => s.message.data.type),
      ['like', 'directMessage', 'security'],
    );
    assert.deepEqual((await store.readThrottleWindow(ALICE, THROTTLE_WINDOW_SECS)).pushed, 1);
  });

  test('a retry of a push the throttle let through takes no second slot; off (0) takes none at all', async () => {
    deps.throttlePerUserPerHour = 1;
    const device: DeviceRegistration = { token: 'phone', transport: 'fcm' };
    await store.registerToken(ALICE, device);
    await handleOutbound(deps, leased(likeNotification(1, [device]), 1));
    await handleOutbound(deps, leased(likeNotification(1, [device]), 2));
    assert.equal(transport.sent.length, 2);
    assert.deepEqual((await store.readThrottleWindow(ALICE, THROTTLE_WINDOW_SECS)).withheld, 0);
    deps.throttlePerUserPerHour = 0;
    for (let n = 2; n <= 4; n++) await handleOutbound(deps, leased(likeNotification(n, [device])));
    assert.equal(transport.sent.length, 5);
    assert.deepEqual((await store.readThrottleWindow(ALICE, THROTTLE_WINDOW_SECS)).pushed, 1);
  });
});
