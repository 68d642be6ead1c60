/**
 * The Web Push / UnifiedPush transport: devices registered with transport `webpush` or
 * `unifiedpush` (endpoint, p256dh, auth) get the FCM data map as JSON, encrypted with RFC 8291
 * `aes128gcm`, POSTed per RFC 8030 with VAPID (RFC 8292). An endpoint on our own ntfy topics is
 * appended to the topic in the store instead (see `local-ntfy.ts`).
 *
 * Every failure is a classified {@link SendOutcome}, never a throw (see `classify.ts`).
 */
import { OutboundPolicy, resolverFromEnvironment, type Resolver } from '../../net/public-connect.ts';
import { outboundRefusalReporter } from '../../net/refusals.ts';
import { redact, type Logger } from '../../observability/logger.ts';
import type { Metrics } from '../../observability/metrics.ts';
import type { Clock, DeviceRegistration } from '../../store/port.ts';
import { systemClock } from '../../util/clock.ts';
import type { DeliveryErrorKind, PushTransport, SendOutcome } from '../types.ts';
import { classifyPushResponse, classifyRequestError, NO_ANSWER_RETRY_AFTER_SECS } from './classify.ts';
import { encryptAes128gcm, WebPushEncryptionError } from './encrypt.ts';
import { parsePushEndpoint } from './endpoint-policy.ts';
import { PushHttpClient, PushRequestError, type PushHttpRequest, type PushHttpResponse } from './http-client.ts';
import { LocalTopicRefusedError, type AppendToLocalTopic, type LocalNtfyMatcher } from './local-ntfy.ts';
import { DEFAULT_WEBPUSH_TTL_SECS, webPushHeaders, webPushPlaintext } from './message.ts';
import { VapidSigner, type VapidKeyPair } from './vapid.ts';
import type { PushMessage } from '../../notification/types.ts';

/** Subscriptions of one batch in flight at once. */
export const WEBPUSH_BATCH_CONCURRENCY = 50;

/** Where a push went: `http` to a push service, `local` into our own ntfy topic. */
export type WebPushRoute = 'http' | 'local';

/** The one method of the HTTP side the transport needs; tests may replace it. */
export interface PushPoster {
  post(request: PushHttpRequest): Promise<PushHttpResponse>;
  close(): void;
}

export interface WebPushTransportOptions {
  vapidKeys: VapidKeyPair;
  /** `webpush.vapid_subject` (`mailto:` or `https:`); empty leaves `sub` out of the JWT. */
  vapidSubject: string;
  /** Default {@link DEFAULT_WEBPUSH_TTL_SECS}. */
  ttlSecs?: number;
  /** `webpush.allow_private_endpoints` (see `endpoint-policy.ts`): the address policy's `allowPrivate`. */
  allowPrivateEndpoints: boolean;
  /** Resolves endpoint names for the address policy; {@link resolverFromEnvironment} by default (tests inject one). */
  resolver?: Resolver;
  /** Bound of one push request; default `PUSH_REQUEST_TIMEOUT_MS`. */
  requestTimeoutMs?: number;
  /** Default {@link WEBPUSH_BATCH_CONCURRENCY}. */
  batchConcurrency?: number;
  /** Our own ntfy server's topics, when it has a base URL; with `appendToLocalTopic`. */
  localNtfy?: { matcher: LocalNtfyMatcher; append: AppendToLocalTopic } | null;
  logger: Logger;
  metrics: Metrics;
  /** JWT timestamps. */
  clock?: Clock;
  /** The HTTP side; a {@link PushHttpClient} by default. */
  poster?: PushPoster;
}

export class WebPushTransport implements PushTransport {
  private readonly signer: VapidSigner;
  private readonly ttlSecs: number;
  private readonly batchConcurrency: number;
  private readonly localNtfy: WebPushTransportOptions['localNtfy'];
  private readonly poster: PushPoster;
  private readonly logger: Logger;
  private readonly metrics: Metrics;

  constructor(options: WebPushTransportOptions) {
    this.signer = new VapidSigner({ keys: options.vapidKeys, subject: options.vapidSubject, clock: options.clock ?? systemClock });
    this.ttlSecs = options.ttlSecs ?? DEFAULT_WEBPUSH_TTL_SECS;
    this.batchConcurrency = Math.max(1, options.batchConcurrency ?? WEBPUSH_BATCH_CONCURRENCY);
    this.localNtfy = options.localNtfy ?? null;
    this.poster =
      options.poster ??
      new PushHttpClient({
        policy: new OutboundPolicy({
          purpose: 'webpush',
          rules: { allowLoopback: false, allowPrivate: options.allowPrivateEndpoints },
          resolver: options.resolver ?? resolverFromEnvironment(),
          onRefused: outboundRefusalReporter(options.metrics, options.logger),
        }),
        requestTimeoutMs: options.requestTimeoutMs,
      });
    this.logger = options.logger;
    this.metrics = options.metrics;
  }

  /** The VAPID public key, base64url: what apps pass as `applicationServerKey`. */
  get vapidPublicKey(): string {
    return this.signer.publicKeyBase64url;
  }

  handles(device: DeviceRegistration): boolean {
    return device.transport === 'webpush' || device.transport === 'unifiedpush';
  }

  async sendBatch(devices: DeviceRegistration[], message: PushMessage, signal?: AbortSignal): Promise<Map<string, SendOutcome>> {
    const outcomes = new Map<string, SendOutcome>();
    const pending: DeviceRegistration[] = [];
    const seen = new Set<string>();
    for (const device of devices) {
      if (seen.has(device.token)) continue;
      seen.add(device.token);
      if (!this.handles(device))
        outcomes.set(device.token, failed('invalid_request', `not a Web Push device (transport ${device.transport})`));
      else pending.push(device);
    }
    // Encoded once: every subscription of the batch gets the same plaintext and headers.
    const plaintext = webPushPlaintext(message);
    const headers = webPushHeaders(message, this.ttlSecs);

    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < pending.length) {
        const device = pending[next++] as DeviceRegistration;
        if (signal?.aborted) {
          outcomes.set(device.token, failed('internal_request', 'Web Push send aborted before it started'));
          continue;
        }
        outcomes.set(device.token, await this.sendContained(device, plaintext, headers, signal));
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.batchConcurrency, pending.length) }, worker));
    return outcomes;
  }

  async close(): Promise<void> {
    this.poster.close();
  }

  /** One subscription, with metrics and logs; an exception here touches this subscription only. */
  private async sendContained(
    device: DeviceRegistration,
    plaintext: Buffer,
    headers: ReturnType<typeof webPushHeaders>,
    signal: AbortSignal | undefined,
  ): Promise<SendOutcome> {
    let route: WebPushRoute = 'http';
    let outcome: SendOutcome;
    try {
      const prepared = this.prepare(device, plaintext);
      if ('outcome' in prepared) {
        outcome = prepared.outcome;
      } else if (prepared.localTopic !== null && this.localNtfy) {
        route = 'local';
        outcome = await this.appendLocally(prepared.localTopic, prepared.body, headers, prepared.url);
      } else {
        outcome = await this.postToPushService(prepared.url, prepared.body, headers, signal);
      }
    } catch (err) {
      outcome = failed('internal_response', `Web Push send threw: ${(err as Error).message}`);
    }
    this.metrics.webpushSendsAttempted.inc({ route });
    if (outcome.ok) {
      this.metrics.webpushSendsSucceeded.inc({ route });
    } else {
      this.metrics.webpushSendsFailed.inc({ route, reason: outcome.error.kind });
      const fields = {
        token: redact(device.token),
        route,
        kind: outcome.error.kind,
        status: outcome.error.status,
        retryAfterSecs: outcome.error.retryAfterSecs,
      };
      if (outcome.error.kind === 'token_not_registered') this.logger.info(fields, `Web Push subscription gone: ${outcome.error.message}`);
      else this.logger.warn(fields, `Web Push send failed: ${outcome.error.message}`);
    }
    return outcome;
  }

  /** Check the endpoint and encrypt; a bad subscription is a final failure before any I/O. */
  private prepare(
    device: DeviceRegistration,
    plaintext: Buffer,
  ): { outcome: SendOutcome } | { url: URL; body: Buffer; localTopic: string | null } {
    const checked = parsePushEndpoint(device.endpoint ?? device.token);
    if (!checked.ok) return { outcome: failed('invalid_request', checked.reason) };
    if (device.p256dh === undefined || device.auth === undefined)
      return { outcome: failed('invalid_request', 'the subscription has no p256dh/auth keys') };
    let body: Buffer;
    try {
      body = encryptAes128gcm(plaintext, { p256dh: device.p256dh, auth: device.auth });
    } catch (err) {
      if (err instanceof WebPushEncryptionError)
        return { outcome: failed('invalid_request', `cannot encrypt for this subscription: ${err.message}`) };
      throw err;
    }
    return { url: checked.url, body, localTopic: this.localNtfy?.matcher.topicOf(checked.url) ?? null };
  }

  private async postToPushService(
    url: URL,
    body: Buffer,
    headers: ReturnType<typeof webPushHeaders>,
    signal: AbortSignal | undefined,
  ): Promise<SendOutcome> {
    const authorization = this.signer.authorizationFor(url);
    try {
      const response = await this.poster.post({ url, headers: { ...headers, authorization }, body, signal });
      return classifyPushResponse(response.status, response.headers, response.bodyText);
    } catch (err) {
      if (err instanceof PushRequestError) return classifyRequestError(err);
      throw err;
    }
  }

  private async appendLocally(
    topic: string,
    body: Buffer,
    headers: ReturnType<typeof webPushHeaders>,
    endpoint: URL,
  ): Promise<SendOutcome> {
    try {
      await (this.localNtfy as NonNullable<WebPushTransportOptions['localNtfy']>).append(topic, body, headers, endpoint);
      return { ok: true };
    } catch (err) {
      if (err instanceof LocalTopicRefusedError) return failed('unauthorized', `the local ntfy topic refused the publish: ${err.message}`);
      return {
        ok: false,
        error: {
          kind: 'retryable_internal',
          message: `appending to the local ntfy topic failed: ${(err as Error).message}`,
          retryAfterSecs: NO_ANSWER_RETRY_AFTER_SECS,
        },
      };
    }
  }
}

function failed(kind: DeliveryErrorKind, message: string): SendOutcome {
  return { ok: false, error: { kind, message } };
}
