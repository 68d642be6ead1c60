import type { NostrEvent } from '../nostr/event.ts';
import { ConversationKeyCache, createConversationKeyDeriver, decryptNip44, isPlausibleNip44Payload } from '../nostr/nip44.ts';
import { Nip44WorkerPool } from '../nostr/nip44-worker-pool.ts';
import { PlaintextContentError, type ControlDecryptor } from './control-events.ts';

/** Conversation keys kept per thread; one per recent sender. */
export const CONVERSATION_KEY_CACHE_ENTRIES = 10_000;
/** Prefetched results held at most; a leased batch is 64 items, so this only bounds leftovers. */
const MAX_PREFETCHED = 4096;

/**
 * The control-event decryptor: divine's plaintext pre-check (length > 100 and a base64 charset),
 * then NIP-44 v2 with the service secret and a cached conversation key per sender — on
 * `workers` worker threads when given (so a burst of registrations uses every core), inline otherwise.
 */
export function createNip44ControlDecryptor(serviceSecretHex: string, options: { workers?: number } = {}): ControlDecryptor {
  const workers = options.workers ?? 0;
  if (workers <= 0) {
    const cache = new ConversationKeyCache(createConversationKeyDeriver(serviceSecretHex), CONVERSATION_KEY_CACHE_ENTRIES);
    return {
      async decrypt(event: NostrEvent): Promise<string> {
        if (!isPlausibleNip44Payload(event.content)) throw new PlaintextContentError();
        return decryptNip44(event.content, cache.get(event.pubkey));
      },
    };
  }

  const pool = new Nip44WorkerPool(serviceSecretHex, workers, CONVERSATION_KEY_CACHE_ENTRIES);
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
    close: () => pool.close(),
  };
}
