/**
 * Issue 37, item 3: `/v1/openapi.json` documents every route the HTTP server mounts.
 *
 * The walk: a service with every mount (roles api and pusher, as test/abuse/bodies.test.ts starts
 * it), whose routes are read from the list its body limit is built from (`service.bodyLimits`,
 * Hono's own `app.routes`), so a route added later is walked too. Each must be an operation of the
 * document, apart from the ntfy protocol (its own specification; `shape: 'ntfy'`) and the console
 * (`mountConsole`: the operator's pages and their private API, `/console/api/*`). And the other
 * way: every operation of the document is a mounted route. Each operation has an `operationId`, a
 * summary, its security (schemes of `components`), and its errors from the catalogue, with their
 * statuses. `servers` is `server.public_url`. The routes with a JSON body document an example body,
 * and each is sent to its route as documented and accepted; the schemas are the validation, so a
 * request that violates one is refused (after its credentials) with a code the document names.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { HTTP_ERRORS } from '../../src/api/errors.ts';
import { generateSecretKey } from '../../src/nostr/keys.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { startService, type RunningService } from '../../src/service.ts';
import { createApiKey } from '../../src/platform/api-keys.ts';
import { makeUser } from '../support/nostr-client.ts';
import { nip98Authorization } from '../support/user-api.ts';

const PUBLIC_URL = 'https://push.nostr-push.test';
/** Probes whose 503 is their report, not a catalogue error. */
const PROBES = ['GET /health', 'GET /ready'];
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'];

interface Schema {
  $ref?: string;
  example?: Record<string, unknown>;
  properties?: { code?: { enum?: string[] } };
}

interface Operation {
  requestBody?: { content: Record<string, { schema: Schema }> };
  operationId?: string;
  summary?: string;
  security?: Array<Record<string, string[]>>;
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

interface Document {
  openapi: string;
  servers?: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, Schema> };
}

/** Mounted by `mountConsole`: the console's pages (and `GET /`, sent there) and its private API. */
function isConsoleRoute(method: string, path: string): boolean {
  return path === '/console' || path.startsWith('/console/') || (method === 'GET' && path === '/');
}

function operationsOf(doc: Document): Array<{ key: string; operation: Operation }> {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, operation })),
  );
}

describe('the OpenAPI document lists every route the service mounts', () => {
  let service: RunningService;
  let dir: string;
  let doc: Document;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'np-openapi-'));
    const { config } = loadConfig({
      env: {
        NOSTR_PUSH__STORE__URL: `sqlite:${join(dir, 'np.sqlite')}`,
        NOSTR_PUSH__DATA_DIR: dir,
        NOSTR_PUSH__ROLES: 'api,pusher',
        NOSTR_PUSH__SERVER__LISTEN_ADDR: '127.0.0.1:0',
        NOSTR_PUSH__SERVER__PUBLIC_URL: PUBLIC_URL,
        NOSTR_PUSH__SERVER__INTERNAL_API_TOKEN: 'internal-token',
        NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: generateSecretKey(),
      },
    });
    service = await startService(config, { logger: createLogger({ level: 'silent' }) });
    const response = await fetch(`http://127.0.0.1:${service.httpAddress?.port}/v1/openapi.json`);
    assert.equal(response.status, 200);
    doc = (await response.json()) as Document;
  });
  after(async () => {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('every mounted route but the console and ntfy is an operation, and every operation a mounted route', () => {
    assert.equal(doc.openapi, '3.1.0');
    const routes = service.bodyLimits?.list() ?? [];
    // Every mount is walked (so an empty or partial list cannot pass), the excluded ones too.
    const names = routes.map((r) => `${r.method} ${r.path}`);
    for (const mounted of [
      'GET /health',
      'POST /nip9a/cb/:secret',
      'POST /v1/admin/dlq/:id/replay',
      'POST /console/api/login',
      'PUT /:topic',
    ])
      assert.ok(names.includes(mounted), `${mounted} is mounted`);
    const documented = new Set(operationsOf(doc).map((o) => o.key));
    const expected = new Set<string>();
    for (const route of routes) {
      assert.ok(route.path !== null);
      if (route.shape === 'ntfy' || isConsoleRoute(route.method, route.path)) continue;
      const key = `${route.method} ${route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`;
      expected.add(key);
      assert.ok(documented.has(key), `${key} is in the document`);
    }
    for (const key of documented) assert.ok(expected.has(key), `${key} of the document is a mounted route`);
    assert.ok(expected.size >= 40, `${expected.size} routes documented`);
  });

  test('each operation has a unique operationId, a summary, its security, and catalogue errors with their statuses', () => {
    const ids = new Set<string>();
    const schemes = Object.keys(doc.components.securitySchemes).sort();
    assert.deepEqual(schemes, ['apiKey', 'internalToken', 'nip98']);
    for (const { key, operation } of operationsOf(doc)) {
      assert.ok(operation.operationId, `${key}: operationId`);
      assert.ok(!ids.has(operation.operationId), `${key}: operationId ${operation.operationId} is unique`);
      ids.add(operation.operationId);
      assert.ok(operation.summary && operation.summary.length > 5, `${key}: summary`);
      assert.ok(Array.isArray(operation.security), `${key}: security is stated (empty when public)`);
      for (const requirement of operation.security)
        for (const scheme of Object.keys(requirement)) assert.ok(schemes.includes(scheme), `${key}: ${scheme} is declared`);
      const codes: string[] = [];
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) < 400) continue;
        // The probes answer 503 with their own bodies (`failing`, `ready: false`), not an error.
        if (status === '503' && PROBES.includes(key)) continue;
        const listed = response.content?.['application/json']?.schema?.properties?.code?.enum ?? [];
        assert.ok(listed.length > 0, `${key} ${status}: names its codes`);
        for (const code of listed) {
          const entry = (HTTP_ERRORS as Record<string, { status: number }>)[code];
          assert.ok(entry, `${key}: ${code} is in the catalogue`);
          assert.equal(String(entry.status), status, `${key}: ${code} is a ${entry.status}`);
          codes.push(code);
        }
      }
      // The body limit answers before any route, and a bug is a 500.
      for (const code of ['BODY_TOO_LARGE', 'INTERNAL']) assert.ok(codes.includes(code), `${key}: ${code}`);
    }
  });

  test('routes with credentials say which: NIP-98 for the user API, API keys for the admin API, the token for the hook', () => {
    const security = (method: string, path: string) => doc.paths[path]?.[method]?.security;
    assert.deepEqual(security('put', '/v1/devices/{token}'), [{ nip98: [] }]);
    assert.deepEqual(security('get', '/v1/admin/dlq'), [{ apiKey: [] }]);
    assert.deepEqual(security('post', '/v1/notifications/{id}/opened'), [{ apiKey: [] }, { nip98: [] }]);
    assert.deepEqual(security('post', '/internal/v1/direct-message'), [{ internalToken: [] }]);
    assert.deepEqual(security('post', '/nip9a/cb/{secret}'), []);
    const dlqReplay = doc.paths['/v1/admin/dlq/{id}/replay']?.post?.responses['409']?.content?.['application/json']?.schema;
    assert.deepEqual(dlqReplay?.properties?.code?.enum, ['DEAD_LETTER_AMBIGUOUS']);
  });

  test('the documented example body of each route with a JSON body is accepted by the route', async () => {
    const base = `http://127.0.0.1:${service.httpAddress?.port}`;
    const user = makeUser();
    const adminKey = (await createApiKey(service.store, 'default', 'admin')).key;
    const cases: Array<{ method: string; path: string; url?: string; auth: 'nip98' | 'apiKey' | 'internalToken'; status: number }> = [
      { method: 'post', path: '/v1/inbox/viewed', auth: 'nip98', status: 200 },
      { method: 'put', path: '/v1/alert-words', auth: 'nip98', status: 200 },
      { method: 'put', path: '/v1/devices/{token}', url: '/v1/devices/openapi-example-token', auth: 'nip98', status: 201 },
      { method: 'put', path: '/v1/preferences', auth: 'nip98', status: 200 },
      { method: 'post', path: '/v1/nip9a/callbacks', auth: 'nip98', status: 201 },
      { method: 'post', path: '/v1/admin/announcements', auth: 'apiKey', status: 201 },
      { method: 'post', path: '/internal/v1/direct-message', auth: 'internalToken', status: 204 },
    ];
    for (const { method, path, url = path, auth, status } of cases) {
      const key = `${method.toUpperCase()} ${path}`;
      const schema = doc.paths[path]?.[method]?.requestBody?.content['application/json']?.schema;
      const resolved = schema?.$ref ? doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')] : schema;
      const example = resolved?.example;
      assert.ok(example, `${key} documents an example body`);
      const authorization =
        auth === 'nip98'
          ? await nip98Authorization(user, `${PUBLIC_URL}${url}`, method.toUpperCase(), example)
          : `Bearer ${auth === 'apiKey' ? adminKey : 'internal-token'}`;
      const response = await fetch(`${base}${url}`, {
        method: method.toUpperCase(),
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify(example),
      });
      assert.equal(response.status, status, `${key}: ${await response.text()}`);
    }
  });

  test('the schemas are the validation: a request that violates its route’s schema is refused with the code the document names, after the credentials', async () => {
    const base = `http://127.0.0.1:${service.httpAddress?.port}`;
    const user = makeUser();
    const adminKey = (await createApiKey(service.store, 'default', 'admin')).key;
    const hex = 'ab'.repeat(32);
    const directMessage = { eventId: hex, recipientPubkey: hex, messageType: 'moderation_notice' };
    const cases: Array<{
      method: string;
      path: string;
      url?: string;
      auth: 'nip98' | 'apiKey' | 'internalToken';
      body?: unknown;
      status: number;
      code: string;
    }> = [
      { method: 'post', path: '/v1/inbox/viewed', auth: 'nip98', body: { types: ['nope'] }, status: 422, code: 'INVALID_INBOX_TYPES' },
      { method: 'post', path: '/v1/inbox/viewed', auth: 'nip98', body: ['like'], status: 422, code: 'UNPROCESSABLE_BODY' },
      { method: 'put', path: '/v1/alert-words', auth: 'nip98', body: { words: 'nostr' }, status: 422, code: 'INVALID_ALERT_WORDS' },
      { method: 'put', path: '/v1/alert-words', auth: 'nip98', body: { words: ['two words'] }, status: 422, code: 'INVALID_ALERT_WORDS' },
      { method: 'put', path: '/v1/alert-words', auth: 'nip98', body: 'nostr', status: 422, code: 'UNPROCESSABLE_BODY' },
      {
        method: 'put',
        path: '/v1/devices/{token}',
        url: '/v1/devices/t1',
        auth: 'nip98',
        body: { transport: 'pigeon' },
        status: 400,
        code: 'INVALID_DEVICE',
      },
      {
        method: 'put',
        path: '/v1/devices/{token}',
        url: '/v1/devices/t1',
        auth: 'nip98',
        body: { timezoneOffsetMinutes: 9999 },
        status: 400,
        code: 'INVALID_DEVICE',
      },
      { method: 'put', path: '/v1/preferences', auth: 'nip98', body: { kinds: 'all' }, status: 400, code: 'INVALID_PREFERENCES' },
      {
        method: 'put',
        path: '/v1/preferences',
        auth: 'nip98',
        body: { kinds: [1], quietHours: 'night' },
        status: 400,
        code: 'INVALID_PREFERENCES',
      },
      {
        method: 'post',
        path: '/v1/nip9a/callbacks',
        auth: 'nip98',
        body: { relay: 'https://relay.example.com' },
        status: 400,
        code: 'NIP9A_INVALID_RELAY',
      },
      { method: 'post', path: '/v1/nip9a/callbacks', auth: 'nip98', body: {}, status: 400, code: 'NIP9A_INVALID_RELAY' },
      {
        method: 'put',
        path: '/v1/nip9a/registrations',
        auth: 'nip98',
        body: { kind: 30390 },
        status: 400,
        code: 'NIP9A_INVALID_REGISTRATION',
      },
      {
        method: 'post',
        path: '/v1/admin/announcements',
        auth: 'apiKey',
        body: { text: ' ', expiresAt: 4102444800 },
        status: 422,
        code: 'INVALID_ANNOUNCEMENT',
      },
      {
        method: 'post',
        path: '/v1/admin/announcements',
        auth: 'apiKey',
        body: { text: 'Hi', expiresAt: 'soon' },
        status: 422,
        code: 'INVALID_ANNOUNCEMENT',
      },
      {
        method: 'post',
        path: '/internal/v1/direct-message',
        auth: 'internalToken',
        body: { ...directMessage, eventId: 'xyz' },
        status: 400,
        code: 'INVALID_EVENT_ID',
      },
      {
        method: 'post',
        path: '/internal/v1/direct-message',
        auth: 'internalToken',
        body: { ...directMessage, extra: 1 },
        status: 422,
        code: 'UNPROCESSABLE_BODY',
      },
      {
        method: 'post',
        path: '/v1/notifications',
        auth: 'apiKey',
        body: { recipients: 'everyone' },
        status: 422,
        code: 'VALIDATION_FAILED',
      },
      { method: 'get', path: '/v1/admin/dlq', url: '/v1/admin/dlq?queue=sideways', auth: 'apiKey', status: 400, code: 'INVALID_QUERY' },
      {
        method: 'get',
        path: '/v1/admin/dlq',
        url: '/v1/admin/dlq?queue=inbound&limit=0',
        auth: 'apiKey',
        status: 400,
        code: 'INVALID_QUERY',
      },
    ];
    for (const { method, path, url = path, auth, body, status, code } of cases) {
      const key = `${method.toUpperCase()} ${url} ${JSON.stringify(body ?? null)}`;
      const documented =
        doc.paths[path]?.[method]?.responses[String(status)]?.content?.['application/json']?.schema?.properties?.code?.enum;
      assert.ok(documented?.includes(code), `${key}: the document names ${code} among its ${status}s`);
      const send = (authorization: string | null) =>
        fetch(`${base}${url}`, {
          method: method.toUpperCase(),
          headers: {
            ...(authorization === null ? {} : { authorization }),
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
      // Without credentials the same request is a 401: nothing is validated for a stranger.
      const anonymous = await send(null);
      assert.equal(anonymous.status, 401, `${key} without credentials: ${await anonymous.text()}`);
      const authorization =
        auth === 'nip98'
          ? await nip98Authorization(user, `${PUBLIC_URL}${url}`, method.toUpperCase(), body as Record<string, unknown> | undefined)
          : `Bearer ${auth === 'apiKey' ? adminKey : 'internal-token'}`;
      const refused = await send(authorization);
      const text = await refused.text();
      assert.equal(refused.status, status, `${key}: ${text}`);
      assert.equal((JSON.parse(text) as { code?: string }).code, code, `${key}: ${text}`);
    }
  });

  test('servers is server.public_url', () => {
    assert.deepEqual(doc.servers, [{ url: PUBLIC_URL }]);
  });
});
