import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NtfyError } from './errors.ts';
import { checkTopic, localNtfyTopicOf, parseTopicList } from './topics.ts';

function codeOf(fn: () => unknown): number | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof NtfyError ? err.code : undefined;
  }
  return undefined;
}

test('topics are 1 to 64 of [-_A-Za-z0-9]', () => {
  assert.equal(checkTopic('upAbCdEf123456'), 'upAbCdEf123456');
  assert.equal(checkTopic('a'), 'a');
  assert.equal(checkTopic('x'.repeat(64)), 'x'.repeat(64));
  assert.equal(checkTopic('with-dash_and_underscore'), 'with-dash_and_underscore');
  for (const bad of ['', 'x'.repeat(65), 'has space', 'dot.ted', 'ümlaut', 'semi;colon', 'a,b'])
    assert.equal(
      codeOf(() => checkTopic(bad)),
      40009,
      bad,
    );
});

test('reserved names are refused with 40010', () => {
  for (const reserved of ['v1', 'docs', 'health', 'metrics', 'internal'])
    assert.equal(
      codeOf(() => checkTopic(reserved)),
      40010,
      reserved,
    );
});

test('a subscription segment is a comma list; duplicates are dropped and one bad name fails it', () => {
  assert.deepEqual(parseTopicList('upA,upB,upA'), ['upA', 'upB']);
  assert.equal(
    codeOf(() => parseTopicList('upA,,upB')),
    40009,
  );
  assert.equal(
    codeOf(() => parseTopicList('upA,v1')),
    40010,
  );
});

test('localNtfyTopicOf recognises endpoints under the base URL only', () => {
  const base = 'https://push.example.com';
  assert.equal(localNtfyTopicOf('https://push.example.com/upAbCdEf123456?up=1', base), 'upAbCdEf123456');
  assert.equal(localNtfyTopicOf('https://push.example.com/upAbCdEf123456', `${base}/`), 'upAbCdEf123456');
  assert.equal(localNtfyTopicOf('https://push.example.com/ntfy/upX?up=1', 'https://push.example.com/ntfy'), 'upX');
  assert.equal(localNtfyTopicOf('https://other.example.com/upX?up=1', base), null);
  assert.equal(localNtfyTopicOf('http://push.example.com/upX', base), null, 'another scheme is another origin');
  assert.equal(localNtfyTopicOf('https://push.example.com/a/b', base), null);
  assert.equal(localNtfyTopicOf('https://push.example.com/v1', base), null);
  assert.equal(localNtfyTopicOf('https://push.example.com/upX', ''), null);
  assert.equal(localNtfyTopicOf('not a url', base), null);
});
