/**
 * API-key authentication of the app platform routes (send API, admin routes).
 *
 * `Authorization: Bearer npk_…`; the key's SHA-256 is looked up in the store on every request
 * (no cache), so a revocation is seen by every replica at once. The app a request acts on is the
 * key's, never anything in the body. `X-App` may name it explicitly:
 * - an unknown app is 404 (nothing about which apps exist leaks);
 * - another app than the key's is allowed only to an `admin` key of the default app, and is 404
 *   to every other key (so a key of app B cannot tell app A's ids from missing ones);
 * - once several apps exist, an `admin` key of the default app must name one: without `X-App`
 *   it is refused (400 APP_REQUIRED), not defaulted.
 * A key of the wrong role is 403. A key over its rate limit is 429 (`rate-limits.ts`). Keys are never
 * logged, only their 12-character prefix. A request let through records the key's use
 * (`platform/api-key-use.ts`: a store write at most once a minute per key and process).
 */
import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { ApiKeyRole } from '../store/port-apikeys.ts';
import type { StorePort } from '../store/port.ts';
import { apiKeyPrefix, hashApiKey } from '../platform/api-keys.ts';
import type { ApiKeyUseRecorder } from '../platform/api-key-use.ts';
import { DEFAULT_APP_ID } from '../platform/apps.ts';
import { routePath } from 'hono/route';
import { HttpError, type HttpErrorCode } from './errors.ts';
import { rateLimitedError, type CallerLimits, type RequestLimit } from './rate-limits.ts';

/** What the middleware puts on the context for the handlers. */
export interface AppKeyVariables {
  appId: string;
  /** The store view of `appId` (tenancy): everything a route reads or writes for the app goes through it. */
  appStore: StorePort;
  keyRole: ApiKeyRole;
  keyId: string;
  /** Set instead of the key fields when a route accepted NIP-98 and the caller used it: the signer. */
  nip98Pubkey?: string;
}

export interface AppKeyEnv {
  Variables: AppKeyVariables;
}

export interface AuthDeps {
  /** Where API keys are looked up: the default app's store. */
  store: StorePort;
  /** The configured app ids, the default first. */
  apps: readonly string[];
  /** The store view of a configured app; absent, every app's is `store` (one app). */
  storeOf?: (appId: string) => StorePort;
  logger: Logger;
  metrics: Metrics;
  /**
   * Requests per API key (`send_api.rate_per_sec`/`rate_burst` of the key's app, `rate-limits.ts`),
   * counted once the key is found; over it, 429 with `Retry-After`. Absent: unlimited.
   */
  keyLimit?: (appId: string) => RequestLimit;
  /** NIP-98 callers of the routes that take NIP-98 beside a key (campaign opens): group `user_api`. */
  nip98Limits?: CallerLimits;
  /** Records each accepted key's last use (throttled); absent, uses are not recorded. */
  keyUse?: ApiKeyUseRecorder;
}

const BEARER = /^Bearer ([A-Za-z0-9_-]{1,200})$/;

/** The app an authenticated key acts on, or the error to answer (see the module comment). */
export function resolveApp(
  key: { appId: string; role: ApiKeyRole },
  named: string | undefined,
  apps: readonly string[],
): { appId: string } | { error: HttpErrorCode } {
  if (named === undefined || named === '') {
    if (key.role === 'admin' && key.appId === DEFAULT_APP_ID && apps.length > 1) return { error: 'APP_REQUIRED' };
    return { appId: key.appId };
  }
  if (!apps.includes(named)) return { error: 'NOT_FOUND' };
  if (named === key.appId) return { appId: named };
  if (key.role === 'admin' && key.appId === DEFAULT_APP_ID) return { appId: named };
  return { error: 'NOT_FOUND' };
}

/** Middleware: authenticate the API key, check its role is one of `roles`, and set the app on the context. */
export function requireAppKey(deps: AuthDeps, roles: readonly ApiKeyRole[]): MiddlewareHandler<AppKeyEnv> {
  return async (c, next) => {
    const refuse = (code: HttpErrorCode, detail: Record<string, unknown>): never => {
      deps.metrics.apiRequests.inc({ route: routePath(c), outcome: code });
      deps.logger.warn({ path: c.req.path, code, ...detail }, 'API request refused');
      throw new HttpError(code);
    };
    const match = BEARER.exec(c.req.header('authorization') ?? '');
    if (!match?.[1]) return refuse('UNAUTHORIZED', { reason: 'no bearer key' });
    const presented = match[1];
    const key = await deps.store.findApiKeyByHash(hashApiKey(presented));
    if (!key || !deps.apps.includes(key.appId))
      return refuse('UNAUTHORIZED', { reason: 'unknown or revoked key', key: apiKeyPrefix(presented) });
    if (deps.keyLimit) {
      const refusal = await deps.keyLimit(key.appId).take(key.id);
      if (refusal) {
        // Counted and logged (once per window) by the limit itself.
        deps.metrics.apiRequests.inc({ route: routePath(c), outcome: 'RATE_LIMITED' });
        throw rateLimitedError(refusal);
      }
    }
    if (!roles.includes(key.role)) return refuse('FORBIDDEN', { reason: `a ${key.role} key`, keyId: key.id });
    const resolved = resolveApp(key, c.req.header('x-app'), deps.apps);
    if ('error' in resolved) return refuse(resolved.error, { reason: 'X-App', keyId: key.id });
    c.set('appId', resolved.appId);
    c.set('appStore', deps.storeOf?.(resolved.appId) ?? deps.store);
    c.set('keyRole', key.role);
    c.set('keyId', key.id);
    deps.keyUse?.record(key.id);
    await next();
  };
}
