import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { finalizeEvent, verifyEvent } from 'nostr-tools/pure';
import { isXOnlyPoint, pointMultiply } from 'tiny-secp256k1';
import type { NostrEvent } from './event.ts';
import { generateSecretKey, secretKeyBytes } from './keys.ts';
import {
  NATIVE_INSTALL_HINT,
  SECP256K1_BACKEND_ENV,
  availableSecp256k1Backends,
  defaultSecp256k1Selection,
  loadNativeSecp256k1,
  selectSecp256k1Backend,
  wasmSecp256k1,
  type Secp256k1Backend,
} from './secp256k1.ts';

/** The header of libsecp256k1-dev: where it is installed, the native backend must be the one in use. */
const LIBSECP256K1_HEADER = '/usr/include/secp256k1_schnorrsig.h';
/** The field prime p and the group order n of secp256k1, as hex. */
const FIELD_PRIME_HEX = 'fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f';
const GROUP_ORDER_HEX = 'fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141';
/** x = 0 has no point on the curve (7 is not a square mod p); NIP-44's vectors use it too. */
const X_NOT_ON_CURVE = '0'.repeat(64);
const CROSS_CHECK_EVENTS = 300;

const bytes = (hex: string): Uint8Array => Uint8Array.from(Buffer.from(hex, 'hex'));
const hexOf = (data: Uint8Array): string => Buffer.from(data).toString('hex');

type SignedEvent = NostrEvent;

/** A nostr-tools event as a plain object: without the verdict nostr-tools caches on its own events. */
function signedEvent(content: string, secretHex = generateSecretKey()): SignedEvent {
  const { id, pubkey, created_at, kind, tags, sig } = finalizeEvent(
    { kind: 1, created_at: 1_700_000_000, tags: [['t', 'x']], content },
    secretKeyBytes(secretHex),
  );
  return { id, pubkey, created_at, kind, tags, content, sig };
}

/** `hex` with one bit of the character at `index` flipped (still lowercase hex). */
function flipBit(hex: string, index: number, bit = 0): string {
  const flipped = (Number.parseInt(hex[index] ?? '0', 16) ^ (1 << bit)).toString(16);
  return hex.slice(0, index) + flipped + hex.slice(index + 1);
}

/** A random single-field change to an event: none, a bit of id, sig or pubkey, or a random field. */
function randomlyTampered(event: SignedEvent, i: number): SignedEvent {
  const bit = i % 4;
  switch (i % 6) {
    case 0:
      return event;
    case 1:
      return { ...event, id: flipBit(event.id, i % 64, bit) };
    case 2:
      return { ...event, sig: flipBit(event.sig, i % 128, bit) };
    case 3:
      return { ...event, pubkey: flipBit(event.pubkey, i % 64, bit) };
    case 4:
      return { ...event, sig: randomBytes(64).toString('hex') };
    default:
      return { ...event, pubkey: randomBytes(32).toString('hex') };
  }
}

function tinySharedX(secret: Uint8Array, peer: Uint8Array): Uint8Array | null {
  const shared = pointMultiply(Uint8Array.from([0x02, ...peer]), secret, true);
  return shared === null ? null : shared.subarray(1);
}

/** Runs one check and one derivation with `kind`'s backend in a fresh worker thread. */
function inWorker(
  kind: string,
  event: SignedEvent,
  secret: Uint8Array,
  peer: Uint8Array,
): Promise<{ name: string; verified: boolean; sharedX: string | null }> {
  // An eval worker is CommonJS without the parent's loader: it registers tsx to import the module.
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    (async () => {
      const { register } = await import(workerData.tsx);
      register();
      const { availableSecp256k1Backends } = await import(workerData.module);
      const backend = availableSecp256k1Backends().find((b) => b.kind === workerData.kind);
      const { id, pubkey, sig } = workerData.event;
      const shared = backend.xonlySharedX(workerData.secret, workerData.peer);
      parentPort.postMessage({ name: backend.name, verified: backend.verifySchnorrHex(id, pubkey, sig), sharedX: shared && Buffer.from(shared).toString('hex') });
    })();`;
  const workerData = {
    kind,
    event,
    secret,
    peer,
    tsx: import.meta.resolve('tsx/esm/api'),
    module: new URL('./secp256k1.ts', import.meta.url).href,
  };
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData });
    worker.once('message', (result: { name: string; verified: boolean; sharedX: string | null }) => {
      resolve(result);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

const backends = availableSecp256k1Backends();

for (const backend of backends) {
  describe(`secp256k1 contract: ${backend.name}`, () => {
    const event = signedEvent('the contract event');

    test('events signed by nostr-tools verify', () => {
      for (let i = 0; i < 20; i++) {
        const signed = signedEvent(`event ${i} ${'é'.repeat(i)}`);
        assert.equal(backend.verifySchnorrHex(signed.id, signed.pubkey, signed.sig), true, JSON.stringify(signed));
      }
    });

    test('one flipped bit anywhere in id, sig or pubkey fails', () => {
      for (let index = 0; index < 64; index++) {
        const bit = index % 4;
        assert.equal(backend.verifySchnorrHex(flipBit(event.id, index, bit), event.pubkey, event.sig), false, `id ${index}`);
        assert.equal(backend.verifySchnorrHex(event.id, flipBit(event.pubkey, index, bit), event.sig), false, `pubkey ${index}`);
      }
      for (let index = 0; index < 128; index++) {
        assert.equal(backend.verifySchnorrHex(event.id, event.pubkey, flipBit(event.sig, index, index % 4)), false, `sig ${index}`);
      }
    });

    test('a pubkey that is not an x coordinate on the curve fails without throwing', () => {
      for (const pubkey of [X_NOT_ON_CURVE, FIELD_PRIME_HEX, 'f'.repeat(64)]) {
        assert.equal(backend.verifySchnorrHex(event.id, pubkey, event.sig), false, pubkey);
      }
      // About half of all x values are off the curve: none of them may throw.
      for (let i = 0; i < 50; i++) assert.equal(backend.verifySchnorrHex(event.id, randomBytes(32).toString('hex'), event.sig), false);
    });

    test('malformed hex is false: uppercase, non-hex, and characters whose low byte is the right digit', () => {
      const upper = (hex: string) => hex.replace(/[a-f]/, (c) => c.toUpperCase());
      const withChar = (hex: string, char: string) => char + hex.slice(1);
      // U+0161 for 'a', U+0130 for '0', …: read as Latin-1 (low bytes), the string would be the
      // valid one again, so only a decoder that sees whole characters refuses these.
      const widened = (hex: string, at: number) => hex.slice(0, at) + String.fromCharCode(0x100 | hex.charCodeAt(at)) + hex.slice(at + 1);
      for (const bad of [upper(event.id), withChar(event.id, 'g'), withChar(event.id, ' '), widened(event.id, 0), widened(event.id, 63)]) {
        assert.equal(backend.verifySchnorrHex(bad, event.pubkey, event.sig), false, JSON.stringify(bad));
      }
      assert.equal(backend.verifySchnorrHex(event.id, withChar(event.pubkey, 'x'), event.sig), false);
      assert.equal(backend.verifySchnorrHex(event.id, widened(event.pubkey, 10), event.sig), false);
      assert.equal(backend.verifySchnorrHex(event.id, event.pubkey, widened(event.sig, 127)), false);
      assert.equal(backend.verifySchnorrHex(event.id, event.pubkey, `${event.sig.slice(0, 127)}G`), false);
      assert.equal(backend.verifySchnorrHex(event.id, event.pubkey, event.sig), true, 'the unaltered event verifies');
    });

    test('wrong types and lengths throw a TypeError', () => {
      const calls: Array<[string, () => unknown]> = [
        ['a short id', () => backend.verifySchnorrHex(event.id.slice(1), event.pubkey, event.sig)],
        ['a long pubkey', () => backend.verifySchnorrHex(event.id, `${event.pubkey}0`, event.sig)],
        ['a 64-character sig', () => backend.verifySchnorrHex(event.id, event.pubkey, event.sig.slice(0, 64))],
        ['an empty sig', () => backend.verifySchnorrHex(event.id, event.pubkey, '')],
        ['a numeric id', () => backend.verifySchnorrHex(5 as unknown as string, event.pubkey, event.sig)],
        ['a Buffer pubkey', () => backend.verifySchnorrHex(event.id, Buffer.from(event.pubkey, 'hex') as unknown as string, event.sig)],
        ['no arguments', () => (backend.verifySchnorrHex as unknown as () => boolean)()],
        ['a short secret', () => backend.xonlySharedX(new Uint8Array(31), bytes(event.pubkey))],
        ['a long peer', () => backend.xonlySharedX(new Uint8Array(32), new Uint8Array(33))],
        ['a hex string peer', () => backend.xonlySharedX(new Uint8Array(32), event.pubkey as unknown as Uint8Array)],
        ['an array secret', () => backend.xonlySharedX(Array.from({ length: 32 }, () => 1) as unknown as Uint8Array, bytes(event.pubkey))],
        ['a Uint16Array peer', () => backend.xonlySharedX(new Uint8Array(32), new Uint16Array(32) as unknown as Uint8Array)],
        ['a DataView secret', () => backend.xonlySharedX(new DataView(new ArrayBuffer(32)) as unknown as Uint8Array, bytes(event.pubkey))],
        ['null', () => backend.xonlySharedX(null as unknown as Uint8Array, null as unknown as Uint8Array)],
      ];
      for (const [name, call] of calls) assert.throws(call, TypeError, name);
    });

    test(`agrees with nostr-tools' verifier on ${CROSS_CHECK_EVENTS} random and randomly tampered events`, () => {
      let valid = 0;
      for (let i = 0; i < CROSS_CHECK_EVENTS; i++) {
        const candidate = randomlyTampered(signedEvent(randomBytes(1 + (i % 40)).toString('base64')), i);
        // nostr-tools also checks the id against the content; a tampered field fails both ways.
        const expected = verifyEvent({ ...candidate });
        if (expected) valid++;
        assert.equal(backend.verifySchnorrHex(candidate.id, candidate.pubkey, candidate.sig), expected, JSON.stringify(candidate));
      }
      // Exactly the untouched sixth verifies: no tampering survived, nothing valid was refused.
      assert.equal(valid, Math.ceil(CROSS_CHECK_EVENTS / 6));
    });

    test('xonlySharedX equals tiny-secp256k1 pointMultiply(0x02 || x) on random keys, from either side', () => {
      for (let i = 0; i < 100; i++) {
        const a = generateSecretKey();
        const b = generateSecretKey();
        const peerA = bytes(signedEvent('k', a).pubkey);
        const peerB = bytes(signedEvent('k', b).pubkey);
        const shared = backend.xonlySharedX(secretKeyBytes(a), peerB);
        assert.ok(shared !== null);
        assert.equal(hexOf(shared), hexOf(tinySharedX(secretKeyBytes(a), peerB) ?? new Uint8Array()));
        assert.equal(hexOf(backend.xonlySharedX(secretKeyBytes(b), peerA) ?? new Uint8Array()), hexOf(shared));
      }
    });

    test('xonlySharedX is null exactly for x values off the curve', () => {
      const secret = secretKeyBytes(generateSecretKey());
      let offCurve = 0;
      for (let i = 0; i < 200; i++) {
        const x = randomBytes(32);
        const onCurve = isXOnlyPoint(x);
        if (!onCurve) offCurve++;
        const shared = backend.xonlySharedX(secret, x);
        assert.equal(shared === null, !onCurve, x.toString('hex'));
        if (shared !== null) assert.equal(hexOf(shared), hexOf(tinySharedX(secret, x) ?? new Uint8Array()));
      }
      assert.ok(offCurve > 0 && offCurve < 200, `${offCurve} of 200 off the curve`);
      for (const x of [X_NOT_ON_CURVE, FIELD_PRIME_HEX, 'f'.repeat(64)]) assert.equal(backend.xonlySharedX(secret, bytes(x)), null, x);
    });

    test('xonlySharedX is null for a secret that is not a scalar in [1, n-1]', () => {
      const peer = bytes(event.pubkey);
      for (const secret of ['0'.repeat(64), GROUP_ORDER_HEX, 'f'.repeat(64)])
        assert.equal(backend.xonlySharedX(bytes(secret), peer), null, secret);
      const nMinusOne = GROUP_ORDER_HEX.slice(0, 63) + '0';
      assert.equal(
        hexOf(backend.xonlySharedX(bytes(nMinusOne), peer) ?? new Uint8Array()),
        hexOf(tinySharedX(bytes(nMinusOne), peer) ?? new Uint8Array()),
      );
    });

    test('xonlySharedX reads views at an offset (Buffer slices) and returns a fresh array each time', () => {
      const secretHex = generateSecretKey();
      const backing = new Uint8Array(80);
      backing.set(secretKeyBytes(secretHex), 7);
      backing.set(bytes(event.pubkey), 41);
      const first = backend.xonlySharedX(backing.subarray(7, 39), backing.subarray(41, 73));
      const second = backend.xonlySharedX(secretKeyBytes(secretHex), Buffer.from(event.pubkey, 'hex'));
      assert.ok(first !== null && second !== null);
      assert.equal(hexOf(first), hexOf(second));
      assert.notEqual(first.buffer, second.buffer);
      assert.equal(first.length, 32);
      first.fill(0);
      assert.notEqual(hexOf(second), '0'.repeat(64));
    });

    test('loads and computes in worker threads, two at once', async () => {
      const secret = secretKeyBytes(generateSecretKey());
      const peer = bytes(event.pubkey);
      const expectedX = hexOf(tinySharedX(secret, peer) ?? new Uint8Array());
      const results = await Promise.all([inWorker(backend.kind, event, secret, peer), inWorker(backend.kind, event, secret, peer)]);
      for (const result of results) assert.deepEqual(result, { name: backend.name, verified: true, sharedX: expectedX });
    });
  });
}

describe('secp256k1 backend choice', () => {
  test('the native backend is the one in use wherever libsecp256k1-dev is installed (or NOSTR_PUSH_REQUIRE_NATIVE_SECP256K1=1)', () => {
    const required = existsSync(LIBSECP256K1_HEADER) || process.env.NOSTR_PUSH_REQUIRE_NATIVE_SECP256K1 === '1';
    const native = loadNativeSecp256k1();
    const automatic = selectSecp256k1Backend({});
    if (required) {
      assert.ok(native.ok, `${LIBSECP256K1_HEADER} exists but the addon does not load: ${native.ok ? '' : native.reason}`);
      assert.equal(automatic.backend.kind, 'native');
      assert.equal(automatic.degraded, false);
      assert.deepEqual(
        backends.map((b) => b.kind),
        ['native', 'wasm'],
      );
    } else {
      // Without the library the fallback is what runs, and says how to get the native one.
      assert.equal(automatic.backend.kind, native.ok ? 'native' : 'wasm');
      if (!native.ok) assert.ok(automatic.degraded && automatic.summary.includes(NATIVE_INSTALL_HINT), automatic.summary);
    }
    // This process's own choice follows the same rule unless its environment forces one.
    if ((process.env[SECP256K1_BACKEND_ENV] ?? '') === '') assert.equal(defaultSecp256k1Selection().backend, automatic.backend);
  });

  test(`${SECP256K1_BACKEND_ENV}=wasm forces WASM; native is used when it loads`, () => {
    assert.equal(selectSecp256k1Backend({ [SECP256K1_BACKEND_ENV]: 'wasm' }).backend, wasmSecp256k1);
    const native: Secp256k1Backend = { ...wasmSecp256k1, kind: 'native', name: 'stand-in native' };
    for (const value of ['native', '', undefined]) {
      const selection = selectSecp256k1Backend({ [SECP256K1_BACKEND_ENV]: value }, () => ({ ok: true, backend: native }));
      assert.equal(selection.backend, native);
      assert.equal(selection.summary, 'secp256k1: stand-in native');
    }
  });

  test('without the addon: WASM with a warning that says why and how, or an error when native is forced', () => {
    const missing = () => ({ ok: false as const, reason: 'the addon is not built (no native/secp256k1/build/Release/secp256k1.node)' });
    const fallback = selectSecp256k1Backend({}, missing);
    assert.equal(fallback.backend, wasmSecp256k1);
    assert.equal(fallback.degraded, true);
    assert.match(
      fallback.summary,
      /WASM, tiny-secp256k1\), because the addon is not built .*6x faster signature checks install libsecp256k1-dev/,
    );
    assert.throws(
      () => selectSecp256k1Backend({ [SECP256K1_BACKEND_ENV]: 'native' }, missing),
      /NOSTR_PUSH_SECP256K1=native, but the native secp256k1 addon is unavailable: the addon is not built/,
    );
  });

  test(`an unknown ${SECP256K1_BACKEND_ENV} is an error naming the variable`, () => {
    for (const value of ['Native', 'auto', 'js']) {
      assert.throws(
        () => selectSecp256k1Backend({ [SECP256K1_BACKEND_ENV]: value }),
        /NOSTR_PUSH_SECP256K1 must be native or wasm \(or unset\)/,
      );
    }
  });
});
