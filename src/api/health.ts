import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Metrics } from '../observability/metrics.ts';
import type { HealthProblem } from '../observability/health-monitor.ts';
import { errorResponses, jsonResponse, SECURITY } from './openapi.ts';
import { validatingRouter } from './validation.ts';

/** What `/health` and `/ready` report: the service key, one liveness flag per critical task, and the problems. */
export interface HealthSource {
  pubkey(): string | null;
  criticalFlags(): Record<string, boolean>;
  /** The problems beyond the task flags (`health-monitor.ts`); none when absent. */
  problems?(): Promise<HealthProblem[]>;
  /** Why this process should get no traffic yet (or any more), or null when it should. Ready when absent. */
  notReady?(): Promise<string | null>;
}

/**
 * `ok`: serving, nothing wrong. `degraded`: serving, but something is wrong an operator should see
 * (a relay, a provider): still 200, a restart would not help. `failing`: a critical task died or
 * the store does not answer: 503, so a probe restarts it or a balancer drains it.
 */
export type HealthStatus = 'ok' | 'degraded' | 'failing';

export interface HealthBody {
  status: HealthStatus;
  pubkey: string | null;
  tasks: Record<string, boolean>;
  problems: Array<Pick<HealthProblem, 'code' | 'severity' | 'message'>>;
}

export async function healthBody(source: HealthSource): Promise<HealthBody> {
  const tasks = source.criticalFlags();
  const dead = Object.entries(tasks)
    .filter(([, alive]) => !alive)
    .map(([task]) => task);
  const problems: HealthProblem[] = [
    ...(dead.length > 0
      ? [{ code: 'critical_flag_down', severity: 'failing', message: `critical tasks or checks down: ${dead.join(', ')}` } as const]
      : []),
    ...((await source.problems?.()) ?? []),
  ];
  const status: HealthStatus = problems.some((p) => p.severity === 'failing') ? 'failing' : problems.length > 0 ? 'degraded' : 'ok';
  return { status, pubkey: source.pubkey(), tasks, problems: problems.map(({ code, severity, message }) => ({ code, severity, message })) };
}

const HealthProblemView = z.object({
  code: z.string(),
  severity: z.enum(['degraded', 'failing']),
  message: z.string(),
});

const HealthView = z
  .object({
    status: z.enum(['ok', 'degraded', 'failing']),
    pubkey: z.string().nullable().openapi({ description: 'The service key (hex): what clients encrypt registrations to' }),
    tasks: z.record(z.string(), z.boolean()).openapi({ description: 'One liveness flag per critical task' }),
    problems: z.array(HealthProblemView),
  })
  .openapi('Health');

const Ready = z.object({ ready: z.literal(true) }).openapi('Ready');
const NotReady = z.object({ ready: z.literal(false), reason: z.string() }).openapi('NotReady');

export const HEALTH_ROUTES = {
  health: createRoute({
    method: 'get',
    path: '/health',
    operationId: 'getHealth',
    tags: ['service'],
    summary: 'Service health and the service pubkey',
    description: '200 while `ok` or `degraded`, 503 when `failing` (a critical task died or the store does not answer).',
    security: SECURITY.none,
    responses: {
      200: jsonResponse('Serving (`ok` or `degraded`)', HealthView),
      503: jsonResponse('Failing', HealthView),
      ...errorResponses([]),
    },
  }),
  ready: createRoute({
    method: 'get',
    path: '/ready',
    operationId: 'getReady',
    tags: ['service'],
    summary: 'Readiness for load balancers',
    security: SECURITY.none,
    responses: {
      200: jsonResponse('Ready for traffic', Ready),
      503: jsonResponse('Not ready: starting, stopping, or the store does not answer', NotReady),
      ...errorResponses([]),
    },
  }),
  metrics: createRoute({
    method: 'get',
    path: '/metrics',
    operationId: 'getMetrics',
    tags: ['service'],
    summary: 'Prometheus metrics (text exposition format)',
    security: SECURITY.none,
    responses: {
      200: { description: 'The metrics, never cached', content: { 'text/plain': { schema: z.string() } } },
      ...errorResponses([]),
    },
  }),
};

/**
 * `GET /health`: divine's fields (`status`, `pubkey`, `tasks`) and the `problems` behind the
 * status; 200 while `ok` or `degraded`, 503 when `failing` (divine answered 503 `degraded` for a
 * dead critical task: that is `failing` now, still 503). The pubkey is there either way because
 * clients discover the service key from it.
 * `GET /ready`: for load balancers, 200 `{"ready":true}` once the store is open and the roles run,
 * 503 `{"ready":false,"reason"}` before, while stopping, or when the store does not answer.
 * `GET /metrics` is the Prometheus text format, never cached.
 */
export function healthRoutes(deps: { health: HealthSource; metrics: Metrics }): OpenAPIHono {
  const app = validatingRouter();
  app.openapi(HEALTH_ROUTES.health, async (c) => {
    const body = await healthBody(deps.health);
    return c.json(body, body.status === 'failing' ? 503 : 200);
  });
  app.openapi(HEALTH_ROUTES.ready, async (c) => {
    const reason = (await deps.health.notReady?.()) ?? null;
    return reason === null ? c.json({ ready: true }, 200) : c.json({ ready: false, reason }, 503);
  });
  app.openapi(HEALTH_ROUTES.metrics, async (c) => {
    const text = await deps.metrics.render();
    return c.text(text, 200, { 'Content-Type': deps.metrics.contentType, 'Cache-Control': 'no-store' });
  });
  return app;
}
