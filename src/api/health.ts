import { Hono } from 'hono';
import type { Metrics } from '../observability/metrics.ts';

/** What `/health` reports: the service key and one liveness flag per critical task. */
export interface HealthSource {
  pubkey(): string | null;
  criticalFlags(): Record<string, boolean>;
}

export interface HealthBody {
  status: 'ok' | 'degraded';
  pubkey: string | null;
  tasks: Record<string, boolean>;
}

export function healthBody(source: HealthSource): HealthBody {
  const tasks = source.criticalFlags();
  const healthy = Object.values(tasks).every(Boolean);
  return { status: healthy ? 'ok' : 'degraded', pubkey: source.pubkey(), tasks };
}

/**
 * `GET /health` is both Kubernetes probes: 200 while every critical task lives, 503 `degraded`
 * once one died; the pubkey is there either way because clients discover the service key from it.
 * `GET /metrics` is the Prometheus text format, never cached.
 */
export function healthRoutes(deps: { health: HealthSource; metrics: Metrics }): Hono {
  const app = new Hono();
  app.get('/health', (c) => {
    const body = healthBody(deps.health);
    return c.json(body, body.status === 'ok' ? 200 : 503);
  });
  app.get('/metrics', async (c) => {
    const text = await deps.metrics.render();
    return c.body(text, 200, { 'Content-Type': deps.metrics.contentType, 'Cache-Control': 'no-store' });
  });
  return app;
}
