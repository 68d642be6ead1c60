/**
 * Turning a non-2xx APNs answer into a {@link DeliveryError}, as Apple documents its reasons
 * (reference §2.4). Only explicit dead-token evidence prunes: 410 `Unregistered`/`ExpiredToken`
 * (with Apple's `timestamp`, so a token re-registered since is kept) and 400 `BadDeviceToken`.
 * 429 and 5xx retry through the outbound queue's backoff; 403 `ExpiredProviderToken` asks the
 * sender to refresh its JWT once; every other 4xx fails without a retry.
 */
import { parseRetryAfterSecs, type ResponseHeaders } from '../fcm/classify.ts';
import type { DeliveryError } from '../types.ts';

/** 400 reasons that mean the token itself is bad. `DeviceTokenNotForTopic` is not one: it follows from a wrong `apns.bundle_id` as easily, and pruning on a config mistake would lose every device. */
const DEAD_TOKEN_400_REASONS = new Set(['BadDeviceToken']);
/** 410 reasons (Apple: the token is no longer active for the topic). */
const DEAD_TOKEN_410_REASONS = new Set(['Unregistered', 'ExpiredToken']);

export interface ApnsVerdict {
  error: DeliveryError;
  /** 403 `ExpiredProviderToken`: refresh the provider token (once) and retry. */
  refreshProviderToken: boolean;
}

export interface ApnsErrorBody {
  reason: string;
  /** 410 only: when Apple learned the token is no longer valid (ms since the epoch). */
  timestampMs?: number;
}

/** `{"reason": "...", "timestamp": ms}`; an unreadable body gives the raw text as the reason. */
export function parseApnsErrorBody(bodyText: string): ApnsErrorBody {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    return { reason: bodyText.slice(0, 200) };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { reason: bodyText.slice(0, 200) };
  const record = parsed as Record<string, unknown>;
  const body: ApnsErrorBody = { reason: typeof record.reason === 'string' ? record.reason : '' };
  if (typeof record.timestamp === 'number' && Number.isFinite(record.timestamp)) body.timestampMs = record.timestamp;
  return body;
}

/** Classify one failed send (`status` outside 2xx). */
export function classifyApnsError(status: number, headers: ResponseHeaders, bodyText: string): ApnsVerdict {
  const { reason, timestampMs } = parseApnsErrorBody(bodyText);
  const message = `APNs ${status} ${reason || '(no reason)'}`;
  const plain = (error: DeliveryError): ApnsVerdict => ({ error, refreshProviderToken: false });

  if (status === 429 || (status >= 500 && status <= 599)) {
    return plain({ kind: 'retryable_internal', message, retryAfterSecs: parseRetryAfterSecs(headers), status });
  }
  if (status === 410 && DEAD_TOKEN_410_REASONS.has(reason)) {
    const error: DeliveryError = { kind: 'token_not_registered', message, status };
    if (timestampMs !== undefined) error.unregisteredAtMs = timestampMs;
    return plain(error);
  }
  if (status === 400 && DEAD_TOKEN_400_REASONS.has(reason)) return plain({ kind: 'token_not_registered', message, status });
  if (status === 403) return { error: { kind: 'unauthorized', message, status }, refreshProviderToken: reason === 'ExpiredProviderToken' };
  if (status >= 400 && status <= 499) return plain({ kind: 'invalid_request', message, status });
  return plain({ kind: 'unknown', message: `APNs returned unexpected status ${status}: ${reason}`, status });
}
