/**
 * Every HTTP error the service answers with: a stable code, its status and message, in one
 * catalogue. Routes throw {@link HttpError}; one handler turns it into `{"error": message, "code": …}`.
 *
 * The direct-message hook keeps divine-push-service's exact bodies (`{"error":"Unauthorized"}`), so
 * callers written against divine keep working; the extra `code` field is additive.
 */
export const HTTP_ERRORS = {
  NOT_FOUND: { status: 404, message: 'Not found' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'Method not allowed' },
  BODY_TOO_LARGE: { status: 413, message: 'Request body too large' },
  INVALID_JSON: { status: 400, message: 'Request body is not valid JSON' },
  BODY_UNREADABLE: { status: 400, message: 'Request body could not be read to its end' },
  INTERNAL_NOT_CONFIGURED: { status: 503, message: 'Internal push endpoint is not configured' },
  UNAUTHORIZED: { status: 401, message: 'Unauthorized' },
  NIP98_UNAUTHORIZED: { status: 401, message: 'NIP-98 authorization failed' },
  INVALID_EVENT_ID: { status: 400, message: 'Invalid eventId' },
  INVALID_RECIPIENT_PUBKEY: { status: 400, message: 'Invalid recipientPubkey' },
  UNPROCESSABLE_BODY: { status: 422, message: 'Request body does not match the expected fields' },
  FORBIDDEN: { status: 403, message: 'This key may not do that' },
  APP_REQUIRED: { status: 400, message: 'Name the app with the X-App header' },
  VALIDATION_FAILED: { status: 422, message: 'Request does not match the schema' },
  UNKNOWN_TYPE: { status: 422, message: 'Unknown notification type' },
  IDEMPOTENCY_KEY_REUSED: { status: 409, message: 'Idempotency-Key was used with a different request' },
  NOT_CANCELLABLE: { status: 409, message: 'The notification has started and can no longer be cancelled' },
  INVALID_INBOX_TYPES: { status: 422, message: 'types must be a list of inbox notification types' },
  INVALID_ALERT_WORDS: { status: 422, message: 'alert words must be a list of single words' },
  TOO_MANY_ALERT_WORDS: { status: 422, message: 'Too many alert words for one user (inbox.max_alert_words_per_user)' },
  CLIENT_QUOTA_EXCEEDED: {
    status: 429,
    message: 'This client address has created all it may today; retry after the Retry-After header',
  },
  TOO_MANY_INBOX_SOCKETS: { status: 429, message: 'Too many open inbox sockets for this user or client address; close one first' },
  INVALID_ANNOUNCEMENT: { status: 422, message: 'an announcement needs a text and a future expiresAt' },
  DEVICE_NOT_FOUND: { status: 404, message: 'No such device of yours' },
  INVALID_DEVICE: { status: 400, message: 'The device registration is invalid' },
  DEVICE_TOKEN_MISMATCH: { status: 400, message: 'The body names a different token than the path' },
  INVALID_PREFERENCES: { status: 400, message: 'The preferences are invalid' },
  DELIVERY_RETRYABLE: { status: 503, message: 'Every device failed retryably; the claim was released' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Content-Type must be application/json' },
  RATE_LIMITED: { status: 429, message: 'Too many requests; retry after the Retry-After header' },
  PUBLIC_URL_NOT_CONFIGURED: {
    status: 503,
    message: 'server.public_url is not configured, so this server cannot make NIP-9a callback URLs (set it to the URL relays reach it at)',
  },
  NIP9A_INVALID_RELAY: { status: 400, message: '`relay` must be a ws:// or wss:// relay URL' },
  NIP9A_TOO_MANY_CALLBACKS: { status: 409, message: 'Too many NIP-9a callback URLs; revoke one first' },
  NIP9A_INVALID_ENVELOPE: { status: 400, message: 'A NIP-9a callback body must be {id, relay, event?}' },
  NIP9A_RELAY_MISMATCH: { status: 403, message: 'This callback URL was made for another relay' },
  NIP9A_INVALID_EVENT: { status: 400, message: 'The included event is malformed, expired, or its id or signature does not verify' },
  NIP9A_EVENT_ID_MISMATCH: { status: 400, message: 'The included event’s id is not the envelope’s id' },
  INVALID_QUERY: { status: 400, message: 'Invalid query parameter' },
  INVALID_CURSOR: { status: 400, message: 'Invalid cursor' },
  DEAD_LETTER_NOT_FOUND: { status: 404, message: 'No dead letter with this id' },
  DEAD_LETTER_AMBIGUOUS: { status: 409, message: 'Dead letters with this id exist in several queues; name one with ?queue=' },
  NIP9A_INVALID_REGISTRATION: { status: 400, message: 'Invalid NIP-9a registration' },
  NIP9A_CALLBACK_BLOCKED: { status: 403, message: 'The callback is not allowed by this gateway' },
  NIP9A_WRONG_AUTHOR: { status: 403, message: 'The event is not signed by the authenticated pubkey' },
  NIP9A_LIMIT_REACHED: { status: 403, message: 'NIP-9a registration limit reached' },
  NIP9A_RELAY_CAP_REACHED: {
    status: 403,
    message: 'This NIP-9a gateway watches as many relays as it may; register for a relay it already watches',
  },
  CONSOLE_LOGIN_FAILED: { status: 401, message: 'Not an admin key of this service' },
  CONSOLE_SESSION_REQUIRED: { status: 401, message: 'Log in to the console first' },
  CONSOLE_CSRF_INVALID: { status: 403, message: 'Missing or wrong X-CSRF-Token header' },
  CONSOLE_ORIGIN_REFUSED: { status: 403, message: 'Console login is accepted from this server’s own origin only' },
  CONSOLE_NOT_BUILT: { status: 503, message: 'The console is not built; run npm run build' },
  INVALID_PUBKEY: { status: 400, message: 'Not an npub or a 64-character hex public key' },
  INTERNAL: { status: 500, message: 'Internal server error' },
} as const satisfies Record<string, { status: number; message: string }>;

export type HttpErrorCode = keyof typeof HTTP_ERRORS;

export class HttpError extends Error {
  readonly status: number;

  /** `headers`: response headers the answer carries (`Retry-After` of a 429). */
  constructor(
    readonly code: HttpErrorCode,
    message?: string,
    readonly headers?: Readonly<Record<string, string>>,
  ) {
    super(message ?? HTTP_ERRORS[code].message);
    this.status = HTTP_ERRORS[code].status;
    this.name = 'HttpError';
  }

  toJSON(): { error: string; code: HttpErrorCode } {
    return { error: this.message, code: this.code };
  }
}
