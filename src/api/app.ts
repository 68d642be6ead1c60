import { Hono } from 'hono';
import { routePath } from 'hono/route';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { HttpError } from './errors.ts';
import { healthRoutes, type HealthSource } from './health.ts';

export interface ApiDeps {
  health: HealthSource;
  metrics: Metrics;
  logger: Logger;
}

/** The HTTP surface: every route is mounted here, errors are written in one place. */
export function createApiApp(deps: ApiDeps): Hono {
  const app = new Hono();
  app.route('/', healthRoutes(deps));

  app.notFound(() => {
    throw new HttpError('NOT_FOUND');
  });
  app.onError((err, c) => {
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
