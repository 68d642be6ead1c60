import { Hono } from 'hono';
import type { Metrics } from '../observability/metrics.ts';
import type { HealthProblem } from '../observability/health-monitor.ts';

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

/**
 * `GET /health`: divine's fields (`status`, `pubkey`, `tasks`) and the `problems` behind the
 * status; 200 while `ok` or `degraded`, 503 when `failing` (divine answered 503 `degraded` for a
 * dead critical task: that is `failing` now, still 503). The pubkey is there either way because
 * clients discover the service key from it.
 * `GET /ready`: for load balancers, 200 `{"ready":true}` once the store is open and the roles run,
 * 503 `{"ready":false,"reason"}` before, while stopping, or when the store does not answer.
 * `GET /metrics` is the Prometheus text format, never cached.
 */
export function healthRoutes(deps: { health: HealthSource; metrics: Metrics }): Hono {
  const app = new Hono();
  app.get('/health', async (c) => {
    const body = await healthBody(deps.health);
    return c.json(body, body.status === 'failing' ? 503 : 200);
  });
  app.get('/ready', async (c) => {
    const reason = (await deps.health.notReady?.()) ?? null;
    return reason === null ? c.json({ ready: true }, 200) : c.json({ ready: false, reason }, 503);
  });
  app.get('/metrics', async (c) => {
    const text = await deps.metrics.render();
    return c.body(text, 200, { 'Content-Type': deps.metrics.contentType, 'Cache-Control': 'no-store' });
  });
  return app;
}
