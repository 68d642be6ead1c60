/**
 * The send API: `POST /v1/notifications` (202 `{id, duplicate}`), `GET /v1/notifications/{id}`
 * (per-recipient outcomes from the delivery log), `DELETE /v1/notifications/{id}` (cancel a send
 * that has not started) and `POST /v1/notifications/{id}/opened` (engagement). Every query is
 * scoped by the app the key resolves to (`auth.ts`), never by the body; another app's id is 404.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { bodyLimit } from 'hono/body-limit';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { DeliveryLogEntry } from '../store/port-delivery-log.ts';
import type { SendRecord, SendRequest } from '../store/port-sends.ts';
import type { StorePort } from '../store/port.ts';
import type { MiddlewareHandler } from 'hono';
import { createEventVerifier, type EventVerifier } from '../nostr/event.ts';
import { nip98ReplayGuard } from '../nostr/nip98.ts';
import { DEFAULT_APP_ID } from '../platform/apps.ts';
import { requireAppKey, type AppKeyEnv, type AuthDeps } from './auth.ts';
import { authenticateNip98, type Nip98Auth } from './nip98-auth.ts';
import { HttpError } from './errors.ts';
import type { LargerBody } from './body-limit.ts';
import { API_KEY_ERRORS, errorResponses, NIP98_ERRORS, VALIDATED_BODY_ERRORS } from './openapi.ts';
import {
  CancelResult,
  IdempotencyHeaders,
  NotificationIdParams,
  NotificationView,
  OpenedBody,
  OpenedResult,
  SendAccepted,
  sendRequestSchema,
} from './schemas.ts';

/** A request of 10,000 recipients is about 700 KB of JSON; anything much larger is not a real caller. */
export const SEND_MAX_BODY_BYTES = 2 * 1024 * 1024;
const OPENED_MAX_BODY_BYTES = 4 * 1024;
/** The send request may be larger than `server.max_body_bytes`: its recipient list. */
export const SEND_LARGER_BODY: LargerBody = {
  method: 'POST',
  path: '/v1/notifications',
  maxBytes: SEND_MAX_BODY_BYTES,
  reason: 'a send names up to 10,000 recipients, about 700 KB of JSON',
};
/** Entries read back for one notification's outcomes: every device of every recipient, a few attempts each. */
const OUTCOME_READ_LIMIT = 200_000;
/** Either scheme opens a notification (an OpenAPI security list: one entry per alternative). */
const OPENED_SECURITY: Array<Record<string, string[]>> = [{ apiKey: [] }, { nip98: [] }];

/** What the send API needs of one app: its store view and its `send_api` settings. */
export interface SendApiAppSettings {
  store: StorePort;
  /** App type → preference category (`send_api.types`). */
  typeCategories: ReadonlyMap<string, number>;
  maxRecipients: number;
  idempotencyTtlSecs: number;
  recordTtlSecs: number;
  /** Kept as long as the log keeps the `opened` entry it guards. */
  openedClaimTtlSecs: number;
  /** `delivery_log.retention_days`: how far back the admin log reads by default. */
  retentionDays: number;
}

export interface NotificationRoutesDeps extends SendApiAppSettings {
  /** The default app's settings are the fields above; `appSettings` gives any configured app's (tenancy). */
  appSettings?: (appId: string) => SendApiAppSettings;
  /** The largest `max_recipients` of any app: the schema's bound (each app's own is checked after). */
  schemaMaxRecipients?: number;
  auth: AuthDeps;
  /**
   * The service's NIP-98 check (its verifier, replay guard, and `server.public_url`, which the
   * signed `u` is compared with). Absent (tests of the API alone): a verifier loaded on the first
   * NIP-98 request and the URL as received.
   */
  nip98?: Nip98Auth;
  /** A send was created (wakes this process's scheduler). */
  onCreated: () => void;
  metrics: Metrics;
  logger: Logger;
}

/** JSON with object keys sorted, so the same request hashes the same whatever its key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

type RecipientView = {
  pubkey: string;
  status: 'pending' | 'queued' | 'sent' | 'failed' | 'retrying' | 'suppressed';
  providerMessageId?: string;
  reason?: string;
  opened: boolean;
};

/** Each recipient's outcome from the log: sent when any device took it, otherwise the latest entry. */
export function recipientOutcomes(send: SendRecord, entries: readonly DeliveryLogEntry[]): RecipientView[] {
  const views = new Map<string, RecipientView>();
  for (const pubkey of send.request.recipients) views.set(pubkey, { pubkey, status: 'pending', opened: false });
  for (const entry of entries) {
    const view = views.get(entry.recipient);
    if (!view) continue;
    if (entry.status === 'opened') {
      view.opened = true;
      continue;
    }
    if (view.status === 'sent' && entry.status !== 'sent') continue;
    if (entry.status === 'sent' && view.status === 'sent') continue;
    view.status = entry.status;
    delete view.reason;
    delete view.providerMessageId;
    if (entry.providerMessageId !== undefined) view.providerMessageId = entry.providerMessageId;
    if (entry.error !== undefined) view.reason = entry.error;
  }
  return [...views.values()];
}

/**
 * `Authorization: Nostr …` (NIP-98, the recipient's own signature over this request, body
 * included) or an API key. With NIP-98 the app is `X-App`'s, or the default one; an unknown app is
 * 404. The signature verifier is loaded on the first NIP-98 request, so api processes that never
 * see one never load it.
 */
function keyOrNip98(deps: NotificationRoutesDeps, keys: MiddlewareHandler<AppKeyEnv>, maxBodyBytes: number): MiddlewareHandler<AppKeyEnv> {
  let verifier: Promise<EventVerifier> | undefined;
  const onRefused = (code: string): void => deps.metrics.apiRequests.inc({ route: 'opened', outcome: `NIP98_${code}` });
  // Opens share the user API's NIP-98 rate limits (per address, then per pubkey).
  const limits = deps.auth.nip98Limits ? { limits: deps.auth.nip98Limits } : {};
  const nip98 = async (): Promise<Nip98Auth> =>
    deps.nip98
      ? { ...deps.nip98, onRefused, ...limits }
      : {
          verifier: await (verifier ??= createEventVerifier()),
          replay: nip98ReplayGuard(deps.store),
          clock: deps.store.clock,
          logger: deps.logger,
          onRefused,
          ...limits,
        };
  const limit = bodyLimit({
    maxSize: maxBodyBytes,
    onError: () => {
      throw new HttpError('BODY_TOO_LARGE');
    },
  });
  const checked: MiddlewareHandler<AppKeyEnv> = async (c, next) => {
    if (!(c.req.header('authorization') ?? '').startsWith('Nostr ')) return keys(c, next);
    const appId = c.req.header('x-app') ?? DEFAULT_APP_ID;
    if (!deps.auth.apps.includes(appId)) throw new HttpError('NOT_FOUND');
    // Hono keeps the bytes, so the JSON validator reads the same body afterwards.
    const body = new Uint8Array(await c.req.arrayBuffer());
    const pubkey = await authenticateNip98(c, await nip98(), body);
    c.set('appId', appId);
    c.set('appStore', settingsOf(deps, appId).store);
    c.set('nip98Pubkey', pubkey);
    await next();
  };
  // The body is read (for the payload tag) only after the limit has let it through.
  return async (c, next) =>
    limit(c, async () => {
      await checked(c, next);
    });
}

function settingsOf(deps: NotificationRoutesDeps, appId: string): SendApiAppSettings {
  return deps.appSettings?.(appId) ?? deps;
}

/** What {@link acceptSend} needs: the app's settings, and what to tell of a send created. */
export interface AcceptSendDeps {
  settings: SendApiAppSettings;
  /** A send was created (wakes this process's scheduler). */
  onCreated: () => void;
  metrics: Metrics;
  logger: Logger;
}

/**
 * Accept a send of app `appId` (a body the send schema validated): the app's own recipient bound
 * and types checked, the send stored for the scheduler (with its Idempotency-Key, when given).
 * `POST /v1/notifications` and the console's test send (`console/test-send.ts`) both come here,
 * so a test push takes exactly the path of a real one. Throws the catalogue's 422
 * (`VALIDATION_FAILED`, `UNKNOWN_TYPE`) and 409 (`IDEMPOTENCY_KEY_REUSED`).
 */
export async function acceptSend(
  deps: AcceptSendDeps,
  appId: string,
  body: SendRequest,
  idempotencyKey: string | undefined,
): Promise<{ id: string; duplicate: boolean }> {
  const { settings } = deps;
  const { store } = settings;
  const count = (outcome: string) => deps.metrics.apiRequests.inc({ route: 'send', outcome });
  if (body.recipients.length > settings.maxRecipients) {
    count('VALIDATION_FAILED');
    throw new HttpError('VALIDATION_FAILED', `recipients: at most ${settings.maxRecipients} for this app`);
  }
  if (!settings.typeCategories.has(body.type)) {
    count('UNKNOWN_TYPE');
    deps.logger.warn({ appId, type: body.type }, 'send refused: type not in send_api.types');
    throw new HttpError('UNKNOWN_TYPE', `Unknown notification type \`${body.type}\`; add it to send_api.types`);
  }
  const nowMs = store.clock.nowMs();
  const sendAtMs = body.sendAt === undefined ? nowMs : Math.max(Date.parse(body.sendAt), nowMs);
  const request: SendRequest = { ...body, recipients: [...new Set(body.recipients)] };
  const id = randomUUID();
  const recordTtlSecs = settings.recordTtlSecs + (sendAtMs - nowMs) / 1000;
  // The request's hash only tells a retry from a reuse of its key: without a key there is nothing to compare.
  const idempotency =
    idempotencyKey === undefined
      ? null
      : {
          key: idempotencyKey,
          requestHash: createHash('sha256').update(canonicalJson(body)).digest('hex'),
          ttlSecs: settings.idempotencyTtlSecs,
        };
  const result = await store.createSend({ appId, id, request, sendAtMs }, recordTtlSecs, idempotency);
  if (!result.created) {
    if (!result.sameRequest) {
      count('IDEMPOTENCY_KEY_REUSED');
      deps.logger.warn({ appId, notificationId: result.existingId }, 'send refused: Idempotency-Key reused with another body');
      throw new HttpError('IDEMPOTENCY_KEY_REUSED');
    }
    count('duplicate');
    return { id: result.existingId, duplicate: true };
  }
  count('ok');
  deps.logger.info(
    { appId, notificationId: id, recipients: request.recipients.length, sendAtMs, priority: body.priority },
    'send accepted',
  );
  deps.onCreated();
  return { id, duplicate: false };
}

export function notificationRoutes(app: OpenAPIHono<AppKeyEnv>, deps: NotificationRoutesDeps): void {
  const sendKeys = requireAppKey(deps.auth, ['send', 'admin']);
  const count = (route: string, outcome: string) => deps.metrics.apiRequests.inc({ route, outcome });
  const tooLarge = (limit: number) =>
    bodyLimit({
      maxSize: limit,
      onError: () => {
        throw new HttpError('BODY_TOO_LARGE');
      },
    });

  const create = createRoute({
    method: 'post',
    path: '/v1/notifications',
    operationId: 'sendNotification',
    tags: ['platform'],
    summary: 'Send a notification to up to 10,000 recipients',
    security: [{ apiKey: [] }],
    middleware: [sendKeys, tooLarge(SEND_MAX_BODY_BYTES)] as const,
    request: {
      headers: IdempotencyHeaders,
      body: {
        required: true,
        content: { 'application/json': { schema: sendRequestSchema(deps.schemaMaxRecipients ?? deps.maxRecipients) } },
      },
    },
    responses: {
      202: {
        description: 'Accepted (or a duplicate of an earlier request with the same Idempotency-Key)',
        content: { 'application/json': { schema: SendAccepted } },
      },
      ...errorResponses([...API_KEY_ERRORS, ...VALIDATED_BODY_ERRORS, 'UNKNOWN_TYPE', 'IDEMPOTENCY_KEY_REUSED']),
    },
  });
  app.openapi(create, async (c) => {
    const accepted = await acceptSend(
      { settings: settingsOf(deps, c.get('appId')), onCreated: deps.onCreated, metrics: deps.metrics, logger: deps.logger },
      c.get('appId'),
      c.req.valid('json'),
      c.req.valid('header')['idempotency-key'],
    );
    return c.json(accepted, 202);
  });

  const read = createRoute({
    method: 'get',
    path: '/v1/notifications/{id}',
    operationId: 'getNotification',
    tags: ['platform'],
    summary: 'A notification and each recipient’s outcome',
    security: [{ apiKey: [] }],
    middleware: [sendKeys] as const,
    request: { params: NotificationIdParams },
    responses: {
      200: { description: 'The notification', content: { 'application/json': { schema: NotificationView } } },
      ...errorResponses([...API_KEY_ERRORS, 'VALIDATION_FAILED']),
    },
  });
  app.openapi(read, async (c) => {
    const appId = c.get('appId');
    const { id } = c.req.valid('param');
    const store = c.get('appStore');
    const send = await store.getSend(appId, id);
    if (!send) throw new HttpError('NOT_FOUND');
    const entries = await store.readDeliveryLog(appId, { notificationId: id, limit: OUTCOME_READ_LIMIT });
    const recipients = recipientOutcomes(send, entries);
    const counts: Record<string, number> = {};
    for (const r of recipients) counts[r.status] = (counts[r.status] ?? 0) + 1;
    counts.opened = recipients.filter((r) => r.opened).length;
    count('get', 'ok');
    return c.json(
      {
        id,
        state: send.state,
        type: send.request.type,
        priority: send.request.priority,
        sendAt: new Date(send.sendAtMs).toISOString(),
        createdAt: new Date(send.createdAtMs).toISOString(),
        counts,
        recipients,
      },
      200,
    );
  });

  const cancel = createRoute({
    method: 'delete',
    path: '/v1/notifications/{id}',
    operationId: 'cancelNotification',
    tags: ['platform'],
    summary: 'Cancel a scheduled notification that has not started',
    security: [{ apiKey: [] }],
    middleware: [sendKeys] as const,
    request: { params: NotificationIdParams },
    responses: {
      200: { description: 'Cancelled (now or before)', content: { 'application/json': { schema: CancelResult } } },
      ...errorResponses([...API_KEY_ERRORS, 'VALIDATION_FAILED', 'NOT_CANCELLABLE']),
    },
  });
  app.openapi(cancel, async (c) => {
    const appId = c.get('appId');
    const { id } = c.req.valid('param');
    const result = await c.get('appStore').cancelSend(appId, id);
    count('cancel', result);
    if (result === 'not_found') throw new HttpError('NOT_FOUND');
    if (result === 'not_cancellable') throw new HttpError('NOT_CANCELLABLE');
    deps.logger.info({ appId, notificationId: id }, 'send cancelled');
    return c.json({ id, state: 'cancelled' as const }, 200);
  });

  const opened = createRoute({
    method: 'post',
    path: '/v1/notifications/{id}/opened',
    operationId: 'recordNotificationOpened',
    tags: ['platform'],
    summary: 'Record that a recipient opened the notification (once per recipient): NIP-98 by the recipient, or the app’s key',
    security: OPENED_SECURITY,
    middleware: [keyOrNip98(deps, sendKeys, OPENED_MAX_BODY_BYTES)] as const,
    request: { params: NotificationIdParams, body: { required: true, content: { 'application/json': { schema: OpenedBody } } } },
    responses: {
      200: { description: 'Recorded (false: recorded before)', content: { 'application/json': { schema: OpenedResult } } },
      ...errorResponses([...API_KEY_ERRORS, ...NIP98_ERRORS, ...VALIDATED_BODY_ERRORS]),
    },
  });
  app.openapi(opened, async (c) => {
    const appId = c.get('appId');
    const { id } = c.req.valid('param');
    const named = c.req.valid('json').recipient;
    const signer = c.get('nip98Pubkey');
    if (signer !== undefined && named !== undefined && named !== signer) {
      deps.logger.warn({ appId, notificationId: id }, 'opened refused: NIP-98 signer is not the recipient named');
      throw new HttpError('FORBIDDEN', 'A NIP-98 caller records its own opens only');
    }
    const recipient = signer ?? named;
    if (recipient === undefined) throw new HttpError('VALIDATION_FAILED', 'recipient: required with an API key');
    return c.json({ recorded: await recordOpened(deps, appId, id, recipient) }, 200);
  });
}

/** Record one open of (notification, recipient): 404 unless the recipient is one of the notification's. */
export async function recordOpened(deps: NotificationRoutesDeps, appId: string, id: string, recipient: string): Promise<boolean> {
  const { store, openedClaimTtlSecs } = settingsOf(deps, appId);
  const send = await store.getSend(appId, id);
  if (!send || !send.request.recipients.includes(recipient)) throw new HttpError('NOT_FOUND');
  const first = await store.claimEvent(`opened:${appId}:${id}:${recipient}`, openedClaimTtlSecs);
  if (first) {
    await store.appendDeliveryLog([{ appId, notificationId: id, recipient, type: send.request.type, status: 'opened' }]);
  }
  deps.metrics.apiRequests.inc({ route: 'opened', outcome: first ? 'ok' : 'duplicate' });
  return first;
}
