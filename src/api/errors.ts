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
  INTERNAL_NOT_CONFIGURED: { status: 503, message: 'Internal push endpoint is not configured' },
  UNAUTHORIZED: { status: 401, message: 'Unauthorized' },
  NIP98_UNAUTHORIZED: { status: 401, message: 'NIP-98 authorization failed' },
  INVALID_EVENT_ID: { status: 400, message: 'Invalid eventId' },
  INVALID_RECIPIENT_PUBKEY: { status: 400, message: 'Invalid recipientPubkey' },
  UNPROCESSABLE_BODY: { status: 422, message: 'Request body does not match the expected fields' },
  INVALID_INBOX_TYPES: { status: 422, message: 'types must be a list of inbox notification types' },
  INVALID_ALERT_WORDS: { status: 422, message: 'alert words must be a list of single words' },
  INVALID_ANNOUNCEMENT: { status: 422, message: 'an announcement needs a text and a future expiresAt' },
  DEVICE_NOT_FOUND: { status: 404, message: 'No such device of yours' },
  INVALID_QUERY: { status: 400, message: 'Invalid query parameter' },
  INVALID_CURSOR: { status: 400, message: 'Invalid cursor' },
  DEAD_LETTER_NOT_FOUND: { status: 404, message: 'No dead letter with this id' },
  DEAD_LETTER_AMBIGUOUS: { status: 409, message: 'Dead letters with this id exist in several queues; name one with ?queue=' },
  INTERNAL: { status: 500, message: 'Internal server error' },
} as const satisfies Record<string, { status: number; message: string }>;

export type HttpErrorCode = keyof typeof HTTP_ERRORS;

export class HttpError extends Error {
  readonly status: number;

  constructor(
    readonly code: HttpErrorCode,
    message?: string,
  ) {
    super(message ?? HTTP_ERRORS[code].message);
    this.status = HTTP_ERRORS[code].status;
    this.name = 'HttpError';
  }

  toJSON(): { error: string; code: HttpErrorCode } {
    return { error: this.message, code: this.code };
  }
}
