import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { StorePort } from '../store/port.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Logger } from '../observability/logger.ts';
import { randomUUID } from 'node:crypto';
import { buildDirectMessagePayload } from '../engine/payload.ts';
import { DIRECT_MESSAGE_LANE, type OutboundQueue } from '../engine/outbound-queue.ts';
import { typeEnabled } from '../engine/content.ts';
import { HttpError } from './errors.ts';
import { readJsonBody } from './json-body.ts';
import { bearerMatches } from './internal-token.ts';
import { errorResponses, JSON_BODY_ERRORS, jsonBody, mountDocumented, SECURITY } from './openapi.ts';

/** The message classes the moderation service may send (seed 000); anything else is a 422. */
export const DIRECT_MESSAGE_TYPES = ['moderation_notice', 'report_outcome'] as const;
const FIELDS = ['eventId', 'recipientPubkey', 'messageType'] as const;
/** The request is three short fields; anything much larger is not a real caller. */
export const DIRECT_MESSAGE_MAX_BODY_BYTES = 16 * 1024;
const HEX64 = /^[0-9a-f]{64}$/;

const DirectMessageRequest = z
  .strictObject({
    eventId: z.string().regex(HEX64).openapi({ description: 'The gift wrap’s event id (64 lowercase hex)' }),
    recipientPubkey: z.string().regex(HEX64).openapi({ description: 'Who gets the push (64 lowercase hex)' }),
    messageType: z.enum(DIRECT_MESSAGE_TYPES),
  })
  .openapi('DirectMessageRequest', {
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
export function directMessageRoutes(deps: DirectMessageDeps): OpenAPIHono {
  const app = new OpenAPIHono();
  mountDocumented(app, DIRECT_MESSAGE_ROUTE, async (c: Context) => {
    const count = (outcome: string) => deps.metrics.internalDmRequests.inc({ outcome });
    if (deps.internalApiToken === '') {
      count('not_configured');
      throw new HttpError('INTERNAL_NOT_CONFIGURED');
    }
    if (!bearerMatches(c.req.header('authorization'), deps.internalApiToken)) {
      count('unauthorized');
      throw new HttpError('UNAUTHORIZED');
    }

    const body = await readJsonBody(c, DIRECT_MESSAGE_MAX_BODY_BYTES).catch((err: unknown) => {
      count('invalid');
      throw err;
    });
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      count('invalid');
      throw new HttpError('UNPROCESSABLE_BODY', 'Request body must be a JSON object');
    }
    const fields = body as Record<string, unknown>;
    const unknown = Object.keys(fields).filter((k) => !(FIELDS as readonly string[]).includes(k));
    const missing = FIELDS.filter((k) => typeof fields[k] !== 'string');
    if (unknown.length > 0 || missing.length > 0) {
      count('invalid');
      throw new HttpError(
        'UNPROCESSABLE_BODY',
        unknown.length > 0 ? `unknown field \`${unknown[0]}\`` : `missing or non-string field \`${missing[0]}\``,
      );
    }
    const { eventId, recipientPubkey, messageType } = fields as Record<(typeof FIELDS)[number], string>;
    if (!(DIRECT_MESSAGE_TYPES as readonly string[]).includes(messageType)) {
      count('invalid');
      throw new HttpError(
        'UNPROCESSABLE_BODY',
        `unknown messageType \`${messageType}\`, expected one of ${DIRECT_MESSAGE_TYPES.join(', ')}`,
      );
    }
    if (!HEX64.test(eventId)) {
      count('invalid');
      throw new HttpError('INVALID_EVENT_ID');
    }
    if (!HEX64.test(recipientPubkey)) {
      count('invalid');
      throw new HttpError('INVALID_RECIPIENT_PUBKEY');
    }

    const outcome = await sendDirectMessage(deps, eventId, recipientPubkey);
    count(outcome);
    return c.body(null, 204);
  });
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
