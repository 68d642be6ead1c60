import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import { createEventVerifier, type EventVerifier } from './event.ts';
import {
  InvalidSecretKeyError,
  generateSecretKey,
  isValidSecretKeyHex,
  publicKeyOf,
  secretKeyBytes,
  secretKeyProblem,
  signEvent,
} from './keys.ts';

// NIP-19's example pair.
const SECRET_HEX = '67dea2ed018072d675f5415ecfaed7d2597555e202d85b3d65ea4e58d2d92ffa';
const CURVE_ORDER_HEX = 'fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141';
const CURVE_ORDER_MINUS_ONE_HEX = 'fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140';

describe('secret key validation', () => {
  test('accepts scalars from 1 to n-1, in either case', () => {
    assert.equal(isValidSecretKeyHex(SECRET_HEX), true);
    assert.equal(isValidSecretKeyHex(SECRET_HEX.toUpperCase()), true);
    assert.equal(isValidSecretKeyHex('0'.repeat(63) + '1'), true);
    assert.equal(isValidSecretKeyHex(CURVE_ORDER_MINUS_ONE_HEX), true);
  });

  test('rejects zero, the curve order and above, and malformed hex, saying why', () => {
    assert.equal(secretKeyProblem('0'.repeat(64)), 'the scalar is zero');
    assert.equal(secretKeyProblem(CURVE_ORDER_HEX), 'the scalar is not below the curve order');
    assert.equal(secretKeyProblem('f'.repeat(64)), 'the scalar is not below the curve order');
    for (const bad of ['', SECRET_HEX.slice(1), `${SECRET_HEX}0`, `${SECRET_HEX.slice(1)}g`, ` ${SECRET_HEX.slice(1)}`]) {
      assert.equal(secretKeyProblem(bad), 'expected 64 hex characters', bad);
    }
  });

  test('secretKeyBytes throws InvalidSecretKeyError and never echoes the secret', () => {
    assert.throws(
      () => secretKeyBytes(CURVE_ORDER_HEX),
      (error: unknown) => error instanceof InvalidSecretKeyError && !error.message.includes(CURVE_ORDER_HEX),
    );
    assert.equal(Buffer.from(secretKeyBytes(SECRET_HEX)).toString('hex'), SECRET_HEX);
  });
});

describe('key generation and public keys', () => {
  test('generateSecretKey gives distinct valid lowercase keys', () => {
    const keys = new Set(Array.from({ length: 20 }, () => generateSecretKey()));
    assert.equal(keys.size, 20);
    for (const key of keys) {
      assert.match(key, /^[0-9a-f]{64}$/);
      assert.equal(isValidSecretKeyHex(key), true);
    }
  });

  test('publicKeyOf gives the x-only key of the NIP-19 example', () => {
    assert.equal(publicKeyOf(SECRET_HEX), '7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e');
  });

  test('publicKeyOf refuses an invalid secret', () => {
    assert.throws(() => publicKeyOf('0'.repeat(64)), InvalidSecretKeyError);
  });
});

describe('signEvent', () => {
  let verifier: EventVerifier;
  before(async () => {
    verifier = await createEventVerifier();
  });

  test('fills in pubkey, id and sig so that the event verifies', () => {
    const event = signEvent({ kind: 22_242, created_at: 1_700_000_000, tags: [['challenge', 'c']], content: '' }, SECRET_HEX);
    assert.equal(event.pubkey, publicKeyOf(SECRET_HEX));
    assert.match(event.id, /^[0-9a-f]{64}$/);
    assert.match(event.sig, /^[0-9a-f]{128}$/);
    assert.equal(verifier.verify(event), true);
  });

  test('returns a plain object with only the NIP-01 fields', () => {
    const event = signEvent({ kind: 1, created_at: 1, tags: [], content: 'x' }, SECRET_HEX);
    assert.deepEqual(Object.keys(event).sort(), ['content', 'created_at', 'id', 'kind', 'pubkey', 'sig', 'tags']);
    assert.equal(Object.getOwnPropertySymbols(event).length, 0);
  });

  test('refuses an invalid secret', () => {
    assert.throws(() => signEvent({ kind: 1, created_at: 1, tags: [], content: '' }, 'nope'), InvalidSecretKeyError);
  });
});
