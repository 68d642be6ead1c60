import { Hono } from 'hono';

/**
 * `GET /v1/webpush/vapid-public-key`: the VAPID public key (base64url, uncompressed P-256) that a
 * browser app passes to `pushManager.subscribe({ applicationServerKey })`, so its subscriptions
 * accept this server's pushes. `{"publicKey": "…"}`; 404 when Web Push is not configured.
 */
export function webPushKeyRoutes(publicKey: string | null): Hono {
  const app = new Hono();
  app.get('/v1/webpush/vapid-public-key', (c) =>
    publicKey
      ? c.json({ publicKey }, 200, { 'Cache-Control': 'public, max-age=300' })
      : c.json({ error: 'Web Push is not configured', code: 'NOT_FOUND' }, 404),
  );
  return app;
}
