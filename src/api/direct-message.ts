import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { StorePort } from '../store/port.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Logger } from '../observability/logger.ts';
import { randomUUID } from 'node:crypto';
import { buildDirectMessagePayload } from '../engine/payload.ts';
import { DIRECT_MESSAGE_LANE, type OutboundQueue } from '../engine/outbound-queue.ts';
import { typeEnabled } from '../engine/content.ts';
import { HTTP_ERRORS, HttpError } from './errors.ts';
import { bearerMatches } from './internal-token.ts';
import { errorResponses, JSON_BODY_ERRORS, jsonBody, SECURITY } from './openapi.ts';
import { catalogued, cataloguedIssue, exactJsonBody, validatingRouter, type ExactBodyVariables } from './validation.ts';

/** The message classes the moderation service may send (seed 000); anything else is a 422. */
export const DIRECT_MESSAGE_TYPES = ['moderation_notice', 'report_outcome'] as const;
/** The request is three short fields; anything much larger is not a real caller. */
export const DIRECT_MESSAGE_MAX_BODY_BYTES = 16 * 1024;
const HEX64 = /^[0-9a-f]{64}$/;

/**
 * What a refused body's shape is told, in divine's words: an unknown field, a missing or
 * non-string one, an unknown message type (all 422 `UNPROCESSABLE_BODY`).
 */
function shapeRefusal(value: unknown, issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return `unknown field \`${issue.keys[0] ?? ''}\``;
  const field = issue.path[0];
  if (field === undefined) return 'Request body must be a JSON object';
  const given = (value as Record<string, unknown>)[String(field)];
  if (field === 'messageType' && typeof given === 'string')
    return `unknown messageType \`${given}\`, expected one of ${DIRECT_MESSAGE_TYPES.join(', ')}`;
  return `missing or non-string field \`${String(field)}\``;
}

/** The body: its shape first (422), then, once it is right, the two hex fields (400 each, divine's texts). */
const DirectMessageRequest = catalogued(
  'UNPROCESSABLE_BODY',
  z
    .strictObject({
      eventId: z.string().openapi({ pattern: HEX64.source, description: 'The gift wrap’s event id (64 lowercase hex)' }),
      recipientPubkey: z.string().openapi({ pattern: HEX64.source, description: 'Who gets the push (64 lowercase hex)' }),
      messageType: z.enum(DIRECT_MESSAGE_TYPES),
    })
    .superRefine((body, ctx) => {
      if (!HEX64.test(body.eventId)) ctx.addIssue(cataloguedIssue('INVALID_EVENT_ID', HTTP_ERRORS.INVALID_EVENT_ID.message, ['eventId']));
      else if (!HEX64.test(body.recipientPubkey))
        ctx.addIssue(cataloguedIssue('INVALID_RECIPIENT_PUBKEY', HTTP_ERRORS.INVALID_RECIPIENT_PUBKEY.message, ['recipientPubkey']));
    }),
  shapeRefusal,
).openapi('DirectMessageRequest', {
  example: {
    eventId: '5c83da77af1dec6d7289834998ad7aafbd9e2191396d75ec3cc27f5a77226f36',
    recipientPubkey: '3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d',
    messageType: 'moderation_notice',
  },
});

export const DIRECT_MESSAGE_ROUTE = createRoute({
  method: 'post',
  path: '/internal/v1/direct-message',
  operationId: 'pushDirectMessage',
  tags: ['internal'],
  summary: 'A trusted sender asks for a content-free “new message” push about a gift wrap it sent',
  security: SECURITY.internalToken,
  request: { body: jsonBody(DirectMessageRequest) },
  responses: {
    204: { description: 'Processed: queued, or nothing to send (no devices, preference off, already pushed)' },
    ...errorResponses([
      'INTERNAL_NOT_CONFIGURED',
      'UNAUTHORIZED',
      ...JSON_BODY_ERRORS,
      'UNPROCESSABLE_BODY',
      'INVALID_EVENT_ID',
      'INVALID_RECIPIENT_PUBKEY',
    ]),
  },
});

interface DirectMessageEnv {
  Variables: ExactBodyVariables;
}

export interface DirectMessageDeps {
  /** `server.internal_api_token`; empty disables the endpoint (503). */
  internalApiToken: string;
  store: StorePort;
  /** Where the push goes: the outbound queue, in its critical lane (the delivery stage sends it). */
  outbound: OutboundQueue;
  allowedPubkeys: ReadonlySet<string>;
  defaultPreferenceKinds: readonly number[];
  processedEventTtlSecs: number;
  /** Count each direct message into the recipient's inbox (issue 13); default true. */
  countInbox?: boolean;
  metrics: Metrics;
  logger: Logger;
}

/**
 * `POST /internal/v1/direct-message`: a trusted sender (the moderation service) asks for a
 * content-free "new message" push about a gift wrap it sent. Authentication runs before the body
 * is read. 204 means processed: the push is queued in the outbound queue's critical lane (ahead
 * of any backlog of relay notifications; the delivery stage's retries and dead letters apply as
 * to every push), or there was nothing to send (no tokens, a disabled preference, an existing
 * claim). The request does not wait for the provider.
 */
export function directMessageRoutes(deps: DirectMessageDeps): OpenAPIHono<DirectMessageEnv> {
  const app = validatingRouter<DirectMessageEnv>();
  const count = (outcome: string) => deps.metrics.internalDmRequests.inc({ outcome });
  /** Before the body is read: configured, and the caller's token; after, a refused body counted as `invalid`. */
  const authorized: MiddlewareHandler<DirectMessageEnv> = async (c, next) => {
    if (deps.internalApiToken === '') {
      count('not_configured');
      throw new HttpError('INTERNAL_NOT_CONFIGURED');
    }
    if (!bearerMatches(c.req.header('authorization'), deps.internalApiToken)) {
      count('unauthorized');
      throw new HttpError('UNAUTHORIZED');
    }
    await next();
    if (c.error instanceof HttpError && c.error.status < 500) count('invalid');
  };
  app.openapi(
    {
      ...DIRECT_MESSAGE_ROUTE,
      middleware: [authorized, exactJsonBody<DirectMessageEnv>({ maxBytes: DIRECT_MESSAGE_MAX_BODY_BYTES, required: true })],
    },
    async (c) => {
      const { eventId, recipientPubkey } = c.req.valid('json');
      count(await sendDirectMessage(deps, eventId, recipientPubkey));
      return c.body(null, 204);
    },
  );
  return app;
}

type DirectMessageOutcome = 'not_allowlisted' | 'no_tokens' | 'preference_disabled' | 'duplicate' | 'queued';

/** The DM gates (allowlist, tokens, preference 1059), then the claim taken and the push queued in one store step. */
async function sendDirectMessage(deps: DirectMessageDeps, giftWrapId: string, recipient: string): Promise<DirectMessageOutcome> {
  const { store } = deps;
  if (deps.allowedPubkeys.size > 0 && !deps.allowedPubkeys.has(recipient)) return 'not_allowlisted';
  // The inbox counter (issue 13): a known recipient's direct messages count, pushed or not, once per gift wrap.
  if (deps.countInbox !== false) {
    const [counted] = await store.countInboxNotifications(
      [{ countKey: giftWrapId, recipient, type: 'directMessage' }],
      deps.processedEventTtlSecs,
    );
    deps.metrics.inboxCounted.inc({
      type: 'directMessage',
      outcome: counted === null || counted === undefined ? 'not_counted' : 'counted',
    });
  }
  const devices = await store.listDevices(recipient);
  if (devices.length === 0) return 'no_tokens';
  if (!(await typeEnabled(store, deps.defaultPreferenceKinds, recipient, 'directMessage'))) return 'preference_disabled';
  const [taken] = await deps.outbound.claimAndEnqueue(
    [
      {
        eventId: giftWrapId,
        recipient,
        type: 'directMessage',
        message: buildDirectMessagePayload(giftWrapId, recipient),
        claim: { eventId: giftWrapId, recipient, owner: randomUUID() },
        eventCreatedAt: Math.floor(store.clock.nowMs() / 1000),
        devices,
      },
    ],
    deps.processedEventTtlSecs,
    DIRECT_MESSAGE_LANE,
  );
  return taken ? 'queued' : 'duplicate';
}
