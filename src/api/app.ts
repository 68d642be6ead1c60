import { OpenAPIHono } from '@hono/zod-openapi';
import type { BlankEnv, BlankSchema } from 'hono/types';
import { routePath } from 'hono/route';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { HttpError } from './errors.ts';
import { healthRoutes, type HealthSource } from './health.ts';
import { apiReferenceRoutes, OPENAPI_DOCUMENT_ROUTE } from './api-reference.ts';
import { validatingRouter, validatorError } from './validation.ts';
import { documentObject, registerSecuritySchemes, type OpenApiDocumentSettings } from './openapi.ts';

export interface ApiDeps {
  health: HealthSource;
  metrics: Metrics;
  logger: Logger;
  /** The document's version and `servers` (`openapi.ts`); absent (tests of a router), a development version and no servers. */
  document?: OpenApiDocumentSettings;
}

/**
 * The HTTP surface: every route is mounted here, errors are written in one place. Routers mounted
 * with `app.route` are `OpenAPIHono` apps whose definitions join this app's registry, from which
 * `/v1/openapi.json` is generated on each request (so it lists what is mounted, whenever it was);
 * `/v1/docs` renders it.
 */
export function createApiApp(deps: ApiDeps): OpenAPIHono<BlankEnv, BlankSchema> {
  const app = validatingRouter<BlankEnv>();
  registerSecuritySchemes(app);
  app.route('/', healthRoutes(deps));
  const settings = deps.document ?? { version: '0.0.0-dev', publicUrl: '' };
  // Generated on the first request after a mount (routers are mounted after this returns), then kept.
  let document: { definitions: number; body: object } | null = null;
  app.openapi(OPENAPI_DOCUMENT_ROUTE, (c) => {
    const definitions = app.openAPIRegistry.definitions.length;
    if (document?.definitions !== definitions) document = { definitions, body: app.getOpenAPI31Document(documentObject(settings)) };
    return c.json(document.body as Record<string, unknown>, 200);
  });
  app.route('/', apiReferenceRoutes(deps.logger));

  app.notFound(() => {
    throw new HttpError('NOT_FOUND');
  });
  app.onError((thrown, c) => {
    // What Hono's own validators throw (a body that does not parse, or is not JSON) as the catalogue's errors.
    const err = validatorError(thrown) ?? thrown;
    if (err instanceof HttpError) {
      if (err.status >= 500) deps.logger.error({ path: c.req.path, code: err.code }, err.message);
      else if (err.code === 'UNSUPPORTED_MEDIA_TYPE') {
        // Bad input, said once with its reason and counted (the routes refusing it are JSON routes).
        deps.metrics.httpRefused.inc({ route: `${c.req.method} ${routePath(c)}`, code: err.code });
        deps.logger.warn({ path: c.req.path, code: err.code, contentType: c.req.header('content-type')?.slice(0, 100) }, err.message);
      } else deps.logger.debug({ path: c.req.path, code: err.code }, err.message);
      return c.json(err.toJSON(), err.status as 400, err.headers);
    }
    deps.logger.error({ path: c.req.path, err: err.message }, 'unhandled error in route');
    return c.json(new HttpError('INTERNAL').toJSON(), 500);
  });
  return app;
}
