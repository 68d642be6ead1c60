/**
 * RFC 8291 message encryption for Web Push, in the `aes128gcm` content coding of RFC 8188, as a
 * pure function on `node:crypto`.
 *
 * The body is one record: `salt(16) ‖ rs(uint32 BE) ‖ idlen(1) = 65 ‖ keyid = the sender's
 * ephemeral P-256 public key (65) ‖ AES-128-GCM(plaintext ‖ 0x02 ‖ zero padding) ‖ tag(16)`.
 * RFC 8291 §4 requires a single record and a 4096-byte limit on the whole body, so the plaintext
 * is at most {@link MAX_PLAINTEXT_BYTES} bytes.
 */
import { createCipheriv, createECDH, hkdfSync, randomBytes, type ECDH } from 'node:crypto';

/** The record size written into the header (RFC 8291 §4: push services accept 4096-byte bodies). */
export const RECORD_SIZE_BYTES = 4096;
/** Length of the RFC 8188 salt. */
export const SALT_BYTES = 16;
/** An uncompressed P-256 point: 0x04 ‖ x(32) ‖ y(32). */
export const P256_PUBLIC_KEY_BYTES = 65;
/** Length of the subscription's auth secret (RFC 8291 §3.2). */
export const AUTH_SECRET_BYTES = 16;
/** salt + rs + idlen + keyid. */
export const HEADER_BYTES = SALT_BYTES + 4 + 1 + P256_PUBLIC_KEY_BYTES;
const GCM_TAG_BYTES = 16;
/** RFC 8188 §2: the last record's padding starts with this delimiter byte. */
const LAST_RECORD_DELIMITER = 0x02;
/** 4096 − 86 − 16 − 1 = 3993: the most a single 4096-byte push can carry. */
export const MAX_PLAINTEXT_BYTES = RECORD_SIZE_BYTES - HEADER_BYTES - GCM_TAG_BYTES - 1;

/** The subscription keys as a browser or a UnifiedPush distributor hands them out (base64url). */
export interface SubscriptionKeys {
  /** The user agent's P-256 public key, 65 bytes uncompressed, base64url (padding tolerated). */
  p256dh: string;
  /** The 16-byte auth secret, base64url. */
  auth: string;
}

/** The application server's ephemeral ECDH key pair, raw bytes. */
export interface LocalKeyPair {
  /** 32-byte P-256 private scalar. */
  privateKey: Buffer;
  /** The matching uncompressed public key (65 bytes); derived from `privateKey` when omitted. */
  publicKey?: Buffer;
}

export interface EncryptOptions {
  /** Fixed salt (tests, the RFC vector); random 16 bytes by default. */
  salt?: Buffer;
  /** Fixed ephemeral key pair (tests, the RFC vector); a fresh one per message by default. */
  localKeys?: LocalKeyPair;
  /** Zero bytes of padding after the delimiter, to hide the plaintext length. Default 0. */
  paddingBytes?: number;
}

export type WebPushEncryptionErrorCode = 'bad_p256dh' | 'bad_auth' | 'bad_local_keys' | 'bad_salt' | 'too_large';

/** Bad subscription keys or a message that does not fit one push; never a transient condition. */
export class WebPushEncryptionError extends Error {
  constructor(
    readonly code: WebPushEncryptionErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'WebPushEncryptionError';
  }
}

/**
 * Encrypt `plaintext` for one subscription (RFC 8291 §3.3–3.4):
 *
 * 1. `ecdh_secret = ECDH(as_private, ua_public)`
 * 2. `IKM = HKDF(salt = auth_secret, ikm = ecdh_secret, info = "WebPush: info\0" ‖ ua_public ‖ as_public, 32)`
 * 3. `CEK = HKDF(salt, IKM, "Content-Encoding: aes128gcm\0", 16)`, `NONCE = HKDF(salt, IKM, "Content-Encoding: nonce\0", 12)`
 * 4. `AES-128-GCM(CEK, NONCE, plaintext ‖ 0x02 ‖ padding)`, prefixed by the RFC 8188 header.
 *
 * @throws {WebPushEncryptionError} when a key is malformed, the point is not on the curve, or the
 *   plaintext (with padding) exceeds {@link MAX_PLAINTEXT_BYTES}.
 * @example
 * const body = encryptAes128gcm(Buffer.from(JSON.stringify(data)), { p256dh, auth });
 */
export function encryptAes128gcm(plaintext: Uint8Array, keys: SubscriptionKeys, options: EncryptOptions = {}): Buffer {
  const uaPublic = decodeKey(keys.p256dh, P256_PUBLIC_KEY_BYTES, 'bad_p256dh', 'p256dh');
  if (uaPublic[0] !== 0x04) throw new WebPushEncryptionError('bad_p256dh', 'p256dh is not an uncompressed P-256 point');
  const authSecret = decodeKey(keys.auth, AUTH_SECRET_BYTES, 'bad_auth', 'auth');
  const padding = options.paddingBytes ?? 0;
  if (!Number.isInteger(padding) || padding < 0)
    throw new WebPushEncryptionError('too_large', 'paddingBytes must be a non-negative integer');
  if (plaintext.length + padding > MAX_PLAINTEXT_BYTES) {
    throw new WebPushEncryptionError(
      'too_large',
      `the message is ${plaintext.length + padding} bytes; one push carries at most ${MAX_PLAINTEXT_BYTES}`,
    );
  }
  const salt = options.salt ?? randomBytes(SALT_BYTES);
  if (salt.length !== SALT_BYTES) throw new WebPushEncryptionError('bad_salt', `salt must be ${SALT_BYTES} bytes`);

  const local = ephemeralKeys(options.localKeys);
  let ecdhSecret: Buffer;
  try {
    ecdhSecret = local.ecdh.computeSecret(uaPublic);
  } catch {
    throw new WebPushEncryptionError('bad_p256dh', 'p256dh is not a point on P-256');
  }

  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0', 'ascii'), uaPublic, local.publicKey]);
  const ikm = hkdf(ecdhSecret, authSecret, keyInfo, 32);
  const cek = hkdf(ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0', 'ascii'), 16);
  const nonce = hkdf(ikm, salt, Buffer.from('Content-Encoding: nonce\0', 'ascii'), 12);

  const record = Buffer.alloc(plaintext.length + 1 + padding);
  record.set(plaintext, 0);
  record[plaintext.length] = LAST_RECORD_DELIMITER;
  const cipher = createCipheriv('aes-128-gcm', cek, nonce);
  const ciphertext = Buffer.concat([cipher.update(record), cipher.final(), cipher.getAuthTag()]);

  const header = Buffer.alloc(HEADER_BYTES);
  salt.copy(header, 0);
  header.writeUInt32BE(RECORD_SIZE_BYTES, SALT_BYTES);
  header[SALT_BYTES + 4] = P256_PUBLIC_KEY_BYTES;
  local.publicKey.copy(header, SALT_BYTES + 5);
  return Buffer.concat([header, ciphertext]);
}

/** Decode base64url (or padded/standard base64, which some clients send) of an exact length. */
export function decodeKey(value: string, bytes: number, code: WebPushEncryptionErrorCode, name: string): Buffer {
  if (typeof value !== 'string' || !/^[A-Za-z0-9_+/-]+={0,2}$/.test(value)) {
    throw new WebPushEncryptionError(code, `${name} is not base64url`);
  }
  const decoded = Buffer.from(value.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''), 'base64url');
  if (decoded.length !== bytes) throw new WebPushEncryptionError(code, `${name} must be ${bytes} bytes, got ${decoded.length}`);
  return decoded;
}

function hkdf(ikm: Buffer, salt: Buffer, info: Buffer, length: number): Buffer {
  return Buffer.from(hkdfSync('sha256', ikm, salt, info, length));
}

function ephemeralKeys(given: LocalKeyPair | undefined): { ecdh: ECDH; publicKey: Buffer } {
  const ecdh = createECDH('prime256v1');
  if (!given) {
    ecdh.generateKeys();
    return { ecdh, publicKey: ecdh.getPublicKey() };
  }
  try {
    ecdh.setPrivateKey(given.privateKey);
  } catch {
    throw new WebPushEncryptionError('bad_local_keys', 'the local private key is not a P-256 scalar');
  }
  const derived = ecdh.getPublicKey();
  if (given.publicKey && !given.publicKey.equals(derived)) {
    throw new WebPushEncryptionError('bad_local_keys', 'the local public key does not match its private key');
  }
  return { ecdh, publicKey: derived };
}
