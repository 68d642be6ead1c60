/**
 * The delivery log for operators (admin keys): `GET /v1/admin/deliveries?recipient=&since=&limit=`
 * (entries, oldest first) and `GET /v1/admin/deliveries/open-rates?since=` (sent, opened and the
 * open rate per notification type).
 */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { StorePort } from '../store/port.ts';
import { requireAppKey, type AppKeyEnv, type AuthDeps } from './auth.ts';
import { API_KEY_ERRORS, errorResponses } from './openapi.ts';
import { DeliveriesPage, DeliveriesQuery, OpenRates, OpenRatesQuery } from './schemas.ts';

const DEFAULT_LIMIT = 100;

export interface AdminDeliveriesDeps {
  auth: AuthDeps;
  /** The app's `delivery_log.retention_days`: where a query without `since` starts. */
  retentionDays: (appId: string) => number;
}

export function adminDeliveryRoutes(app: OpenAPIHono<AppKeyEnv>, deps: AdminDeliveriesDeps): void {
  const adminKeys = requireAppKey(deps.auth, ['admin']);
  const retentionStartMs = (store: StorePort, appId: string) => store.clock.nowMs() - deps.retentionDays(appId) * 86_400_000;

  const list = createRoute({
    method: 'get',
    path: '/v1/admin/deliveries',
    operationId: 'listDeliveries',
    tags: ['admin'],
    summary: 'Delivery attempts and outcomes, oldest first',
    security: [{ apiKey: [] }],
    middleware: [adminKeys] as const,
    request: { query: DeliveriesQuery },
    responses: {
      200: { description: 'Log entries', content: { 'application/json': { schema: DeliveriesPage } } },
      ...errorResponses([...API_KEY_ERRORS, 'VALIDATION_FAILED']),
    },
  });
  app.openapi(list, async (c) => {
    const { recipient, since, limit } = c.req.valid('query');
    const store = c.get('appStore');
    const entries = await store.readDeliveryLog(c.get('appId'), {
      ...(recipient === undefined ? {} : { recipient }),
      sinceMs: since === undefined ? retentionStartMs(store, c.get('appId')) : Date.parse(since),
      limit: limit ?? DEFAULT_LIMIT,
    });
    return c.json(
      {
        entries: entries.map(({ appId: _appId, atMs, ...entry }) => ({ ...entry, at: new Date(atMs).toISOString() })),
      },
      200,
    );
  });

  const rates = createRoute({
    method: 'get',
    path: '/v1/admin/deliveries/open-rates',
    operationId: 'getOpenRates',
    tags: ['admin'],
    summary: 'Sent and opened notifications per type, by UTC day from `since`',
    security: [{ apiKey: [] }],
    middleware: [adminKeys] as const,
    request: { query: OpenRatesQuery },
    responses: {
      200: { description: 'Open rates', content: { 'application/json': { schema: OpenRates } } },
      ...errorResponses([...API_KEY_ERRORS, 'VALIDATION_FAILED']),
    },
  });
  app.openapi(rates, async (c) => {
    const { since } = c.req.valid('query');
    const store = c.get('appStore');
    const sinceMs = since === undefined ? retentionStartMs(store, c.get('appId')) : Date.parse(since);
    const types = await store.deliveryOpenRates(c.get('appId'), sinceMs);
    return c.json(
      {
        since: new Date(sinceMs).toISOString(),
        types: types.map((t) => ({ ...t, openRate: t.sent === 0 ? null : t.opened / t.sent })),
      },
      200,
    );
  });
}
