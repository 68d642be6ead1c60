/**
 * OAuth2 access tokens for FCM from a Google service-account JSON (the JWT-bearer grant of
 * RFC 7523, as Google documents it for server-to-server calls).
 *
 * The token request goes over global `fetch` (undici, HTTP/1.1): it is one request an hour, and
 * Google's `oauth2.googleapis.com` needs nothing more. Tests point `token_uri` at the fake's
 * HTTP/1.1 listener, so the production path is the tested one.
 *
 * Never throws at send time: {@link AccessTokenSource.get} returns either a token or a classified
 * {@link DeliveryError} (`unauthorized` when Google rejects the credential, `initialization` for
 * everything else), which the transport reports per token.
 */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import { readFileSync } from 'node:fs';
import type { Clock } from '../../store/port.ts';
import type { DeliveryError } from '../types.ts';

/** OAuth scope that allows `messages:send`. */
export const FCM_OAUTH_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';
/** Grant type of the signed-JWT assertion flow. */
export const JWT_BEARER_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Lifetime of the signed assertion; Google accepts at most one hour. */
export const JWT_ASSERTION_LIFETIME_SECS = 3600;
/** A cached token is replaced this long before it expires (firebase-admin's threshold), so no send carries a dying token. */
export const TOKEN_REFRESH_MARGIN_MS = 5 * 60 * 1000;
/** Default bound of one token request; the send operation timeout bounds the caller's wait anyway. */
export const DEFAULT_TOKEN_REQUEST_TIMEOUT_MS = 30_000;
/** Error bodies are cut to this many characters in messages and logs. */
const MAX_ERROR_TEXT_CHARS = 300;

/** A parsed, validated service account. The private key is parsed once, at load time. */
export interface ServiceAccount {
  clientEmail: string;
  privateKey: KeyObject;
  privateKeyId?: string;
  tokenUri: string;
  projectId: string;
}

/** The credentials file is missing, unreadable or not a usable service account. Thrown at startup only. */
export class FcmCredentialsError extends Error {
  override readonly name = 'FcmCredentialsError';
}

/** Parse service-account JSON text. `source` names it in error messages (a path, "inline"). */
export function parseServiceAccount(jsonText: string, source: string): ServiceAccount {
  let parsed: unknown;
  try {
    parsed = JSON.parse(jsonText);
  } catch (err) {
    throw new FcmCredentialsError(`FCM credentials ${source} are not JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new FcmCredentialsError(`FCM credentials ${source} must be a JSON object`);
  }
  const record = parsed as Record<string, unknown>;
  const field = (name: string): string => {
    const value = record[name];
    if (typeof value !== 'string' || value === '') throw new FcmCredentialsError(`FCM credentials ${source} lack ${name}`);
    return value;
  };
  const clientEmail = field('client_email');
  const privateKeyPem = field('private_key');
  const tokenUri = field('token_uri');
  const projectId = field('project_id');
  if (!/^https?:\/\//.test(tokenUri)) throw new FcmCredentialsError(`FCM credentials ${source}: token_uri must be an http(s) URL`);
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(privateKeyPem);
  } catch (err) {
    throw new FcmCredentialsError(`FCM credentials ${source}: private_key is not a PEM private key (${(err as Error).message})`);
  }
  if (privateKey.asymmetricKeyType !== 'rsa') throw new FcmCredentialsError(`FCM credentials ${source}: private_key must be an RSA key`);
  const account: ServiceAccount = { clientEmail, privateKey, tokenUri, projectId };
  if (typeof record.private_key_id === 'string' && record.private_key_id !== '') account.privateKeyId = record.private_key_id;
  return account;
}

/** Read and parse a service-account file. */
export function readServiceAccountFile(path: string): ServiceAccount {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new FcmCredentialsError(`FCM credentials ${path} cannot be read: ${(err as Error).message}`);
  }
  return parseServiceAccount(text, path);
}

/** The signed RS256 assertion for the token request, issued at `nowMs` (signed by `jose`). */
export function signServiceAccountJwt(account: ServiceAccount, nowMs: number): Promise<string> {
  const iat = Math.floor(nowMs / 1000);
  return new SignJWT({ scope: FCM_OAUTH_SCOPE })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(account.privateKeyId === undefined ? {} : { kid: account.privateKeyId }) })
    .setIssuer(account.clientEmail)
    .setAudience(account.tokenUri)
    .setIssuedAt(iat)
    .setExpirationTime(iat + JWT_ASSERTION_LIFETIME_SECS)
    .sign(account.privateKey);
}

export type AccessTokenResult = { ok: true; accessToken: string } | { ok: false; error: DeliveryError };

export interface AccessTokenSourceOptions {
  account: ServiceAccount;
  clock: Clock;
  /** Bound of one token request (ms); default {@link DEFAULT_TOKEN_REQUEST_TIMEOUT_MS}. */
  requestTimeoutMs?: number;
}

interface CachedToken {
  accessToken: string;
  /** When the token stops being handed out (ms, on the injected clock). */
  refreshAtMs: number;
}

/**
 * Caches one access token and refreshes it {@link TOKEN_REFRESH_MARGIN_MS} before expiry.
 * Concurrent callers during a refresh share the one in-flight request. A failed refresh is not
 * cached: the next caller tries again.
 */
export class AccessTokenSource {
  private cached: CachedToken | null = null;
  private inFlight: Promise<AccessTokenResult> | null = null;
  private refreshAbort: AbortController | null = null;
  private closed = false;
  private readonly requestTimeoutMs: number;

  constructor(private readonly options: AccessTokenSourceOptions) {
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_TOKEN_REQUEST_TIMEOUT_MS;
  }

  /** A valid access token, or why there is none. */
  get(): Promise<AccessTokenResult> {
    if (this.closed) return Promise.resolve(failure('initialization', 'the FCM transport is closed'));
    const cached = this.cached;
    if (cached && this.options.clock.nowMs() < cached.refreshAtMs) return Promise.resolve({ ok: true, accessToken: cached.accessToken });
    this.inFlight ??= this.refresh().finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  /** The cached token when it is still fresh, without starting a refresh; null otherwise. */
  peek(): AccessTokenResult | null {
    const cached = this.cached;
    if (this.closed || !cached || this.options.clock.nowMs() >= cached.refreshAtMs) return null;
    return { ok: true, accessToken: cached.accessToken };
  }

  /** Drop `accessToken` from the cache (FCM answered 401 to it), so the next send fetches a new one. */
  invalidate(accessToken: string): void {
    if (this.cached?.accessToken === accessToken) this.cached = null;
  }

  /** Abort a token request in flight (its callers get `initialization`) and refuse new ones. */
  close(): void {
    this.closed = true;
    this.refreshAbort?.abort();
  }

  private async refresh(): Promise<AccessTokenResult> {
    const { account, clock } = this.options;
    const requestedAtMs = clock.nowMs();
    let assertion: string;
    try {
      assertion = await signServiceAccountJwt(account, requestedAtMs);
    } catch (err) {
      return failure('initialization', `cannot sign the OAuth assertion: ${(err as Error).message}`);
    }
    const body = new URLSearchParams({ grant_type: JWT_BEARER_GRANT_TYPE, assertion }).toString();
    const abort = new AbortController();
    this.refreshAbort = abort;
    // Set by the timer: the assertion keeps tsc from narrowing it to its initial false.
    let timedOut = false as boolean;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, this.requestTimeoutMs);
    let status: number;
    let text: string;
    try {
      const response = await fetch(account.tokenUri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body,
        signal: abort.signal,
      });
      status = response.status;
      text = await response.text();
    } catch (err) {
      const reason = timedOut ? `timed out after ${this.requestTimeoutMs}ms` : abort.signal.aborted ? 'aborted' : describeFetchError(err);
      return failure('initialization', `OAuth token request to ${account.tokenUri} failed: ${reason}`);
    } finally {
      clearTimeout(timer);
      this.refreshAbort = null;
    }

    if (status < 200 || status > 299) {
      // 400 invalid_grant / 401 / 403 mean Google rejected this credential; anything else is the endpoint failing.
      const kind = status === 400 || status === 401 || status === 403 ? 'unauthorized' : 'initialization';
      return failure(kind, `OAuth token request rejected: HTTP ${status}: ${text.slice(0, MAX_ERROR_TEXT_CHARS)}`, status);
    }
    const parsed = parseTokenResponse(text);
    if (!parsed) return failure('initialization', `OAuth token response is not a token: ${text.slice(0, MAX_ERROR_TEXT_CHARS)}`);

    const lifetimeMs = parsed.expiresInSecs * 1000;
    // A token shorter-lived than the margin is still used for half its life instead of never.
    const usableMs = Math.max(lifetimeMs - TOKEN_REFRESH_MARGIN_MS, lifetimeMs / 2);
    this.cached = { accessToken: parsed.accessToken, refreshAtMs: requestedAtMs + usableMs };
    return { ok: true, accessToken: parsed.accessToken };
  }
}

function parseTokenResponse(text: string): { accessToken: string; expiresInSecs: number } | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null) return null;
  const record = parsed as Record<string, unknown>;
  const accessToken = record.access_token;
  const expiresIn = typeof record.expires_in === 'string' ? Number(record.expires_in) : record.expires_in;
  if (typeof accessToken !== 'string' || accessToken === '') return null;
  if (typeof expiresIn !== 'number' || !Number.isFinite(expiresIn) || expiresIn <= 0) return null;
  return { accessToken, expiresInSecs: expiresIn };
}

function describeFetchError(err: unknown): string {
  const error = err as Error & { cause?: { code?: string; message?: string } };
  const cause = error.cause?.code ?? error.cause?.message;
  return cause ? `${error.message} (${cause})` : error.message;
}

function failure(kind: DeliveryError['kind'], message: string, status?: number): AccessTokenResult {
  const error: DeliveryError = { kind, message };
  if (status !== undefined) error.status = status;
  return { ok: false, error };
}
