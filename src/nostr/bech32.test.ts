import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { npubEncode as libraryNpub, nsecEncode as libraryNsec } from 'nostr-tools/nip19';
import { bech32Encode } from './bech32.ts';

describe('bech32Encode', () => {
  test('the NIP-19 example npub', () => {
    const pubkey = Buffer.from('7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e', 'hex');
    assert.equal(bech32Encode('npub', pubkey), 'npub10elfcs4fr0l0r8af98jlmgdh9c8tcxjvz9qkw038js35mp4dma8qzvjptg');
  });

  test('matches nostr-tools for 500 random keys, npub and nsec', () => {
    for (let i = 0; i < 500; i++) {
      const bytes = randomBytes(32);
      const hex = bytes.toString('hex');
      assert.equal(bech32Encode('npub', bytes), libraryNpub(hex));
      assert.equal(bech32Encode('nsec', bytes), libraryNsec(bytes));
    }
  });

  test('BIP-173 valid vectors with an empty payload', () => {
    // From BIP-173's "valid Bech32" list: the checksum of a bare human-readable part.
    assert.equal(bech32Encode('a', new Uint8Array()), 'a12uel5l');
    assert.equal(
      bech32Encode(
        'abcdef',
        Uint8Array.from([
          0x00, 0x44, 0x32, 0x14, 0xc7, 0x42, 0x54, 0xb6, 0x35, 0xcf, 0x84, 0x65, 0x3a, 0x56, 0xd7, 0xc6, 0x75, 0xbe, 0x77, 0xdf,
        ]),
      ),
      'abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw',
    );
  });
});
