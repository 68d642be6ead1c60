import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createECDH, randomBytes } from 'node:crypto';
import * as ece from 'http_ece';
import { createLogger } from '../../observability/logger.ts';
import { Metrics } from '../../observability/metrics.ts';
import type { DeviceRegistration } from '../../store/port.ts';
import { startWebPushFake, type FakeSubscription, type WebPushFake } from '../../../test/support/webpush-fake.ts';
import type { SendOutcome } from '../types.ts';
import { MAX_PLAINTEXT_BYTES } from './encrypt.ts';
import { localNtfyMatcher } from './local-ntfy.ts';
import type { WebPushHeaders } from './message.ts';
import { WebPushTransport, type WebPushTransportOptions } from './transport.ts';
import { generateVapidKeyPair } from './vapid.ts';
import type { PushMessage } from '../../notification/types.ts';

const SUBJECT = 'mailto:ops@nostr-push.test';
const like: PushMessage = {
  data: { type: 'like', title: 'New like', body: 'Bob liked your post', eventId: 'ab'.repeat(32), receiverPubkey: 'cd'.repeat(32) },
  collapseKey: `like:${'ef'.repeat(32)}`,
};

const device = (s: FakeSubscription, transport: 'webpush' | 'unifiedpush' = 'unifiedpush'): DeviceRegistration => ({
  token: s.endpoint,
  transport,
  endpoint: s.endpoint,
  p256dh: s.p256dh,
  auth: s.auth,
});

function failure(outcome: SendOutcome | undefined): { kind: string; retryAfterSecs?: number; status?: number } {
  assert.ok(outcome && !outcome.ok, `expected a failure, got ${JSON.stringify(outcome)}`);
  return { kind: outcome.error.kind, retryAfterSecs: outcome.error.retryAfterSecs, status: outcome.error.status };
}

describe('WebPushTransport against a loopback push service', () => {
  let fake: WebPushFake;
  const vapidKeys = generateVapidKeyPair();
  const transports: WebPushTransport[] = [];
  const make = (overrides: Partial<WebPushTransportOptions> = {}): { transport: WebPushTransport; metrics: Metrics } => {
    const metrics = new Metrics();
    const transport = new WebPushTransport({
      vapidKeys,
      vapidSubject: SUBJECT,
      allowPrivateEndpoints: true,
      logger: createLogger({ level: 'silent' }),
      metrics,
      ...overrides,
    });
    transports.push(transport);
    return { transport, metrics };
  };

  before(async () => {
    fake = await startWebPushFake({ expectedSubject: SUBJECT });
  });
  after(async () => {
    await Promise.all(transports.map((t) => t.close()));
    await fake.stop();
  });

  test('a like arrives encrypted (aes128gcm), decrypts to the FCM data map, with TTL, Urgency high, Topic and a valid VAPID JWT', async () => {
    const { transport, metrics } = make();
    const sub = fake.subscribe();
    const outcomes = await transport.sendBatch([device(sub)], like);
    assert.deepEqual(outcomes.get(sub.endpoint), { ok: true });
    const push = fake.received.find((p) => p.subscriptionId === sub.id);
    assert.ok(push);
    assert.equal(push.status, 201);
    assert.deepEqual(push.problems, []);
    assert.deepEqual(push.vapid.problems, []);
    assert.equal(push.vapid.publicKey, transport.vapidPublicKey);
    assert.equal(push.decryptError, null);
    assert.deepEqual(JSON.parse((push.plaintext as Buffer).toString('utf8')), like.data);
    assert.equal(push.headers['content-encoding'], 'aes128gcm');
    assert.equal(push.headers['content-type'], 'application/octet-stream');
    assert.equal(push.headers.ttl, '86400');
    assert.equal(push.headers.urgency, 'high');
    assert.match(String(push.headers.topic), /^[A-Za-z0-9_-]{32}$/);
    assert.match(await metrics.render(), /push_webpush_sends_succeeded_total\{route="http"\} 1/);
  });

  test('webpush and unifiedpush devices are both handled; FCM and APNs are not', () => {
    const { transport } = make();
    const sub = fake.subscribe();
    assert.equal(transport.handles(device(sub, 'webpush')), true);
    assert.equal(transport.handles(device(sub, 'unifiedpush')), true);
    assert.equal(transport.handles({ token: 't', transport: 'fcm' }), false);
    assert.equal(transport.handles({ token: 't', transport: 'apns' }), false);
  });

  test('one batch, every answer classified: 201 ok, 404/410 gone, 413 invalid, 429/503 retry with Retry-After', async () => {
    const { transport, metrics } = make();
    const [ok, notFound, gone, tooLarge, limited, unavailable] = [
      fake.subscribe(),
      fake.subscribe(),
      fake.subscribe(),
      fake.subscribe(),
      fake.subscribe(),
      fake.subscribe(),
    ];
    fake.script({ subscriptionId: notFound.id, status: 404 });
    fake.unsubscribe(gone.id);
    fake.script({ subscriptionId: tooLarge.id, status: 413 });
    fake.script({ subscriptionId: limited.id, status: 429, headers: { 'retry-after': '30' } });
    fake.script({ subscriptionId: unavailable.id, status: 503 });
    const outcomes = await transport.sendBatch(
      [ok, notFound, gone, tooLarge, limited, unavailable].map((s) => device(s)),
      like,
    );
    assert.deepEqual(outcomes.get(ok.endpoint), { ok: true });
    assert.deepEqual(failure(outcomes.get(notFound.endpoint)), { kind: 'token_not_registered', retryAfterSecs: undefined, status: 404 });
    assert.deepEqual(failure(outcomes.get(gone.endpoint)), { kind: 'token_not_registered', retryAfterSecs: undefined, status: 410 });
    assert.deepEqual(failure(outcomes.get(tooLarge.endpoint)), { kind: 'invalid_request', retryAfterSecs: undefined, status: 413 });
    assert.deepEqual(failure(outcomes.get(limited.endpoint)), { kind: 'retryable_internal', retryAfterSecs: 30, status: 429 });
    assert.deepEqual(failure(outcomes.get(unavailable.endpoint)), { kind: 'retryable_internal', retryAfterSecs: 1, status: 503 });
    const text = await metrics.render();
    assert.match(text, /push_webpush_sends_failed_total\{route="http",reason="token_not_registered"\} 2/);
    assert.match(text, /push_webpush_sends_attempted_total\{route="http"\} 6/);
  });

  test('a push service that rejects our VAPID JWT (403) is unauthorized, not a dead subscription', async () => {
    const other = await startWebPushFake({ expectedSubject: 'mailto:someone-else@example.org' });
    try {
      const { transport } = make();
      const sub = other.subscribe();
      assert.equal(failure((await transport.sendBatch([device(sub)], like)).get(sub.endpoint)).kind, 'unauthorized');
    } finally {
      await other.stop();
    }
  });

  test('concurrency is bounded per batch', async () => {
    const { transport } = make({ batchConcurrency: 3 });
    const subs = Array.from({ length: 12 }, () => fake.subscribe());
    fake.setLatency(20);
    fake.resetStats();
    try {
      const outcomes = await transport.sendBatch(
        subs.map((s) => device(s)),
        like,
      );
      assert.equal([...outcomes.values()].filter((o) => o.ok).length, 12);
      assert.equal(fake.maxInFlight, 3, 'three in flight at once, never more');
    } finally {
      fake.setLatency(0);
    }
  });

  test('a push service that does not answer in time is a retryable failure', async () => {
    const { transport } = make({ requestTimeoutMs: 100 });
    const sub = fake.subscribe();
    fake.setLatency(5_000);
    try {
      const started = Date.now();
      const outcome = failure((await transport.sendBatch([device(sub)], like)).get(sub.endpoint));
      assert.equal(outcome.kind, 'retryable_internal');
      assert.ok(Date.now() - started < 2_000);
    } finally {
      fake.setLatency(0);
    }
  });

  test('loopback and private endpoints are refused unless allowed, and nothing is sent to them', async () => {
    const { transport } = make({ allowPrivateEndpoints: false });
    const sub = fake.subscribe();
    const viaName = {
      ...device(sub),
      token: sub.endpoint.replace('127.0.0.1', 'localhost'),
      endpoint: sub.endpoint.replace('127.0.0.1', 'localhost'),
    };
    const viaV6 = { ...device(sub), token: 'http://[::1]:9/push/x', endpoint: 'http://[::1]:9/push/x' };
    const metadata = {
      ...device(sub),
      token: 'http://169.254.169.254/latest/meta-data',
      endpoint: 'http://169.254.169.254/latest/meta-data',
    };
    const count = fake.received.length;
    const outcomes = await transport.sendBatch([device(sub), viaName, viaV6, metadata], like);
    for (const d of [device(sub), viaName, viaV6, metadata]) {
      const f = failure(outcomes.get(d.token));
      assert.equal(f.kind, 'invalid_request', d.token);
    }
    assert.equal(fake.received.length, count);
  });

  test('a public-looking endpoint name that resolves to loopback is refused at connect time, counted, and nothing is sent', async () => {
    const { transport, metrics } = make({
      allowPrivateEndpoints: false,
      resolver: () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]),
    });
    const sub = fake.subscribe();
    const rebound = sub.endpoint.replace('127.0.0.1', 'push.example.com');
    const count = fake.received.length;
    const outcomes = await transport.sendBatch([{ ...device(sub), token: rebound, endpoint: rebound }], like);
    assert.equal(failure(outcomes.get(rebound)).kind, 'invalid_request');
    assert.equal(fake.received.length, count);
    assert.match(await metrics.render(), /push_outbound_refused_total\{purpose="webpush",reason="loopback"\} 1/);
  });

  test('bad subscriptions fail before any I/O: no keys, bad keys, non-http endpoint, a message over 3993 bytes', async () => {
    const { transport } = make();
    const sub = fake.subscribe();
    const count = fake.received.length;
    const noKeys: DeviceRegistration = { token: `${sub.endpoint}?a`, transport: 'webpush', endpoint: sub.endpoint };
    const badKey = { ...device(sub), token: `${sub.endpoint}?b`, p256dh: 'AAAA' };
    const ftp = { ...device(sub), token: 'ftp://push.example/x', endpoint: 'ftp://push.example/x' };
    const outcomes = await transport.sendBatch([noKeys, badKey, ftp], like);
    for (const d of [noKeys, badKey, ftp]) assert.equal(failure(outcomes.get(d.token)).kind, 'invalid_request', d.token);
    const huge = await transport.sendBatch([device(sub)], { data: { body: 'x'.repeat(MAX_PLAINTEXT_BYTES) } });
    assert.equal(failure(huge.get(sub.endpoint)).kind, 'invalid_request');
    assert.equal(fake.received.length, count);
  });

  test('a device of another transport gets invalid_request; a token listed twice is sent once', async () => {
    const { transport } = make();
    const sub = fake.subscribe();
    const outcomes = await transport.sendBatch([device(sub), device(sub), { token: 'fcm-token', transport: 'fcm' }], like);
    assert.deepEqual(outcomes.get(sub.endpoint), { ok: true });
    assert.equal(failure(outcomes.get('fcm-token')).kind, 'invalid_request');
    assert.equal(fake.received.filter((p) => p.subscriptionId === sub.id).length, 1);
  });

  test('an aborted batch sends nothing more', async () => {
    const { transport } = make();
    const sub = fake.subscribe();
    const controller = new AbortController();
    controller.abort();
    assert.equal(failure((await transport.sendBatch([device(sub)], like, controller.signal)).get(sub.endpoint)).kind, 'internal_request');
    assert.equal(fake.received.filter((p) => p.subscriptionId === sub.id).length, 0);
  });
});

describe('WebPushTransport local shortcut (our own ntfy topics)', () => {
  const ua = () => {
    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    return { ecdh, p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') };
  };
  const make = (append: (topic: string, body: Buffer, headers: WebPushHeaders) => Promise<void>) => {
    const metrics = new Metrics();
    const matcher = localNtfyMatcher('https://push.nostr-push.test');
    assert.ok(matcher);
    const transport = new WebPushTransport({
      vapidKeys: generateVapidKeyPair(),
      vapidSubject: SUBJECT,
      allowPrivateEndpoints: false,
      localNtfy: { matcher, append },
      logger: createLogger({ level: 'silent' }),
      metrics,
      poster: {
        post: () => Promise.reject(new Error('no HTTP hop expected')),
        close: () => undefined,
      },
    });
    return { transport, metrics };
  };

  test('an endpoint on our ntfy origin is appended to the topic with no HTTP hop; the body decrypts byte for byte', async () => {
    const appended: { topic: string; body: Buffer; headers: WebPushHeaders }[] = [];
    const { transport, metrics } = make(async (topic, body, headers) => {
      appended.push({ topic, body, headers });
    });
    const keys = ua();
    const endpoint = 'https://push.nostr-push.test/upAbCdEf123456?up=1';
    const outcomes = await transport.sendBatch(
      [{ token: endpoint, transport: 'unifiedpush', endpoint, p256dh: keys.p256dh, auth: keys.auth }],
      like,
    );
    assert.deepEqual(outcomes.get(endpoint), { ok: true });
    assert.equal(appended.length, 1);
    const [entry] = appended as [(typeof appended)[number]];
    assert.equal(entry.topic, 'upAbCdEf123456');
    assert.equal(entry.headers['content-encoding'], 'aes128gcm');
    assert.equal(entry.headers.urgency, 'high');
    const plaintext = ece.decrypt(entry.body, { version: 'aes128gcm', privateKey: keys.ecdh, authSecret: keys.auth });
    assert.deepEqual(JSON.parse(plaintext.toString('utf8')), like.data);
    assert.match(await metrics.render(), /push_webpush_sends_succeeded_total\{route="local"\} 1/);
  });

  test('a store failure while appending is retryable', async () => {
    const { transport } = make(async () => {
      throw new Error('database is locked');
    });
    const keys = ua();
    const endpoint = 'https://push.nostr-push.test/up1';
    const outcome = failure(
      (
        await transport.sendBatch([{ token: endpoint, transport: 'unifiedpush', endpoint, p256dh: keys.p256dh, auth: keys.auth }], like)
      ).get(endpoint),
    );
    assert.equal(outcome.kind, 'retryable_internal');
  });

  test('other origins still go over HTTP', async () => {
    const { transport } = make(async () => {
      throw new Error('not local');
    });
    const keys = ua();
    const endpoint = 'https://push.elsewhere.test/up1';
    const outcome = failure(
      (
        await transport.sendBatch([{ token: endpoint, transport: 'unifiedpush', endpoint, p256dh: keys.p256dh, auth: keys.auth }], like)
      ).get(endpoint),
    );
    assert.equal(outcome.kind, 'internal_response', 'the poster that refuses every HTTP hop was reached');
  });
});
