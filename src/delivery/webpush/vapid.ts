/**
 * VAPID (RFC 8292): the application server proves who it is to a push service with an ES256
 * JWT in `Authorization: vapid t=<jwt>, k=<public key>`.
 *
 * Claims: `aud` is the push resource's origin, `exp` at most 24 h ahead (RFC 8292 §2), `sub` the
 * operator's `mailto:`/`https:` contact when one is configured (Apple's push service insists on it).
 * A JWT is signed once per audience and reused for most of its life: ES256 is cheap but a
 * fan-out to thousands of subscriptions on one push service should not sign thousands of times.
 */
import { createECDH, createPrivateKey, sign, type KeyObject } from 'node:crypto';
import type { Clock } from '../../store/port.ts';

/** Lifetime of a signed JWT (web-push's default; RFC 8292 allows up to 24 h). */
export const VAPID_JWT_LIFETIME_SECS = 12 * 3600;
/** A cached JWT is re-signed once it has less than this left, so a push never carries one about to expire. */
export const VAPID_JWT_RENEW_BEFORE_EXPIRY_SECS = 3600;
/** RFC 8292 §2: "exp" MUST NOT be more than 24 hours from the time of the request. */
export const VAPID_MAX_LIFETIME_SECS = 24 * 3600;
/** Audiences (push-service origins) whose JWT is cached; an origin past this evicts the oldest. */
export const VAPID_CACHE_MAX_AUDIENCES = 1000;

/** A P-256 key pair, raw: 32-byte scalar and 65-byte uncompressed public point. */
export interface VapidKeyPair {
  privateKey: Buffer;
  publicKey: Buffer;
}

export interface VapidClaims {
  aud: string;
  exp: number;
  sub?: string;
}

export class VapidKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VapidKeyError';
  }
}

/** A fresh P-256 key pair (what `web-push generate-vapid-keys` prints, as raw bytes). */
export function generateVapidKeyPair(): VapidKeyPair {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  // getPrivateKey drops leading zero bytes (one scalar in 256 has one), but the key is a
  // fixed 32-byte field element everywhere it is stored or read.
  const scalar = ecdh.getPrivateKey();
  const privateKey = Buffer.concat([Buffer.alloc(32 - scalar.length), scalar]);
  return { privateKey, publicKey: ecdh.getPublicKey() };
}

/**
 * The key pair of a 32-byte private scalar; `publicKey`, when given, must be its public point.
 * @throws {VapidKeyError} on a scalar that is not a P-256 key or a public key that does not match.
 */
export function vapidKeyPairFromPrivate(privateKey: Buffer, publicKey?: Buffer): VapidKeyPair {
  if (privateKey.length !== 32) throw new VapidKeyError(`a VAPID private key is 32 bytes, got ${privateKey.length}`);
  const ecdh = createECDH('prime256v1');
  try {
    ecdh.setPrivateKey(privateKey);
  } catch {
    throw new VapidKeyError('the VAPID private key is not a P-256 scalar');
  }
  const derived = ecdh.getPublicKey();
  if (publicKey && !publicKey.equals(derived)) throw new VapidKeyError('the VAPID public key does not belong to the private key');
  return { privateKey: Buffer.from(privateKey), publicKey: derived };
}

/** The origin of a push endpoint (`scheme://host[:port]`, default ports dropped): the JWT's `aud`. */
export function vapidAudience(endpoint: string | URL): string {
  return (typeof endpoint === 'string' ? new URL(endpoint) : endpoint).origin;
}

/** Sign one ES256 JWT (header `{"typ":"JWT","alg":"ES256"}`, signature in JOSE r‖s form). */
export function signVapidJwt(claims: VapidClaims, keys: VapidKeyPair): string {
  return signWith(claims, privateKeyObject(keys));
}

/** `vapid t=<jwt>, k=<base64url public key>` (RFC 8292 §3). */
export function vapidAuthorizationHeader(jwt: string, publicKey: Buffer): string {
  return `vapid t=${jwt}, k=${publicKey.toString('base64url')}`;
}

export interface VapidSignerOptions {
  keys: VapidKeyPair;
  /** `webpush.vapid_subject`; empty leaves `sub` out. */
  subject: string;
  clock: Clock;
  /** Default {@link VAPID_JWT_LIFETIME_SECS}; capped at 24 h. */
  lifetimeSecs?: number;
}

/** Signs and caches the `Authorization` header per audience. */
export class VapidSigner {
  private readonly key: KeyObject;
  private readonly publicKey: Buffer;
  private readonly subject: string;
  private readonly clock: Clock;
  private readonly lifetimeSecs: number;
  private readonly cache = new Map<string, { header: string; exp: number }>();

  constructor(options: VapidSignerOptions) {
    this.key = privateKeyObject(options.keys);
    this.publicKey = options.keys.publicKey;
    this.subject = options.subject;
    this.clock = options.clock;
    this.lifetimeSecs = Math.min(options.lifetimeSecs ?? VAPID_JWT_LIFETIME_SECS, VAPID_MAX_LIFETIME_SECS);
  }

  /** The base64url public key (`k=`), which apps pass as `applicationServerKey`. */
  get publicKeyBase64url(): string {
    return this.publicKey.toString('base64url');
  }

  /** The `Authorization` header value for a request to `endpoint`. */
  authorizationFor(endpoint: string | URL): string {
    const aud = vapidAudience(endpoint);
    const nowSecs = Math.floor(this.clock.nowMs() / 1000);
    const cached = this.cache.get(aud);
    if (cached && cached.exp - nowSecs > Math.min(VAPID_JWT_RENEW_BEFORE_EXPIRY_SECS, this.lifetimeSecs / 2)) return cached.header;

    const claims: VapidClaims = { aud, exp: nowSecs + this.lifetimeSecs };
    if (this.subject !== '') claims.sub = this.subject;
    const header = vapidAuthorizationHeader(signWith(claims, this.key), this.publicKey);
    this.cache.delete(aud);
    if (this.cache.size >= VAPID_CACHE_MAX_AUDIENCES) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.set(aud, { header, exp: claims.exp });
    return header;
  }
}

function signWith(claims: VapidClaims, key: KeyObject): string {
  const header = Buffer.from(JSON.stringify({ typ: 'JWT', alg: 'ES256' })).toString('base64url');
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const signingInput = `${header}.${payload}`;
  const signature = sign('sha256', Buffer.from(signingInput), { key, dsaEncoding: 'ieee-p1363' });
  return `${signingInput}.${signature.toString('base64url')}`;
}

function privateKeyObject(keys: VapidKeyPair): KeyObject {
  if (keys.publicKey.length !== 65 || keys.publicKey[0] !== 0x04) throw new VapidKeyError('a VAPID public key is 65 bytes, uncompressed');
  return createPrivateKey({
    format: 'jwk',
    key: {
      kty: 'EC',
      crv: 'P-256',
      d: keys.privateKey.toString('base64url'),
      x: keys.publicKey.subarray(1, 33).toString('base64url'),
      y: keys.publicKey.subarray(33, 65).toString('base64url'),
    },
  });
}
