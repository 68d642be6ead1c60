import { createHmac } from 'node:crypto';
import { v2 as nip44v2 } from 'nostr-tools/nip44';
import { secretKeyBytes } from './keys.ts';
import { defaultSecp256k1, type Secp256k1Backend } from './secp256k1.ts';

/**
 * NIP-44 v2 for the service: conversation keys computed with libsecp256k1 (the native addon when
 * it loads, about 55 µs a key on our benchmark machine, else its WASM build in tiny-secp256k1,
 * about 330 µs, and noble's some 4,000; secp256k1.ts, docs/benchmarks.md), which matters because
 * registrations from distinct users miss every cache; cached per peer, and the ChaCha20/HMAC
 * cipher from nostr-tools.
 *
 * Conversation key = HKDF-extract(sha256, IKM = x coordinate of secret·peer, salt = "nip44-v2"),
 * and HKDF-extract is exactly HMAC-SHA256 keyed by the salt over the IKM (RFC 5869 §2.2).
 */

/** Longest ciphertext (base64 characters) we decode: control payloads are a few hundred bytes. */
export const MAX_NIP44_PAYLOAD_CHARS = 64 * 1024;
/**
 * Longest plaintext (UTF-8 bytes) we emit. Newer NIP-44 text allows more through a 6-byte length
 * prefix (nips#1907), but peers on older libraries (u16 lengths) cannot read it, so we never send it.
 */
export const MAX_INTEROPERABLE_PLAINTEXT_BYTES = 65_535;
/** Conversation keys kept per service secret (about 100 bytes each with the map overhead). */
export const DEFAULT_CONVERSATION_KEY_CACHE_ENTRIES = 10_000;

/** divine's plaintext heuristic: real ciphertext is longer than this many characters. */
const PLAUSIBLE_PAYLOAD_MIN_EXCLUSIVE_CHARS = 100;
const BASE64_CHARSET = /^[A-Za-z0-9+/=]*$/;
const HEX_64 = /^[0-9a-f]{64}$/;
const HKDF_SALT = Buffer.from('nip44-v2', 'utf8');

export type Nip44ErrorCode =
  'bad-peer-pubkey' | 'payload-too-long' | 'not-nip44' | 'decrypt-failed' | 'plaintext-too-long' | 'plaintext-empty';

/** Every failure of this module; `code` is low-cardinality (usable as a metrics label). */
export class Nip44Error extends Error {
  override readonly name = 'Nip44Error';
  constructor(
    readonly code: Nip44ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * divine's pre-check, kept bit for bit so error paths match it: content is plausibly NIP-44 only
 * if it is longer than 100 characters and every character is in [A-Za-z0-9+/=].
 */
export function isPlausibleNip44Payload(content: string): boolean {
  return content.length > PLAUSIBLE_PAYLOAD_MIN_EXCLUSIVE_CHARS && BASE64_CHARSET.test(content);
}

/** The negation of `isPlausibleNip44Payload`: divine rejects such content as plaintext. */
export function looksLikePlaintext(content: string): boolean {
  return !isPlausibleNip44Payload(content);
}

/** Derives conversation keys between one fixed secret key and any peer. */
export interface ConversationKeyDeriver {
  /** 32-byte conversation key; throws Nip44Error('bad-peer-pubkey') for a key not on the curve. */
  conversationKey(peerPubkeyHex: string): Uint8Array;
}

function sharedSecretConversationKey(secret: Uint8Array, peerPubkeyHex: string, backend: Secp256k1Backend): Uint8Array {
  if (!HEX_64.test(peerPubkeyHex)) {
    throw new Nip44Error('bad-peer-pubkey', 'peer pubkey must be 64 lowercase hex');
  }
  // An x-only key names the point with even y; the shared x is the same for either y. The secret
  // was range-checked when the deriver was made, so null means an x with no point on the curve
  // (the vectors' twist and no-sqrt cases).
  const sharedX = backend.xonlySharedX(secret, Buffer.from(peerPubkeyHex, 'hex'));
  if (sharedX === null) throw new Nip44Error('bad-peer-pubkey', 'peer pubkey is not a curve point');
  return new Uint8Array(createHmac('sha256', HKDF_SALT).update(sharedX).digest());
}

/**
 * A deriver for one secret key, parsed and range-checked once, computing with `backend` (by
 * default this thread's choice, see secp256k1.ts).
 * Throws InvalidSecretKeyError when the secret is not a scalar in [1, n-1].
 */
export function createConversationKeyDeriver(secretHex: string, backend: Secp256k1Backend = defaultSecp256k1()): ConversationKeyDeriver {
  const secret = secretKeyBytes(secretHex);
  return { conversationKey: (peerPubkeyHex) => sharedSecretConversationKey(secret, peerPubkeyHex, backend) };
}

/** One conversation key; for a long-lived secret prefer a deriver or a ConversationKeyCache. */
export function getConversationKey(secretHex: string, peerPubkeyHex: string): Uint8Array {
  return createConversationKeyDeriver(secretHex).conversationKey(peerPubkeyHex);
}

export interface ConversationKeyCacheStats {
  size: number;
  capacity: number;
  hits: number;
  misses: number;
  evictions: number;
}

/**
 * A bounded LRU of conversation keys for one service secret, keyed by peer pubkey. ECDH costs
 * about as much as the cipher on the native backend and several times it on WASM (tens and
 * hundreds of microseconds), so a peer that sends several control events pays for the key once.
 * Failed derivations are not cached (they throw before anything is stored).
 */
export class ConversationKeyCache {
  private readonly entries = new Map<string, Uint8Array>();
  private hits = 0;
  private misses = 0;
  private evictions = 0;

  constructor(
    private readonly deriver: ConversationKeyDeriver,
    readonly capacity: number = DEFAULT_CONVERSATION_KEY_CACHE_ENTRIES,
  ) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new RangeError(`conversation key cache capacity must be a positive integer, got ${capacity}`);
    }
  }

  /** The conversation key with a peer; throws Nip44Error('bad-peer-pubkey'). */
  get(peerPubkeyHex: string): Uint8Array {
    const cached = this.entries.get(peerPubkeyHex);
    if (cached !== undefined) {
      this.hits++;
      // A Map iterates in insertion order: re-inserting makes this the most recently used.
      this.entries.delete(peerPubkeyHex);
      this.entries.set(peerPubkeyHex, cached);
      return cached;
    }
    this.misses++;
    const key = this.deriver.conversationKey(peerPubkeyHex);
    this.entries.set(peerPubkeyHex, key);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) {
        this.entries.delete(oldest.value);
        this.evictions++;
      }
    }
    return key;
  }

  has(peerPubkeyHex: string): boolean {
    return this.entries.has(peerPubkeyHex);
  }

  stats(): ConversationKeyCacheStats {
    return {
      size: this.entries.size,
      capacity: this.capacity,
      hits: this.hits,
      misses: this.misses,
      evictions: this.evictions,
    };
  }
}

/**
 * Decrypts a NIP-44 v2 payload. The length is checked before any base64 decoding, so an oversized
 * payload costs nothing. Verify the event signature before calling (NIP-44 "Decryption").
 *
 * Accepts the extended 6-byte length prefix of newer NIP-44 text when the payload fits the cap.
 * Throws Nip44Error: 'payload-too-long', or 'decrypt-failed' (unknown version, bad base64, bad
 * MAC, bad padding, bad length) with the cipher's reason in the message.
 */
export function decryptNip44(payload: string, conversationKey: Uint8Array, maxPayloadChars: number = MAX_NIP44_PAYLOAD_CHARS): string {
  if (payload.length > maxPayloadChars) {
    throw new Nip44Error('payload-too-long', `payload of ${payload.length} characters exceeds ${maxPayloadChars}`);
  }
  try {
    return nip44v2.decrypt(payload, conversationKey);
  } catch (error) {
    throw new Nip44Error('decrypt-failed', `NIP-44 decrypt failed: ${(error as Error).message}`);
  }
}

/**
 * Encrypts to a conversation key. `nonce` (32 bytes) is for test vectors only; by default a fresh
 * random one is drawn, as NIP-44 requires. Refuses plaintext past MAX_INTEROPERABLE_PLAINTEXT_BYTES
 * unless `maxPlaintextBytes` raises it.
 */
export function encryptNip44(
  plaintext: string,
  conversationKey: Uint8Array,
  options: { nonce?: Uint8Array; maxPlaintextBytes?: number } = {},
): string {
  const maxBytes = options.maxPlaintextBytes ?? MAX_INTEROPERABLE_PLAINTEXT_BYTES;
  if (plaintext.length === 0) throw new Nip44Error('plaintext-empty', 'NIP-44 cannot encrypt an empty plaintext');
  const bytes = Buffer.byteLength(plaintext, 'utf8');
  if (bytes > maxBytes) {
    throw new Nip44Error('plaintext-too-long', `plaintext of ${bytes} bytes exceeds ${maxBytes}`);
  }
  return nip44v2.encrypt(plaintext, conversationKey, options.nonce);
}
