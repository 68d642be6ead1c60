/**
 * The secp256k1 backends: one contract, run against every backend this machine has (the WASM one
 * always, the native one where it was built), and a check that the native one IS built where it
 * can be, so a broken build cannot hide behind the fallback.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { existsSync } from 'node:fs';
import { finalizeEvent, generateSecretKey, getPublicKey, verifyEvent } from 'nostr-tools/pure';
import { v2 as nobleNip44 } from 'nostr-tools/nip44';
import { LIBSECP256K1_SCHNORR_HEADER, loadNativeSecp256k1, loadWasmSecp256k1, secp256k1, secp256k1StatusLine, type Secp256k1Backend } from './secp256k1.ts';
import { loadVectors } from '../../test/support/nip44-vectors.ts';

const native = loadNativeSecp256k1();
const wasm = await loadWasmSecp256k1();
const backends: Secp256k1Backend[] = native instanceof Error ? [wasm] : [native, wasm];
const { vectors } = loadVectors();
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const flip = (hexText: string, at: number): string => hexText.slice(0, at) + (hexText[at] === '0' ? '1' : '0') + hexText.slice(at + 1);

/** An x coordinate with no point on secp256k1 (x³ + 7 is not a square mod p for it). */
const NOT_ON_CURVE = 'ee01ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff';
/** Not even a field element (≥ p). */
const ABOVE_P = 'f'.repeat(64);

test('the native backend is built and chosen wherever libsecp256k1 is installed', () => {
  const required = existsSync(LIBSECP256K1_SCHNORR_HEADER) || process.env.NOSTR_PUSH_REQUIRE_NATIVE_SECP256K1 === '1';
  if (process.env.NOSTR_PUSH_SECP256K1 === 'wasm') {
    assert.equal(secp256k1.kind, 'wasm', 'NOSTR_PUSH_SECP256K1=wasm forces WASM');
    return;
  }
  if (required) {
    assert.ok(!(native instanceof Error), `libsecp256k1 is installed, but ${native instanceof Error ? native.message : ''}`);
    assert.equal(secp256k1.kind, 'native');
    assert.match(secp256k1StatusLine(), /libsecp256k1 \(native\)$/);
  } else {
    assert.equal(secp256k1.kind, 'wasm');
    assert.match(secp256k1StatusLine(), /install libsecp256k1-dev/);
  }
});

for (const backend of backends) {
  describe(`secp256k1 backend: ${backend.name}`, () => {
    const secret = generateSecretKey();
    const events = Array.from({ length: 300 }, (_, i) =>
      finalizeEvent({ kind: 7, created_at: 1_700_000_000 + i, content: `+${i}`, tags: [['e', 'a'.repeat(64)]] }, i % 2 ? secret : generateSecretKey()),
    );

    test('agrees with nostr-tools on 300 signed events', () => {
      for (const event of events) {
        assert.equal(backend.verifySchnorrHex(event.id, event.pubkey, event.sig), true);
        assert.equal(verifyEvent({ ...event }), true);
      }
    });

    test('a flipped nibble anywhere in id, signature or pubkey fails', () => {
      const event = events[0] as (typeof events)[number];
      for (const at of [0, 31, 63]) assert.equal(backend.verifySchnorrHex(flip(event.id, at), event.pubkey, event.sig), false, `id at ${at}`);
      for (const at of [0, 63, 64, 127]) assert.equal(backend.verifySchnorrHex(event.id, event.pubkey, flip(event.sig, at)), false, `sig at ${at}`);
      for (const at of [0, 63]) assert.equal(backend.verifySchnorrHex(event.id, flip(event.pubkey, at), event.sig), false, `pubkey at ${at}`);
      const other = events[2] as (typeof events)[number];
      assert.equal(backend.verifySchnorrHex(event.id, other.pubkey, event.sig), false, "another key's signature");
    });

    test('malformed input is false, never a throw', () => {
      const event = events[1] as (typeof events)[number];
      assert.equal(backend.verifySchnorrHex(event.id, NOT_ON_CURVE, event.sig), false, 'pubkey not on the curve');
      assert.equal(backend.verifySchnorrHex(event.id, ABOVE_P, event.sig), false, 'pubkey not a field element');
      assert.equal(backend.verifySchnorrHex(event.id.toUpperCase(), event.pubkey, event.sig), false, 'uppercase hex');
      assert.equal(backend.verifySchnorrHex(event.id.slice(2), event.pubkey, event.sig), false, 'short id');
      assert.equal(backend.verifySchnorrHex(event.id, event.pubkey, `${event.sig}00`), false, 'long sig');
      assert.equal(backend.verifySchnorrHex(`${event.id.slice(0, 62)}zz`, event.pubkey, event.sig), false, 'not hex');
      assert.equal(backend.verifySchnorrHex('', '', ''), false);
      assert.equal(backend.verifySchnorrHex(event.id, event.pubkey, 'f'.repeat(128)), false, 'r and s out of range');
    });

    test('xonlySharedX: both sides of an exchange agree, and equal noble', () => {
      for (let i = 0; i < 20; i++) {
        const a = generateSecretKey();
        const b = generateSecretKey();
        const ab = backend.xonlySharedX(a, Buffer.from(getPublicKey(b), 'hex'));
        const ba = backend.xonlySharedX(b, Buffer.from(getPublicKey(a), 'hex'));
        assert.ok(ab && ba);
        assert.equal(hex(ab), hex(ba));
        const conversationKey = createHmac('sha256', 'nip44-v2').update(ab).digest('hex');
        assert.equal(conversationKey, hex(nobleNip44.utils.getConversationKey(a, getPublicKey(b))));
      }
    });

    test('xonlySharedX gives the official NIP-44 conversation keys, and null for the invalid peers', () => {
      for (const { sec1, pub2, conversation_key } of vectors.v2.valid.get_conversation_key) {
        const shared = backend.xonlySharedX(Buffer.from(sec1, 'hex'), Buffer.from(pub2, 'hex'));
        assert.ok(shared, `sec1=${sec1} pub2=${pub2}`);
        assert.equal(createHmac('sha256', 'nip44-v2').update(shared).digest('hex'), conversation_key);
      }
      for (const { sec1, pub2, note } of vectors.v2.invalid.get_conversation_key) {
        assert.equal(backend.xonlySharedX(Buffer.from(sec1, 'hex'), Buffer.from(pub2, 'hex')), null, note);
      }
    });

    test('xonlySharedX: a zero or out-of-range secret and a point off the curve are null', () => {
      const peer = Buffer.from(getPublicKey(generateSecretKey()), 'hex');
      assert.equal(backend.xonlySharedX(new Uint8Array(32), peer), null);
      assert.equal(backend.xonlySharedX(Buffer.alloc(32, 0xff), peer), null);
      assert.equal(backend.xonlySharedX(generateSecretKey(), Buffer.from(NOT_ON_CURVE, 'hex')), null);
      assert.equal(backend.xonlySharedX(generateSecretKey(), Buffer.from(ABOVE_P, 'hex')), null);
    });
  });
}

if (!(native instanceof Error)) {
  test('the native addon refuses arguments of the wrong type or size with a TypeError', () => {
    const addon = native as Secp256k1Backend & { verifySchnorrHex: (...args: unknown[]) => boolean; xonlySharedX: (...args: unknown[]) => unknown };
    assert.throws(() => addon.verifySchnorrHex(1, 2, 3), TypeError);
    assert.throws(() => addon.verifySchnorrHex('a'), TypeError);
    assert.throws(() => addon.xonlySharedX(new Uint8Array(31), new Uint8Array(32)), TypeError);
    assert.throws(() => addon.xonlySharedX(new Uint16Array(16), new Uint8Array(32)), TypeError);
    assert.throws(() => addon.xonlySharedX('secret', new Uint8Array(32)), TypeError);
  });
}
