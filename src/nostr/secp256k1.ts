/**
 * The secp256k1 operations nostr-push needs, from one of two builds of libsecp256k1 (the
 * reference implementation of BIP-340):
 *
 * - native: our small Node-API binding (`native/secp256k1/`) to the system library, built by
 *   `npm install` when `libsecp256k1-dev` is installed. About six times the WASM build on our
 *   machine (docs/benchmarks.md), and signature checks are the largest cost of every event.
 * - WASM: the same library compiled to WebAssembly (`tiny-secp256k1`), always available.
 *
 * The choice is made once per thread when this module loads: native when its addon loads, WASM
 * otherwise; `NOSTR_PUSH_SECP256K1=native|wasm` forces one (native forced but missing is an error
 * at load, so a deployment that relies on it finds out at start). The WASM module is only loaded
 * when it is the choice (or asked for), so a native process does not carry its memory.
 */
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';

export interface Secp256k1Backend {
  /** `libsecp256k1 (native)` or `libsecp256k1 (WASM, tiny-secp256k1)`. */
  readonly name: string;
  readonly kind: 'native' | 'wasm';
  /**
   * Whether `sigHex` is a valid BIP-340 signature of the 32-byte message `idHex` by the x-only
   * key `pubkeyHex`. False, never a throw, for malformed hex or a key not on the curve.
   */
  verifySchnorrHex(idHex: string, pubkeyHex: string, sigHex: string): boolean;
  /**
   * The x coordinate of `secret`·P, where P is the even-y point with x coordinate `peerXonly`
   * (32 bytes each); null when `peerXonly` is not on the curve or `secret` is not a valid scalar.
   */
  xonlySharedX(secret: Uint8Array, peerXonly: Uint8Array): Uint8Array | null;
}

/** Where `npm run build` leaves the addon, relative to this file in `src/nostr/` or `dist/nostr/`. */
export const NATIVE_ADDON_PATH = new URL('../../native/secp256k1/build/Release/nostr_push_secp256k1.node', import.meta.url);
/** The header whose presence means the native addon can be built here. */
export const LIBSECP256K1_SCHNORR_HEADER = '/usr/include/secp256k1_schnorrsig.h';

interface NativeAddon {
  verifySchnorrHex(idHex: string, pubkeyHex: string, sigHex: string): boolean;
  xonlySharedX(secret: Uint8Array, peerXonly: Uint8Array): Uint8Array | null;
}

const HEX_64 = /^[0-9a-f]{64}$/;
const HEX_128 = /^[0-9a-f]{128}$/;
const EVEN_Y_PREFIX = Buffer.from([0x02]);

let wasmBackend: Promise<Secp256k1Backend> | null = null;

/** The WASM backend (tiny-secp256k1), loaded on first use. */
export function loadWasmSecp256k1(): Promise<Secp256k1Backend> {
  wasmBackend ??= import('tiny-secp256k1').then(({ isPoint, pointMultiply, verifySchnorr }) => ({
    name: 'libsecp256k1 (WASM, tiny-secp256k1)',
    kind: 'wasm' as const,
    verifySchnorrHex(idHex: string, pubkeyHex: string, sigHex: string): boolean {
      if (!HEX_64.test(idHex) || !HEX_64.test(pubkeyHex) || !HEX_128.test(sigHex)) return false;
      try {
        return verifySchnorr(Buffer.from(idHex, 'hex'), Buffer.from(pubkeyHex, 'hex'), Buffer.from(sigHex, 'hex'));
      } catch {
        // An x-only key that is not on the curve makes tiny-secp256k1 throw.
        return false;
      }
    },
    xonlySharedX(secret: Uint8Array, peerXonly: Uint8Array): Uint8Array | null {
      const point = Buffer.concat([EVEN_Y_PREFIX, peerXonly]);
      if (peerXonly.length !== 32 || !isPoint(point)) return null;
      try {
        const shared = pointMultiply(point, secret, true);
        return shared === null ? null : shared.subarray(1);
      } catch {
        return null;
      }
    },
  }));
  return wasmBackend;
}

/** The native backend, or the reason it is not available. */
export function loadNativeSecp256k1(): Secp256k1Backend | Error {
  if (!existsSync(NATIVE_ADDON_PATH)) return new Error(`the native addon is not built (${NATIVE_ADDON_PATH.pathname})`);
  try {
    const addon = createRequire(import.meta.url)(NATIVE_ADDON_PATH.pathname) as NativeAddon;
    return { name: 'libsecp256k1 (native)', kind: 'native', verifySchnorrHex: addon.verifySchnorrHex, xonlySharedX: addon.xonlySharedX };
  } catch (err) {
    return new Error(`the native addon did not load: ${(err as Error).message}`);
  }
}

async function chooseBackend(): Promise<{ backend: Secp256k1Backend; nativeUnavailable: string | null }> {
  const forced = process.env.NOSTR_PUSH_SECP256K1;
  if (forced === 'wasm') return { backend: await loadWasmSecp256k1(), nativeUnavailable: 'NOSTR_PUSH_SECP256K1=wasm' };
  const native = loadNativeSecp256k1();
  if (!(native instanceof Error)) return { backend: native, nativeUnavailable: null };
  if (forced === 'native') throw new Error(`NOSTR_PUSH_SECP256K1=native, but ${native.message}`);
  return { backend: await loadWasmSecp256k1(), nativeUnavailable: native.message };
}

const chosen = await chooseBackend();

/** The backend this thread uses. */
export const secp256k1: Secp256k1Backend = chosen.backend;

/**
 * One line for the start banner and `doctor`: which build checks signatures, and, on WASM, why
 * and how to get the native one.
 */
export function secp256k1StatusLine(): string {
  if (chosen.nativeUnavailable === null) return `signatures checked by ${secp256k1.name}`;
  return (
    `signatures checked by ${secp256k1.name}: ${chosen.nativeUnavailable}; ` +
    'install libsecp256k1-dev and run `npm run build` for the native library (about six times faster)'
  );
}
