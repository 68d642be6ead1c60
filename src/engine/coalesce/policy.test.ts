import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { blake3 } from '@noble/hashes/blake3.js';
import { COLLAPSE_KEY_BYTES, blake3Digest, collapseKeyForGroup } from './policy.ts';

/** The official vectors' input: byte i is i mod 251. */
function vectorInput(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = i % 251;
  return bytes;
}

describe('the BLAKE3 under the collapse keys (hash-wasm)', () => {
  // From the BLAKE3 team's test_vectors.json (hash mode, first 32 bytes), covering one block,
  // partial and full chunks, and trees of several chunks with an unbalanced right edge. They were
  // the vectors of the hand-made BLAKE3 and of @noble/hashes, which this library replaced: the keys
  // they derived are unchanged.
  const vectors: Array<[number, string]> = [
    [0, 'af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262'],
    [1, '2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213'],
    [1023, '10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11'],
    [1024, '42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7'],
    [1025, 'd00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444'],
    [2049, '5f4d72f40d7a5f82b15ca2b2e44b1de3c2ef86c426c95c1af0b6879522563030'],
    [31744, '62b6960e1a44bcc1eb1a611a8d6235b6b4b78f32e7abc4fb4c6cdcce94895c47'],
  ];
  for (const [length, expected] of vectors) {
    test(`the official vector of length ${length}`, () => {
      assert.equal(Buffer.from(blake3Digest(vectorInput(length))).toString('hex'), expected);
      assert.equal(Buffer.from(blake3Digest(vectorInput(length))).toString('hex'), expected, 'the reused hasher starts afresh');
    });
  }
});

describe('collapseKeyForGroup', () => {
  test('is the first 16 bytes of BLAKE3(group id) in hex: 32 chars, stable', () => {
    const gid = `like:${'a'.repeat(64)}:e:${'b'.repeat(64)}:123`;
    assert.equal(collapseKeyForGroup(gid), 'e11ada8cf028b7f3a14edc12cd3ca7f7');
    assert.match(collapseKeyForGroup('anything'), /^[0-9a-f]{32}$/);
    assert.notEqual(collapseKeyForGroup(gid), collapseKeyForGroup(`${gid}4`));
  });

  test('hashes the group id as its UTF-8 bytes', () => {
    // BLAKE3("abc") is 6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85.
    assert.equal(collapseKeyForGroup('abc'), '6437b3ac38465133ffb63b75273a8db5');
    assert.equal(collapseKeyForGroup('abc').length, COLLAPSE_KEY_BYTES * 2);
    // A non-ASCII id: its UTF-8 bytes, never UTF-16 code units.
    assert.equal(
      collapseKeyForGroup('like:é'),
      Buffer.from(blake3(Buffer.from('like:é', 'utf8')).subarray(0, COLLAPSE_KEY_BYTES)).toString('hex'),
    );
  });
});
