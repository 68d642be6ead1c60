import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { DeliveryErrorKind } from '../types.ts';
import { classifyFcmError, parseRetryAfterSecs, type ResponseHeaders } from './classify.ts';
import { fcmErrors } from '../../../test/support/fcm-fake.ts';

const FCM_ERROR = 'type.googleapis.com/google.firebase.fcm.v1.FcmError';
const googleError = (code: number, status: string, message: string, errorCode?: string): string =>
  JSON.stringify({ error: { code, message, status, details: errorCode ? [{ '@type': FCM_ERROR, errorCode }] : [] } });

interface Row {
  name: string;
  status: number;
  body: string;
  headers?: ResponseHeaders;
  kind: DeliveryErrorKind;
  retryAfterSecs?: number;
  messageIncludes?: string;
}

const rows: Row[] = [
  { name: 'UNREGISTERED 404 with details[].errorCode', ...fcmErrors.unregistered(), kind: 'token_not_registered' },
  {
    name: 'legacy NotRegistered errorCode',
    status: 400,
    body: googleError(400, 'INVALID_ARGUMENT', 'x', 'NotRegistered'),
    kind: 'token_not_registered',
  },
  {
    name: 'INVALID_ARGUMENT 400 "not a valid FCM registration token"',
    ...fcmErrors.invalidArgument(),
    kind: 'token_not_registered',
    messageIncludes: 'not a valid FCM registration token',
  },
  {
    name: '"Invalid registration token" in any casing',
    status: 400,
    body: googleError(400, 'INVALID_ARGUMENT', 'Invalid Registration Token'),
    kind: 'token_not_registered',
  },
  { name: 'raw BadDeviceToken text', status: 400, body: 'APNs said BadDeviceToken', kind: 'token_not_registered' },
  {
    name: 'SENDER_ID_MISMATCH 403',
    ...fcmErrors.senderIdMismatch(),
    kind: 'invalid_request',
    messageIncludes: 'Project mismatch: SenderId mismatch',
  },
  {
    name: 'message naming project and mismatch',
    status: 400,
    body: googleError(400, 'INVALID_ARGUMENT', 'Token belongs to a different Project (mismatch)'),
    kind: 'invalid_request',
    messageIncludes: 'Project mismatch',
  },
  { name: 'QUOTA_EXCEEDED 429 with retry-after 12', ...fcmErrors.quotaExceeded(12), kind: 'retryable_internal', retryAfterSecs: 12 },
  { name: '429 with Retry-After 3600 is not clamped', ...fcmErrors.quotaExceeded(3600), kind: 'retryable_internal', retryAfterSecs: 3600 },
  { name: 'UNAVAILABLE 503 with Retry-After 30', ...fcmErrors.unavailable(30), kind: 'retryable_internal', retryAfterSecs: 30 },
  { name: 'INTERNAL 500 without Retry-After → 1 s', ...fcmErrors.internal(), kind: 'retryable_internal', retryAfterSecs: 1 },
  {
    name: 'a 5xx that mentions an invalid token is still a retry (5xx is checked first)',
    status: 502,
    body: 'invalid registration token',
    kind: 'retryable_internal',
    retryAfterSecs: 1,
  },
  { name: 'THIRD_PARTY_AUTH_ERROR 401', ...fcmErrors.thirdPartyAuthError(), kind: 'unauthorized', messageIncludes: 'Auth error from APNS' },
  {
    name: 'plain 403 (API disabled / IAM)',
    status: 403,
    body: googleError(403, 'PERMISSION_DENIED', 'Firebase Cloud Messaging API has not been used in project 1 before or it is disabled.'),
    kind: 'unauthorized',
  },
  {
    name: 'bare HTML 404 does not prune',
    status: 404,
    body: '<!DOCTYPE html><html lang=en><title>Error 404 (Not Found)!!1</title></html>',
    kind: 'invalid_request',
    messageIncludes: '<!DOCTYPE html>',
  },
  {
    name: '"Method not found." does not prune',
    status: 404,
    body: googleError(404, 'NOT_FOUND', 'Method not found.'),
    kind: 'invalid_request',
    messageIncludes: 'Method not found.',
  },
  {
    name: '"upstream service is not registered" does not prune',
    status: 404,
    body: 'upstream service is not registered',
    kind: 'invalid_request',
  },
  {
    name: '"Caller is not registered for this API" does not prune',
    status: 403,
    body: googleError(403, 'PERMISSION_DENIED', 'Caller is not registered for this API'),
    kind: 'unauthorized',
  },
  { name: '"backend unregistered" does not prune', status: 404, body: 'backend unregistered', kind: 'invalid_request' },
  {
    name: '"gateway target not registered" does not prune',
    status: 400,
    body: googleError(400, 'FAILED_PRECONDITION', 'gateway target not registered'),
    kind: 'invalid_request',
  },
  {
    name: 'payload too big (BadRequest) is a caller bug',
    status: 400,
    body: googleError(400, 'INVALID_ARGUMENT', 'Message is too big'),
    kind: 'invalid_request',
    messageIncludes: 'Message is too big',
  },
  {
    name: 'non-JSON 4xx text is kept raw',
    status: 413,
    body: 'Request Entity Too Large',
    kind: 'invalid_request',
    messageIncludes: 'Request Entity Too Large',
  },
  { name: 'a 3xx is unknown', status: 302, body: 'moved', kind: 'unknown', messageIncludes: '302' },
];

describe('classifyFcmError (divine-push-service §5.3, in order)', () => {
  for (const row of rows) {
    test(`${row.name} → ${row.kind}`, () => {
      const error = classifyFcmError(row.status, row.headers ?? {}, row.body);
      assert.equal(error.kind, row.kind);
      assert.equal(error.status, row.status);
      if (row.retryAfterSecs !== undefined) assert.equal(error.retryAfterSecs, row.retryAfterSecs);
      else assert.equal(error.retryAfterSecs, undefined);
      if (row.messageIncludes) assert.ok(error.message.includes(row.messageIncludes), error.message);
    });
  }
});

describe('parseRetryAfterSecs', () => {
  test('header name in any casing, value trimmed', () => {
    assert.equal(parseRetryAfterSecs({ 'Retry-After': '30' }), 30);
    assert.equal(parseRetryAfterSecs({ 'RETRY-AFTER': ' 42 ' }), 42);
    assert.equal(parseRetryAfterSecs({ 'retry-after': ['7'] }), 7);
  });

  test('missing, HTTP-date, fractional or negative values fall back to 1', () => {
    assert.equal(parseRetryAfterSecs({}), 1);
    assert.equal(parseRetryAfterSecs({ 'retry-after': 'Wed, 21 Oct 2026 07:28:00 GMT' }), 1);
    assert.equal(parseRetryAfterSecs({ 'retry-after': '1.5' }), 1);
    assert.equal(parseRetryAfterSecs({ 'retry-after': '-3' }), 1);
  });

  test('classification carries the header in any casing', () => {
    const error = classifyFcmError(503, { 'ReTrY-AfTeR': '30' }, '');
    assert.equal(error.kind, 'retryable_internal');
    assert.equal(error.retryAfterSecs, 30);
  });
});
