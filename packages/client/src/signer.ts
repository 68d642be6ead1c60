/**
 * What the package signs with: the NIP-07 shape (`window.nostr` in a browser extension), which a
 * local key and a NIP-46 remote signer can take as well. Registrations need `nip44.encrypt` (their
 * content is encrypted to the service); NIP-98 requests and the inbox socket need only `signEvent`.
 */
import { finalizeEvent, getPublicKey } from 'nostr-tools/pure';
import * as nip44 from 'nostr-tools/nip44';
import { hexToBytes } from 'nostr-tools/utils';

/** An unsigned event, as a signer receives it (`pubkey`, `id` and `sig` are the signer's to add). */
export interface EventTemplate {
  kind: number;
  created_at: number;
  tags: string[][];
  content: string;
}

/** A signed Nostr event. */
export interface SignedEvent extends EventTemplate {
  id: string;
  pubkey: string;
  sig: string;
}

/**
 * Any Nostr signer of the NIP-07 shape: `window.nostr`, {@link localSigner}, or a NIP-46 bunker
 * through {@link nip46Signer}. `nip44.encrypt(pubkey, plaintext)` encrypts to `pubkey` with the
 * signer's key (NIP-44 v2), as NIP-07 defines it.
 */
export interface NostrSigner {
  signEvent(template: EventTemplate): Promise<SignedEvent>;
  nip44: { encrypt(pubkey: string, plaintext: string): Promise<string> };
  /** Optional in this package: nothing here needs the pubkey before signing. */
  getPublicKey?(): Promise<string>;
}

/** The signer of a secret key held by the app (32 bytes, or 64 hex characters). */
export function localSigner(secretKey: Uint8Array | string): NostrSigner & { getPublicKey(): Promise<string> } {
  const secret = typeof secretKey === 'string' ? hexToBytes(secretKey) : secretKey;
  if (secret.length !== 32) throw new TypeError('localSigner: the secret key must be 32 bytes (64 hex characters)');
  const pubkey = getPublicKey(secret);
  return {
    getPublicKey: () => Promise.resolve(pubkey),
    signEvent: (template) => Promise.resolve(finalizeEvent({ ...template, tags: template.tags.map((t) => [...t]) }, secret)),
    nip44: {
      encrypt: (to, plaintext) => Promise.resolve(nip44.encrypt(plaintext, nip44.getConversationKey(secret, to))),
    },
  };
}

/** What this package uses of a NIP-46 remote signer (nostr-tools' `BunkerSigner` has it). */
export interface Nip46RemoteSigner {
  signEvent(template: EventTemplate): Promise<SignedEvent>;
  nip44Encrypt(thirdPartyPubkey: string, plaintext: string): Promise<string>;
  getPublicKey(): Promise<string>;
}

/** A NIP-46 remote signer (e.g. nostr-tools' `BunkerSigner`) in the shape this package takes. */
export function nip46Signer(remote: Nip46RemoteSigner): NostrSigner {
  return {
    signEvent: (template) => remote.signEvent(template),
    nip44: { encrypt: (pubkey, plaintext) => remote.nip44Encrypt(pubkey, plaintext) },
    getPublicKey: () => remote.getPublicKey(),
  };
}
