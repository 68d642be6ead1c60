/**
 * Console authentication: an admin API key of the default app, exchanged once for a session.
 *
 * - `POST /console/api/login` with `{"key": "npk_…"}` (in the body, never a URL) checks the key
 *   against the store's hashes, stores a session (keyed by the SHA-256 of a random id, so every
 *   replica accepts it, for `console.session_ttl_secs`) and sets the id as a cookie:
 *   `HttpOnly; SameSite=Strict; Path=/console`, plus `Secure` when `server.public_url` is https or
 *   the request came over HTTPS (its own TLS, or `X-Forwarded-Proto` from one of
 *   `server.trusted_proxies`, never from anyone else). The answer carries the session's CSRF token.
 *   Login CSRF is refused before the key is looked at: the body must be `application/json` (415
 *   `UNSUPPORTED_MEDIA_TYPE`; a cross-site form or `text/plain` POST cannot send that without a
 *   preflight), and an `Origin` header, when present, must be this server's own (403
 *   `CONSOLE_ORIGIN_REFUSED`): `server.public_url`'s origin, or the Host the request came to.
 * - Every other `/console/api/*` request needs the cookie (401 `CONSOLE_SESSION_REQUIRED`), and
 *   every state-changing one (not GET/HEAD) also the CSRF token in `X-CSRF-Token` (403
 *   `CONSOLE_CSRF_INVALID`). The key behind a session must still be live: revoking it ends the
 *   session on the next request. A login and every request of a session record the key's use
 *   (throttled, `platform/api-key-use.ts`).
 * - `GET /console/api/session` gives a reloaded page its CSRF token again; `POST
 *   /console/api/logout` ends the session.
 *
 * Keys are never logged, only a live key's 12-character prefix; a failed login logs nothing of what
 * was typed (not even a prefix: it may be a mistyped secret); session ids never.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { ConsoleSession } from '../store/port-fleet.ts';
import type { StorePort } from '../store/port.ts';
import { apiKeyPrefix, hashApiKey } from '../platform/api-keys.ts';
import { ApiKeyUseRecorder } from '../platform/api-key-use.ts';
import { DEFAULT_APP_ID } from '../platform/apps.ts';
import { HttpError, type HttpErrorCode } from '../api/errors.ts';
import { isJsonContentType, readJsonBody } from '../api/json-body.ts';
import { requestIsHttps, type ClientAddressPolicy } from '../api/client-address.ts';

export const CONSOLE_PATH = '/console';
export const CONSOLE_API_PATH = '/console/api';
export const SESSION_COOKIE = 'np_console';
export const CSRF_HEADER = 'x-csrf-token';
/** 32 random bytes: the session id (cookie) and the CSRF token each. */
const SESSION_ID_BYTES = 32;
/** Longest key accepted at login (keys are 47 characters; anything far longer is not one). */
const MAX_KEY_LENGTH = 200;
/** A login body is one short key: 4 KiB is plenty, and bounds what an unauthenticated caller can send. */
const MAX_LOGIN_BODY_BYTES = 4096;

export interface ConsoleSessionEnv {
  Variables: { consoleSession: ConsoleSession };
}

export interface ConsoleAuthDeps {
  store: StorePort;
  /** `server.public_url`, or '' (then the request's own Host is the server's origin). */
  publicUrl: string;
  /** Decides whether `X-Forwarded-Proto` is believed (`server.trusted_proxies`). */
  clientAddress: ClientAddressPolicy;
  sessionTtlMs: number;
  metrics: Metrics;
  logger: Logger;
}

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Whether the session cookie is `Secure`: the public URL is https, or the request came over HTTPS (a trusted proxy's word only). */
function secureCookie(c: Context, deps: ConsoleAuthDeps): boolean {
  return deps.publicUrl.startsWith('https:') || requestIsHttps(c, deps.clientAddress);
}

/** Whether a request's `Origin`, when it has one, is this server's own (public URL's origin, or the Host it came to). */
function fromOwnOrigin(c: Context, publicUrl: string): boolean {
  const origin = c.req.header('origin');
  if (origin === undefined) return true;
  try {
    const claimed = new URL(origin);
    return publicUrl !== '' ? claimed.origin === new URL(publicUrl).origin : claimed.host === c.req.header('host');
  } catch {
    // `Origin: null` (a sandboxed frame, a redirect across origins) or garbage: not ours.
    return false;
  }
}

/** Whether the request says its body is JSON (`application/json`, any parameters). */
function jsonBody(c: Context): boolean {
  return isJsonContentType(c.req.header('content-type'));
}

/** The live admin key of the default app with this id, or null (revoked, unknown, another app). */
async function liveAdminKey(store: StorePort, keyId: string): Promise<boolean> {
  const keys = await store.listApiKeys(DEFAULT_APP_ID);
  return keys.some((k) => k.id === keyId && k.role === 'admin' && k.revokedAtMs === null);
}

export function consoleAuth(deps: ConsoleAuthDeps): {
  routes: Hono<ConsoleSessionEnv>;
  requireSession: MiddlewareHandler<ConsoleSessionEnv>;
} {
  const count = (route: string, outcome: string) => deps.metrics.apiRequests.inc({ route: `${CONSOLE_API_PATH}/${route}`, outcome });
  const refuse = (route: string, code: HttpErrorCode, detail: Record<string, unknown>): never => {
    count(route, code);
    deps.logger.warn({ route, code, ...detail }, 'console request refused');
    throw new HttpError(code);
  };

  // A console session is a use of its admin key: the keys page shows it as the key's last use.
  const keyUse = new ApiKeyUseRecorder(deps.store, deps.logger);
  const requireSession: MiddlewareHandler<ConsoleSessionEnv> = async (c, next) => {
    const route = c.req.path.slice(CONSOLE_API_PATH.length + 1) || 'index';
    const id = getCookie(c, SESSION_COOKIE);
    const session = id ? await deps.store.findConsoleSession(sha256(id)) : null;
    if (!session) return refuse(route, 'CONSOLE_SESSION_REQUIRED', { reason: id ? 'unknown or expired session' : 'no session cookie' });
    if (!(await liveAdminKey(deps.store, session.keyId))) {
      await deps.store.deleteConsoleSession(session.idHash);
      return refuse(route, 'CONSOLE_SESSION_REQUIRED', { reason: 'the key of the session was revoked', keyId: session.keyId });
    }
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      const presented = c.req.header(CSRF_HEADER);
      if (!presented || !sameSecret(presented, session.csrfToken))
        return refuse(route, 'CONSOLE_CSRF_INVALID', { reason: presented ? 'wrong CSRF token' : 'no CSRF token', method: c.req.method });
    }
    c.set('consoleSession', session);
    keyUse.record(session.keyId);
    await next();
  };

  const routes = new Hono<ConsoleSessionEnv>();
  routes.post(`${CONSOLE_API_PATH}/login`, async (c) => {
    if (!fromOwnOrigin(c, deps.publicUrl))
      return refuse('login', 'CONSOLE_ORIGIN_REFUSED', { reason: 'cross-origin login', origin: c.req.header('origin')?.slice(0, 200) });
    if (!jsonBody(c))
      return refuse('login', 'UNSUPPORTED_MEDIA_TYPE', {
        reason: 'login body is not application/json',
        contentType: c.req.header('content-type')?.slice(0, 100) ?? null,
      });
    const body = await readJsonBody(c, MAX_LOGIN_BODY_BYTES);
    const key = typeof body === 'object' && body !== null && 'key' in body ? body.key : undefined;
    if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH)
      return refuse('login', 'CONSOLE_LOGIN_FAILED', { reason: 'no key in the body' });
    const record = await deps.store.findApiKeyByHash(hashApiKey(key.trim()));
    // Nothing of what was typed is logged: a near-miss of a real key would leak part of it.
    if (!record || record.role !== 'admin' || record.appId !== DEFAULT_APP_ID)
      return refuse('login', 'CONSOLE_LOGIN_FAILED', {
        reason: record ? `a ${record.role} key of app ${record.appId}` : 'unknown or revoked key',
        ...(record ? { keyId: record.id } : {}),
      });
    const id = randomBytes(SESSION_ID_BYTES).toString('base64url');
    const now = deps.store.clock.nowMs();
    const session: ConsoleSession = {
      idHash: sha256(id),
      csrfToken: randomBytes(SESSION_ID_BYTES).toString('base64url'),
      keyId: record.id,
      createdAtMs: now,
      expiresAtMs: now + deps.sessionTtlMs,
    };
    if (!(await deps.store.createConsoleSession(session))) throw new Error('a fresh random session id was already stored');
    setCookie(c, SESSION_COOKIE, id, {
      httpOnly: true,
      sameSite: 'Strict',
      path: CONSOLE_PATH,
      secure: secureCookie(c, deps),
      maxAge: Math.floor(deps.sessionTtlMs / 1000),
    });
    count('login', 'ok');
    keyUse.record(record.id);
    deps.logger.info({ keyId: record.id, key: apiKeyPrefix(key) }, 'console login');
    return c.json({ csrfToken: session.csrfToken, expiresAt: new Date(session.expiresAtMs).toISOString() });
  });

  routes.get(`${CONSOLE_API_PATH}/session`, requireSession, (c) => {
    const session = c.get('consoleSession');
    return c.json({ csrfToken: session.csrfToken, expiresAt: new Date(session.expiresAtMs).toISOString() });
  });

  routes.post(`${CONSOLE_API_PATH}/logout`, requireSession, async (c) => {
    await deps.store.deleteConsoleSession(c.get('consoleSession').idHash);
    deleteCookie(c, SESSION_COOKIE, { path: CONSOLE_PATH, secure: secureCookie(c, deps), httpOnly: true, sameSite: 'Strict' });
    count('logout', 'ok');
    return c.body(null, 204);
  });

  return { routes, requireSession };
}
