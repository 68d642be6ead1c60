import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { v2 as nobleNip44 } from 'nostr-tools/nip44';
import { InvalidSecretKeyError, generateSecretKey, publicKeyOf } from './keys.ts';
import {
  ConversationKeyCache,
  MAX_INTEROPERABLE_PLAINTEXT_BYTES,
  MAX_NIP44_PAYLOAD_CHARS,
  Nip44Error,
  createConversationKeyDeriver,
  decryptNip44,
  encryptNip44,
  getConversationKey,
  isPlausibleNip44Payload,
  looksLikePlaintext,
  type ConversationKeyDeriver,
} from './nip44.ts';
import { availableSecp256k1Backends } from './secp256k1.ts';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const bytes = (hexText: string): Uint8Array => Uint8Array.from(Buffer.from(hexText, 'hex'));

/**
 * NIP-44 against nostr-tools' implementation (noble), on random keys and messages: a check that
 * needs nothing outside the repository, so a plain clone without the official vectors
 * (`nip44.vectors.test.ts`) still pins the cipher. Each direction is checked, so a bug shared by
 * our encrypt and our decrypt cannot pass.
 */
describe('NIP-44 against nostr-tools on random keys and messages', () => {
  const SAMPLES = 64;
  const randomText = (): string => {
    // 1 to ~3,000 bytes of mixed ASCII and multi-byte characters, padding boundaries included.
    const length = 1 + (randomBytes(2).readUInt16BE() % 1_000);
    return Array.from(randomBytes(length), (b) =>
      b % 5 === 0 ? String.fromCodePoint(0x4e00 + b) : String.fromCharCode(32 + (b % 95)),
    ).join('');
  };

  for (const backend of availableSecp256k1Backends()) {
    test(`conversation keys equal noble’s with ${backend.name}, from either side`, () => {
      for (let i = 0; i < SAMPLES; i++) {
        const [a, b] = [generateSecretKey(), generateSecretKey()];
        const expected = hex(nobleNip44.utils.getConversationKey(bytes(a), publicKeyOf(b)));
        assert.equal(hex(createConversationKeyDeriver(a, backend).conversationKey(publicKeyOf(b))), expected);
        assert.equal(hex(createConversationKeyDeriver(b, backend).conversationKey(publicKeyOf(a))), expected);
      }
    });
  }

  test('what noble encrypts we decrypt, and what we encrypt noble decrypts', () => {
    for (let i = 0; i < SAMPLES; i++) {
      const key = getConversationKey(generateSecretKey(), publicKeyOf(generateSecretKey()));
      const text = randomText();
      assert.equal(decryptNip44(nobleNip44.encrypt(text, key), key), text);
      const ours = encryptNip44(text, key);
      assert.equal(nobleNip44.decrypt(ours, key), text);
      assert.equal(isPlausibleNip44Payload(ours), true);
    }
  });

  test('a fixed nonce gives noble’s payload byte for byte', () => {
    for (let i = 0; i < SAMPLES; i++) {
      const key = getConversationKey(generateSecretKey(), publicKeyOf(generateSecretKey()));
      const nonce = randomBytes(32);
      const text = randomText();
      assert.equal(encryptNip44(text, key, { nonce }), nobleNip44.encrypt(text, key, nonce));
    }
  });
});

describe('NIP-44 service helpers', () => {
  const serviceSecret = generateSecretKey();
  const userSecret = generateSecretKey();

  test('a deriver and a one-off call agree, and both sides get the same key', () => {
    const deriver = createConversationKeyDeriver(serviceSecret);
    const userPub = publicKeyOf(userSecret);
    const key = deriver.conversationKey(userPub);
    assert.deepEqual(key, getConversationKey(serviceSecret, userPub));
    assert.deepEqual(key, getConversationKey(userSecret, publicKeyOf(serviceSecret)));
    assert.equal(hex(key), hex(nobleNip44.utils.getConversationKey(bytes(serviceSecret), userPub)));
  });

  test('a round trip decrypts what a client encrypted to the service key', () => {
    const clientKey = getConversationKey(userSecret, publicKeyOf(serviceSecret));
    const payload = encryptNip44('{"token":"fcm:abc"}', clientKey);
    const serviceKey = createConversationKeyDeriver(serviceSecret).conversationKey(publicKeyOf(userSecret));
    assert.equal(decryptNip44(payload, serviceKey), '{"token":"fcm:abc"}');
  });

  test('an invalid service secret is refused when the deriver is made', () => {
    assert.throws(() => createConversationKeyDeriver('0'.repeat(64)), InvalidSecretKeyError);
    assert.throws(() => createConversationKeyDeriver('xyz'), InvalidSecretKeyError);
  });

  test('a peer pubkey that is not 64 lowercase hex is refused before ECDH', () => {
    const deriver = createConversationKeyDeriver(serviceSecret);
    for (const peer of [publicKeyOf(userSecret).toUpperCase(), 'ab', `${'0'.repeat(63)}g`, '']) {
      assert.throws(
        () => deriver.conversationKey(peer),
        (error: unknown) => error instanceof Nip44Error && error.code === 'bad-peer-pubkey',
      );
    }
  });

  test('a payload over the cap is refused before it is decoded', () => {
    const key = getConversationKey(serviceSecret, publicKeyOf(userSecret));
    // Not base64 at all: had it been decoded, the error would be decrypt-failed.
    const oversized = '!'.repeat(MAX_NIP44_PAYLOAD_CHARS + 1);
    assert.throws(
      () => decryptNip44(oversized, key),
      (error: unknown) => error instanceof Nip44Error && error.code === 'payload-too-long',
    );
    assert.throws(
      () => decryptNip44('!'.repeat(MAX_NIP44_PAYLOAD_CHARS), key),
      (error: unknown) => error instanceof Nip44Error && error.code === 'decrypt-failed',
    );
  });

  test('plaintext past 65535 bytes is not emitted by default', () => {
    const key = getConversationKey(serviceSecret, publicKeyOf(userSecret));
    assert.ok(encryptNip44('é'.repeat(MAX_INTEROPERABLE_PLAINTEXT_BYTES >> 1), key).length > 0);
    assert.throws(
      () => encryptNip44('a'.repeat(MAX_INTEROPERABLE_PLAINTEXT_BYTES + 1), key),
      (error: unknown) => error instanceof Nip44Error && error.code === 'plaintext-too-long',
    );
    // Counted in UTF-8 bytes: 32768 two-byte characters are 65536 bytes.
    assert.throws(
      () => encryptNip44('é'.repeat(32_768), key),
      (error: unknown) => error instanceof Nip44Error && error.code === 'plaintext-too-long',
    );
  });
});

describe('isPlausibleNip44Payload (divine heuristic)', () => {
  test('needs more than 100 characters', () => {
    assert.equal(isPlausibleNip44Payload('A'.repeat(100)), false);
    assert.equal(isPlausibleNip44Payload('A'.repeat(101)), true);
    assert.equal(isPlausibleNip44Payload(''), false);
  });

  test('needs every character in [A-Za-z0-9+/=]', () => {
    const base = 'Az09+/='.repeat(20);
    assert.equal(isPlausibleNip44Payload(base), true);
    for (const bad of ['-', '_', ' ', '\n', '#', '{', 'é', '"']) {
      assert.equal(isPlausibleNip44Payload(base + bad), false, JSON.stringify(bad));
      assert.equal(isPlausibleNip44Payload(bad + base), false, JSON.stringify(bad));
    }
  });
  test('rejects a plaintext token, which looks like plaintext; a payload of ours does not', () => {
    const plaintextToken = JSON.stringify({ token: 'f'.repeat(150), platform: 'android' });
    assert.equal(isPlausibleNip44Payload(plaintextToken), false);
    assert.equal(looksLikePlaintext(plaintextToken), true);
    const payload = encryptNip44(plaintextToken, getConversationKey(generateSecretKey(), publicKeyOf(generateSecretKey())));
    assert.equal(isPlausibleNip44Payload(payload), true);
    assert.equal(looksLikePlaintext(payload), false);
  });
});

describe('ConversationKeyCache', () => {
  function countingDeriver(): ConversationKeyDeriver & { calls: string[] } {
    const calls: string[] = [];
    return {
      calls,
      conversationKey(peer: string): Uint8Array {
        calls.push(peer);
        if (peer === 'bad') throw new Nip44Error('bad-peer-pubkey', 'bad');
        return Uint8Array.from(Buffer.from(peer.padEnd(64, '0'), 'hex'));
      },
    };
  }

  test('computes on a miss and serves a hit without deriving again', () => {
    const deriver = countingDeriver();
    const cache = new ConversationKeyCache(deriver, 3);
    const first = cache.get('aa');
    assert.equal(cache.get('aa'), first);
    assert.deepEqual(deriver.calls, ['aa']);
    assert.deepEqual(cache.stats(), { size: 1, capacity: 3, hits: 1, misses: 1, evictions: 0 });
  });

  test('stays within capacity and evicts the least recently used entry', () => {
    const deriver = countingDeriver();
    const cache = new ConversationKeyCache(deriver, 3);
    cache.get('aa');
    cache.get('bb');
    cache.get('cc');
    cache.get('aa'); // now bb is the least recently used
    cache.get('dd');
    assert.equal(cache.stats().size, 3);
    assert.equal(cache.stats().evictions, 1);
    assert.equal(cache.has('bb'), false);
    assert.equal(cache.has('aa') && cache.has('cc') && cache.has('dd'), true);
    cache.get('bb');
    assert.deepEqual(deriver.calls, ['aa', 'bb', 'cc', 'dd', 'bb']);
    assert.equal(cache.has('cc'), false);
  });

  test('many distinct peers never grow it past capacity', () => {
    const cache = new ConversationKeyCache(countingDeriver(), 100);
    for (let i = 0; i < 1_000; i++) cache.get(i.toString(16).padStart(4, '0'));
    assert.deepEqual(cache.stats(), { size: 100, capacity: 100, hits: 0, misses: 1_000, evictions: 900 });
  });

  test('a failed derivation throws and is not cached', () => {
    const deriver = countingDeriver();
    const cache = new ConversationKeyCache(deriver, 3);
    assert.throws(() => cache.get('bad'), Nip44Error);
    assert.throws(() => cache.get('bad'), Nip44Error);
    assert.equal(cache.stats().size, 0);
    assert.equal(deriver.calls.length, 2);
  });

  test('refuses a capacity that is not a positive integer', () => {
    for (const capacity of [0, -1, 1.5, Number.NaN]) {
      assert.throws(() => new ConversationKeyCache(countingDeriver(), capacity), RangeError);
    }
  });
});
