/**
 * What a Nostr app does, for tests and benchmarks: keys, and control events NIP-44-encrypted to
 * the push service, signed like any client would sign them.
 */
import { generateSecretKey, publicKeyOf, signEvent } from '../../src/nostr/keys.ts';
import { encryptNip44, getConversationKey } from '../../src/nostr/nip44.ts';
import type { NostrEvent } from '../../src/nostr/event.ts';

export interface TestUser {
  secret: string;
  pubkey: string;
}

export function makeUser(): TestUser {
  const secret = generateSecretKey();
  return { secret, pubkey: publicKeyOf(secret) };
}

export interface ControlEventOptions {
  createdAt?: number;
  /** Plaintext content instead of the encrypted payload (to test rejection). */
  plaintext?: boolean;
  /** Override the p tag (to address someone else). */
  pTag?: string;
  extraTags?: string[][];
}

/** A kind 3079/3080/3083 event from `user` to the service, content NIP-44-encrypted. */
export function controlEvent(
  user: TestUser,
  kind: number,
  payload: unknown,
  servicePubkey: string,
  options: ControlEventOptions = {},
): NostrEvent {
  const json = JSON.stringify(payload);
  const content = options.plaintext ? json : encryptNip44(json, getConversationKey(user.secret, servicePubkey));
  return signEvent(
    {
      kind,
      created_at: options.createdAt ?? Math.floor(Date.now() / 1000),
      tags: [['p', options.pTag ?? servicePubkey], ['app', 'nostr-push-tests'], ...(options.extraTags ?? [])],
      content,
    },
    user.secret,
  );
}
