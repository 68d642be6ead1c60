/**
 * Benchmarks pre-sign thousands of events with `nostr-tools/wasm` (libsecp256k1 through
 * `nostr-wasm`), many times faster than the pure-JS signer, which would dominate their setup. The
 * service itself never signs that way, so only benchmarks load it.
 */
import { initNostrWasm } from 'nostr-wasm';
import { setNostrWasm } from 'nostr-tools/wasm';

/** Make `nostr-tools/wasm`'s `finalizeEvent`, `generateSecretKey` and `getPublicKey` usable. */
export async function useWasmSigning(): Promise<void> {
  setNostrWasm(await initNostrWasm());
}
