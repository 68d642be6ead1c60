import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Counter } from 'prom-client';
import { createLogger, type Logger } from '../../observability/logger.ts';
import { Metrics } from '../../observability/metrics.ts';
import type { DeviceRegistration } from '../../store/port.ts';
import type { SendOutcome } from '../types.ts';
import { fcmErrors, startFcmFake, type FcmFake } from '../../../test/support/fcm-fake.ts';
import { HTTP2_CLIENT_KINDS } from '../http2/pool.ts';

/** A success carries FCM's message name (`projects/{project}/messages/{id}`), which the delivery log records. */
function assertSent(outcome: SendOutcome | undefined, message?: string): void {
  assert.equal(outcome?.ok, true, message);
  assert.match((outcome as { messageId?: string }).messageId ?? '', /^projects\/[^/]+\/messages\/\d+$/, message);
}
import {
  FCM_OPERATION_TIMEOUT_MS,
  FcmTransport,
  createFcmTransport,
  fcmStatusLine,
  operationTimeoutMessage,
  type FcmTransportOptions,
} from './sender.ts';
import type { PushMessage } from '../../notification/types.ts';

const like: PushMessage = {
  data: { type: 'like', eventId: 'abc123', title: 'New like', body: 'Alice liked your post', receiverPubkey: 'f'.repeat(64) },
};
const fcmDevice = (token: string): DeviceRegistration => ({ token, transport: 'fcm' });
const tokens = (count: number, prefix = 'tok'): string[] => Array.from({ length: count }, (_, i) => `${prefix}-${i}-${'x'.repeat(40)}`);

async function counterValue(counter: Counter, labels: Record<string, string> = {}): Promise<number> {
  const { values } = await counter.get();
  const match = values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val));
  return match?.value ?? 0;
}

function errorOf(outcome: SendOutcome | undefined) {
  assert.ok(outcome && !outcome.ok, `expected a failure, got ${JSON.stringify(outcome)}`);
  return outcome.error;
}

// One suite over both HTTP/2 clients (delivery.http2_client), as the store contract runs over both stores.
for (const http2Client of HTTP2_CLIENT_KINDS) {
  describe(`FcmTransport against the loopback fake (delivery.http2_client: ${http2Client})`, () => {
    let fake: FcmFake;
    let dir: string;
    let credentialsPath: string;
    let metrics: Metrics;
    const logger = createLogger({ level: 'silent' });
    const open: FcmTransport[] = [];

    const transport = (overrides: Partial<FcmTransportOptions> = {}): FcmTransport => {
      const created = createFcmTransport({
        projectId: 'fake-project',
        credentialsPath,
        apiBaseUrl: fake.baseUrl,
        logger,
        metrics,
        http2Client,
        ...overrides,
      });
      assert.ok(created);
      open.push(created);
      return created;
    };

    before(async () => {
      fake = await startFcmFake();
      dir = mkdtempSync(join(tmpdir(), 'fcm-sender-'));
      credentialsPath = fake.writeCredentials(dir);
    });
    beforeEach(() => {
      metrics = new Metrics();
      fake.setLatency(0);
    });
    after(async () => {
      await Promise.all(open.map((t) => t.close()));
      await fake.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    test('success: bearer from the token endpoint, data-only body, android high, apns alert without content-available', async () => {
      const fcm = transport();
      const outcomes = await fcm.sendBatch([fcmDevice('device-success')], like);
      assertSent(outcomes.get('device-success'));
      const received = fake.messages.find((m) => m.token === 'device-success');
      assert.ok(received);
      assert.equal(received.headers.authorization, `Bearer ${fake.issuedAccessTokens.at(-1)}`);
      assert.equal(received.projectId, 'fake-project');
      const message = received.body.message;
      assert.equal('notification' in message, false);
      assert.deepEqual(message.data, like.data);
      assert.deepEqual(message.android, { priority: 'high' });
      assert.equal(message.apns?.headers['apns-push-type'], 'alert');
      assert.equal(message.apns.headers['apns-priority'], '10');
      assert.equal(message.apns.payload.aps['content-available'], undefined);
      assert.equal(message.apns.payload.aps['mutable-content'], 1);
    });

    test('silent data: no android block, apns push type background', async () => {
      const fcm = transport();
      await fcm.sendBatch([fcmDevice('device-silent')], { data: { eventId: 'abc123' } });
      const message = fake.messages.find((m) => m.token === 'device-silent')?.body.message;
      assert.ok(message);
      assert.equal(message.android, undefined);
      assert.equal(message.apns?.headers['apns-push-type'], 'background');
    });

    test('503 with Retry-After 42 → retryable_internal 42', async () => {
      fake.script({ token: 'device-503', ...fcmErrors.unavailable(42) });
      const outcomes = await transport().sendBatch([fcmDevice('device-503')], like);
      const error = errorOf(outcomes.get('device-503'));
      assert.equal(error.kind, 'retryable_internal');
      assert.equal(error.retryAfterSecs, 42);
      assert.equal(error.status, 503);
    });

    test('404 UNREGISTERED → token_not_registered', async () => {
      fake.script({ token: 'device-gone', ...fcmErrors.unregistered() });
      const outcomes = await transport().sendBatch([fcmDevice('device-gone')], like);
      assert.equal(errorOf(outcomes.get('device-gone')).kind, 'token_not_registered');
    });

    test('a hanging server with a short operation timeout → internal_request "FCM send exceeded"', async () => {
      fake.script({ token: 'device-hang', hang: true });
      const outcomes = await transport({ operationTimeoutMs: 300 }).sendBatch([fcmDevice('device-hang')], like);
      const error = errorOf(outcomes.get('device-hang'));
      assert.equal(error.kind, 'internal_request');
      assert.equal(error.message, 'FCM send exceeded 300ms');
    });

    test('a hanging server with a short request timeout → internal_request naming the request bound', async () => {
      fake.script({ token: 'device-hang-request', hang: true });
      const outcomes = await transport({ requestTimeoutMs: 200 }).sendBatch([fcmDevice('device-hang-request')], like);
      const error = errorOf(outcomes.get('device-hang-request'));
      assert.equal(error.kind, 'internal_request');
      assert.ok(error.message.includes('exceeded 200ms'), error.message);
    });

    test('a hanging token endpoint → internal_request "exceeded" (token acquisition is inside the operation bound)', async () => {
      fake.script({ route: 'token', hang: true });
      const outcomes = await transport({ operationTimeoutMs: 300 }).sendBatch([fcmDevice('device-token-hang')], like);
      const error = errorOf(outcomes.get('device-token-hang'));
      assert.equal(error.kind, 'internal_request');
      assert.ok(error.message.includes('exceeded'), error.message);
      assert.equal(
        fake.messages.some((m) => m.token === 'device-token-hang'),
        false,
      );
    });

    test('a rejected credential is unauthorized for every token, without a throw', async () => {
      fake.script({ route: 'token', status: 400, body: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' } });
      const outcomes = await transport().sendBatch([fcmDevice('device-a'), fcmDevice('device-b')], like);
      assert.equal(errorOf(outcomes.get('device-a')).kind, 'unauthorized');
      assert.equal(errorOf(outcomes.get('device-b')).kind, 'unauthorized');
    });

    test('a 401 from FCM drops the cached access token, so the next send gets a fresh one', async () => {
      const fcm = transport();
      await fcm.sendBatch([fcmDevice('device-warm')], like);
      const issued = fake.issuedAccessTokens.length;
      fake.script({
        token: 'device-401',
        status: 401,
        body: { error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } },
      });
      assert.equal(errorOf((await fcm.sendBatch([fcmDevice('device-401')], like)).get('device-401')).kind, 'unauthorized');
      assertSent((await fcm.sendBatch([fcmDevice('device-after-401')], like)).get('device-after-401'));
      assert.equal(fake.issuedAccessTokens.length, issued + 1);
    });

    test('GOAWAY mid-batch: refused streams are retried on a new session and every token is delivered once', async () => {
      const fcm = transport();
      fake.setLatency(20);
      const batch = tokens(100, 'goaway');
      const goawaysBefore = fake.stats.goawaysSent;
      fake.script({ goaway: true, skip: 30 });
      const outcomes = await fcm.sendBatch(batch.map(fcmDevice), like);
      assert.equal(fake.stats.goawaysSent, goawaysBefore + 1);
      for (const token of batch) assertSent(outcomes.get(token), token);
      const delivered = fake.messages.filter((m) => m.token.startsWith('goaway-')).map((m) => m.token);
      assert.equal(delivered.length, 100);
      assert.deepEqual(new Set(delivered), new Set(batch));
      assert.ok(fcm.sessionsOpened >= 2, `sessions opened: ${fcm.sessionsOpened}`);
    });

    test('a batch of 300 tokens never has more than 100 streams open at the fake', async () => {
      const fcm = transport();
      await fcm.sendBatch([fcmDevice('device-warmup')], like); // token fetched, session open
      fake.setLatency(25);
      fake.stats.peakConcurrentSendStreams = 0;
      const batch = tokens(300, 'wide');
      const outcomes = await fcm.sendBatch(batch.map(fcmDevice), like);
      assert.equal([...outcomes.values()].filter((o) => o.ok).length, 300);
      assert.ok(fake.stats.peakConcurrentSendStreams <= 100, `peak ${fake.stats.peakConcurrentSendStreams}`);
      assert.ok(fake.stats.peakConcurrentSendStreams >= 50, `peak ${fake.stats.peakConcurrentSendStreams} shows no concurrency`);
      assert.equal(await counterValue(metrics.fcmSendsAttempted), 301);
    });

    test('metrics: attempted, succeeded and failed{reason} per token', async () => {
      fake.script({ token: 'metrics-gone', ...fcmErrors.unregistered() });
      fake.script({ token: 'metrics-busy', ...fcmErrors.quotaExceeded(12) });
      const outcomes = await transport().sendBatch(['metrics-ok', 'metrics-gone', 'metrics-busy'].map(fcmDevice), like);
      assert.equal(outcomes.size, 3);
      assert.equal(await counterValue(metrics.fcmSendsAttempted), 3);
      assert.equal(await counterValue(metrics.fcmSendsSucceeded), 1);
      assert.equal(await counterValue(metrics.fcmSendsFailed, { reason: 'token_not_registered' }), 1);
      assert.equal(await counterValue(metrics.fcmSendsFailed, { reason: 'retryable_internal' }), 1);
      assert.match(await metrics.render(), /push_fcm_sends_failed_total\{reason="retryable_internal"\} 1/);
    });

    test('duplicate tokens are sent once; non-FCM devices get invalid_request without a send', async () => {
      const devices: DeviceRegistration[] = [fcmDevice('dup-token'), fcmDevice('dup-token'), { token: 'apns-token', transport: 'apns' }];
      const outcomes = await transport().sendBatch(devices, like);
      assertSent(outcomes.get('dup-token'));
      assert.equal(errorOf(outcomes.get('apns-token')).kind, 'invalid_request');
      assert.equal(fake.messages.filter((m) => m.token === 'dup-token').length, 1);
      assert.equal(
        fake.messages.some((m) => m.token === 'apns-token'),
        false,
      );
      assert.equal(await counterValue(metrics.fcmSendsAttempted), 1);
    });

    test('an aborted batch reports every token without sending the ones not started', async () => {
      const abort = new AbortController();
      abort.abort();
      const outcomes = await transport().sendBatch([fcmDevice('aborted-1'), fcmDevice('aborted-2')], like, abort.signal);
      assert.equal(errorOf(outcomes.get('aborted-1')).kind, 'internal_request');
      assert.equal(errorOf(outcomes.get('aborted-2')).kind, 'internal_request');
      assert.equal(
        fake.messages.some((m) => m.token.startsWith('aborted-')),
        false,
      );
    });

    test("one token's exception becomes internal_response for that token only; logs show an 8-char prefix", async () => {
      const lines: string[] = [];
      const sink = new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString('utf8'));
          done();
        },
      });
      const capturing: Logger = createLogger({ level: 'info', destination: sink });
      const badToken = '1234567é-bad-token-with-a-long-tail';
      class ThrowingForOneToken extends FcmTransport {
        protected override sendOnce(
          token: string,
          message: PushMessage,
          signal: AbortSignal | undefined,
          deadlineMs: number,
        ): Promise<SendOutcome> {
          if (token === badToken) throw new Error('simulated failure while handling the response');
          return super.sendOnce(token, message, signal, deadlineMs);
        }
      }
      const fcm = new ThrowingForOneToken({
        projectId: 'fake-project',
        credentialsPath,
        apiBaseUrl: fake.baseUrl,
        logger: capturing,
        metrics,
      });
      open.push(fcm);
      const outcomes = await fcm.sendBatch([fcmDevice('panic-ok-1'), fcmDevice(badToken), fcmDevice('panic-ok-2')], like);
      assert.equal(outcomes.size, 3);
      assertSent(outcomes.get('panic-ok-1'));
      assertSent(outcomes.get('panic-ok-2'));
      const error = errorOf(outcomes.get(badToken));
      assert.equal(error.kind, 'internal_response');
      assert.equal(await counterValue(metrics.fcmSendsAttempted), 3);
      assert.equal(await counterValue(metrics.fcmSendsSucceeded), 2);
      assert.equal(await counterValue(metrics.fcmSendsFailed, { reason: 'internal_response' }), 1);
      const log = lines.join('');
      assert.ok(log.includes('1234567é'), log);
      assert.equal(log.includes(badToken), false);
    });
  });
}

describe('createFcmTransport and fcmStatusLine', () => {
  test('the default operation bound reads "FCM send exceeded 45s"', () => {
    assert.equal(operationTimeoutMessage(FCM_OPERATION_TIMEOUT_MS), 'FCM send exceeded 45s');
    assert.equal(operationTimeoutMessage(300), 'FCM send exceeded 300ms');
  });

  test('an empty credentials path turns FCM off', () => {
    const off = createFcmTransport({
      projectId: 'p',
      credentialsPath: '',
      apiBaseUrl: 'https://fcm.googleapis.com',
      logger: createLogger({ level: 'silent' }),
      metrics: new Metrics(),
    });
    assert.equal(off, null);
    assert.match(
      fcmStatusLine({ firebase: { project_id: 'p', credentials_path: '', api_base_url: 'https://fcm.googleapis.com' } }),
      /^FCM is off/,
    );
    assert.equal(
      fcmStatusLine({ firebase: { project_id: 'p', credentials_path: '/etc/sa.json', api_base_url: 'https://fcm.googleapis.com' } }),
      'FCM on: project p via https://fcm.googleapis.com',
    );
  });

  test('an unreadable credentials file fails at creation with a clear error', () => {
    assert.throws(
      () =>
        createFcmTransport({
          projectId: 'p',
          credentialsPath: '/nonexistent/sa.json',
          apiBaseUrl: 'https://fcm.googleapis.com',
          logger: createLogger({ level: 'silent' }),
          metrics: new Metrics(),
        }),
      /FCM credentials \/nonexistent\/sa.json cannot be read/,
    );
  });
});
