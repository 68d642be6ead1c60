/**
 * A push service's answer (RFC 8030) as a {@link SendOutcome}:
 *
 * | Answer                        | Outcome                 | Effect                                   |
 * |-------------------------------|-------------------------|------------------------------------------|
 * | 2xx (201 Created, ntfy's 200) | ok                      | delivered                                |
 * | 404, 410                      | `token_not_registered`  | the subscription is removed (§7.3)       |
 * | 429, 5xx                      | `retryable_internal`    | retried after `Retry-After` (1 s if none)|
 * | 401, 403                      | `unauthorized`          | VAPID rejected: a configuration error, no retry |
 * | 413 and every other 4xx       | `invalid_request`       | no retry, subscription kept              |
 * | 1xx/3xx (redirects are not followed) | `unknown`        | no retry, subscription kept              |
 *
 * Only 404/410 prune: ntfy deletes on any non-2xx, which loses a subscription to one bad 5xx.
 * Failures without an answer (timeouts, resets, DNS) are retried; an endpoint the address rule
 * refuses is `invalid_request`.
 */
import { parseRetryAfterSecs, type ResponseHeaders } from '../fcm/classify.ts';
import type { DeliveryError, SendOutcome } from '../types.ts';
import type { PushRequestError } from './http-client.ts';

/** Retry-After for a failure with no answer at all (a timeout or reset). */
export const NO_ANSWER_RETRY_AFTER_SECS = 1;
/** Characters of a push service's error body kept in the outcome message. */
const BODY_EXCERPT_CHARS = 200;

export function classifyPushResponse(status: number, headers: ResponseHeaders, bodyText: string): SendOutcome {
  if (status >= 200 && status <= 299) return { ok: true };
  const excerpt = bodyText.trim().slice(0, BODY_EXCERPT_CHARS);
  const message = `push service answered ${status}${excerpt === '' ? '' : `: ${excerpt}`}`;
  return { ok: false, error: errorFor(status, headers, message) };
}

function errorFor(status: number, headers: ResponseHeaders, message: string): DeliveryError {
  if (status === 404 || status === 410) return { kind: 'token_not_registered', message, status };
  if (status === 429 || (status >= 500 && status <= 599))
    return { kind: 'retryable_internal', message, status, retryAfterSecs: parseRetryAfterSecs(headers) };
  if (status === 401 || status === 403) return { kind: 'unauthorized', message: `VAPID rejected: ${message}`, status };
  if (status >= 400 && status <= 499) return { kind: 'invalid_request', message, status };
  return { kind: 'unknown', message, status };
}

/** A request that got no answer. */
export function classifyRequestError(err: PushRequestError): SendOutcome {
  switch (err.code) {
    case 'refused':
      return { ok: false, error: { kind: 'invalid_request', message: `endpoint refused: ${err.message}` } };
    case 'aborted':
      return { ok: false, error: { kind: 'internal_request', message: err.message } };
    case 'timeout':
    case 'network':
      return { ok: false, error: { kind: 'retryable_internal', message: err.message, retryAfterSecs: NO_ANSWER_RETRY_AFTER_SECS } };
  }
}
