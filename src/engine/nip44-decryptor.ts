import type { NostrEvent } from '../nostr/event.ts';
import { ConversationKeyCache, createConversationKeyDeriver, decryptNip44, isPlausibleNip44Payload } from '../nostr/nip44.ts';
import { PlaintextContentError, type ControlDecryptor } from './control-events.ts';

/**
 * The control-event decryptor: divine's plaintext pre-check (length > 100 and a base64 charset),
 * then NIP-44 v2 with the service secret and a cached conversation key per sender.
 */
export function createNip44ControlDecryptor(serviceSecretHex: string, cacheCapacity?: number): ControlDecryptor & { cache: ConversationKeyCache } {
  const cache = new ConversationKeyCache(createConversationKeyDeriver(serviceSecretHex), cacheCapacity);
  return {
    cache,
    decrypt(event: NostrEvent): string {
      if (!isPlausibleNip44Payload(event.content)) throw new PlaintextContentError();
      return decryptNip44(event.content, cache.get(event.pubkey));
    },
  };
}
