import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { DeliveryErrorKind } from '../types.ts';
import { classifyPushResponse, classifyRequestError } from './classify.ts';
import { PushRequestError } from './http-client.ts';

interface Row {
  status: number;
  headers?: Record<string, string>;
  kind: DeliveryErrorKind | 'ok';
  retryAfterSecs?: number;
}

/** The classification table of classify.ts, row by row. */
const rows: Row[] = [
  { status: 201, kind: 'ok' },
  { status: 200, kind: 'ok' },
  { status: 202, kind: 'ok' },
  { status: 204, kind: 'ok' },
  { status: 404, kind: 'token_not_registered' },
  { status: 410, kind: 'token_not_registered' },
  { status: 429, headers: { 'retry-after': '120' }, kind: 'retryable_internal', retryAfterSecs: 120 },
  { status: 429, kind: 'retryable_internal', retryAfterSecs: 1 },
  { status: 500, kind: 'retryable_internal', retryAfterSecs: 1 },
  { status: 502, headers: { 'Retry-After': ' 7 ' }, kind: 'retryable_internal', retryAfterSecs: 7 },
  { status: 503, headers: { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' }, kind: 'retryable_internal', retryAfterSecs: 1 },
  { status: 507, kind: 'retryable_internal', retryAfterSecs: 1 },
  { status: 413, kind: 'invalid_request' },
  { status: 400, kind: 'invalid_request' },
  { status: 408, kind: 'invalid_request' },
  { status: 401, kind: 'unauthorized' },
  { status: 403, kind: 'unauthorized' },
  { status: 301, kind: 'unknown' },
  { status: 302, kind: 'unknown' },
];

describe('classifyPushResponse', () => {
  for (const row of rows) {
    const label = `${row.status}${row.headers ? ` ${JSON.stringify(row.headers)}` : ''} → ${row.kind}${row.retryAfterSecs !== undefined ? ` after ${row.retryAfterSecs} s` : ''}`;
    test(label, () => {
      const outcome = classifyPushResponse(row.status, row.headers ?? {}, 'some body');
      if (row.kind === 'ok') return assert.deepEqual(outcome, { ok: true });
      assert.equal(outcome.ok, false);
      assert.equal(outcome.error.kind, row.kind);
      assert.equal(outcome.error.status, row.status);
      assert.equal(outcome.error.retryAfterSecs, row.retryAfterSecs);
      assert.match(outcome.error.message, new RegExp(`${row.status}: some body`));
    });
  }

  test('a long error body is cut to an excerpt', () => {
    const outcome = classifyPushResponse(400, {}, 'x'.repeat(10_000));
    assert.ok(!outcome.ok && outcome.error.message.length < 300);
  });
});

describe('classifyRequestError', () => {
  test('timeouts and network errors retry; a refused endpoint does not; an abort is a plain failure', () => {
    const kindOf = (code: PushRequestError['code']) => {
      const outcome = classifyRequestError(new PushRequestError(code, 'x'));
      return outcome.ok ? 'ok' : [outcome.error.kind, outcome.error.retryAfterSecs];
    };
    assert.deepEqual(kindOf('timeout'), ['retryable_internal', 1]);
    assert.deepEqual(kindOf('network'), ['retryable_internal', 1]);
    assert.deepEqual(kindOf('refused'), ['invalid_request', undefined]);
    assert.deepEqual(kindOf('aborted'), ['internal_request', undefined]);
  });
});
