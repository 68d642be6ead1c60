/**
 * The NIP-9a routes as the OpenAPI document describes them: the callback URLs users manage, whose
 * schemas are their validation (`validation.ts`), and the receiver relays POST to
 * (`nip9a-callbacks.ts`; its hot path is answered before Hono by `nip9a-callback-front.ts`, the
 * same way), the one route whose handler checks its request itself (see `mountDocumented`). The
 * gateway's routes are described in `nip9a/gateway/http.ts`.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { CALLBACK_PATH_PREFIX, normalizeRelayUrl } from '../nip9a/receiver/callback-url.ts';
import { HTTP_ERRORS } from './errors.ts';
import { catalogued } from './validation.ts';
import { errorResponses, jsonBody, jsonResponse, JSON_BODY_ERRORS, NIP98_ERRORS, SECURITY } from './openapi.ts';

const CallbackView = z
  .object({
    id: z.string(),
    url: z.string().openapi({ description: 'The callback URL (its secret redacted, except in the answer that created it)' }),
    relay: z.string(),
    createdAt: z.number().int().openapi({ description: 'Unix seconds' }),
  })
  .openapi('Nip9aCallback');

const CallbackIdParams = z.object({
  id: catalogued('NOT_FOUND', z.string().min(1), () => 'No callback URL of yours has that id').openapi({
    param: { name: 'id', in: 'path' },
  }),
});

/** `{relay}`: anything but an object naming a ws:// or wss:// URL is `NIP9A_INVALID_RELAY`. */
const CallbackRequest = catalogued(
  'NIP9A_INVALID_RELAY',
  z.object({
    relay: z
      .string()
      .refine((relay) => normalizeRelayUrl(relay) !== null)
      .openapi({ description: 'ws:// or wss:// URL of the relay that will call it' }),
  }),
  () => HTTP_ERRORS.NIP9A_INVALID_RELAY.message,
).openapi('Nip9aCallbackRequest', { example: { relay: 'wss://relay.example.com' } });

const nip9a = { tags: ['nip9a'], security: SECURITY.nip98 };

export const NIP9A_CALLBACK_ROUTES = {
  create: createRoute({
    ...nip9a,
    method: 'post',
    path: '/v1/nip9a/callbacks',
    operationId: 'createNip9aCallback',
    summary: 'Make a NIP-9a callback URL for one relay (its secret is shown this once)',
    request: { body: jsonBody(CallbackRequest) },
    responses: {
      201: jsonResponse('Created', CallbackView),
      ...errorResponses([
        'PUBLIC_URL_NOT_CONFIGURED',
        ...NIP98_ERRORS,
        ...JSON_BODY_ERRORS,
        'NIP9A_INVALID_RELAY',
        'NIP9A_TOO_MANY_CALLBACKS',
        'CLIENT_QUOTA_EXCEEDED',
      ]),
    },
  }),
  list: createRoute({
    ...nip9a,
    method: 'get',
    path: '/v1/nip9a/callbacks',
    operationId: 'listNip9aCallbacks',
    summary: 'The caller’s callback URLs, secrets redacted',
    responses: {
      200: jsonResponse('The callback URLs', z.object({ callbacks: z.array(CallbackView) }).openapi('Nip9aCallbacks')),
      ...errorResponses(['PUBLIC_URL_NOT_CONFIGURED', ...NIP98_ERRORS]),
    },
  }),
  revoke: createRoute({
    ...nip9a,
    method: 'delete',
    path: '/v1/nip9a/callbacks/{id}',
    operationId: 'revokeNip9aCallback',
    summary: 'Revoke one of the caller’s callback URLs',
    request: { params: CallbackIdParams },
    responses: { 204: { description: 'Revoked' }, ...errorResponses(['PUBLIC_URL_NOT_CONFIGURED', ...NIP98_ERRORS, 'NOT_FOUND']) },
  }),
  receive: createRoute({
    tags: ['nip9a'],
    security: SECURITY.none,
    method: 'post',
    path: `${CALLBACK_PATH_PREFIX}{secret}`,
    operationId: 'receiveNip9aCallback',
    summary: 'A relay’s NIP-9a callback: queued durably before the answer',
    description: 'The URL’s secret is the credential. A 404 (unknown or revoked URL) tells a NIP-9a relay to delete its registration.',
    request: {
      params: z.object({ secret: z.string().openapi({ param: { name: 'secret', in: 'path' } }) }),
      body: jsonBody(
        z
          .object({
            id: z.string().openapi({ description: 'The matched event’s id' }),
            relay: z.string().openapi({ description: 'The relay the URL was made for' }),
            event: z.looseObject({}).optional().openapi({ description: 'The matched event, signed' }),
          })
          .openapi('Nip9aCallbackEnvelope'),
      ),
    },
    responses: {
      200: jsonResponse('Already received', z.object({ status: z.literal('duplicate') })),
      202: jsonResponse('Queued', z.object({ status: z.literal('queued') })),
      ...errorResponses([
        'UNSUPPORTED_MEDIA_TYPE',
        'NOT_FOUND',
        'RATE_LIMITED',
        'INVALID_JSON',
        'BODY_UNREADABLE',
        'NIP9A_INVALID_ENVELOPE',
        'NIP9A_RELAY_MISMATCH',
        'NIP9A_INVALID_EVENT',
        'NIP9A_EVENT_ID_MISMATCH',
      ]),
    },
  }),
};
