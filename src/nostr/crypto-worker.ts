/**
 * Worker thread body of {@link CryptoWorkerPool}: event verification and NIP-44 decryption for one
 * service secret with its own conversation-key cache, on the secp256k1 backend the main thread
 * chose (the same environment makes the same choice; secp256k1.ts). Receives `{ id, items }`
 * batches and answers `{ id, results }` in the same order.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createEventVerifier } from './event.ts';
import { ConversationKeyCache, createConversationKeyDeriver, decryptNip44, Nip44Error } from './nip44.ts';
import type { CryptoRequest, CryptoRequestBatch, CryptoResponseBatch, CryptoResult } from './crypto-worker-pool.ts';

const { secretHex, cacheCapacity } = workerData as { secretHex: string | null; cacheCapacity: number };
const cache = secretHex ? new ConversationKeyCache(createConversationKeyDeriver(secretHex), cacheCapacity) : null;
const verifier = await createEventVerifier();

function run(item: CryptoRequest): CryptoResult {
  if (item.op === 'verify') return { ok: true, value: verifier.verify(item.event) };
  try {
    if (!cache) throw new Nip44Error('decrypt-failed', 'this pool has no secret key to decrypt with');
    return { ok: true, value: decryptNip44(item.content, cache.get(item.pubkey)) };
  } catch (err) {
    const code = err instanceof Nip44Error ? err.code : 'decrypt-failed';
    return { ok: false, code, message: (err as Error).message };
  }
}

parentPort?.on('message', (batch: CryptoRequestBatch) => {
  const response: CryptoResponseBatch = { id: batch.id, results: batch.items.map(run) };
  parentPort?.postMessage(response);
});
parentPort?.postMessage({ ready: true });
