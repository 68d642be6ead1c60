import type { NostrEvent } from '../nostr/event.ts';
import { ConversationKeyCache, createConversationKeyDeriver, decryptNip44, isPlausibleNip44Payload } from '../nostr/nip44.ts';
import type { CryptoWorkerPool } from '../nostr/crypto-worker-pool.ts';
import { PlaintextContentError, type ControlDecryptor } from './control-events.ts';

/** Conversation keys kept per thread; one per recent sender. */
export const CONVERSATION_KEY_CACHE_ENTRIES = 10_000;
/** Prefetched results held at most; a leased batch is 256 items, so this only bounds leftovers. */
const MAX_PREFETCHED = 4096;

/**
 * The control-event decryptor: divine's plaintext pre-check (length > 100 and a base64 charset),
 * then NIP-44 v2 with the service secret and a cached conversation key per sender — on the
 * worker threads of `pool` when given (so a burst of registrations uses every core, the engine
 * prefetching a leased batch), on this thread otherwise.
 */
export function createNip44ControlDecryptor(serviceSecretHex: string, options: { pool?: CryptoWorkerPool } = {}): ControlDecryptor {
  const { pool } = options;
  if (!pool) {
    const cache = new ConversationKeyCache(createConversationKeyDeriver(serviceSecretHex), CONVERSATION_KEY_CACHE_ENTRIES);
    return {
      async decrypt(event: NostrEvent): Promise<string> {
        if (!isPlausibleNip44Payload(event.content)) throw new PlaintextContentError();
        return decryptNip44(event.content, cache.get(event.pubkey));
      },
    };
  }

  const prefetched = new Map<string, Promise<string>>();
  const start = (event: NostrEvent): Promise<string> => {
    if (!isPlausibleNip44Payload(event.content)) return Promise.reject(new PlaintextContentError());
    return pool.decrypt(event.pubkey, event.content);
  };
  return {
    prefetch(event: NostrEvent): void {
      if (prefetched.has(event.id)) return;
      // A prefetch whose decrypt never came (the event turned out a duplicate) ages out first.
      if (prefetched.size >= MAX_PREFETCHED) prefetched.delete(prefetched.keys().next().value as string);
      const pending = start(event);
      // Observed here so an unused prefetch never becomes an unhandled rejection.
      pending.catch(() => undefined);
      prefetched.set(event.id, pending);
    },
    decrypt(event: NostrEvent): Promise<string> {
      const pending = prefetched.get(event.id);
      if (pending) {
        prefetched.delete(event.id);
        return pending;
      }
      return start(event);
    },
  };
}
