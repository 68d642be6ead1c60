/**
 * The APNs provider API transport (reference §2): `POST /3/device/<token>` over pooled HTTP/2
 * connections to Apple's production or sandbox host (app-wide `apns.sandbox`, or per device with
 * `"sandbox": true`), authorised by the shared ES256 provider token.
 *
 * Like the FCM transport it never throws: every failure is a classified {@link SendOutcome},
 * each per-token operation is bounded by {@link APNS_OPERATION_TIMEOUT_MS}, and an exception
 * while handling one token touches that token alone.
 */
import type { Config } from '../../config/defaults.ts';
import { redact, type Logger } from '../../observability/logger.ts';
import type { Metrics } from '../../observability/metrics.ts';
import type { Clock, DeviceRegistration } from '../../store/port.ts';
import { systemClock } from '../../util/clock.ts';
import { CONNECT_TIMEOUT_MS, Http2Pool, Http2RequestError, REQUEST_TIMEOUT_MS, type Http2ClientKind } from '../http2/pool.ts';
import type { HeaderField } from '../http2/connection.ts';
import { failedOutcome as failed, sendPerDevice } from '../per-device.ts';
import type { PushTransport, SendOutcome } from '../types.ts';
import { classifyApnsError } from './classify.ts';
import { ApnsProviderToken, readApnsKey } from './jwt.ts';
import { toApnsRequest } from './message.ts';
import type { PushMessage } from '../../notification/types.ts';

/** One batch's request as it goes on the wire: the headers after `authorization`, the JSON body. */
interface ApnsWireRequest {
  headers: readonly HeaderField[];
  body: string;
}

/** A collapse id names one coalescing group, rarely sent twice: not worth a place in the HPACK table. */
function withApnsIndexing(field: readonly [string, string]): HeaderField {
  return field[0] === 'apns-collapse-id' ? [field[0], field[1], 'without'] : field;
}

/** Bound of one per-token send, the ExpiredProviderToken retry included (as FCM's). */
export const APNS_OPERATION_TIMEOUT_MS = 45_000;
/** Tokens of one batch in flight at once (one connection's streams, as FCM's). */
export const APNS_BATCH_CONCURRENCY = 100;

export interface ApnsTransportOptions {
  keyPath: string;
  keyId: string;
  teamId: string;
  /** `apns-topic`. */
  bundleId: string;
  /** Production origin; `http://` means h2c (loopback fakes). */
  apiBaseUrl: string;
  sandboxApiBaseUrl: string;
  /** Every device to the sandbox. */
  sandbox: boolean;
  /** `apns-expiration` = now + this; 0 sends `0` (deliver now or never). */
  expirationSecs: number;
  logger: Logger;
  metrics: Metrics;
  /** Clock of the provider token's age and of `apns-expiration`. */
  clock?: Clock;
  operationTimeoutMs?: number;
  requestTimeoutMs?: number;
  connectTimeoutMs?: number;
  batchConcurrency?: number;
  /** `delivery.http2_client`: the HTTP/2 client under the pools; default `builtin`. */
  http2Client?: Http2ClientKind;
}

/** The transport, or null when `apns.key_path` is empty (APNs off). Throws {@link ApnsKeyError} on an unusable key. */
export function createApnsTransport(options: ApnsTransportOptions): ApnsTransport | null {
  if (options.keyPath === '') return null;
  return new ApnsTransport(options);
}

/** The transport options `config.apns` describes. */
export function apnsOptionsFromConfig(config: Pick<Config, 'apns' | 'delivery'>, logger: Logger, metrics: Metrics): ApnsTransportOptions {
  const apns = config.apns;
  return {
    keyPath: apns.key_path,
    keyId: apns.key_id,
    teamId: apns.team_id,
    bundleId: apns.bundle_id,
    apiBaseUrl: apns.api_base_url,
    sandboxApiBaseUrl: apns.sandbox_api_base_url,
    sandbox: apns.sandbox,
    expirationSecs: apns.expiration_secs,
    logger,
    metrics,
    http2Client: config.delivery.http2_client,
  };
}

export class ApnsTransport implements PushTransport {
  private readonly production: Http2Pool;
  private readonly sandboxPool: Http2Pool;
  private readonly providerToken: ApnsProviderToken;
  private readonly clock: Clock;
  private readonly operationTimeoutMs: number;
  private readonly batchConcurrency: number;
  private readonly logger: Logger;

  constructor(private readonly options: ApnsTransportOptions) {
    this.clock = options.clock ?? systemClock;
    this.providerToken = new ApnsProviderToken({
      key: readApnsKey(options.keyPath),
      keyId: options.keyId,
      teamId: options.teamId,
      clock: this.clock,
    });
    this.production = this.openPool(options.apiBaseUrl);
    this.sandboxPool = this.openPool(options.sandboxApiBaseUrl);
    this.operationTimeoutMs = options.operationTimeoutMs ?? APNS_OPERATION_TIMEOUT_MS;
    this.batchConcurrency = Math.max(1, options.batchConcurrency ?? APNS_BATCH_CONCURRENCY);
    this.logger = options.logger.child({ transport: 'apns' });
  }

  handles(device: DeviceRegistration): boolean {
    return device.transport === 'apns';
  }

  /** Provider tokens minted so far (tests). */
  get providerTokensMinted(): number {
    return this.providerToken.minted;
  }

  sendBatch(devices: DeviceRegistration[], message: PushMessage, signal?: AbortSignal): Promise<Map<string, SendOutcome>> {
    // One body for every device of the batch: the device token travels in the path, not the body.
    const parts = toApnsRequest(message, { topic: this.options.bundleId, expiresAtSecs: this.expiresAtSecs() });
    const request = parts === null ? null : { headers: parts.headers.map(withApnsIndexing), body: JSON.stringify(parts.payload) };
    return sendPerDevice(devices, {
      transportName: 'APNs',
      handles: (device) => this.handles(device),
      concurrency: this.batchConcurrency,
      sendOne: (device) => this.sendContained(device, request, signal),
    });
  }

  async close(): Promise<void> {
    await Promise.all([this.production.close(), this.sandboxPool.close()]);
  }

  /** The one place a pool is made, the same seam as the FCM transport's. */
  private openPool(baseUrl: string): Http2Pool {
    return new Http2Pool({
      baseUrl,
      connectTimeoutMs: this.options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
      requestTimeoutMs: this.options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
      client: this.options.http2Client ?? 'builtin',
    });
  }

  private expiresAtSecs(): number {
    if (this.options.expirationSecs === 0) return 0;
    return Math.floor(this.clock.nowMs() / 1000) + this.options.expirationSecs;
  }

  private async sendContained(
    device: DeviceRegistration,
    request: ApnsWireRequest | null,
    signal: AbortSignal | undefined,
  ): Promise<SendOutcome> {
    if (request === null) return failed('invalid_request', 'APNs push without data: nothing to send');
    if (signal?.aborted) return failed('internal_request', 'APNs send aborted before it started');
    const { metrics } = this.options;
    metrics.apnsSendsAttempted.inc();
    let outcome: SendOutcome;
    try {
      outcome = await this.sendOnce(device, request, signal, Date.now() + this.operationTimeoutMs);
    } catch (err) {
      outcome = failed('internal_response', `APNs send threw while handling the response: ${(err as Error).message}`);
    }
    if (outcome.ok) {
      metrics.apnsSendsSucceeded.inc();
    } else {
      metrics.apnsSendsFailed.inc({ reason: outcome.error.kind });
      const fields = { token: redact(device.token), kind: outcome.error.kind, status: outcome.error.status };
      if (outcome.error.kind === 'token_not_registered') this.logger.info(fields, `APNs token not registered: ${outcome.error.message}`);
      else this.logger.warn(fields, `APNs send failed: ${outcome.error.message}`);
    }
    return outcome;
  }

  /** One token: the request, and once more with a fresh provider token after `ExpiredProviderToken`. */
  private async sendOnce(
    device: DeviceRegistration,
    request: ApnsWireRequest,
    signal: AbortSignal | undefined,
    deadlineMs: number,
  ): Promise<SendOutcome> {
    const pool = device.sandbox === true || this.options.sandbox ? this.sandboxPool : this.production;
    const { body } = request;
    for (let attempt = 1; ; attempt++) {
      const bearer = await this.providerToken.current();
      let response;
      try {
        response = await pool.request({
          method: 'POST',
          path: `/3/device/${encodeURIComponent(device.token)}`,
          // Every token's path and most collapse ids are seen once: kept out of the HPACK table so
          // the provider token and the fixed apns-* fields stay indexed (one byte each).
          pathIndexing: 'without',
          headers: [['authorization', `bearer ${bearer}`], ...request.headers],
          body,
          signal,
          deadlineMs,
        });
      } catch (err) {
        if (err instanceof Http2RequestError) {
          if (err.reason === 'deadline') return failed('internal_request', `APNs send exceeded ${this.operationTimeoutMs} ms`);
          return failed('internal_request', `APNs request failed: ${err.message}`);
        }
        throw err;
      }
      if (response.status >= 200 && response.status <= 299) return SENT;
      const verdict = classifyApnsError(response.status, response.headers, response.bodyText);
      if (verdict.refreshProviderToken && attempt === 1 && (await this.providerToken.refreshAfterExpired(bearer))) {
        this.logger.info('APNs said ExpiredProviderToken: retrying once with a fresh provider token');
        continue;
      }
      return { ok: false, error: verdict.error };
    }
  }
}

const SENT: SendOutcome = Object.freeze({ ok: true as const });
