import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HpackDecoder, HpackEncoder, HpackError } from './hpack.ts';

const hex = (text: string): Buffer => Buffer.from(text.replace(/\s+/g, ''), 'hex');
const decodeAll = (decoder: HpackDecoder, block: Buffer): Array<[string, string]> => {
  const fields: Array<[string, string]> = [];
  decoder.decode(block, (name, value) => fields.push([name, value]));
  return fields;
};

// RFC 7541 Appendix C.3 / C.4: three requests on one connection (C.4 with Huffman coding).
const REQUESTS: Array<Array<[string, string]>> = [
  [
    [':method', 'GET'],
    [':scheme', 'http'],
    [':path', '/'],
    [':authority', 'www.example.com'],
  ],
  [
    [':method', 'GET'],
    [':scheme', 'http'],
    [':path', '/'],
    [':authority', 'www.example.com'],
    ['cache-control', 'no-cache'],
  ],
  [
    [':method', 'GET'],
    [':scheme', 'https'],
    [':path', '/index.html'],
    [':authority', 'www.example.com'],
    ['custom-key', 'custom-value'],
  ],
];
const C3 = [
  '8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
  '8286 84be 5808 6e6f 2d63 6163 6865',
  '8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65',
];
const C4 = [
  '8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff',
  '8286 84be 5886 a8eb 1064 9cbf',
  '8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf',
];

// RFC 7541 Appendix C.6: three responses with a 256-octet table, so entries are evicted.
const RESPONSES: Array<Array<[string, string]>> = [
  [
    [':status', '302'],
    ['cache-control', 'private'],
    ['date', 'Mon, 21 Oct 2013 20:13:21 GMT'],
    ['location', 'https://www.example.com'],
  ],
  [
    [':status', '307'],
    ['cache-control', 'private'],
    ['date', 'Mon, 21 Oct 2013 20:13:21 GMT'],
    ['location', 'https://www.example.com'],
  ],
  [
    [':status', '200'],
    ['cache-control', 'private'],
    ['date', 'Mon, 21 Oct 2013 20:13:22 GMT'],
    ['location', 'https://www.example.com'],
    ['content-encoding', 'gzip'],
    ['set-cookie', 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1'],
  ],
];
const C6 = [
  '4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3',
  '4883 640e ffc1 c0bf',
  '88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07',
];

describe('HPACK decoder', () => {
  test('RFC 7541 C.3: requests without Huffman coding', () => {
    const decoder = new HpackDecoder();
    C3.forEach((block, i) => assert.deepEqual(decodeAll(decoder, hex(block)), REQUESTS[i]));
  });

  test('RFC 7541 C.4: requests with Huffman coding', () => {
    const decoder = new HpackDecoder();
    C4.forEach((block, i) => assert.deepEqual(decodeAll(decoder, hex(block)), REQUESTS[i]));
  });

  test('RFC 7541 C.6: responses with eviction from a 256-octet table', () => {
    const decoder = new HpackDecoder(256);
    C6.forEach((block, i) => assert.deepEqual(decodeAll(decoder, hex(block)), RESPONSES[i]));
  });

  test('malformed blocks are HpackErrors, never crashes', () => {
    const cases = ['80', 'ff00', 'be', '41', '4105', '4185ff', 'ff ffffffff0f', '82 3f00'];
    for (const block of cases)
      assert.throws(() => decodeAll(new HpackDecoder(), hex(block.length % 2 ? `${block}0` : block)), HpackError, block);
  });

  test('a size update above our limit, and a header list above its bound, are refused', () => {
    assert.throws(() => decodeAll(new HpackDecoder(256), hex('3fe1 1f')), /exceeds 256/);
    const huge = new HpackEncoder().encode([['x-big', 'v'.repeat(200)]]);
    assert.throws(() => decodeAll(new HpackDecoder(4096, 100), huge), /100 octets/);
  });
});

describe('HPACK encoder', () => {
  test('reproduces RFC 7541 C.4 byte for byte', () => {
    const encoder = new HpackEncoder();
    REQUESTS.forEach((fields, i) => assert.equal(encoder.encode(fields).toString('hex'), hex(C4[i] as string).toString('hex')));
  });

  test('reproduces RFC 7541 C.6.1 with a 256-octet table', () => {
    const encoder = new HpackEncoder();
    encoder.setPeerMaxTableSize(256);
    // The size update to 256 comes first (§4.2), then the example's bytes.
    assert.equal(encoder.encode(RESPONSES[0] as Array<[string, string]>).toString('hex'), `3fe101${hex(C6[0] as string).toString('hex')}`);
  });

  test('a repeated header list becomes one octet per field', () => {
    const encoder = new HpackEncoder();
    const fields: Array<[string, string]> = [
      [':method', 'POST'],
      [':path', '/v1/projects/p/messages:send'],
      ['authorization', `Bearer ${'t'.repeat(300)}`],
      ['content-type', 'application/json'],
    ];
    const first = encoder.encode(fields);
    const second = encoder.encode(fields);
    assert.ok(first.length > 200);
    assert.equal(second.length, 4);
    const decoder = new HpackDecoder();
    assert.deepEqual(decodeAll(decoder, first), fields);
    assert.deepEqual(decodeAll(decoder, second), fields);
  });

  test('fields sent without or never indexed stay out of the table', () => {
    const encoder = new HpackEncoder();
    const decoder = new HpackDecoder();
    for (let i = 0; i < 3; i++) {
      const block = encoder.encode([
        ['content-length', String(100 + i), 'without'],
        ['x-secret', 's3cret', 'never'],
      ]);
      assert.equal((block[0] as number) & 0xf0, 0x00);
      assert.deepEqual(decodeAll(decoder, block), [
        ['content-length', String(100 + i)],
        ['x-secret', 's3cret'],
      ]);
    }
  });

  test('encoder and decoder stay in step through many evictions, and after the peer shrinks the table', () => {
    const encoder = new HpackEncoder();
    const decoder = new HpackDecoder();
    for (let i = 0; i < 500; i++) {
      if (i === 250) encoder.setPeerMaxTableSize(100);
      if (i === 400) encoder.setPeerMaxTableSize(0);
      const fields: Array<[string, string]> = [
        ['x-counter', String(i % 37)],
        ['x-name', `value-${i % 11}`],
        [':status', '200'],
      ];
      assert.deepEqual(decodeAll(decoder, encoder.encode(fields)), fields);
    }
  });
});
