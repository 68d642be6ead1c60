/**
 * `POST /v1/admin/announcements {text, expiresAt, push?, title?}`: an operator publishes an
 * announcement (issue 13). Ids increase; every user's announcement counter is the number of
 * active announcements above their high-water mark, so nothing is written per user and one that
 * expires unseen stops counting by itself.
 *
 * With `push: true` it is also pushed to every user of the app who enabled the announcement
 * preference category (kind 3083 `kinds` holding {@link ANNOUNCEMENT_PREFERENCE_CATEGORY}; off by
 * default): a campaign of kind `announcement` (`src/platform/campaign-worker.ts`) walks the app's
 * devices page by page on the scheduler, so a million users are never in memory, and each device
 * is pushed once (the campaign claims). Its id is `announcement-{id}`; `GET /v1/campaigns/{id}`
 * reports its counts.
 *
 * The sub-app takes its authentication from the caller (`auth`, a Hono middleware run before the
 * route): the app's admin API keys (`PlatformApi.adminKeys`), which set the app and its store view,
 * so an announcement is the app's own and reaches that app's users only.
 */
import { createHash } from 'node:crypto';
import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { ANNOUNCEMENT_PREFERENCE_CATEGORY } from '../engine/content.ts';
import type { CampaignRequest } from '../store/port-campaigns.ts';
import { canonicalJson } from './notifications.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { AppKeyEnv } from './auth.ts';
import { HttpError } from './errors.ts';
import { readJsonBody } from './json-body.ts';
import { API_KEY_ERRORS, errorResponses, JSON_BODY_ERRORS, jsonBody, jsonResponse, mountDocumented, SECURITY } from './openapi.ts';

/** Longest announcement text, in code points: a banner, not an article. */
export const ANNOUNCEMENT_MAX_CHARS = 2_000;
export const ANNOUNCEMENT_MAX_BODY_BYTES = 16 * 1024;
/** The push's title when the request names none. */
export const ANNOUNCEMENT_DEFAULT_TITLE = 'Announcement';
/** Longest push title, in code points: one line of a notification banner. */
export const ANNOUNCEMENT_MAX_TITLE_CHARS = 100;

export interface AdminAnnouncementDeps {
  /** Authentication of the admin routes, chosen by the composition root; sets `appId` and `appStore`. */
  auth: MiddlewareHandler<AppKeyEnv>;
  metrics: Metrics;
  logger: Logger;
  /** Wakes the campaign scheduler once an announcement push is queued (absent: it finds it on its next poll). */
  onPushCreated?: () => void;
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

const AnnouncementRequest = z
  .object({
    text: z
      .string()
      .min(1)
      .max(ANNOUNCEMENT_MAX_CHARS)
      .openapi({ description: `At most ${ANNOUNCEMENT_MAX_CHARS} characters` }),
    expiresAt: z
      .union([z.iso.datetime({ offset: true }), z.number().positive()])
      .openapi({ description: 'ISO 8601 or unix seconds, in the future' }),
    push: z.boolean().optional().openapi({ description: 'Also push it to the users who enabled announcements (default false)' }),
    title: z
      .string()
      .min(1)
      .max(ANNOUNCEMENT_MAX_TITLE_CHARS)
      .optional()
      .openapi({ description: `The push's title (default "${ANNOUNCEMENT_DEFAULT_TITLE}")` }),
  })
  .openapi('AnnouncementRequest', { example: { text: 'Maintenance tonight from 22:00 UTC', expiresAt: '2099-01-01T00:00:00Z' } });

const PublishedAnnouncement = z
  .object({
    id: z.number().int(),
    text: z.string(),
    createdAt: z.string(),
    expiresAt: z.string(),
    push: z
      .object({ campaignId: z.string(), preferenceCategory: z.number().int() })
      .optional()
      .openapi({ description: 'With `push: true`: the campaign pushing it (`GET /v1/campaigns/{id}`)' }),
  })
  .openapi('PublishedAnnouncement');

export const ANNOUNCEMENT_ROUTE = createRoute({
  method: 'post',
  path: '/v1/admin/announcements',
  operationId: 'publishAnnouncement',
  tags: ['admin'],
  summary: 'Publish an announcement to every user of the app, optionally pushed',
  security: SECURITY.apiKey,
  request: { body: jsonBody(AnnouncementRequest) },
  responses: {
    201: jsonResponse('Published', PublishedAnnouncement),
    ...errorResponses([...API_KEY_ERRORS, ...JSON_BODY_ERRORS, 'UNPROCESSABLE_BODY', 'INVALID_ANNOUNCEMENT']),
  },
});

export function adminAnnouncementRoutes(deps: AdminAnnouncementDeps): OpenAPIHono<AppKeyEnv> {
  const app = new OpenAPIHono<AppKeyEnv>();
  app.use('/v1/admin/announcements', deps.auth);
  mountDocumented(app, ANNOUNCEMENT_ROUTE, async (c) => {
    const refuse = (code: 'UNPROCESSABLE_BODY' | 'INVALID_ANNOUNCEMENT', reason: string): never => {
      deps.metrics.inboxApiRequests.inc({ route: 'admin-announcements', outcome: code });
      deps.logger.warn({ route: 'admin-announcements', code, reason }, 'admin request refused');
      throw new HttpError(code, reason);
    };
    const body = await readJsonBody(c, ANNOUNCEMENT_MAX_BODY_BYTES);
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      return refuse('UNPROCESSABLE_BODY', 'Request body must be a JSON object');
    const { text, expiresAt, push = false, title = ANNOUNCEMENT_DEFAULT_TITLE } = body as Record<string, unknown>;
    if (typeof push !== 'boolean') return refuse('INVALID_ANNOUNCEMENT', 'push must be true or false');
    if (typeof title !== 'string' || title.trim() === '' || codePoints(title) > ANNOUNCEMENT_MAX_TITLE_CHARS)
      return refuse('INVALID_ANNOUNCEMENT', `title must be a non-empty string of at most ${ANNOUNCEMENT_MAX_TITLE_CHARS} characters`);
    if (typeof text !== 'string' || text.trim() === '') return refuse('INVALID_ANNOUNCEMENT', 'text must be a non-empty string');
    if (codePoints(text) > ANNOUNCEMENT_MAX_CHARS)
      return refuse('INVALID_ANNOUNCEMENT', `text is longer than ${ANNOUNCEMENT_MAX_CHARS} characters`);
    const expiresAtMs = parseExpiresAt(expiresAt);
    if (expiresAtMs === null) return refuse('INVALID_ANNOUNCEMENT', 'expiresAt must be an ISO 8601 time or unix seconds');
    const store = c.get('appStore');
    if (expiresAtMs <= store.clock.nowMs()) return refuse('INVALID_ANNOUNCEMENT', 'expiresAt is not in the future');
    const announcement = await store.publishAnnouncement(text, expiresAtMs);
    let pushCampaignId: string | null = null;
    if (push) {
      const appId = c.get('appId');
      const request: CampaignRequest = {
        idempotencyKey: `announcement-${announcement.id}`,
        title,
        body: text,
        audience: 'all',
        kind: 'announcement',
        announcementId: announcement.id,
      };
      pushCampaignId = `announcement-${announcement.id}`;
      // Ids are never reused, so the create always creates; the key guards a retried request all the same.
      const requestHash = createHash('sha256').update(canonicalJson(request)).digest('hex');
      await store.createCampaign({ appId, id: pushCampaignId, request, requestHash });
      deps.onPushCreated?.();
    }
    deps.metrics.inboxApiRequests.inc({ route: 'admin-announcements', outcome: 'ok' });
    deps.logger.info(
      { app: c.get('appId'), id: announcement.id, expiresAt: new Date(expiresAtMs).toISOString(), push: pushCampaignId },
      'announcement published',
    );
    return c.json(
      {
        id: announcement.id,
        text: announcement.text,
        createdAt: new Date(announcement.createdAtMs).toISOString(),
        expiresAt: new Date(announcement.expiresAtMs).toISOString(),
        ...(pushCampaignId === null ? {} : { push: { campaignId: pushCampaignId, preferenceCategory: ANNOUNCEMENT_PREFERENCE_CATEGORY } }),
      },
      201,
    );
  });
  return app;
}
