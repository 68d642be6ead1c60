/**
 * The gateway's HTTP surface (role api):
 *
 * - `GET /nip9a` with `Accept: application/nostr+json`: the relay endpoint's NIP-11 document,
 *   advertising `9a` (a string in the otherwise numeric list, as the draft requires) and the limits;
 * - `PUT /v1/nip9a/registrations`: the HTTP bridge (seed 003). Body: a signed kind 30390, or a
 *   kind 5 deleting registrations, by the NIP-98-authenticated author. 200 `{outcome, message, id}`
 *   when stored, replaced, deleted or already current (`stale`: this or a newer version is stored,
 *   so a repeated PUT is harmless); 4xx with a stable code otherwise;
 * - `GET /v1/nip9a/registrations`: the authenticated author's registrations (and nobody else's).
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { authenticateNip98, type Nip98Auth } from '../../api/nip98-auth.ts';
import { HttpError, type HttpErrorCode } from '../../api/errors.ts';
import type { LargerBody } from '../../api/body-limit.ts';
import { errorResponses, jsonBody, jsonResponse, JSON_BODY_ERRORS, NIP98_ERRORS, SECURITY } from '../../api/openapi.ts';
import { catalogued, exactJsonBody, validatingRouter, type ExactBodyVariables } from '../../api/validation.ts';
import { isEventRejection, parseEvent, type EventVerifier } from '../../nostr/event.ts';
import { acceptGatewayEvent, type IntakeAnswer, type IntakeDeps } from './intake.ts';
import { MAX_CLIENT_FRAME_BYTES, MAX_SUBSCRIPTIONS, NIP9A_RELAY_PATH } from './relay-endpoint.ts';

export const NIP9A_REGISTRATIONS_PATH = '/v1/nip9a/registrations';

export interface GatewayHttpDeps extends IntakeDeps {
  verifier: EventVerifier;
  auth: Nip98Auth;
  /** The service's pubkey, published in the NIP-11 document. */
  servicePubkey: string;
}

function errorCodeOf(result: IntakeAnswer): HttpErrorCode {
  switch (result.outcome) {
    case 'blocked':
      return result.message.startsWith('blocked: callback') ? 'NIP9A_CALLBACK_BLOCKED' : 'NIP9A_INVALID_REGISTRATION';
    case 'restricted':
      return 'NIP9A_WRONG_AUTHOR';
    case 'limit':
      return 'NIP9A_LIMIT_REACHED';
    case 'relay_cap':
      return 'NIP9A_RELAY_CAP_REACHED';
    case 'error':
      return 'INTERNAL';
    default:
      return 'NIP9A_INVALID_REGISTRATION';
  }
}

/** The NIP-11 document of the relay endpoint. */
export function nip11Document(deps: GatewayHttpDeps): Record<string, unknown> {
  const s = deps.settings;
  return {
    name: 'nostr-push NIP-9a gateway',
    description: 'Registers NIP-9a (kind 30390) callbacks and delivers them for relays that do not implement NIP-9a.',
    pubkey: deps.servicePubkey,
    supported_nips: [1, 9, 11, 42, '9a'],
    software: 'nostr-push',
    limitation: {
      auth_required: true,
      restricted_writes: true,
      max_message_length: MAX_CLIENT_FRAME_BYTES,
      max_subscriptions: MAX_SUBSCRIPTIONS,
      max_event_tags: 2 + 4 + s.limits.maxFilters + s.limits.maxIgnores + 1,
    },
    nip9a: {
      max_registrations_per_author: s.registrationLimits.perAuthor,
      max_registrations_per_author_per_relay: s.registrationLimits.perAuthorPerRelay,
      max_watched_relays: s.registrationLimits.maxWatchedRelays,
      max_registration_bytes: s.limits.maxBytes,
      max_filters: s.limits.maxFilters,
      max_ignore_filters: s.limits.maxIgnores,
      max_relays: s.limits.maxRelays,
      max_pending_deliveries_per_relay: s.maxPendingPerRelay,
      request_timeout_secs: s.requestTimeoutMs / 1000,
      max_attempts: s.maxAttempts,
      retry_delays_secs: s.retryDelaysMs.map((ms) => ms / 1000),
      callback_origins: [...s.policy.allowedOrigins],
    },
  };
}

/**
 * The registration bridge's body limit: twice `nip9a.max_registration_bytes` (the event's JSON with
 * room for escaping), declared so an operator raising that setting past `server.max_body_bytes` is heard.
 */
export function registrationLargerBody(settings: GatewayHttpDeps['settings']): LargerBody {
  return {
    method: 'PUT',
    path: NIP9A_REGISTRATIONS_PATH,
    maxBytes: settings.limits.maxBytes * 2,
    reason: 'a NIP-9a registration event: twice nip9a.max_registration_bytes',
  };
}

const nip98Route = { tags: ['nip9a'], security: SECURITY.nip98 };

const NostrEvent = z
  .object({
    id: z.string(),
    pubkey: z.string(),
    created_at: z.number().int(),
    kind: z.number().int(),
    tags: z.array(z.array(z.string())),
    content: z.string(),
    sig: z.string(),
  })
  .openapi('NostrEvent');

/**
 * A registration (or deletion) event, as the relay endpoint parses one (`parseEvent`): anything
 * else is `NIP9A_INVALID_REGISTRATION` with the parser's reason. Its id and signature are checked
 * after the schema (the handler's verifier).
 */
const RegistrationEvent = catalogued(
  'NIP9A_INVALID_REGISTRATION',
  NostrEvent.superRefine((event, ctx) => {
    const parsed = parseEvent(event);
    if (isEventRejection(parsed)) ctx.addIssue({ code: 'custom', message: parsed.message });
  }),
  (value, issue) => {
    const parsed = parseEvent(value);
    return `invalid: ${isEventRejection(parsed) ? parsed.message : issue.message}`;
  },
);

/** What the registration bridge's middleware sets: the body's bytes, and who signed the request. */
interface GatewayEnv {
  Variables: ExactBodyVariables & { pubkey: string };
}

/** The routes as the OpenAPI document describes them and validates their requests (`api/validation.ts`). */
const GATEWAY_ROUTES = {
  relayInfo: createRoute({
    tags: ['nip9a'],
    security: SECURITY.none,
    method: 'get',
    path: NIP9A_RELAY_PATH,
    operationId: 'getNip9aGatewayInfo',
    summary: 'The gateway relay endpoint’s NIP-11 document (with `Accept: application/nostr+json`)',
    description: 'Without that Accept header, a line of text; the endpoint itself is a WebSocket relay at this path.',
    responses: {
      200: {
        description: 'The NIP-11 document, or a line of text',
        content: { 'application/nostr+json': { schema: z.looseObject({}) }, 'text/plain': { schema: z.string() } },
      },
      ...errorResponses([]),
    },
  }),
  register: createRoute({
    ...nip98Route,
    method: 'put',
    path: NIP9A_REGISTRATIONS_PATH,
    operationId: 'putNip9aRegistration',
    summary: 'Store a signed kind 30390 registration, or a kind 5 deleting registrations, of the authenticated author',
    request: { body: jsonBody(RegistrationEvent) },
    responses: {
      200: jsonResponse(
        'Stored, replaced, deleted, or already current (`stale`)',
        z.object({ outcome: z.string(), message: z.string(), id: z.string() }).openapi('Nip9aRegistrationResult'),
      ),
      ...errorResponses([
        ...NIP98_ERRORS,
        ...JSON_BODY_ERRORS,
        'NIP9A_INVALID_REGISTRATION',
        'NIP9A_CALLBACK_BLOCKED',
        'NIP9A_WRONG_AUTHOR',
        'NIP9A_LIMIT_REACHED',
        'NIP9A_RELAY_CAP_REACHED',
      ]),
    },
  }),
  list: createRoute({
    ...nip98Route,
    method: 'get',
    path: NIP9A_REGISTRATIONS_PATH,
    operationId: 'listNip9aRegistrations',
    summary: 'The authenticated author’s registrations',
    responses: {
      200: jsonResponse('The registration events', z.object({ registrations: z.array(NostrEvent) }).openapi('Nip9aRegistrations')),
      ...errorResponses(NIP98_ERRORS),
    },
  }),
};

export function gatewayHttpRoutes(deps: GatewayHttpDeps): OpenAPIHono<GatewayEnv> {
  const app = validatingRouter<GatewayEnv>();
  /** NIP-98, before the schema: over the exact body when the route has one. */
  const authenticated =
    (withBody: boolean): MiddlewareHandler<GatewayEnv> =>
    async (c, next) => {
      c.set('pubkey', await authenticateNip98(c, deps.auth, withBody ? c.get('exactBody') : undefined));
      await next();
    };

  app.openapi(GATEWAY_ROUTES.relayInfo, (c) => {
    if (!(c.req.header('accept') ?? '').includes('application/nostr+json')) {
      return c.text('NIP-9a gateway relay endpoint: connect with a WebSocket, or ask for application/nostr+json.\n', 200);
    }
    return c.json(nip11Document(deps), 200, { 'Access-Control-Allow-Origin': '*', 'Content-Type': 'application/nostr+json' });
  });

  const register = {
    ...GATEWAY_ROUTES.register,
    middleware: [
      exactJsonBody<GatewayEnv>({ maxBytes: registrationLargerBody(deps.settings).maxBytes, required: true }),
      authenticated(true),
    ],
  };
  app.openapi(register, async (c) => {
    const event = parseEvent(c.req.valid('json'));
    // The schema refused every rejection already; this is the parsed event's type.
    if (isEventRejection(event)) throw new HttpError('NIP9A_INVALID_REGISTRATION', `invalid: ${event.message}`);
    if (!deps.verifier.verify(event)) throw new HttpError('NIP9A_INVALID_REGISTRATION', 'invalid: bad event id or signature');
    const result = await acceptGatewayEvent(deps, event, c.get('pubkey'), 'http');
    if (!result.accepted) throw new HttpError(errorCodeOf(result), result.message);
    return c.json({ outcome: result.outcome, message: result.message, id: event.id }, 200);
  });

  app.openapi({ ...GATEWAY_ROUTES.list, middleware: [authenticated(false)] }, async (c) => {
    const mine = await deps.store.listNip9aRegistrations(c.get('pubkey'));
    return c.json({ registrations: mine.map((r) => JSON.parse(r.eventJson) as z.infer<typeof NostrEvent>) }, 200);
  });
  return app;
}
