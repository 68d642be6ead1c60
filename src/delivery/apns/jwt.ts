/**
 * APNs token-based authentication: the ES256 provider token (a JWT) Apple expects in every
 * request's `authorization: bearer …`, signed with the team's `.p8` key.
 *
 * Apple's rules (reference §2.2): refresh no more often than every 20 minutes and no less often
 * than every 60; minting too often gets 429 `TooManyProviderTokenUpdates`, an hour-old token 403
 * `ExpiredProviderToken`. So one token is minted per process and shared by every request and
 * connection, re-minted once it is {@link APNS_TOKEN_REFRESH_MS} old, and re-minted early after an
 * `ExpiredProviderToken` only when it is at least {@link APNS_TOKEN_MIN_REFRESH_MS} old.
 *
 * Signed by `jose` (JWS compact serialisation, ES256 with JOSE's raw r‖s signature). Minting is
 * asynchronous there, so concurrent requests that find the token due share one mint.
 */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import { readFileSync } from 'node:fs';
import type { Clock } from '../../store/port.ts';

/** Age at which the shared token is replaced: inside Apple's hour, with ten minutes to spare. */
export const APNS_TOKEN_REFRESH_MS = 50 * 60_000;
/** Apple's floor between two tokens of one key; an early refresh never comes sooner. */
export const APNS_TOKEN_MIN_REFRESH_MS = 20 * 60_000;

/** The `.p8` file is missing or is not an EC P-256 private key. */
export class ApnsKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ApnsKeyError';
  }
}

/** Read a `.p8` key (PKCS#8 PEM, EC P-256) as Apple's developer account hands it out. */
export function readApnsKey(path: string): KeyObject {
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ApnsKeyError(`apns.key_path ${path} cannot be read: ${(err as Error).message}`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch (err) {
    throw new ApnsKeyError(`apns.key_path ${path} is not a PEM private key: ${(err as Error).message}`);
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new ApnsKeyError(`apns.key_path ${path} is not an EC P-256 key (APNs signs with ES256)`);
  }
  return key;
}

export interface ApnsProviderTokenOptions {
  key: KeyObject;
  /** 10-character Key ID: the JWT header's `kid`. */
  keyId: string;
  /** 10-character Team ID: the `iss` claim. */
  teamId: string;
  clock: Clock;
}

/** The JWT `{"alg":"ES256","kid":…}.{"iss":…,"iat":…}` signed with `key`. */
export function signApnsJwt(key: KeyObject, keyId: string, teamId: string, issuedAtSecs: number): Promise<string> {
  return new SignJWT().setProtectedHeader({ alg: 'ES256', kid: keyId }).setIssuer(teamId).setIssuedAt(issuedAtSecs).sign(key);
}

/** The process's one provider token for one key. */
export class ApnsProviderToken {
  private token = '';
  private mintedAtMs = Number.NEGATIVE_INFINITY;
  /** The mint in progress, shared by every caller that finds the token due meanwhile. */
  private minting: Promise<string> | null = null;
  /** Tokens minted so far (tests and diagnostics). */
  minted = 0;

  constructor(private readonly options: ApnsProviderTokenOptions) {}

  /** The shared token, minted when there is none or it has reached {@link APNS_TOKEN_REFRESH_MS}. */
  async current(): Promise<string> {
    if (this.token === '' || this.options.clock.nowMs() - this.mintedAtMs >= APNS_TOKEN_REFRESH_MS) return this.mint();
    return this.token;
  }

  /**
   * Apple answered `ExpiredProviderToken` to a request that carried `rejected`. True when the
   * caller should retry with {@link current}: another request already replaced it (or is
   * replacing it), or it was old enough to re-mint. False when it is younger than
   * {@link APNS_TOKEN_MIN_REFRESH_MS}: a fresh token cannot have expired, and minting again would
   * only earn `TooManyProviderTokenUpdates`.
   */
  async refreshAfterExpired(rejected: string): Promise<boolean> {
    if (this.minting) {
      await this.minting;
      return true;
    }
    if (rejected !== this.token) return this.token !== '';
    if (this.options.clock.nowMs() - this.mintedAtMs < APNS_TOKEN_MIN_REFRESH_MS) return false;
    await this.mint();
    return true;
  }

  private mint(): Promise<string> {
    this.minting ??= (async () => {
      const nowMs = this.options.clock.nowMs();
      try {
        const token = await signApnsJwt(this.options.key, this.options.keyId, this.options.teamId, Math.floor(nowMs / 1000));
        this.token = token;
        this.mintedAtMs = nowMs;
        this.minted++;
        return token;
      } finally {
        this.minting = null;
      }
    })();
    return this.minting;
  }
}
