import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dTag, firstTagValue, formatCoordinate, isHexPubkey, pTagPubkeys, parseCoordinate, tagValues } from './tags.ts';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const withTags = (...tags: string[][]) => ({ tags });

describe('tag lookups', () => {
  const event = withTags(['e', 'first'], ['p', A], ['e', 'second', 'wss://r'], ['e'], ['t', 'x']);

  test('firstTagValue returns the value of the first tag with that name', () => {
    assert.equal(firstTagValue(event, 'e'), 'first');
    assert.equal(firstTagValue(event, 't'), 'x');
    assert.equal(firstTagValue(event, 'missing'), undefined);
  });

  test('firstTagValue of a first matching tag without a value is undefined', () => {
    assert.equal(firstTagValue(withTags(['e'], ['e', 'later']), 'e'), undefined);
  });

  test('tagValues lists every value in order and skips tags without one', () => {
    assert.deepEqual(tagValues(event, 'e'), ['first', 'second']);
    assert.deepEqual(tagValues(event, 'q'), []);
  });

  test('tag names are case-sensitive (NIP-22 E vs e)', () => {
    const comment = withTags(['E', 'root'], ['e', 'parent']);
    assert.equal(firstTagValue(comment, 'E'), 'root');
    assert.equal(firstTagValue(comment, 'e'), 'parent');
  });
});

describe('pTagPubkeys', () => {
  test('keeps valid lowercase hex pubkeys, in order, each once', () => {
    const event = withTags(
      ['p', B],
      ['p', A, 'wss://relay'],
      ['p', B],
      ['P', A],
      ['p', A.toUpperCase()],
      ['p', 'npub1xyz'],
      ['p'],
      ['p', `${A}0`],
    );
    assert.deepEqual(pTagPubkeys(event), [B, A]);
  });

  test('is empty without p tags', () => {
    assert.deepEqual(pTagPubkeys(withTags(['e', A])), []);
  });
});

describe('dTag', () => {
  test('is the first d value', () => {
    assert.equal(dTag(withTags(['d', 'notify'], ['d', 'other'])), 'notify');
  });

  test('is the empty string when missing, as NIP-01 treats it', () => {
    assert.equal(dTag(withTags()), '');
    assert.equal(dTag(withTags(['d'])), '');
  });
});

describe('parseCoordinate', () => {
  test('parses kind:pubkey:d', () => {
    assert.deepEqual(parseCoordinate(`34236:${A}:my-vine`), { kind: 34_236, pubkey: A, dTag: 'my-vine' });
  });

  test('keeps colons inside the d-tag', () => {
    assert.deepEqual(parseCoordinate(`30023:${A}:a:b:c`), { kind: 30_023, pubkey: A, dTag: 'a:b:c' });
  });

  test('accepts the full u32 kind range', () => {
    assert.equal(parseCoordinate(`4294967295:${A}:d`)?.kind, 4_294_967_295);
    assert.equal(parseCoordinate(`4294967296:${A}:d`), null);
  });

  test('rejects a missing or non-decimal kind, an empty pubkey or an empty d-tag', () => {
    for (const bad of [
      '',
      'nocolons',
      `34236:${A}`,
      `34236:${A}:`,
      `:${A}:d`,
      '34236::d',
      `-1:${A}:d`,
      `1.5:${A}:d`,
      `0x10:${A}:d`,
      ` 1:${A}:d`,
      `99999999999999999999999:${A}:d`,
    ]) {
      assert.equal(parseCoordinate(bad), null, bad);
    }
  });

  test('formatCoordinate is its inverse', () => {
    const value = `30000:${B}:notify:x`;
    const parsed = parseCoordinate(value);
    assert.ok(parsed);
    assert.equal(formatCoordinate(parsed), value);
  });
});

describe('isHexPubkey', () => {
  test('accepts only 64 lowercase hex characters', () => {
    assert.equal(isHexPubkey(A), true);
    assert.equal(isHexPubkey('0123456789abcdef'.repeat(4)), true);
    for (const bad of [A.toUpperCase(), A.slice(1), `${A}a`, 'g'.repeat(64), '', 42, null, undefined]) {
      assert.equal(isHexPubkey(bad), false, String(bad));
    }
  });
});
