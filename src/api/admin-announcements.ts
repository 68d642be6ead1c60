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
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { ANNOUNCEMENT_PREFERENCE_CATEGORY } from '../engine/content.ts';
import type { CampaignRequest } from '../store/port-campaigns.ts';
import { canonicalJson } from './notifications.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { AppKeyEnv, AppKeyVariables } from './auth.ts';
import { HttpError } from './errors.ts';
import { API_KEY_ERRORS, errorResponses, JSON_BODY_ERRORS, jsonBody, jsonResponse, SECURITY } from './openapi.ts';
import { bodyRefusal, catalogued, exactJsonBody, validatingRouter, type ExactBodyVariables } from './validation.ts';

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

/** A string of 1 to `max` code points, not only spaces (JSON Schema's lengths count code points too). */
const bannerText = (max: number) =>
  z
    .string()
    .refine((text) => text.trim() !== '' && codePoints(text) <= max)
    .openapi({ minLength: 1, maxLength: max });

/** Each field's refusal is `INVALID_ANNOUNCEMENT` with the message the route has always given. */
const AnnouncementRequest = catalogued(
  'UNPROCESSABLE_BODY',
  z.object({
    text: catalogued('INVALID_ANNOUNCEMENT', bannerText(ANNOUNCEMENT_MAX_CHARS), (text) =>
      typeof text === 'string' && text.trim() !== ''
        ? `text is longer than ${ANNOUNCEMENT_MAX_CHARS} characters`
        : 'text must be a non-empty string',
    ).openapi({ description: `At most ${ANNOUNCEMENT_MAX_CHARS} characters` }),
    expiresAt: catalogued(
      'INVALID_ANNOUNCEMENT',
      // `format` documents the time; parseExpiresAt is the check (a prefix and Date.parse, as always).
      z
        .union([z.string().openapi({ format: 'date-time' }), z.number().positive()])
        .refine((expiresAt) => parseExpiresAt(expiresAt) !== null),
      () => 'expiresAt must be an ISO 8601 time or unix seconds',
    ).openapi({ description: 'ISO 8601 or unix seconds, in the future' }),
    push: catalogued('INVALID_ANNOUNCEMENT', z.boolean().optional(), () => 'push must be true or false').openapi({
      description: 'Also push it to the users who enabled announcements (default false)',
    }),
    title: catalogued(
      'INVALID_ANNOUNCEMENT',
      bannerText(ANNOUNCEMENT_MAX_TITLE_CHARS).optional(),
      () => `title must be a non-empty string of at most ${ANNOUNCEMENT_MAX_TITLE_CHARS} characters`,
    ).openapi({ description: `The push's title (default "${ANNOUNCEMENT_DEFAULT_TITLE}")` }),
  }),
  bodyRefusal('Request body must be a JSON object'),
).openapi('AnnouncementRequest', { example: { text: 'Maintenance tonight from 22:00 UTC', expiresAt: '2099-01-01T00:00:00Z' } });

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

interface AnnouncementEnv {
  Variables: AppKeyVariables & ExactBodyVariables;
}

export function adminAnnouncementRoutes(deps: AdminAnnouncementDeps): OpenAPIHono<AnnouncementEnv> {
  const app = validatingRouter<AnnouncementEnv>();
  app.use('/v1/admin/announcements', deps.auth);
  /** After the key is checked (`deps.auth`, above) and before the schema: the body; each refusal counted and said once. */
  const counted: MiddlewareHandler<AnnouncementEnv> = async (c, next) => {
    await next();
    const refused = c.error instanceof HttpError && c.error.status < 500 ? c.error : null;
    if (refused === null || (refused.code !== 'UNPROCESSABLE_BODY' && refused.code !== 'INVALID_ANNOUNCEMENT')) return;
    deps.metrics.inboxApiRequests.inc({ route: 'admin-announcements', outcome: refused.code });
    deps.logger.warn({ route: 'admin-announcements', code: refused.code, reason: refused.message }, 'admin request refused');
  };
  const route = {
    ...ANNOUNCEMENT_ROUTE,
    middleware: [counted, exactJsonBody<AnnouncementEnv>({ maxBytes: ANNOUNCEMENT_MAX_BODY_BYTES, required: true })],
  };
  app.openapi(route, async (c) => {
    const { text, expiresAt, push = false, title = ANNOUNCEMENT_DEFAULT_TITLE } = c.req.valid('json');
    // The schema took a time; whether it is still ahead is now's question.
    const expiresAtMs = parseExpiresAt(expiresAt) ?? 0;
    const store = c.get('appStore');
    if (expiresAtMs <= store.clock.nowMs()) throw new HttpError('INVALID_ANNOUNCEMENT', 'expiresAt is not in the future');
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
