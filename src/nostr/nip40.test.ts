import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expirationOf, isExpired } from './nip40.ts';

const withTags = (...tags: string[][]) => ({ tags });

describe('expirationOf', () => {
  test('reads the expiration tag as integer seconds', () => {
    assert.equal(expirationOf(withTags(['p', 'x'], ['expiration', '1700000000'])), 1_700_000_000);
    assert.equal(expirationOf(withTags(['expiration', '0'])), 0);
  });

  test('uses the first expiration tag', () => {
    assert.equal(expirationOf(withTags(['expiration', '10'], ['expiration', '20'])), 10);
  });

  test('is null without the tag or with a tag that has no value', () => {
    assert.equal(expirationOf(withTags()), null);
    assert.equal(expirationOf(withTags(['expiration'])), null);
  });

  test('is null for a malformed value', () => {
    for (const bad of ['', ' 10', '10 ', '+10', '-10', '1.5', '1e9', '0x10', 'soon', '99999999999999999999']) {
      assert.equal(expirationOf(withTags(['expiration', bad])), null, JSON.stringify(bad));
    }
  });
});

describe('isExpired', () => {
  const event = withTags(['expiration', '1000']);

  test('is expired when the expiration is at or before now', () => {
    assert.equal(isExpired(event, 1000), true);
    assert.equal(isExpired(event, 1001), true);
  });

  test('is not expired before the expiration', () => {
    assert.equal(isExpired(event, 999), false);
  });

  test('an event without a valid expiration never expires', () => {
    assert.equal(isExpired(withTags(), Number.MAX_SAFE_INTEGER), false);
    assert.equal(isExpired(withTags(['expiration', 'x']), Number.MAX_SAFE_INTEGER), false);
  });
});
