import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NtfyError } from './errors.ts';
import { readPublishOptions } from './publish-options.ts';
import { contentFromBody, decodeHeaderValue, parsePriority, type ParamSource } from './publish-params.ts';

const CONTEXT = { nowMs: 1_700_000_000_000, delay: { minMs: 10_000, maxMs: 3 * 86_400_000 } };

function source(headers: Record<string, string>, query: Record<string, string> = {}): ParamSource {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { header: (name) => lower[name.toLowerCase()], query: (name) => query[name] };
}

const codeOf = (fn: () => unknown): number | undefined => {
  try {
    fn();
  } catch (err) {
    return err instanceof NtfyError ? err.code : undefined;
  }
  return undefined;
};

test('priorities: 1–5, names, RFC 9218 values ignored, anything else 40007', () => {
  assert.deepEqual(['1', '5', 'min', 'LOW', 'default', 'high', 'max', 'urgent', ' 3 '].map(parsePriority), [1, 5, 1, 2, 3, 4, 5, 5, 3]);
  assert.equal(parsePriority(undefined), undefined);
  assert.equal(parsePriority('u=3, i'), undefined);
  assert.equal(parsePriority('u=1'), undefined);
  for (const bad of ['0', '6', 'loud', '1.5'])
    assert.equal(
      codeOf(() => parsePriority(bad)),
      40007,
      bad,
    );
});

test('headers win over query parameters; X- names and short aliases all count', () => {
  const options = readPublishOptions(
    source({ 'X-Title': 'header title', Tags: ' a , ,b ' }, { title: 'query title', p: 'high', m: 'line one\\nline two' }),
    CONTEXT,
  );
  assert.deepEqual(options, {
    title: 'header title',
    tags: ['a', 'b'],
    priority: 4,
    message: 'line one\nline two',
    markdown: false,
    unifiedPush: false,
    cache: true,
  });
});

test('UnifiedPush mode from up, unifiedpush, X-UnifiedPush or Content-Encoding: aes128gcm', () => {
  assert.equal(readPublishOptions(source({}, { up: '1' }), CONTEXT).unifiedPush, true);
  assert.equal(readPublishOptions(source({}, { unifiedpush: 'yes' }), CONTEXT).unifiedPush, true);
  assert.equal(readPublishOptions(source({ 'X-UnifiedPush': 'true' }), CONTEXT).unifiedPush, true);
  assert.equal(readPublishOptions(source({ 'Content-Encoding': 'aes128gcm' }), CONTEXT).unifiedPush, true);
  assert.equal(
    readPublishOptions(source({ 'Content-Encoding': 'aesgcm' }), CONTEXT).unifiedPush,
    false,
    'the legacy draft is not UnifiedPush',
  );
  assert.equal(readPublishOptions(source({}, { up: '0' }), CONTEXT).unifiedPush, false);
});

test('header values: RFC 2047 words and raw UTF-8 bytes decode as the publisher meant', () => {
  assert.equal(decodeHeaderValue('=?UTF-8?B?w7xuaWPDtmRl?='), 'ünicöde');
  assert.equal(decodeHeaderValue('=?utf-8?q?caf=C3=A9_au_lait?='), 'café au lait');
  assert.equal(decodeHeaderValue('=?UTF-8?Q?a?= =?UTF-8?Q?b?='), 'ab');
  assert.equal(decodeHeaderValue(Buffer.from('naïve', 'utf8').toString('latin1')), 'naïve');
  assert.equal(decodeHeaderValue('plain'), 'plain');
});

test('bodies: UnifiedPush keeps text untrimmed and binary as base64; plain text is trimmed; empty is "triggered"', () => {
  const up = { unifiedPush: true, markdown: false };
  const plain = { unifiedPush: false, markdown: false };
  assert.deepEqual(contentFromBody(Buffer.from(' \uFEFFtext \n'), up), { message: ' \uFEFFtext \n' });
  assert.deepEqual(contentFromBody(Buffer.from([0xff, 0x00, 0x01]), up), { message: '/wAB', encoding: 'base64' });
  assert.deepEqual(contentFromBody(Buffer.from('  hi  '), plain), { message: 'hi' });
  assert.deepEqual(contentFromBody(Buffer.alloc(0), { ...plain, message: 'from header' }), { message: 'from header' });
  assert.deepEqual(contentFromBody(Buffer.alloc(0), plain), { message: 'triggered' });
  assert.equal(
    codeOf(() => contentFromBody(Buffer.from([0xff]), plain)),
    40014,
  );
  assert.deepEqual(contentFromBody(Buffer.from('# md'), { ...plain, markdown: true, title: 'T', priority: 2, tags: ['x'] }), {
    message: '# md',
    title: 'T',
    priority: 2,
    tags: ['x'],
    contentType: 'text/markdown',
  });
});
