/**
 * The app platform API as one OpenAPIHono app: the send API, campaigns, the admin delivery log and
 * suppressions, their routes defined by the schemas that validate the requests (`schemas.ts`); they
 * join the OpenAPI document at `/v1/openapi.json` when the app is mounted (`app.ts`, `openapi.ts`). Validation failures answer 422 `VALIDATION_FAILED` naming the first
 * offending field (`validation.ts`), with a warn line and `push_api_requests_total{outcome="VALIDATION_FAILED"}`.
 * Other routers mounted behind {@link PlatformApi.adminKeys} (the DLQ routes) join the same app.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { StorePort } from '../store/port.ts';
import { adminDeliveryRoutes } from './admin-deliveries.ts';
import { requireAppKey, type AppKeyEnv, type AuthDeps } from './auth.ts';
import { ApiKeyUseRecorder } from '../platform/api-key-use.ts';
import { routePath } from 'hono/route';
import { HttpError } from './errors.ts';
import { notificationRoutes, SEND_LARGER_BODY, type NotificationRoutesDeps, type SendApiAppSettings } from './notifications.ts';
import { CAMPAIGN_LARGER_BODY, campaignRoutes } from './campaigns.ts';
import type { LargerBody } from './body-limit.ts';
import type { Nip98Auth } from './nip98-auth.ts';
import { adminSuppressionRoutes } from './admin-suppressions.ts';
import { registerSecuritySchemes } from './openapi.ts';
import { validatingRouter, validatorError } from './validation.ts';
import type { RateLimits } from './rate-limits.ts';

/** Where the document of every mounted route is served (`openapi.ts`); exported here too for the platform's callers. */
export { OPENAPI_PATH } from './openapi.ts';

export interface PlatformApiDeps {
  /** The default app's store view; API keys are looked up there. The settings below are the default app's. */
  store: StorePort;
  apps: readonly string[];
  /** Tenancy: any configured app's store view and send API settings; absent, every app is served as the default. */
  appSettings?: (appId: string) => SendApiAppSettings;
  typeCategories: ReadonlyMap<string, number>;
  maxRecipients: number;
  idempotencyTtlSecs: number;
  recordTtlSecs: number;
  retentionDays: number;
  onCreated: () => void;
  metrics: Metrics;
  logger: Logger;
  /**
   * The service version. The document's `info.version` comes from `ApiDeps.document` now that one
   * document covers every router (`app.ts`); kept so existing callers need no change.
   */
  version?: string;
  /** The service's NIP-98 check, for the NIP-98 opens (`notifications.ts`). */
  nip98?: Nip98Auth;
  /** How long a campaign open is remembered (`campaign_delivery.dedup_ttl_secs`); default a week. */
  campaignDedupTtlSecs?: number;
  /** Per-client limits: every API key's requests, and NIP-98 opens (group `user_api`); absent, none. */
  rateLimits?: RateLimits;
}

export interface PlatformApi {
  app: OpenAPIHono<AppKeyEnv>;
  /** Admin-key middleware, for routers mounted beside these (the DLQ routes). */
  adminKeys: MiddlewareHandler<AppKeyEnv>;
  /** The routes whose bodies may exceed `server.max_body_bytes`, with their reasons. */
  largerBodies: readonly LargerBody[];
}

export function createPlatformApi(deps: PlatformApiDeps): PlatformApi {
  const app = validatingRouter<AppKeyEnv>((c, error) => {
    deps.metrics.apiRequests.inc({ route: routePath(c), outcome: error.code });
    deps.logger.warn({ path: c.req.path, reason: error.message }, 'API request refused: validation');
  });
  // Hono's JSON validator throws its own 400 for a body that does not parse, and its own 415 for a
  // body that is not JSON (any other Content-Type, or none): answer them with the catalogue's codes,
  // like every other refusal; everything else is the service's usual error body.
  app.onError((err, c) => {
    const error = err instanceof HttpError ? err : validatorError(err);
    if (!error) {
      deps.logger.error({ path: c.req.path, err: err.message }, 'unhandled error in route');
      return c.json(new HttpError('INTERNAL').toJSON(), 500);
    }
    if (error.code === 'INVALID_JSON') {
      deps.metrics.apiRequests.inc({ route: routePath(c), outcome: error.code });
      deps.logger.warn({ path: c.req.path, code: error.code }, 'API request refused: body is not JSON');
    }
    if (error.code === 'UNSUPPORTED_MEDIA_TYPE') {
      deps.metrics.apiRequests.inc({ route: routePath(c), outcome: error.code });
      deps.metrics.httpRefused.inc({ route: `${c.req.method} ${routePath(c)}`, code: error.code });
      deps.logger.warn(
        { path: c.req.path, code: error.code, contentType: c.req.header('content-type')?.slice(0, 100) ?? null },
        'API request refused: Content-Type is not application/json',
      );
    }
    return c.json(error.toJSON(), error.status as 400, error.headers);
  });
  registerSecuritySchemes(app);
  const appSettings = deps.appSettings;
  // Off (`rate_limits.enabled: false`), the routes do not even ask.
  const rateLimits = deps.rateLimits?.enabled ? deps.rateLimits : undefined;
  const auth: AuthDeps = {
    store: deps.store,
    apps: deps.apps,
    ...(appSettings ? { storeOf: (appId: string) => appSettings(appId).store } : {}),
    logger: deps.logger,
    metrics: deps.metrics,
    ...(rateLimits ? { keyLimit: (appId: string) => rateLimits.apiKey(appId), nip98Limits: rateLimits.caller('user_api') } : {}),
    keyUse: new ApiKeyUseRecorder(deps.store, deps.logger.child({ component: 'api-key-use' })),
  };
  const notificationDeps: NotificationRoutesDeps = {
    ...(appSettings ? { appSettings, schemaMaxRecipients: Math.max(...deps.apps.map((appId) => appSettings(appId).maxRecipients)) } : {}),
    store: deps.store,
    auth,
    typeCategories: deps.typeCategories,
    maxRecipients: deps.maxRecipients,
    idempotencyTtlSecs: deps.idempotencyTtlSecs,
    recordTtlSecs: deps.recordTtlSecs,
    openedClaimTtlSecs: deps.retentionDays * 86_400,
    retentionDays: deps.retentionDays,
    onCreated: deps.onCreated,
    metrics: deps.metrics,
    logger: deps.logger,
    ...(deps.nip98 ? { nip98: deps.nip98 } : {}),
  };
  notificationRoutes(app, notificationDeps);
  adminDeliveryRoutes(app, {
    auth,
    retentionDays: (appId) => (appSettings ? appSettings(appId).retentionDays : deps.retentionDays),
  });
  campaignRoutes(app, {
    auth,
    openedTtlSecs: deps.campaignDedupTtlSecs ?? 7 * 86_400,
    onCreated: deps.onCreated,
    logger: deps.logger,
  });
  adminSuppressionRoutes(app, { auth, logger: deps.logger });
  return { app, adminKeys: requireAppKey(auth, ['admin']), largerBodies: [SEND_LARGER_BODY, CAMPAIGN_LARGER_BODY] };
}
