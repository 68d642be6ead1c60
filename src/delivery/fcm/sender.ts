/**
 * The FCM HTTP v1 transport: one `messages:send` request per device token, over a pooled
 * HTTP/2 connection, with an OAuth2 bearer from the service account.
 *
 * Every failure is a classified {@link SendOutcome}, never a throw: the whole per-token operation
 * (token acquisition included, since a token endpoint can hang too) is bounded by
 * {@link FCM_OPERATION_TIMEOUT_MS}, and an exception while handling one token becomes
 * `internal_response` for that token alone.
 */
import type { Config } from '../../config/defaults.ts';
import { redact, type Logger } from '../../observability/logger.ts';
import type { Metrics } from '../../observability/metrics.ts';
import type { Clock, DeviceRegistration } from '../../store/port.ts';
import { systemClock } from '../../util/clock.ts';
import { failedOutcome as failed, sendPerDevice } from '../per-device.ts';
import type { PushTransport, SendOutcome } from '../types.ts';
import { classifyFcmError } from './classify.ts';
import { CONNECT_TIMEOUT_MS, Http2Pool, Http2RequestError, REQUEST_TIMEOUT_MS, type Http2ClientKind } from '../http2/pool.ts';
import { toFcmMessage } from './message.ts';
import { AccessTokenSource, readServiceAccountFile, type AccessTokenResult } from './oauth.ts';
import type { PushMessage } from '../../notification/types.ts';

/** Bound of one per-token send, OAuth token acquisition included (divine's FCM_OPERATION_TIMEOUT). */
export const FCM_OPERATION_TIMEOUT_MS = 45_000;
/** Tokens of one batch in flight at once (divine's FCM_BATCH_CONCURRENCY; one HTTP/2 session's streams). */
export const FCM_BATCH_CONCURRENCY = 100;

export interface FcmTransportOptions {
  /** `firebase.project_id`; empty falls back to the service account's `project_id`. */
  projectId: string;
  /** `firebase.credentials_path`; empty turns FCM off ({@link createFcmTransport} returns null). */
  credentialsPath: string;
  /** `firebase.api_base_url`; `http://` means h2c (loopback fakes). */
  apiBaseUrl: string;
  logger: Logger;
  metrics: Metrics;
  /** Clock for OAuth token expiry and JWT timestamps. */
  clock?: Clock;
  /** Per-token operation bound; tests shorten it. Default {@link FCM_OPERATION_TIMEOUT_MS}. */
  operationTimeoutMs?: number;
  /** Per-request bound (FCM and token endpoint). Default {@link REQUEST_TIMEOUT_MS}. */
  requestTimeoutMs?: number;
  /** Default {@link CONNECT_TIMEOUT_MS}. */
  connectTimeoutMs?: number;
  /** Default {@link FCM_BATCH_CONCURRENCY}. */
  batchConcurrency?: number;
  /** `delivery.http2_client`: the HTTP/2 client under the pool; default `builtin`. */
  http2Client?: Http2ClientKind;
}

/**
 * The transport, or null when `credentialsPath` is empty (the caller logs "FCM is off").
 * Throws {@link FcmCredentialsError} at startup when the credentials file is unusable.
 */
export function createFcmTransport(options: FcmTransportOptions): FcmTransport | null {
  if (options.credentialsPath === '') return null;
  return new FcmTransport(options);
}

/** One line for the start banner. */
export function fcmStatusLine(config: Pick<Config, 'firebase'>): string {
  const { credentials_path: credentialsPath, project_id: projectId, api_base_url: apiBaseUrl } = config.firebase;
  if (credentialsPath === '') return 'FCM is off (set firebase.credentials_path to a service-account JSON)';
  return `FCM on: project ${projectId || '(from credentials)'} via ${apiBaseUrl}`;
}

export class FcmTransport implements PushTransport {
  private readonly pool: Http2Pool;
  private readonly tokens: AccessTokenSource;
  private readonly sendPath: string;
  private readonly operationTimeoutMs: number;
  private readonly batchConcurrency: number;
  private readonly logger: Logger;
  private readonly metrics: Metrics;

  constructor(options: FcmTransportOptions) {
    const account = readServiceAccountFile(options.credentialsPath);
    const projectId = options.projectId || account.projectId;
    this.sendPath = `/v1/projects/${encodeURIComponent(projectId)}/messages:send`;
    this.pool = new Http2Pool({
      baseUrl: options.apiBaseUrl,
      connectTimeoutMs: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
      requestTimeoutMs: options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
      client: options.http2Client ?? 'builtin',
    });
    this.tokens = new AccessTokenSource({
      account,
      clock: options.clock ?? systemClock,
      requestTimeoutMs: options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
    });
    this.operationTimeoutMs = options.operationTimeoutMs ?? FCM_OPERATION_TIMEOUT_MS;
    this.batchConcurrency = Math.max(1, options.batchConcurrency ?? FCM_BATCH_CONCURRENCY);
    this.logger = options.logger.child({ transport: 'fcm' });
    this.metrics = options.metrics;
  }

  handles(device: DeviceRegistration): boolean {
    return device.transport === 'fcm';
  }

  /** HTTP/2 sessions opened so far (diagnostics and tests). */
  get sessionsOpened(): number {
    return this.pool.sessionsOpened;
  }

  sendBatch(devices: DeviceRegistration[], message: PushMessage, signal?: AbortSignal): Promise<Map<string, SendOutcome>> {
    return sendPerDevice(devices, {
      transportName: 'FCM',
      handles: (device) => this.handles(device),
      concurrency: this.batchConcurrency,
      sendOne: (device) => this.sendContained(device.token, message, signal),
    });
  }

  async close(): Promise<void> {
    this.tokens.close();
    await this.pool.close();
  }

  /** One token, with metrics and logs; an exception here touches this token only. */
  private async sendContained(token: string, message: PushMessage, signal: AbortSignal | undefined): Promise<SendOutcome> {
    if (signal?.aborted) return failed('internal_request', 'FCM send aborted before it started');
    this.metrics.fcmSendsAttempted.inc();
    let outcome: SendOutcome;
    try {
      outcome = await this.sendOnce(token, message, signal, Date.now() + this.operationTimeoutMs);
    } catch (err) {
      outcome = failed('internal_response', `FCM send threw while handling the response: ${(err as Error).message}`);
    }
    if (outcome.ok) {
      this.metrics.fcmSendsSucceeded.inc();
    } else {
      this.metrics.fcmSendsFailed.inc({ reason: outcome.error.kind });
      const fields = {
        token: redact(token),
        kind: outcome.error.kind,
        status: outcome.error.status,
        retryAfterSecs: outcome.error.retryAfterSecs,
      };
      if (outcome.error.kind === 'token_not_registered') this.logger.info(fields, `FCM token not registered: ${outcome.error.message}`);
      else this.logger.warn(fields, `FCM send failed: ${outcome.error.message}`);
    }
    return outcome;
  }

  /** An access token, waiting for a refresh no longer than until `deadlineMs`. */
  private async accessToken(deadlineMs: number): Promise<AccessTokenResult | null> {
    const current = this.tokens.peek();
    if (current) return current;
    const pending = this.tokens.get();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), Math.max(0, deadlineMs - Date.now()));
    });
    try {
      return await Promise.race([pending, expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * One request for one token, bounded by `deadlineMs` (the whole operation: token acquisition,
   * waiting for a stream, the exchange), without metrics. Protected so tests can make a single
   * token throw and check that its siblings are unaffected.
   */
  protected async sendOnce(token: string, message: PushMessage, signal: AbortSignal | undefined, deadlineMs: number): Promise<SendOutcome> {
    const auth = await this.accessToken(deadlineMs);
    if (!auth) return failed('internal_request', operationTimeoutMessage(this.operationTimeoutMs));
    if (!auth.ok) return { ok: false, error: auth.error };
    const body = JSON.stringify(toFcmMessage(token, message));
    let response;
    try {
      response = await this.pool.request({
        method: 'POST',
        path: this.sendPath,
        // Indexed in HPACK like any other field: nothing an attacker chooses shares this
        // connection's header table (notification text travels in DATA), so the bearer cannot
        // be probed for, and after the first send the whole header list is six octets.
        headers: [
          ['authorization', `Bearer ${auth.accessToken}`],
          ['content-type', 'application/json; charset=utf-8'],
        ],
        body,
        signal,
        deadlineMs,
      });
    } catch (err) {
      if (err instanceof Http2RequestError) {
        if (err.reason === 'deadline') return failed('internal_request', operationTimeoutMessage(this.operationTimeoutMs));
        return failed('internal_request', `FCM request failed: ${err.message}`);
      }
      throw err;
    }
    if (response.status >= 200 && response.status <= 299) return sentWithName(response.bodyText);
    // A 401 may mean our cached token went bad early; the next send fetches a fresh one.
    if (response.status === 401) this.tokens.invalidate(auth.accessToken);
    return { ok: false, error: classifyFcmError(response.status, response.headers, response.bodyText) };
  }
}

/** The outcome of every successful send (shared: outcomes are never mutated). */
const SENT: SendOutcome = Object.freeze({ ok: true as const });
/** FCM answers a send with `{"name": "projects/…/messages/…"}`; read by pattern, not a JSON parse per push. */
const MESSAGE_NAME = /"name"\s*:\s*"([^"\\]{1,300})"/;

/** The success outcome, with FCM's message name when the answer has one. */
function sentWithName(bodyText: string): SendOutcome {
  const name = MESSAGE_NAME.exec(bodyText)?.[1];
  return name === undefined ? SENT : { ok: true, messageId: name };
}

/** `FCM send exceeded 45s` (whole seconds) or `… exceeded 300ms`: the text names the configured bound. */
export function operationTimeoutMessage(timeoutMs: number): string {
  return `FCM send exceeded ${timeoutMs % 1000 === 0 ? `${timeoutMs / 1000}s` : `${timeoutMs}ms`}`;
}
