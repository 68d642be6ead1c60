/**
 * FCM error responses with the bodies FCM really sends (delivery-and-performance §1.4): the
 * Google error envelope with an `FcmError` detail, plus `QuotaFailure` and `ApnsError` details
 * where FCM adds them. Spread one into a fake's `script()` rule, or feed it to the classifier.
 */

/** The status/body/headers part of a fake's `ScriptRule`, from the helpers below. */
export interface CannedResponse {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

const FCM_ERROR_TYPE = 'type.googleapis.com/google.firebase.fcm.v1.FcmError';

/** The Google API error envelope. */
export function googleError(code: number, status: string, message: string, details: object[] = []): string {
  return JSON.stringify({ error: { code, message, status, details } });
}

/** Canned FCM error responses with the bodies FCM really sends (delivery-and-performance §1.4). */
export const fcmErrors = {
  unregistered: (): CannedResponse => ({
    status: 404,
    body: googleError(404, 'NOT_FOUND', 'Requested entity was not found.', [{ '@type': FCM_ERROR_TYPE, errorCode: 'UNREGISTERED' }]),
  }),
  invalidArgument: (): CannedResponse => ({
    status: 400,
    body: googleError(400, 'INVALID_ARGUMENT', 'The registration token is not a valid FCM registration token', [
      { '@type': FCM_ERROR_TYPE, errorCode: 'INVALID_ARGUMENT' },
    ]),
  }),
  senderIdMismatch: (): CannedResponse => ({
    status: 403,
    body: googleError(403, 'PERMISSION_DENIED', 'SenderId mismatch', [{ '@type': FCM_ERROR_TYPE, errorCode: 'SENDER_ID_MISMATCH' }]),
  }),
  quotaExceeded: (retryAfterSecs?: number): CannedResponse => ({
    status: 429,
    body: googleError(
      429,
      'RESOURCE_EXHAUSTED',
      "Quota exceeded for quota metric 'Send requests' and limit 'Send requests per minute' of service 'fcm.googleapis.com' for consumer 'project_number:123456789'.",
      [
        { '@type': FCM_ERROR_TYPE, errorCode: 'QUOTA_EXCEEDED' },
        {
          '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
          violations: [{ subject: 'project_number:123456789', description: 'Send requests per minute' }],
        },
      ],
    ),
    headers: retryAfterHeader(retryAfterSecs),
  }),
  unavailable: (retryAfterSecs?: number): CannedResponse => ({
    status: 503,
    body: googleError(503, 'UNAVAILABLE', 'The service is currently unavailable.', [{ '@type': FCM_ERROR_TYPE, errorCode: 'UNAVAILABLE' }]),
    headers: retryAfterHeader(retryAfterSecs),
  }),
  internal: (): CannedResponse => ({
    status: 500,
    body: googleError(500, 'INTERNAL', 'Internal error encountered.', [{ '@type': FCM_ERROR_TYPE, errorCode: 'INTERNAL' }]),
  }),
  thirdPartyAuthError: (): CannedResponse => ({
    status: 401,
    body: googleError(401, 'UNAUTHENTICATED', 'Auth error from APNS or Web Push Service', [
      { '@type': FCM_ERROR_TYPE, errorCode: 'THIRD_PARTY_AUTH_ERROR' },
      { '@type': 'type.googleapis.com/google.firebase.fcm.v1.ApnsError', statusCode: 403, reason: 'InvalidProviderToken' },
    ]),
  }),
};

function retryAfterHeader(retryAfterSecs: number | undefined): Record<string, string> | undefined {
  return retryAfterSecs === undefined ? undefined : { 'retry-after': String(retryAfterSecs) };
}
