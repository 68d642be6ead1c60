/**
 * The two secp256k1 operations nostr-push performs, behind one interface with two backends:
 *
 * - `native`: libsecp256k1 of the system through the Node-API addon in `native/secp256k1/`
 *   (`npm install` and `npm run build` compile it when libsecp256k1-dev is installed). About 6x
 *   the WASM build on our benchmark machine (docs/benchmarks.md): a BIP-340 check of ~50 µs
 *   instead of ~300-350, an ECDH of ~55 µs instead of ~330.
 * - `wasm`: the same library compiled to WASM (`tiny-secp256k1`, a regular dependency), used when
 *   the addon is missing or does not load.
 *
 * The default is chosen once per thread (`defaultSecp256k1Selection`): native when it loads, else
 * WASM. `NOSTR_PUSH_SECP256K1=native|wasm` forces one; native forced but unavailable is an error,
 * so a deployment that relies on the fast path cannot silently lose it.
 *
 * Both backends keep one contract, and the test suite holds each to it: arguments of the wrong
 * type or length throw a TypeError; any other bad input gives `false` / `null`, never a throw.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export type Secp256k1BackendKind = 'native' | 'wasm';

export interface Secp256k1Backend {
  readonly kind: Secp256k1BackendKind;
  /** For logs and `doctor`: `libsecp256k1 (native)` or `libsecp256k1 (WASM, tiny-secp256k1)`. */
  readonly name: string;
  /**
   * Whether `sigHex` is a valid BIP-340 signature of the 32-byte message `idHex` by the x-only
   * key `pubkeyHex`. Strings of 64, 64 and 128 characters, else a TypeError. False when one of
   * them is not lowercase hex, the key is not an x coordinate on the curve, or the signature
   * does not verify.
   */
  verifySchnorrHex(idHex: string, pubkeyHex: string, sigHex: string): boolean;
  /**
   * The x coordinate of secret·lift_x(peerXonly) (BIP-340's even-y point of that x; the product's
   * x is the same for either y), as a fresh 32-byte array: tiny-secp256k1's
   * `pointMultiply(0x02 || peerXonly, secret, true)` without its prefix byte. Null when
   * `peerXonly` is not the x of a curve point or `secret` is not a scalar in [1, n-1]. Both must
   * be Uint8Arrays (a Buffer is one) of 32 bytes, else a TypeError.
   */
  xonlySharedX(secret: Uint8Array, peerXonly: Uint8Array): Uint8Array | null;
}

/** The environment variable that forces a backend: `native` or `wasm` (unset: native if it loads). */
export const SECP256K1_BACKEND_ENV = 'NOSTR_PUSH_SECP256K1';
/** Where `npm run build` puts the addon, relative to the repository root. */
export const NATIVE_ADDON_RELATIVE_PATH = 'native/secp256k1/build/Release/secp256k1.node';
/** Two levels up is the repository root both from `src/nostr/` (tsx) and from `dist/nostr/`. */
export const NATIVE_ADDON_PATH = fileURLToPath(new URL(`../../${NATIVE_ADDON_RELATIVE_PATH}`, import.meta.url));
/** What to do to get the native backend, for the messages that report its absence. */
export const NATIVE_INSTALL_HINT = 'install libsecp256k1-dev (apt-get install libsecp256k1-dev) and run npm run build';

const requireCommonJs = createRequire(import.meta.url);
const LOWER_HEX_64 = /^[0-9a-f]{64}$/;
const LOWER_HEX_128 = /^[0-9a-f]{128}$/;
const EVEN_Y_PREFIX = 0x02;

// The TypeErrors of both backends carry the same words, so a caller sees one contract.
function checkHexArgument(value: unknown, chars: number, what: string): asserts value is string {
  if (typeof value !== 'string' || value.length !== chars) {
    throw new TypeError(`verifySchnorrHex: ${what} must be a string of ${chars} hex characters`);
  }
}

function checkBytesArgument(value: unknown, what: string): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array) || value.length !== 32) {
    throw new TypeError(`xonlySharedX: ${what} must be a Uint8Array of 32 bytes`);
  }
}

type TinySecp256k1 = typeof import('tiny-secp256k1');
let tinySecp256k1: TinySecp256k1 | null = null;

/**
 * tiny-secp256k1 compiles and instantiates its WASM module when it is imported (tens of
 * milliseconds, some MiB resident), so it is required on first use: a thread on the native
 * backend, or one that never touches a curve, never loads it. Its CommonJS entry loads
 * synchronously, which keeps both backends synchronous.
 */
function tiny(): TinySecp256k1 {
  tinySecp256k1 ??= requireCommonJs('tiny-secp256k1') as TinySecp256k1;
  return tinySecp256k1;
}

export const wasmSecp256k1: Secp256k1Backend = Object.freeze({
  kind: 'wasm',
  name: 'libsecp256k1 (WASM, tiny-secp256k1)',
  verifySchnorrHex(idHex: string, pubkeyHex: string, sigHex: string): boolean {
    checkHexArgument(idHex, 64, 'idHex');
    checkHexArgument(pubkeyHex, 64, 'pubkeyHex');
    checkHexArgument(sigHex, 128, 'sigHex');
    // Buffer.from(hex) stops at the first non-hex character instead of failing: check first.
    if (!LOWER_HEX_64.test(idHex) || !LOWER_HEX_64.test(pubkeyHex) || !LOWER_HEX_128.test(sigHex)) return false;
    try {
      return tiny().verifySchnorr(Buffer.from(idHex, 'hex'), Buffer.from(pubkeyHex, 'hex'), Buffer.from(sigHex, 'hex'));
    } catch {
      // tiny-secp256k1 throws for an x not on the curve and for r >= p or s >= n: all invalid.
      return false;
    }
  },
  xonlySharedX(secret: Uint8Array, peerXonly: Uint8Array): Uint8Array | null {
    checkBytesArgument(secret, 'secret');
    checkBytesArgument(peerXonly, 'peerXonly');
    const curve = tiny();
    // pointMultiply throws for both; the contract says null.
    if (!curve.isPrivate(secret) || !curve.isXOnlyPoint(peerXonly)) return null;
    const compressed = new Uint8Array(33);
    compressed[0] = EVEN_Y_PREFIX;
    compressed.set(peerXonly, 1);
    // Never null here: a scalar in [1, n-1] times a point of the prime-order group is not infinity.
    return curve.pointMultiply(compressed, secret, true)?.slice(1) ?? null;
  },
});

/** The addon's exports (native/secp256k1/secp256k1.c). */
type NativeAddon = Pick<Secp256k1Backend, 'verifySchnorrHex' | 'xonlySharedX'>;

export type NativeLoadResult = { ok: true; backend: Secp256k1Backend } | { ok: false; reason: string };
let nativeLoad: NativeLoadResult | null = null;

/**
 * Loads the addon once per thread (each worker thread loads its own instance; they share
 * libsecp256k1's one context). Never throws: a missing file, an unresolved libsecp256k1.so or
 * an addon without the expected functions is `{ ok: false, reason }`.
 */
export function loadNativeSecp256k1(): NativeLoadResult {
  nativeLoad ??= tryLoadNative();
  return nativeLoad;
}

function tryLoadNative(): NativeLoadResult {
  if (!existsSync(NATIVE_ADDON_PATH)) return { ok: false, reason: `the addon is not built (no ${NATIVE_ADDON_RELATIVE_PATH})` };
  let addon: Partial<NativeAddon>;
  try {
    addon = requireCommonJs(NATIVE_ADDON_PATH) as Partial<NativeAddon>;
  } catch (err) {
    // dlopen errors span lines (the path, then the loader's reason); the first says what failed.
    return { ok: false, reason: `the addon did not load: ${(err as Error).message.split('\n')[0]}` };
  }
  const { verifySchnorrHex, xonlySharedX } = addon;
  if (typeof verifySchnorrHex !== 'function' || typeof xonlySharedX !== 'function') {
    return { ok: false, reason: `${NATIVE_ADDON_RELATIVE_PATH} lacks verifySchnorrHex or xonlySharedX (rebuild it)` };
  }
  return { ok: true, backend: Object.freeze({ kind: 'native', name: 'libsecp256k1 (native)', verifySchnorrHex, xonlySharedX }) };
}

/** Every backend this thread can use, native first: what the contract tests run against. */
export function availableSecp256k1Backends(): Secp256k1Backend[] {
  const native = loadNativeSecp256k1();
  return native.ok ? [native.backend, wasmSecp256k1] : [wasmSecp256k1];
}

export interface Secp256k1Selection {
  backend: Secp256k1Backend;
  /** True when native was wanted but did not load: say so as a warning. */
  degraded: boolean;
  /** One line for the start-up log and `doctor`: what is used, why, and how to get native. */
  summary: string;
}

/**
 * The backend `env` asks for. Throws a Secp256k1BackendError naming the variable when it has another value than
 * `native`, `wasm` or empty, and when it asks for native and the addon does not load.
 * `loadNative` is for tests of the fallback on a machine that has the addon.
 */
export function selectSecp256k1Backend(
  env: Readonly<Record<string, string | undefined>>,
  loadNative: () => NativeLoadResult = loadNativeSecp256k1,
): Secp256k1Selection {
  const wanted = env[SECP256K1_BACKEND_ENV] ?? '';
  if (wanted === 'wasm') {
    return { backend: wasmSecp256k1, degraded: false, summary: `secp256k1: ${wasmSecp256k1.name}, as ${SECP256K1_BACKEND_ENV}=wasm asks` };
  }
  if (wanted !== 'native' && wanted !== '') {
    throw new Secp256k1BackendError(`${SECP256K1_BACKEND_ENV} must be native or wasm (or unset), got ${JSON.stringify(wanted)}`);
  }
  const native = loadNative();
  if (native.ok) return { backend: native.backend, degraded: false, summary: `secp256k1: ${native.backend.name}` };
  if (wanted === 'native') {
    throw new Secp256k1BackendError(
      `${SECP256K1_BACKEND_ENV}=native, but the native secp256k1 addon is unavailable: ${native.reason}; ${NATIVE_INSTALL_HINT}`,
    );
  }
  return {
    backend: wasmSecp256k1,
    degraded: true,
    summary: `secp256k1: ${wasmSecp256k1.name}, because ${native.reason}; for about 6x faster signature checks ${NATIVE_INSTALL_HINT}`,
  };
}

/** `NOSTR_PUSH_SECP256K1` asks for something this process cannot give: say it, exit, no stack trace. */
export class Secp256k1BackendError extends Error {
  override readonly name = 'Secp256k1BackendError';
}

let defaultSelection: Secp256k1Selection | null = null;

/** This thread's choice from `process.env`, made once; throws as `selectSecp256k1Backend` does. */
export function defaultSecp256k1Selection(): Secp256k1Selection {
  defaultSelection ??= selectSecp256k1Backend(process.env);
  return defaultSelection;
}

/** The backend the service uses unless a caller passes another. */
export function defaultSecp256k1(): Secp256k1Backend {
  return defaultSecp256k1Selection().backend;
}
