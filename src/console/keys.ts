/**
 * The console's API keys page, under `/console/api/keys`, behind the console session (an admin key
 * of the default app) and, for the changes, its CSRF token (`session.ts`). Every route acts on the
 * app `?app=` names (`routes.ts`); the keys themselves live in the service's store, where the API
 * looks them up (`port-apikeys.ts`):
 *
 * - `GET keys?app=`: every key of the app, revoked ones included, oldest first: id, prefix, role,
 *   created, last used (recorded at most once a minute per process, `platform/api-key-use.ts`),
 *   revoked. Never a hash, never a key;
 * - `POST keys?app=` with `{"role": "send" | "admin"}` (`application/json`): a new key, 201 with the
 *   key itself, the only time it is ever shown (the store keeps its hash);
 * - `DELETE keys/{id}?app=`: revoke a live key of the app (204); 404 for an id that is no live key
 *   of that app. Revoking the session's own key ends the session on its next request.
 *
 * Bad input is a 4xx from the catalogue, a warn line and a count in `api_requests_total`; a key
 * made or revoked is an info line with the key's id and prefix and the session's key id.
 */
import type { Context, Hono } from 'hono';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { HttpError, type HttpErrorCode } from '../api/errors.ts';
import { isJsonContentType, readJsonBody } from '../api/json-body.ts';
import { createApiKey } from '../platform/api-keys.ts';
import { API_KEY_ROLES, type ApiKeyRecord, type ApiKeyRole } from '../store/port-apikeys.ts';
import type { StorePort } from '../store/port.ts';
import type { ConsoleApp } from './routes.ts';
import { CONSOLE_API_PATH, type ConsoleSessionEnv } from './session.ts';

/** A create body is one short field. */
const MAX_KEY_BODY_BYTES = 1024;
/** Longest key id looked up (ids are `key_` and 16 hex digits). */
const MAX_KEY_ID_LENGTH = 64;

export interface ConsoleKeyRouteDeps {
  /** The service's store, where every app's keys live. */
  store: StorePort;
  /** The app a request names (`routes.ts`): a 400 for one the service does not host. */
  appOf: (c: Context, route: string) => ConsoleApp;
  metrics: Metrics;
  logger: Logger;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** A key as the page shows it: no hash. */
export function keyView(key: ApiKeyRecord) {
  return {
    id: key.id,
    prefix: key.prefix,
    role: key.role,
    createdAt: iso(key.createdAtMs),
    lastUsedAt: iso(key.lastUsedAtMs),
    revokedAt: iso(key.revokedAtMs),
  };
}

function isRole(value: unknown): value is ApiKeyRole {
  return typeof value === 'string' && (API_KEY_ROLES as readonly string[]).includes(value);
}

export function mountConsoleKeyRoutes(app: Hono<ConsoleSessionEnv>, deps: ConsoleKeyRouteDeps): void {
  const path = `${CONSOLE_API_PATH}/keys`;
  const count = (outcome: string) => deps.metrics.apiRequests.inc({ route: path, outcome });
  const refuse = (code: HttpErrorCode, detail: string): never => {
    count(code);
    deps.logger.warn({ route: 'keys', code, detail }, 'console request refused');
    throw new HttpError(code, detail);
  };

  app.get(path, async (c) => {
    const selected = deps.appOf(c, 'keys');
    const keys = await deps.store.listApiKeys(selected.id);
    return c.json({ app: selected.id, keys: keys.map(keyView) });
  });

  app.post(path, async (c) => {
    const selected = deps.appOf(c, 'keys');
    if (!isJsonContentType(c.req.header('content-type'))) refuse('UNSUPPORTED_MEDIA_TYPE', 'the body must be application/json');
    const body = await readJsonBody(c, MAX_KEY_BODY_BYTES);
    const role = typeof body === 'object' && body !== null && 'role' in body ? body.role : undefined;
    if (!isRole(role)) return refuse('VALIDATION_FAILED', `role must be one of ${API_KEY_ROLES.join(', ')}`);
    const issued = await createApiKey(deps.store, selected.id, role);
    const [stored] = (await deps.store.listApiKeys(selected.id)).filter((k) => k.id === issued.record.id);
    count('created');
    deps.logger.info(
      { app: selected.id, keyId: issued.record.id, key: issued.record.prefix, role, by: c.get('consoleSession').keyId },
      'console: API key created',
    );
    // The key itself, this once: the store has only its hash.
    return c.json({ key: issued.key, ...(stored ? keyView(stored) : { id: issued.record.id, prefix: issued.record.prefix, role }) }, 201);
  });

  app.delete(`${path}/:id`, async (c) => {
    const selected = deps.appOf(c, 'keys');
    const id = c.req.param('id');
    if (id.length > MAX_KEY_ID_LENGTH) return refuse('INVALID_QUERY', `a key id is at most ${MAX_KEY_ID_LENGTH} characters`);
    // Only a key of the selected app: the page never revokes another app's key by a mistyped id.
    const keys = await deps.store.listApiKeys(selected.id);
    const key = keys.find((k) => k.id === id && k.revokedAtMs === null);
    if (!key || !(await deps.store.revokeApiKey(id))) return refuse('NOT_FOUND', `no live key ${id} of app ${selected.id}`);
    count('revoked');
    deps.logger.info({ app: selected.id, keyId: id, key: key.prefix, by: c.get('consoleSession').keyId }, 'console: API key revoked');
    return c.body(null, 204);
  });
}
