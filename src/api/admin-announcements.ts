/**
 * `POST /v1/admin/announcements {text, expiresAt}`: an operator publishes an announcement (issue
 * 13). Ids increase; every user's announcement counter is the number of active announcements
 * above their high-water mark, so nothing is written per user and one that expires unseen stops
 * counting by itself.
 *
 * The sub-app takes its authentication from the caller (`auth`, a Hono middleware run before the
 * route): the app's admin API keys (`PlatformApi.adminKeys`), which set the app and its store view,
 * so an announcement is the app's own and reaches that app's users only.
 */
import { Hono, type MiddlewareHandler } from 'hono';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { AppKeyEnv } from './auth.ts';
import { HttpError } from './errors.ts';
import { readJsonBody } from './json-body.ts';

/** Longest announcement text, in code points: a banner, not an article. */
export const ANNOUNCEMENT_MAX_CHARS = 2_000;
export const ANNOUNCEMENT_MAX_BODY_BYTES = 16 * 1024;

export interface AdminAnnouncementDeps {
  /** Authentication of the admin routes, chosen by the composition root; sets `appId` and `appStore`. */
  auth: MiddlewareHandler<AppKeyEnv>;
  metrics: Metrics;
  logger: Logger;
}

/** `expiresAt` as an ISO 8601 string or unix seconds; null when neither. */
export function parseExpiresAt(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) return Math.round(value * 1000);
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value)) {
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? null : ms;
  }
  return null;
}

function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

export function adminAnnouncementRoutes(deps: AdminAnnouncementDeps): Hono<AppKeyEnv> {
  const app = new Hono<AppKeyEnv>();
  app.use('/v1/admin/announcements', deps.auth);
  app.post('/v1/admin/announcements', async (c) => {
    const refuse = (code: 'UNPROCESSABLE_BODY' | 'INVALID_ANNOUNCEMENT', reason: string): never => {
      deps.metrics.inboxApiRequests.inc({ route: 'admin-announcements', outcome: code });
      deps.logger.warn({ route: 'admin-announcements', code, reason }, 'admin request refused');
      throw new HttpError(code, reason);
    };
    const body = await readJsonBody(c, ANNOUNCEMENT_MAX_BODY_BYTES);
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      return refuse('UNPROCESSABLE_BODY', 'Request body must be a JSON object');
    const { text, expiresAt } = body as Record<string, unknown>;
    if (typeof text !== 'string' || text.trim() === '') return refuse('INVALID_ANNOUNCEMENT', 'text must be a non-empty string');
    if (codePoints(text) > ANNOUNCEMENT_MAX_CHARS)
      return refuse('INVALID_ANNOUNCEMENT', `text is longer than ${ANNOUNCEMENT_MAX_CHARS} characters`);
    const expiresAtMs = parseExpiresAt(expiresAt);
    if (expiresAtMs === null) return refuse('INVALID_ANNOUNCEMENT', 'expiresAt must be an ISO 8601 time or unix seconds');
    const store = c.get('appStore');
    if (expiresAtMs <= store.clock.nowMs()) return refuse('INVALID_ANNOUNCEMENT', 'expiresAt is not in the future');
    const announcement = await store.publishAnnouncement(text, expiresAtMs);
    deps.metrics.inboxApiRequests.inc({ route: 'admin-announcements', outcome: 'ok' });
    deps.logger.info(
      { app: c.get('appId'), id: announcement.id, expiresAt: new Date(expiresAtMs).toISOString() },
      'announcement published',
    );
    return c.json(
      {
        id: announcement.id,
        text: announcement.text,
        createdAt: new Date(announcement.createdAtMs).toISOString(),
        expiresAt: new Date(announcement.expiresAtMs).toISOString(),
      },
      201,
    );
  });
  return app;
}
