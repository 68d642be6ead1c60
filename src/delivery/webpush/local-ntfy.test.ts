import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { localNtfyMatcher } from './local-ntfy.ts';

describe('local ntfy endpoints', () => {
  test('an endpoint on our ntfy origin naming a topic is local; query strings (?up=1) do not matter', () => {
    const matcher = localNtfyMatcher('https://push.example.org');
    assert.ok(matcher);
    assert.equal(matcher.topicOf(new URL('https://push.example.org/upAbCdEf123456?up=1')), 'upAbCdEf123456');
    assert.equal(matcher.topicOf(new URL('https://push.example.org:443/mytopic')), 'mytopic');
  });

  test('another origin, scheme or port, a nested path or an invalid topic is not local', () => {
    const matcher = localNtfyMatcher('https://push.example.org/');
    assert.ok(matcher);
    for (const endpoint of [
      'https://other.example.org/up123',
      'http://push.example.org/up123',
      'https://push.example.org:8443/up123',
      'https://push.example.org/a/b',
      'https://push.example.org/',
      `https://push.example.org/${'a'.repeat(65)}`,
      'https://push.example.org/bad.topic',
      'https://push.example.org/health',
      'https://push.example.org/metrics',
    ]) {
      assert.equal(matcher.topicOf(new URL(endpoint)), null, endpoint);
    }
  });

  test('a base URL with a path prefix', () => {
    const matcher = localNtfyMatcher('http://127.0.0.1:8080/ntfy');
    assert.equal(matcher?.topicOf(new URL('http://127.0.0.1:8080/ntfy/up1?up=1')), 'up1');
    assert.equal(matcher.topicOf(new URL('http://127.0.0.1:8080/up1')), null);
  });

  test('no base URL, or an unusable one, means no local shortcut', () => {
    assert.equal(localNtfyMatcher(''), null);
    assert.equal(localNtfyMatcher('not a url'), null);
    assert.equal(localNtfyMatcher('ws://x'), null);
  });
});
