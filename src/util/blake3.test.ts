import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { blake3, blake3Hex } from './blake3.ts';

/** The official vectors' input: byte i is i mod 251. */
function vectorInput(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = i % 251;
  return bytes;
}

describe('blake3', () => {
  // From the BLAKE3 team's test_vectors.json (hash mode, first 32 bytes), covering one block,
  // partial and full chunks, and trees of several chunks with an unbalanced right edge.
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
      assert.equal(blake3Hex(vectorInput(length)), expected);
    });
  }

  test('a string is hashed as its UTF-8 bytes', () => {
    assert.equal(blake3Hex('abc'), '6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85');
    assert.deepEqual(blake3('abc'), blake3(new TextEncoder().encode('abc')));
    assert.equal(blake3('').length, 32);
  });
});
