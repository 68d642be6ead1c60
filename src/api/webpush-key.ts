import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { errorResponses, jsonResponse, SECURITY } from './openapi.ts';
import { validatingRouter } from './validation.ts';

const VapidPublicKey = z
  .object({ publicKey: z.string().openapi({ description: 'base64url, an uncompressed P-256 point' }) })
  .openapi('VapidPublicKey');

const VAPID_KEY_ROUTE = createRoute({
  method: 'get',
  path: '/v1/webpush/vapid-public-key',
  operationId: 'getVapidPublicKey',
  tags: ['user'],
  summary: 'The VAPID public key browser apps subscribe with',
  security: SECURITY.none,
  responses: {
    200: jsonResponse('The key (cached for 5 minutes)', VapidPublicKey),
    ...errorResponses(['NOT_FOUND']),
  },
});

/**
 * `GET /v1/webpush/vapid-public-key`: the VAPID public key (base64url, uncompressed P-256) that a
 * browser app passes to `pushManager.subscribe({ applicationServerKey })`, so its subscriptions
 * accept this server's pushes. `{"publicKey": "…"}`; 404 when Web Push is not configured.
 */
export function webPushKeyRoutes(publicKey: string | null): OpenAPIHono {
  const app = validatingRouter();
  app.openapi(VAPID_KEY_ROUTE, (c) => {
    // Answered here rather than thrown: the router is served alone too (it needs no error handler).
    if (!publicKey) return c.json({ error: 'Web Push is not configured', code: 'NOT_FOUND' as const }, 404);
    return c.json({ publicKey }, 200, { 'Cache-Control': 'public, max-age=300' });
  });
  return app;
}
