/**
 * Campaigns (issue 15 item 1): `POST /v1/campaigns` (send or admin key; 202 `{id, duplicate}`,
 * the audience is never expanded inside the request), `GET /v1/campaigns/{id}` (consenting,
 * sent, deferred, failed, opened) and `POST /v1/campaigns/{id}/opened` (the app reports a
 * recipient's open, counted once). The app is the key's (`auth.ts`); another app's id is 404.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { bodyLimit } from 'hono/body-limit';
import type { Logger } from '../observability/logger.ts';
import type { CampaignRecord, CampaignRequest } from '../store/port-campaigns.ts';
import { requireAppKey, type AppKeyEnv, type AuthDeps } from './auth.ts';
import { HttpError } from './errors.ts';
import { API_KEY_ERRORS, errorResponses, VALIDATED_BODY_ERRORS } from './openapi.ts';
import type { LargerBody } from './body-limit.ts';
import { canonicalJson } from './notifications.ts';
import { CampaignAccepted, CampaignRequestSchema, CampaignView, NotificationIdParams, OpenedBody, OpenedResult } from './schemas.ts';

/** 10,000 pubkeys are about 700 KB of JSON. */
const CAMPAIGN_MAX_BODY_BYTES = 2 * 1024 * 1024;
/** A campaign request may be larger than `server.max_body_bytes`: its audience list. */
export const CAMPAIGN_LARGER_BODY: LargerBody = {
  method: 'POST',
  path: '/v1/campaigns',
  maxBytes: CAMPAIGN_MAX_BODY_BYTES,
  reason: 'a campaign may list its audience: up to 10,000 pubkeys, about 700 KB of JSON',
};

/** The campaign routes act on the app the key names, through its store view (`c.get('appStore')`). */
export interface CampaignRoutesDeps {
  auth: AuthDeps;
  /** How long an open is remembered (so it is counted once): the delivered-claim TTL. */
  openedTtlSecs: number;
  /** A campaign was created (wakes this process's scheduler). */
  onCreated: () => void;
  logger: Logger;
}

export function campaignView(campaign: CampaignRecord) {
  const { request, counts } = campaign;
  return {
    id: campaign.id,
    idempotencyKey: request.idempotencyKey,
    state: campaign.state,
    title: request.title,
    createdAt: new Date(campaign.createdAtMs).toISOString(),
    audience: request.audience === 'all' ? ('all' as const) : { pubkeys: request.audience.pubkeys.length },
    ...counts,
  };
}

export function campaignRoutes(app: OpenAPIHono<AppKeyEnv>, deps: CampaignRoutesDeps): void {
  const sendKeys = requireAppKey(deps.auth, ['send', 'admin']);
  const limit = bodyLimit({
    maxSize: CAMPAIGN_MAX_BODY_BYTES,
    onError: () => {
      throw new HttpError('BODY_TOO_LARGE');
    },
  });

  const create = createRoute({
    method: 'post',
    path: '/v1/campaigns',
    operationId: 'createCampaign',
    tags: ['platform'],
    summary: 'Send a campaign to every consenting user of the app (or of a list), deferred out of 21:00–06:59 local',
    security: [{ apiKey: [] }],
    middleware: [sendKeys, limit] as const,
    request: { body: { required: true, content: { 'application/json': { schema: CampaignRequestSchema } } } },
    responses: {
      202: {
        description: 'Accepted (or the campaign created earlier with this idempotencyKey)',
        content: { 'application/json': { schema: CampaignAccepted } },
      },
      ...errorResponses([...API_KEY_ERRORS, ...VALIDATED_BODY_ERRORS, 'IDEMPOTENCY_KEY_REUSED']),
    },
  });
  app.openapi(create, async (c) => {
    const store = c.get('appStore');
    const body = c.req.valid('json');
    const appId = c.get('appId');
    const request: CampaignRequest =
      body.audience === 'all' ? { ...body, audience: 'all' } : { ...body, audience: { pubkeys: [...new Set(body.audience.pubkeys)] } };
    const requestHash = createHash('sha256').update(canonicalJson(request)).digest('hex');
    const id = randomUUID();
    const result = await store.createCampaign({ appId, id, request, requestHash });
    if (!result.created) {
      if (!result.sameRequest) throw new HttpError('IDEMPOTENCY_KEY_REUSED', 'idempotencyKey was used with a different campaign');
      return c.json({ id: result.existingId, duplicate: true }, 202);
    }
    deps.logger.info(
      { appId, campaignId: id, audience: request.audience === 'all' ? 'all' : request.audience.pubkeys.length },
      'campaign created',
    );
    deps.onCreated();
    return c.json({ id, duplicate: false }, 202);
  });

  const read = createRoute({
    method: 'get',
    path: '/v1/campaigns/{id}',
    operationId: 'getCampaign',
    tags: ['platform'],
    summary: 'A campaign and its counts',
    security: [{ apiKey: [] }],
    middleware: [sendKeys] as const,
    request: { params: NotificationIdParams },
    responses: {
      200: { description: 'The campaign', content: { 'application/json': { schema: CampaignView } } },
      ...errorResponses([...API_KEY_ERRORS, 'VALIDATION_FAILED']),
    },
  });
  app.openapi(read, async (c) => {
    const store = c.get('appStore');
    const campaign = await store.getCampaign(c.get('appId'), c.req.valid('param').id);
    if (!campaign) throw new HttpError('NOT_FOUND');
    return c.json(campaignView(campaign), 200);
  });

  const opened = createRoute({
    method: 'post',
    path: '/v1/campaigns/{id}/opened',
    operationId: 'recordCampaignOpened',
    tags: ['platform'],
    summary: 'Record that a recipient opened a campaign push (counted once per recipient)',
    security: [{ apiKey: [] }],
    middleware: [sendKeys] as const,
    request: { params: NotificationIdParams, body: { required: true, content: { 'application/json': { schema: OpenedBody } } } },
    responses: {
      200: { description: 'Recorded, or already recorded', content: { 'application/json': { schema: OpenedResult } } },
      ...errorResponses([...API_KEY_ERRORS, ...VALIDATED_BODY_ERRORS]),
    },
  });
  app.openapi(opened, async (c) => {
    const store = c.get('appStore');
    const appId = c.get('appId');
    const { id } = c.req.valid('param');
    const recipient = c.req.valid('json').recipient;
    if (recipient === undefined) throw new HttpError('VALIDATION_FAILED', 'recipient: required with an app key');
    const campaign = await store.getCampaign(appId, id);
    if (!campaign) throw new HttpError('NOT_FOUND');
    // The campaign claim table doubles as the once-per-recipient marker of an open.
    const first = (await store.claimCampaignDelivery(`${appId}:opened:${id}:${recipient}`, deps.openedTtlSecs)) !== null;
    if (first) {
      await store.countCampaign(appId, id, 'opened', 1);
      await store.appendDeliveryLog([{ appId, notificationId: id, recipient, type: 'campaign', status: 'opened' }]);
    }
    return c.json({ recorded: first }, 200);
  });
}
