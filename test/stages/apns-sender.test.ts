import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import type { DeviceRegistration } from '../../src/store/port.ts';
import { ManualClock } from '../../src/util/clock.ts';
import type { NostrEvent } from '../../src/nostr/event.ts';
import { notificationCopy } from '../../src/engine/copy.ts';
import { buildDirectMessagePayload, buildSocialPayload, type SocialNotificationType } from '../../src/engine/payload.ts';
import type { SendOutcome } from '../../src/delivery/types.ts';
import { startApnsFake, type ApnsFake } from '../support/apns-fake.ts';
import { ApnsTransport, createApnsTransport, type ApnsTransportOptions } from '../../src/delivery/apns/sender.ts';
import { HTTP2_CLIENT_KINDS } from '../../src/delivery/http2/pool.ts';
import { APNS_TOKEN_MIN_REFRESH_MS, APNS_TOKEN_REFRESH_MS, readApnsKey, signApnsJwt } from '../../src/delivery/apns/jwt.ts';
import { Http2Pool } from '../../src/delivery/http2/pool.ts';
import type { PushMessage } from '../../src/notification/types.ts';

const START_MS = Date.UTC(2026, 5, 1, 12, 0, 0);
const RECIPIENT = `789a${'b'.repeat(60)}`;
const ACTOR = `def4${'5'.repeat(60)}`;
const VIDEO_OWNER = `9b2f${'0'.repeat(58)}01`;
const deviceToken = (n: number): string => n.toString(16).padStart(64, '0');
const apnsDevice = (n: number, extra: Partial<DeviceRegistration> = {}): DeviceRegistration => ({
  token: deviceToken(n),
  transport: 'apns',
  ...extra,
});

function trigger(kind: number, tags: string[][]): NostrEvent {
  return { id: `abc1${'2'.repeat(60)}`, pubkey: ACTOR, created_at: 1_712_345_678, kind, tags, content: 'nice', sig: '0'.repeat(128) };
}

const VIDEO_TAGS = [
  ['e', `fedc${'b'.repeat(60)}`],
  ['p', VIDEO_OWNER],
  ['k', '34236'],
  ['a', `34236:${VIDEO_OWNER}:clip-1`],
];
const TRIGGER_KINDS: Record<SocialNotificationType, { kind: number; tags: string[][] }> = {
  like: { kind: 7, tags: VIDEO_TAGS },
  repost: { kind: 16, tags: VIDEO_TAGS },
  comment: {
    kind: 1111,
    tags: [
      ['E', `fedc${'b'.repeat(60)}`],
      ['K', '34236'],
      ['P', RECIPIENT],
      ['e', `fedc${'b'.repeat(60)}`],
      ['k', '34236'],
      ['p', RECIPIENT],
    ],
  },
  mention: { kind: 1111, tags: [['p', RECIPIENT]] },
  newPost: { kind: 34236, tags: [['d', 'clip-2']] },
  keyword: {
    kind: 34236,
    tags: [
      ['d', 'clip-3'],
      ['title', 'nice cats'],
    ],
  },
  reply: { kind: 1, tags: [['e', `fedc${'b'.repeat(60)}`, '', 'reply', RECIPIENT]] },
  zap: { kind: 9735, tags: [['p', RECIPIENT]] },
};

function socialMessage(type: SocialNotificationType, collapseKey?: string): PushMessage {
  const { kind, tags } = TRIGGER_KINDS[type];
  return buildSocialPayload({
    type,
    event: trigger(kind, tags),
    recipient: RECIPIENT,
    senderName: 'Alice',
    copy: notificationCopy(type, 'Alice', 'nice'),
    ...(collapseKey === undefined ? {} : { collapseKey }),
  });
}

function errorOf(outcome: SendOutcome | undefined) {
  assert.ok(outcome && !outcome.ok, `expected a failure, got ${JSON.stringify(outcome)}`);
  return outcome.error;
}

// One suite over both HTTP/2 clients (delivery.http2_client), as the store contract runs over both stores.
for (const http2Client of HTTP2_CLIENT_KINDS) {
  describe(`ApnsTransport against the loopback APNs fake (delivery.http2_client: ${http2Client})`, () => {
    const clock = new ManualClock(START_MS);
    let fake: ApnsFake;
    let dir: string;
    let keyPath: string;
    const open: ApnsTransport[] = [];

    const transport = (overrides: Partial<ApnsTransportOptions> = {}): ApnsTransport => {
      const created = createApnsTransport({
        keyPath,
        keyId: fake.keyId,
        teamId: fake.teamId,
        bundleId: fake.bundleId,
        apiBaseUrl: fake.baseUrl,
        sandboxApiBaseUrl: fake.sandboxBaseUrl,
        sandbox: false,
        expirationSecs: 86_400,
        logger: createLogger({ level: 'silent' }),
        metrics: new Metrics(),
        clock,
        http2Client,
        ...overrides,
      });
      assert.ok(created);
      open.push(created);
      return created;
    };
    const sendOne = async (t: ApnsTransport, device: DeviceRegistration, message: PushMessage = socialMessage('like')) =>
      (await t.sendBatch([device], message)).get(device.token);

    before(async () => {
      fake = await startApnsFake({ clock });
      dir = mkdtempSync(join(tmpdir(), 'apns-test-'));
      keyPath = fake.writeKey(dir);
    });
    after(async () => {
      await Promise.all(open.map((t) => t.close()));
      await fake.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    test('no key path: APNs is off', () => {
      assert.equal(createApnsTransport({ ...({} as ApnsTransportOptions), keyPath: '' }), null);
    });

    test('golden request of a like: path, headers and the exact aps body', async () => {
      const t = transport();
      const before = fake.messages.length;
      assert.deepEqual(await sendOne(t, apnsDevice(1), socialMessage('like', 'like:group-1')), { ok: true });
      const received = fake.messages[before];
      assert.ok(received);
      assert.equal(received.environment, 'production');
      assert.equal(received.headers[':method'], 'POST');
      assert.equal(received.headers[':path'], `/3/device/${deviceToken(1)}`);
      assert.match(received.headers.authorization ?? '', /^bearer [\w-]+\.[\w-]+\.[\w-]+$/);
      assert.deepEqual(Object.fromEntries(Object.entries(received.headers).filter(([name]) => name.startsWith('apns-'))), {
        'apns-push-type': 'alert',
        'apns-priority': '10',
        'apns-topic': 'com.example.nostrpush',
        'apns-expiration': String(START_MS / 1000 + 86_400),
        'apns-collapse-id': 'like:group-1',
      });
      assert.equal(
        received.bodyText,
        JSON.stringify({
          aps: { alert: { title: 'New like', body: 'Alice liked your post' }, 'mutable-content': 1 },
          type: 'like',
          eventId: `abc1${'2'.repeat(60)}`,
          senderPubkey: ACTOR,
          senderName: 'Alice',
          receiverPubkey: RECIPIENT,
          receiverNpub: socialMessage('like').data.receiverNpub,
          eventKind: '7',
          timestamp: '1712345678',
          referencedEventId: `fedc${'b'.repeat(60)}`,
          referencedAddress: `34236:${VIDEO_OWNER}:clip-1`,
          referencedKind: '34236',
          referencedAuthorPubkey: VIDEO_OWNER,
          referencedDTag: 'clip-1',
        }),
      );
    });

    test('golden shape of every type: alert headers, aps alert + mutable-content, never content-available, data beside aps', async () => {
      const t = transport();
      const messages: Array<[string, PushMessage]> = [
        ...(['like', 'comment', 'mention', 'repost', 'newPost', 'keyword'] as const).map((type): [string, PushMessage] => [
          type,
          socialMessage(type),
        ]),
        ['directMessage', buildDirectMessagePayload('d'.repeat(64), RECIPIENT)],
      ];
      for (const [type, message] of messages) {
        const before = fake.messages.length;
        assert.deepEqual(await sendOne(t, apnsDevice(2), message), { ok: true }, type);
        const received = fake.messages[before];
        assert.ok(received, type);
        assert.equal(received.headers['apns-push-type'], 'alert', type);
        assert.equal(received.headers['apns-priority'], '10', type);
        assert.equal(received.headers['apns-topic'], fake.bundleId, type);
        assert.equal(received.headers['apns-collapse-id'], undefined, `${type}: no collapse id without a collapse key`);
        const { title, body, ...custom } = message.data;
        assert.equal(received.payload.type, type);
        assert.deepEqual(received.payload, { aps: { alert: { title, body }, 'mutable-content': 1 }, ...custom }, type);
      }
    });

    test('a data badge becomes aps.badge; a silent push is the background shape at priority 5', async () => {
      const t = transport();
      const before = fake.messages.length;
      const like = socialMessage('like');
      await sendOne(t, apnsDevice(3), { data: { ...like.data, badge: '7' } });
      await sendOne(t, apnsDevice(3), { data: { type: 'sync', eventId: 'e1' } });
      const [badged, silent] = fake.messages.slice(before);
      assert.ok(badged && silent);
      assert.deepEqual(badged.payload.aps, { alert: { title: like.data.title, body: like.data.body }, 'mutable-content': 1, badge: 7 });
      assert.equal(silent.headers['apns-push-type'], 'background');
      assert.equal(silent.headers['apns-priority'], '5');
      assert.deepEqual(silent.payload, { aps: { 'content-available': 1 }, type: 'sync', eventId: 'e1' });
    });

    test('a sandbox device goes to the sandbox host; apns.sandbox sends every device there', async () => {
      const before = fake.messages.length;
      await sendOne(transport(), apnsDevice(4, { sandbox: true }));
      await sendOne(transport({ sandbox: true }), apnsDevice(5));
      assert.deepEqual(
        fake.messages.slice(before).map((m) => m.environment),
        ['sandbox', 'sandbox'],
      );
    });

    describe('the reason table', () => {
      test("410 Unregistered is a dead token carrying Apple's timestamp", async () => {
        fake.unregister(deviceToken(10), START_MS - 5_000);
        const error = errorOf(await sendOne(transport(), apnsDevice(10)));
        assert.equal(error.kind, 'token_not_registered');
        assert.equal(error.status, 410);
        assert.equal(error.unregisteredAtMs, START_MS - 5_000);
      });

      test('410 without a timestamp is a dead token with no time to compare', async () => {
        fake.script({ token: deviceToken(11), status: 410, reason: 'ExpiredToken' });
        const error = errorOf(await sendOne(transport(), apnsDevice(11)));
        assert.equal(error.kind, 'token_not_registered');
        assert.equal(error.unregisteredAtMs, undefined);
      });

      test('400 BadDeviceToken is a dead token (the fake answers it for a token that is not 64 hex digits)', async () => {
        const error = errorOf(await sendOne(transport(), { token: 'not-a-token', transport: 'apns' }));
        assert.equal(error.kind, 'token_not_registered');
        assert.equal(error.status, 400);
      });

      test('other 400s fail without a retry and keep the token', async () => {
        fake.script({ token: deviceToken(12), status: 400, reason: 'DeviceTokenNotForTopic' });
        assert.equal(errorOf(await sendOne(transport(), apnsDevice(12))).kind, 'invalid_request');
        const error = errorOf(await sendOne(transport({ bundleId: 'com.example.other' }), apnsDevice(12)));
        assert.equal(error.kind, 'invalid_request');
        assert.match(error.message, /BadTopic/);
      });

      test('429 and 503 retry with the Retry-After asked (1 s without one)', async () => {
        fake.script({ token: deviceToken(13), status: 429, reason: 'TooManyRequests', headers: { 'retry-after': '30' } });
        const tooMany = errorOf(await sendOne(transport(), apnsDevice(13)));
        assert.deepEqual([tooMany.kind, tooMany.retryAfterSecs, tooMany.status], ['retryable_internal', 30, 429]);
        fake.script({ token: deviceToken(13), status: 503, reason: 'ServiceUnavailable' });
        const unavailable = errorOf(await sendOne(transport(), apnsDevice(13)));
        assert.deepEqual([unavailable.kind, unavailable.retryAfterSecs, unavailable.status], ['retryable_internal', 1, 503]);
        fake.script({ token: deviceToken(13), status: 500, reason: 'InternalServerError' });
        assert.equal(errorOf(await sendOne(transport(), apnsDevice(13))).kind, 'retryable_internal');
      });

      test('403 ExpiredProviderToken on an old provider token: re-minted once, retried, delivered', async () => {
        const localClock = new ManualClock(START_MS);
        const t = transport({ clock: localClock });
        assert.deepEqual(await sendOne(t, apnsDevice(14)), { ok: true });
        localClock.advance(APNS_TOKEN_MIN_REFRESH_MS + 60_000);
        fake.script({ token: deviceToken(14), status: 403, reason: 'ExpiredProviderToken' });
        const before = fake.messages.length;
        assert.deepEqual(await sendOne(t, apnsDevice(14)), { ok: true });
        assert.equal(t.providerTokensMinted, 2, 'one fresh token for the retry');
        assert.equal(fake.messages.length, before + 1);
      });

      test('403 ExpiredProviderToken on a token younger than 20 minutes: no re-mint, a plain unauthorized failure', async () => {
        const t = transport({ clock: new ManualClock(START_MS) });
        assert.deepEqual(await sendOne(t, apnsDevice(15)), { ok: true });
        fake.script({ token: deviceToken(15), status: 403, reason: 'ExpiredProviderToken', times: 2 });
        const error = errorOf(await sendOne(t, apnsDevice(15)));
        assert.equal(error.kind, 'unauthorized');
        assert.equal(t.providerTokensMinted, 1);
      });

      test('a provider token the fake cannot verify is 403 InvalidProviderToken: unauthorized, no retry', async () => {
        const error = errorOf(await sendOne(transport({ keyId: 'OTHERKEY12' }), apnsDevice(16)));
        assert.equal(error.kind, 'unauthorized');
        assert.match(error.message, /InvalidProviderToken/);
      });
    });

    describe('the provider token reuse window', () => {
      test('one token for many sends until it is 50 minutes old, then exactly one new one', async () => {
        const localClock = new ManualClock(START_MS);
        const t = transport({ clock: localClock });
        const seenBefore = fake.providerTokens.length;
        const devices = Array.from({ length: 20 }, (_, i) => apnsDevice(100 + i));
        for (const outcome of (await t.sendBatch(devices, socialMessage('like'))).values()) assert.deepEqual(outcome, { ok: true });
        localClock.advance(APNS_TOKEN_REFRESH_MS - 1);
        await sendOne(t, apnsDevice(120));
        assert.equal(t.providerTokensMinted, 1, 'still the first token one millisecond before 50 minutes');
        localClock.advance(1);
        for (const outcome of (await t.sendBatch(devices, socialMessage('like'))).values()) assert.deepEqual(outcome, { ok: true });
        assert.equal(t.providerTokensMinted, 2);
        assert.equal(fake.providerTokens.length, seenBefore + 2, 'Apple saw exactly two tokens');
      });

      test('a provider token older than an hour is refused by the fake with ExpiredProviderToken', async () => {
        const key = readApnsKey(keyPath);
        const stale = await signApnsJwt(key, fake.keyId, fake.teamId, Math.floor(clock.nowMs() / 1000) - 3601);
        const fresh = await signApnsJwt(key, fake.keyId, fake.teamId, Math.floor(clock.nowMs() / 1000) - 60);
        const pool = new Http2Pool({ baseUrl: fake.baseUrl });
        try {
          const post = (jwt: string) =>
            pool.request({
              method: 'POST',
              path: `/3/device/${deviceToken(140)}`,
              headers: [
                ['authorization', `bearer ${jwt}`],
                ['apns-topic', fake.bundleId],
                ['apns-id', '123e4567-e89b-12d3-a456-426614174000'],
              ],
              body: '{"aps":{"alert":"hi"}}',
            });
          const refused = await post(stale);
          assert.equal(refused.status, 403);
          assert.deepEqual(JSON.parse(refused.bodyText), { reason: 'ExpiredProviderToken' });
          const accepted = await post(fresh);
          assert.equal(accepted.status, 200);
          assert.equal(accepted.bodyText, '');
          assert.equal(accepted.headers['apns-id'], '123e4567-e89b-12d3-a456-426614174000', 'apns-id echoed');
        } finally {
          await pool.close();
        }
      });
    });
  });
}
