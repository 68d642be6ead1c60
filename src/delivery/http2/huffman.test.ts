import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { CODE_BITS, CODES, EOS_SYMBOL, HuffmanDecodeError, huffmanDecode, huffmanEncode, huffmanEncodedLength } from './huffman.ts';

const encode = (text: string): string => {
  const bytes = Buffer.from(text, 'latin1');
  const out = Buffer.alloc(huffmanEncodedLength(bytes));
  assert.equal(huffmanEncode(bytes, out, 0), out.length);
  return out.toString('hex');
};
const decode = (hex: string, max = 1024): string => {
  const bytes = Buffer.from(hex, 'hex');
  return huffmanDecode(bytes, 0, bytes.length, max).toString('latin1');
};

test('the derived codes are the ones RFC 7541 Appendix B lists, for every code length', () => {
  // [symbol, code, bits] rows of Appendix B, at least one of each length that occurs.
  const rows: Array<[number, number, number]> = [
    [48, 0x0, 5],
    [116, 0x9, 5],
    [32, 0x14, 6],
    [122, 0x7b, 7],
    [58, 0x5c, 7],
    [38, 0xf8, 8],
    [90, 0xfd, 8],
    [33, 0x3f8, 10],
    [63, 0x3fc, 10],
    [39, 0x7fa, 11],
    [124, 0x7fc, 11],
    [35, 0xffa, 12],
    [62, 0xffb, 12],
    [0, 0x1ff8, 13],
    [126, 0x1ffd, 13],
    [94, 0x3ffc, 14],
    [125, 0x3ffd, 14],
    [60, 0x7ffc, 15],
    [123, 0x7ffe, 15],
    [92, 0x7fff0, 19],
    [195, 0x7fff1, 19],
    [208, 0x7fff2, 19],
    [128, 0xfffe6, 20],
    [226, 0xfffed, 20],
    [153, 0x1fffdc, 21],
    [230, 0x1fffe8, 21],
    [129, 0x3fffd2, 22],
    [233, 0x3fffeb, 22],
    [1, 0x7fffd8, 23],
    [239, 0x7ffff4, 23],
    [9, 0xffffea, 24],
    [237, 0xfffff5, 24],
    [199, 0x1ffffec, 25],
    [235, 0x1ffffef, 25],
    [192, 0x3ffffe0, 26],
    [255, 0x3ffffee, 26],
    [203, 0x7ffffde, 27],
    [254, 0x7fffff0, 27],
    [2, 0xfffffe2, 28],
    [249, 0xffffffe, 28],
    [10, 0x3ffffffc, 30],
    [22, 0x3ffffffe, 30],
    [EOS_SYMBOL, 0x3fffffff, 30],
  ];
  for (const [symbol, code, bits] of rows) {
    assert.equal(CODE_BITS[symbol], bits, `bits of symbol ${symbol}`);
    assert.equal(CODES[symbol], code, `code of symbol ${symbol}`);
  }
});

test('the code lengths satisfy Kraft with equality (a complete prefix code)', () => {
  let sum = 0;
  for (const bits of CODE_BITS) sum += 2 ** -bits;
  assert.equal(sum, 1);
});

test('the Huffman strings of RFC 7541 Appendix C.4 and C.6', () => {
  const examples: Array<[string, string]> = [
    ['www.example.com', 'f1e3c2e5f23a6ba0ab90f4ff'],
    ['no-cache', 'a8eb10649cbf'],
    ['custom-key', '25a849e95ba97d7f'],
    ['custom-value', '25a849e95bb8e8b4bf'],
    ['302', '6402'],
    ['private', 'aec3771a4b'],
    ['Mon, 21 Oct 2013 20:13:21 GMT', 'd07abe941054d444a8200595040b8166e082a62d1bff'],
    ['https://www.example.com', '9d29ad171863c78f0b97c8e9ae82ae43d3'],
  ];
  for (const [text, hex] of examples) {
    assert.equal(encode(text), hex, `encoding of ${text}`);
    assert.equal(decode(hex), text, `decoding of ${hex}`);
  }
});

test('every octet value round-trips, in random strings of every length up to 300', () => {
  for (let length = 0; length <= 300; length++) {
    const bytes = randomBytes(length);
    const out = Buffer.alloc(huffmanEncodedLength(bytes));
    huffmanEncode(bytes, out, 0);
    assert.deepEqual(huffmanDecode(out, 0, out.length, 1024), bytes);
  }
  const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  const out = Buffer.alloc(huffmanEncodedLength(all));
  huffmanEncode(all, out, 0);
  assert.deepEqual(huffmanDecode(out, 0, out.length, 1024), all);
});

test('decoding refuses what §5.2 forbids: long padding, padding that is not ones, EOS, oversize output', () => {
  // 'a' is 00011: "a" + 3 one-bits of padding is 0x1f; a whole octet of padding after it is too long.
  assert.equal(decode('1f'), 'a');
  assert.throws(() => decode('1fff'), HuffmanDecodeError);
  // 'a' then padding 110 (not all ones).
  assert.throws(() => decode('1e'), /not the prefix of EOS/);
  // EOS (30 ones) followed by padding.
  assert.throws(() => decode('ffffffff'), /EOS inside/);
  assert.throws(() => decode('1f', 0), /longer than 0 octets/);
});

test('the encoder writes the same octets as a bit-by-bit reference, codes of every length next to each other', () => {
  const reference = (bytes: Uint8Array): string => {
    let bits = '';
    for (const symbol of bytes) bits += (CODES[symbol] as number).toString(2).padStart(CODE_BITS[symbol] as number, '0');
    bits += '1'.repeat((8 - (bits.length % 8)) % 8);
    return Buffer.from(bits.match(/.{8}/g)?.map((octet) => parseInt(octet, 2)) ?? []).toString('hex');
  };
  // Every octet after every other (the longest codes, 25–30 bits, follow every possible pending count).
  const all = Uint8Array.from({ length: 2 * 256 * 256 }, (_, i) => (i % 2 === 0 ? i >> 9 : (i >> 1) & 0xff));
  for (let start = 0; start < all.length; start += 4096) {
    const slice = all.subarray(start, start + 4096);
    const out = Buffer.alloc(huffmanEncodedLength(slice));
    huffmanEncode(slice, out, 0);
    assert.equal(out.toString('hex'), reference(slice), `octets from ${start}`);
  }
  for (let i = 0; i < 200; i++) {
    const bytes = randomBytes(1 + (i % 40));
    const out = Buffer.alloc(huffmanEncodedLength(bytes));
    huffmanEncode(bytes, out, 0);
    assert.equal(out.toString('hex'), reference(bytes));
  }
});
