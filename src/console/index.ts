/**
 * The operator console (docs/console.md): its routes for the composition root, and the reporter
 * every process runs.
 */
import type { Hono, MiddlewareHandler } from 'hono';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { StorePort } from '../store/port.ts';
import type { ClientAddressPolicy } from '../api/client-address.ts';
import { DEFAULT_APP_ID } from '../platform/apps.ts';
import { consoleRoutes, type ConsoleApp } from './routes.ts';
import type { ConsoleSendApi } from './test-send.ts';
import { CONSOLE_API_PATH, consoleAuth } from './session.ts';
import { consoleStaticRoutes, loadConsoleAssets } from './static.ts';

export { FleetReporter, TASK_FLEET_REPORTER } from './fleet-reporter.ts';
export { showFirstAdminKey, showOn } from './bootstrap-key.ts';

export type { ConsoleApp } from './routes.ts';

export interface ConsoleDeps {
  /** The service's store (the default app's view): sessions, API keys, the fleet's reports. */
  store: StorePort;
  /** Every app the service hosts, the default first (its view is `store`); only the default when absent. */
  apps?: readonly ConsoleApp[];
  /** `server.public_url`, or '' (see `session.ts`: the cookie's `Secure` and the login's origin check). */
  publicUrl: string;
  clientAddress: ClientAddressPolicy;
  sessionTtlMs: number;
  sampleIntervalMs: number;
  deliveryLogRetentionMs: number;
  /** The send API's settings per app and its wake-up, for the test send; absent, no test send. */
  sendApi?: ConsoleSendApi;
  metrics: Metrics;
  logger: Logger;
  /** Counts every login attempt, right or wrong, per client address (`rate_limits.console_login_per_minute`). */
  loginLimit?: MiddlewareHandler;
}

/**
 * Mount `/console` (the app) and `/console/api/*` on `app`, and send `GET /` there: a browser
 * pointed at the service's address lands on the console instead of a 404.
 */
export function mountConsole(app: Hono, deps: ConsoleDeps): void {
  const logger = deps.logger.child({ route: 'console' });
  app.get('/', (c) => c.redirect('/console', 302));
  const auth = consoleAuth({
    store: deps.store,
    publicUrl: deps.publicUrl,
    clientAddress: deps.clientAddress,
    sessionTtlMs: deps.sessionTtlMs,
    metrics: deps.metrics,
    logger,
  });
  // Before the login route: an attempt over the limit reads no body and looks up no key.
  if (deps.loginLimit) app.post(`${CONSOLE_API_PATH}/login`, deps.loginLimit);
  app.route('/', auth.routes);
  app.route(
    '/',
    consoleRoutes({
      store: deps.store,
      apps: deps.apps ?? [{ id: DEFAULT_APP_ID, store: deps.store }],
      requireSession: auth.requireSession,
      sampleIntervalMs: deps.sampleIntervalMs,
      deliveryLogRetentionMs: deps.deliveryLogRetentionMs,
      ...(deps.sendApi ? { sendApi: deps.sendApi } : {}),
      metrics: deps.metrics,
      logger,
    }),
  );
  app.route('/', consoleStaticRoutes(loadConsoleAssets(), logger));
}
