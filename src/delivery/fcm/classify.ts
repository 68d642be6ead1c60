/**
 * Turning a non-2xx FCM response into a {@link DeliveryError}, in the exact order of
 * divine-push-service §5.3. The order matters: a 5xx that mentions an invalid token is still a
 * retry, and only explicit dead-token evidence (never a bare 404) prunes a device.
 */
import type { DeliveryError } from '../types.ts';

/** Retry-After when the header is missing or not an integer (an HTTP-date, garbage). */
export const DEFAULT_RETRY_AFTER_SECS = 1;

/** Response headers as node:http2 (or a plain record) gives them; names in any casing. */
export type ResponseHeaders = Readonly<Record<string, string | string[] | number | undefined>>;

/** FcmError codes that mean the device is gone. */
const DEAD_TOKEN_ERROR_CODES = new Set(['UNREGISTERED', 'NotRegistered']);
/** Lowercase message fragments that mean the token itself is dead or malformed. */
const DEAD_TOKEN_MESSAGE_FRAGMENTS = ['invalid registration token', 'not a valid fcm registration token'];
/** APNs reason relayed verbatim by FCM; matched case-sensitively, as Apple spells it. */
const DEAD_TOKEN_RAW_FRAGMENT = 'BadDeviceToken';

interface ParsedFcmErrorBody {
  /** `error.message` of a Google error body, else the raw body text. */
  message: string;
  /** The first `error.details[].errorCode`. */
  errorCode: string | undefined;
}

/** Classify one failed send. `status` is the HTTP status; `bodyText` the raw response body. */
export function classifyFcmError(status: number, headers: ResponseHeaders, bodyText: string): DeliveryError {
  const { message, errorCode } = parseErrorBody(bodyText);

  if ((status >= 500 && status <= 599) || status === 429) {
    return { kind: 'retryable_internal', message: `FCM ${status}: ${message}`, retryAfterSecs: parseRetryAfterSecs(headers), status };
  }

  if ((errorCode !== undefined && DEAD_TOKEN_ERROR_CODES.has(errorCode)) || mentionsDeadToken(message)) {
    return { kind: 'token_not_registered', message, status };
  }

  if (errorCode === 'SENDER_ID_MISMATCH' || mentionsSenderMismatch(message)) {
    return { kind: 'invalid_request', message: `Project mismatch: ${message}`, status };
  }

  if (status === 401 || status === 403) return { kind: 'unauthorized', message, status };
  if (status >= 400 && status <= 499) return { kind: 'invalid_request', message, status };
  return { kind: 'unknown', message: `FCM returned unexpected status ${status}: ${message}`, status };
}

/**
 * Retry-After as integer seconds: header name in any casing, value trimmed. An HTTP-date, a
 * fraction or a missing header gives {@link DEFAULT_RETRY_AFTER_SECS}. No upper clamp: a provider
 * asking for an hour gets an hour.
 */
export function parseRetryAfterSecs(headers: ResponseHeaders): number {
  const raw = headerValue(headers, 'retry-after');
  if (raw === undefined) return DEFAULT_RETRY_AFTER_SECS;
  const trimmed = raw.trim();
  if (!/^\d+$/.test(trimmed)) return DEFAULT_RETRY_AFTER_SECS;
  const secs = Number(trimmed);
  return Number.isSafeInteger(secs) ? secs : DEFAULT_RETRY_AFTER_SECS;
}

function headerValue(headers: ResponseHeaders, lowercaseName: string): string | undefined {
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== lowercaseName || value === undefined) continue;
    return Array.isArray(value) ? value[0] : String(value);
  }
  return undefined;
}

function parseErrorBody(bodyText: string): ParsedFcmErrorBody {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    return { message: bodyText, errorCode: undefined };
  }
  const error = isRecord(parsed) ? parsed.error : undefined;
  if (!isRecord(error)) return { message: bodyText, errorCode: undefined };
  const message = typeof error.message === 'string' ? error.message : bodyText;
  let errorCode: string | undefined;
  if (Array.isArray(error.details)) {
    for (const detail of error.details) {
      if (isRecord(detail) && typeof detail.errorCode === 'string') {
        errorCode = detail.errorCode;
        break;
      }
    }
  }
  return { message, errorCode };
}

function mentionsDeadToken(message: string): boolean {
  const lower = message.toLowerCase();
  return DEAD_TOKEN_MESSAGE_FRAGMENTS.some((fragment) => lower.includes(fragment)) || message.includes(DEAD_TOKEN_RAW_FRAGMENT);
}

function mentionsSenderMismatch(message: string): boolean {
  const lower = message.toLowerCase();
  return (
    message.includes('SENDER_ID_MISMATCH') ||
    lower.includes('sender id mismatch') ||
    (lower.includes('project') && lower.includes('mismatch'))
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
