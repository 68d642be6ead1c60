import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { NTFY_ERRORS, NtfyError, type NtfyErrorName } from './errors.ts';

/** The refusals of publishing options: each must be in the operator's table (docs/ntfy.md). */
const PUBLISH_OPTION_ERRORS: readonly NtfyErrorName[] = [
  'NOT_SUPPORTED',
  'EMAIL_DISABLED',
  'DELAY_NO_CACHE',
  'DELAY_CANNOT_PARSE',
  'DELAY_TOO_SMALL',
  'DELAY_TOO_LARGE',
  'PRIORITY_INVALID',
  'MESSAGE_NOT_UTF8',
  'ATTACHMENT_URL_INVALID',
  'ATTACHMENTS_NOT_ALLOWED',
  'ACTIONS_INVALID',
  'ICON_URL_INVALID',
  'CALLS_DISABLED',
  'TITLE_TOO_LARGE',
  'TAGS_TOO_LARGE',
];

test("every code is unique and in ntfy's ranges (the HTTP status times 100, plus one or more)", () => {
  const codes = Object.values(NTFY_ERRORS).map((e) => e.code);
  assert.equal(new Set(codes).size, codes.length);
  for (const entry of Object.values(NTFY_ERRORS)) assert.equal(Math.floor(entry.code / 100), entry.http, String(entry.code));
});

test('every refusal of a publishing option is in the table of docs/ntfy.md, and every code there is in the catalogue', () => {
  const doc = readFileSync(new URL('../../docs/ntfy.md', import.meta.url), 'utf8');
  for (const name of PUBLISH_OPTION_ERRORS) assert.ok(doc.includes(String(NTFY_ERRORS[name].code)), `${name} (${NTFY_ERRORS[name].code})`);
  const known = new Set<number>(Object.values(NTFY_ERRORS).map((e) => e.code));
  for (const [code] of doc.matchAll(/\b4\d{4}\b/g)) assert.ok(known.has(Number(code)), code);
});

test("the body is ntfy's shape; a detail is appended to the message", () => {
  assert.deepEqual(new NtfyError('ACTIONS_INVALID', "parameter 'label' is required").toJSON(), {
    code: 40018,
    http: 400,
    error: "invalid request: actions invalid: parameter 'label' is required",
    link: 'https://ntfy.sh/docs/publish/#action-buttons',
  });
  assert.deepEqual(new NtfyError('DELAY_NO_CACHE').toJSON(), { code: 40002, http: 400, error: 'cannot disable cache for delayed message' });
});
