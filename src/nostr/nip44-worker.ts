/**
 * Worker thread body of {@link Nip44WorkerPool}: NIP-44 decryption for one service secret, with
 * its own conversation-key cache. Receives `{ id, items: [{ pubkey, content }] }` batches and
 * answers `{ id, results: [{ ok, plaintext } | { ok: false, code, message }] }` in the same order.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ConversationKeyCache, createConversationKeyDeriver, decryptNip44, Nip44Error } from './nip44.ts';
import type { DecryptRequestBatch, DecryptResponseBatch, DecryptResult } from './nip44-worker-pool.ts';

const { secretHex, cacheCapacity } = workerData as { secretHex: string; cacheCapacity: number };
const cache = new ConversationKeyCache(createConversationKeyDeriver(secretHex), cacheCapacity);

function decryptOne(pubkey: string, content: string): DecryptResult {
  try {
    return { ok: true, plaintext: decryptNip44(content, cache.get(pubkey)) };
  } catch (err) {
    const code = err instanceof Nip44Error ? err.code : 'decrypt-failed';
    return { ok: false, code, message: (err as Error).message };
  }
}

parentPort?.on('message', (batch: DecryptRequestBatch) => {
  const response: DecryptResponseBatch = { id: batch.id, results: batch.items.map((item) => decryptOne(item.pubkey, item.content)) };
  parentPort?.postMessage(response);
});
