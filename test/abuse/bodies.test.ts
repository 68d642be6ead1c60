/**
 * Issue 35, item 5: one body limit for every route, before routing.
 *
 * The walk: the whole HTTP surface of a service (roles api and pusher, so every mount: health,
 * direct-message hook, user API, NIP-9a gateway and callbacks, platform API, admin routes,
 * console, ntfy) on both stores, over real HTTP. Every route Hono lists (`app.routes`, as the
 * limit itself is built from them, so a route added later is walked too) gets a body one byte over
 * its limit, chunked and with Content-Length: 413 each, the catalogue's JSON error, ntfy's on ntfy
 * routes. A body at the limit is not refused by it, and a chunked body within it reaches its route
 * intact.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { DEFAULT_MAX_BODY_BYTES } from '../../src/config/defaults.ts';
import { generateSecretKey } from '../../src/nostr/keys.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { startService, type RunningService } from '../../src/service.ts';
import type { RouteBodyLimit } from '../../src/api/body-limit.ts';
import { startRedisServer } from '../support/redis-server.ts';
import { concretePath, sendRawBody, type BodyFraming } from '../support/raw-http.ts';

/** Routes issue 35 found unbounded: each must be among those walked. */
const NAMED_IN_THE_ISSUE = ['POST /v1/campaigns/:id/opened', 'POST /v1/admin/suppressions', 'DELETE /v1/admin/suppressions'];

function assertRefusal(route: RouteBodyLimit, status: number | null, text: string, what: string): void {
  assert.equal(status, 413, `${what}: ${text}`);
  const body = JSON.parse(text) as Record<string, unknown>;
  if (route.shape === 'ntfy') {
    assert.equal(body.http, 413, what);
    assert.ok(body.code === 41303 || body.code === 41304, `${what}: ntfy's code, got ${text}`);
  } else assert.deepEqual(body, { error: 'Request body too large', code: 'BODY_TOO_LARGE' }, what);
}

for (const adapter of ['sqlite', 'redis'] as const) {
  describe(`every route's body limit (${adapter})`, () => {
    let service: RunningService;
    let baseUrl: string;
    const cleanup: Array<() => Promise<unknown>> = [];

    before(async () => {
      const dir = mkdtempSync(join(tmpdir(), `np-bodies-${adapter}-`));
      cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
      let storeUrl = `sqlite:${join(dir, 'np.sqlite')}`;
      if (adapter === 'redis') {
        const redis = await startRedisServer();
        cleanup.push(() => redis.stop());
        storeUrl = redis.url;
      }
      const { config } = loadConfig({
        env: {
          NOSTR_PUSH__STORE__URL: storeUrl,
          NOSTR_PUSH__DATA_DIR: dir,
          NOSTR_PUSH__ROLES: 'api,pusher',
          NOSTR_PUSH__SERVER__LISTEN_ADDR: '127.0.0.1:0',
          NOSTR_PUSH__SERVER__PUBLIC_URL: 'https://push.example.com',
          NOSTR_PUSH__SERVER__INTERNAL_API_TOKEN: 'internal-token',
          NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX: generateSecretKey(),
          NOSTR_PUSH__NTFY__VISITOR_EXEMPT_HOSTS: '127.0.0.1,::1',
        },
      });
      service = await startService(config, { logger: createLogger({ level: 'silent' }) });
      cleanup.push(() => service.stop());
      baseUrl = `http://127.0.0.1:${service.httpAddress?.port}`;
    });
    after(async () => {
      for (const step of cleanup.reverse()) await step();
    });

    test('every route Hono serves answers 413 to a body one byte over its limit, chunked and with Content-Length', async () => {
      const limits = service.bodyLimits;
      assert.ok(limits, 'the service serves HTTP');
      const routes = limits.list();
      const names = routes.map((r) => `${r.method} ${r.path}`);
      for (const named of NAMED_IN_THE_ISSUE) assert.ok(names.includes(named), `${named} is walked`);
      // Every mount is there (so an empty or partial list cannot pass).
      for (const mounted of ['GET /health', 'PUT /v1/alert-words', 'POST /console/api/login', 'PUT /:topic', 'POST /nip9a/cb/:secret'])
        assert.ok(names.includes(mounted), `${mounted} is walked`);
      assert.ok(routes.some((r) => r.shape === 'ntfy') && routes.some((r) => r.shape === 'catalogue'));

      for (const route of routes) {
        assert.ok(route.path !== null);
        const path = concretePath(route.path);
        // The concrete path reaches this very route (not one declared before it).
        const reached = limits.limitFor(route.method, path);
        const target = reached.path === route.path ? route : reached;
        for (const framing of ['chunked', 'content-length'] as BodyFraming[]) {
          const answer = await sendRawBody({
            method: route.method,
            url: `${baseUrl}${path}`,
            headers: { 'content-type': 'application/json' },
            bodyBytes: target.maxBytes + 1,
            framing,
          });
          assertRefusal(target, answer.status, answer.text, `${route.method} ${path} (${route.path}), ${framing}`);
        }
      }
    });

    test('the default limit is server.max_body_bytes; larger ones are the routes that say why', () => {
      const routes = service.bodyLimits?.list() ?? [];
      for (const route of routes) {
        if (route.reason === undefined) assert.equal(route.maxBytes, DEFAULT_MAX_BODY_BYTES, `${route.method} ${route.path}`);
        else assert.ok(route.maxBytes >= DEFAULT_MAX_BODY_BYTES, `${route.method} ${route.path}`);
      }
      const larger = routes.filter((r) => r.maxBytes > DEFAULT_MAX_BODY_BYTES).map((r) => `${r.method} ${r.path}`);
      assert.deepEqual(larger.sort(), ['POST /nip9a/cb/:secret', 'POST /v1/campaigns', 'POST /v1/notifications']);
    });

    test('a path no route serves has the default limit, and a body at the limit is not refused by it', async () => {
      const over = await sendRawBody({
        method: 'POST',
        url: `${baseUrl}/no/such/route/here`,
        bodyBytes: DEFAULT_MAX_BODY_BYTES + 1,
        framing: 'chunked',
      });
      assert.equal(over.status, 413, over.text);
      for (const framing of ['chunked', 'content-length'] as BodyFraming[]) {
        const at = await sendRawBody({
          method: 'POST',
          url: `${baseUrl}/no/such/route/here`,
          bodyBytes: DEFAULT_MAX_BODY_BYTES,
          framing,
        });
        assert.equal(at.status, 404, `${framing}: ${at.text}`);
      }
    });

    test('a chunked body within the limit reaches its route intact (an ntfy publish, read back)', async () => {
      const answer = await sendRawBody({
        method: 'PUT',
        url: `${baseUrl}/abuse_chunked_topic`,
        bodyBytes: 3000,
        framing: 'chunked',
        chunkBytes: 700,
        fill: 0x61,
      });
      assert.equal(answer.status, 200, answer.text);
      const message = JSON.parse(answer.text) as { message: string };
      assert.equal(message.message, 'a'.repeat(3000));
    });

    test('after a refusal the connection is still served (the refused body was drained, not left unread)', async () => {
      const metrics = await (await fetch(`${baseUrl}/metrics`)).text();
      assert.match(metrics, /push_http_requests_refused_total\{route="POST \/v1\/admin\/suppressions",code="BODY_TOO_LARGE"\} [1-9]/);
      const health = await fetch(`${baseUrl}/health`);
      assert.equal(health.status, 200);
    });
  });
}
