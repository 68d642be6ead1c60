/**
 * The operator console (docs/console.md): its routes for the composition root, and the reporter
 * every process runs.
 */
import type { Hono } from 'hono';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { StorePort } from '../store/port.ts';
import { consoleRoutes } from './routes.ts';
import { consoleAuth } from './session.ts';
import { consoleStaticRoutes, loadConsoleAssets } from './static.ts';

export { FleetReporter, TASK_FLEET_REPORTER } from './fleet-reporter.ts';
export { showFirstAdminKey, showOn } from './bootstrap-key.ts';

export interface ConsoleDeps {
  store: StorePort;
  sessionTtlMs: number;
  sampleIntervalMs: number;
  deliveryLogRetentionMs: number;
  metrics: Metrics;
  logger: Logger;
}

/**
 * Mount `/console` (the app) and `/console/api/*` on `app`, and send `GET /` there: a browser
 * pointed at the service's address lands on the console instead of a 404.
 */
export function mountConsole(app: Hono, deps: ConsoleDeps): void {
  const logger = deps.logger.child({ route: 'console' });
  app.get('/', (c) => c.redirect('/console', 302));
  const auth = consoleAuth({ store: deps.store, sessionTtlMs: deps.sessionTtlMs, metrics: deps.metrics, logger });
  app.route('/', auth.routes);
  app.route(
    '/',
    consoleRoutes({
      store: deps.store,
      requireSession: auth.requireSession,
      sampleIntervalMs: deps.sampleIntervalMs,
      deliveryLogRetentionMs: deps.deliveryLogRetentionMs,
      metrics: deps.metrics,
      logger,
    }),
  );
  app.route('/', consoleStaticRoutes(loadConsoleAssets(), logger));
}
