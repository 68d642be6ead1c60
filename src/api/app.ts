import { Hono } from 'hono';
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
      else deps.logger.debug({ path: c.req.path, code: err.code }, err.message);
      return c.json(err.toJSON(), err.status as 400, err.headers);
    }
    deps.logger.error({ path: c.req.path, err: err.message }, 'unhandled error in route');
    return c.json(new HttpError('INTERNAL').toJSON(), 500);
  });
  return app;
}
