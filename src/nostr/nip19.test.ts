import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeNpub, decodeNsec, npubEncode, nsecEncode, shortNpub, truncateNpub } from './nip19.ts';

// NIP-19's own examples.
const PUBKEY_HEX = '3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d';
const PUBKEY_NPUB = 'npub180cvv07tjdrrgpa0j7j7tmnyl2yr6yr7l8j4s3evf6u64th6gkwsyjh6w6';
const SECRET_HEX = '67dea2ed018072d675f5415ecfaed7d2597555e202d85b3d65ea4e58d2d92ffa';
const SECRET_NSEC = 'nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5';

describe('npub', () => {
  test('encodes and decodes the NIP-19 example', () => {
    assert.equal(npubEncode(PUBKEY_HEX), PUBKEY_NPUB);
    assert.equal(decodeNpub(PUBKEY_NPUB), PUBKEY_HEX);
  });

  test('decodes the all-uppercase form', () => {
    assert.equal(decodeNpub(PUBKEY_NPUB.toUpperCase()), PUBKEY_HEX);
  });

  test('decodeNpub returns null for anything that is not a valid npub', () => {
    const flipped = PUBKEY_NPUB.slice(0, -1) + (PUBKEY_NPUB.endsWith('6') ? '7' : '6');
    for (const bad of ['', 'npub1', flipped, SECRET_NSEC, PUBKEY_HEX, `${PUBKEY_NPUB}q`, 'nPub' + PUBKEY_NPUB.slice(4)]) {
      assert.equal(decodeNpub(bad), null, bad);
    }
  });

  test('npubEncode refuses input that is not 64 lowercase hex', () => {
    assert.throws(() => npubEncode(PUBKEY_HEX.toUpperCase()), RangeError);
    assert.throws(() => npubEncode('abc'), RangeError);
  });
});

describe('nsec', () => {
  test('encodes and decodes the NIP-19 example', () => {
    assert.equal(nsecEncode(SECRET_HEX), SECRET_NSEC);
    assert.equal(decodeNsec(SECRET_NSEC), SECRET_HEX);
  });

  test('decodeNsec returns null for an npub or garbage', () => {
    assert.equal(decodeNsec(PUBKEY_NPUB), null);
    assert.equal(decodeNsec('nsec1qqqq'), null);
  });

  test('nsecEncode refuses a secret that is not a valid scalar', () => {
    assert.throws(() => nsecEncode('0'.repeat(64)), RangeError);
    assert.throws(() => nsecEncode('f'.repeat(64)), RangeError);
  });
});

describe('display forms (divine format_short_npub / truncate_npub)', () => {
  test('shortNpub is the first 12 characters of the npub and "..."', () => {
    assert.equal(shortNpub(PUBKEY_HEX), 'npub180cvv07...');
    assert.equal(shortNpub(PUBKEY_HEX).length, 15);
  });

  test('shortNpub of something that is not a pubkey is "unknown"', () => {
    assert.equal(shortNpub(''), 'unknown');
    assert.equal(shortNpub('zz'), 'unknown');
  });

  test('truncateNpub keeps the first 10 and the last 6 characters', () => {
    assert.equal(truncateNpub(PUBKEY_NPUB), 'npub180cvv...yjh6w6');
  });

  test('truncateNpub leaves a string of 16 characters or fewer alone', () => {
    assert.equal(truncateNpub('npub1abcdefghijk'), 'npub1abcdefghijk');
    assert.equal(truncateNpub('npub1abcdefghijkl'), 'npub1abcde...ghijkl');
  });
});
