/**
 * The OpenAPI 3.1 document of the whole HTTP API, served at `/v1/openapi.json` (issue 37).
 *
 * Every router is an `OpenAPIHono` whose routes are `createRoute` definitions: an `operationId`,
 * a summary, the security scheme, the request and response schemas and every catalogue error the
 * route can answer ({@link errorResponses}). Mounting a router on the API app (`app.ts`) merges its
 * definitions into the app's registry, and the document is generated from that registry on each
 * request, so it lists exactly the routes the process mounts (the console's private API and the
 * ntfy protocol, which has its own specification, are not in it). `test/e2e/openapi.test.ts`
 * walks the routes the service mounts and fails on one missing from the document.
 *
 * Every route is mounted with `app.openapi(route, handler)` on a `validatingRouter`
 * (`validation.ts`): `@hono/zod-openapi` validates the path parameters, query, headers and JSON
 * body with the very schemas the document shows, before the handler runs, and one hook turns a
 * failed check into the catalogue code the schema names (`catalogued`; `VALIDATION_FAILED`
 * otherwise). Authentication, rate limits and the read of the exact body bytes (NIP-98's
 * `payload` tag hashes them) are the route's `middleware`, which runs before the validators.
 *
 * One exception, {@link mountDocumented}: a relay's `POST /nip9a/cb/{secret}`, documented but
 * checked by the NIP-9a receiver itself, because the receiver answers the same route before Hono
 * on the hot path (`nip9a-callback-front.ts`) and its order is its contract: the URL is looked up
 * (404 tells a relay to drop its registration) and rate-limited before a body of up to 4 MiB is
 * read. `validation.test.ts` keeps it the only one.
 */
import { z, type OpenAPIHono, type RouteConfig } from '@hono/zod-openapi';
import type { Env, Handler } from 'hono';
import { HTTP_ERRORS, type HttpErrorCode } from './errors.ts';

export const OPENAPI_PATH = '/v1/openapi.json';

/** Answers any route may give: the body limit runs before routing (`body-limit.ts`), and a bug is a 500. */
const ANY_ROUTE_ERRORS: readonly HttpErrorCode[] = ['BODY_TOO_LARGE', 'INTERNAL'];

type ResponseEntry = RouteConfig['responses'][string];

/**
 * The `responses` entries of the catalogue errors `codes` (and those of {@link ANY_ROUTE_ERRORS}):
 * one entry per status, its description naming each code with its catalogue message, its schema
 * the error body with `code` one of them.
 */
export function errorResponses(codes: readonly HttpErrorCode[]): Record<string, ResponseEntry> {
  const byStatus = new Map<number, HttpErrorCode[]>();
  for (const code of [...codes, ...ANY_ROUTE_ERRORS]) {
    const status = HTTP_ERRORS[code].status;
    const list = byStatus.get(status) ?? [];
    if (!list.includes(code)) list.push(code);
    byStatus.set(status, list);
  }
  const responses: Record<string, ResponseEntry> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const [first, ...rest] = list as [HttpErrorCode, ...HttpErrorCode[]];
    responses[String(status)] = {
      description: list.map((code) => `\`${code}\`: ${HTTP_ERRORS[code].message}`).join('; '),
      ...(status === 429 ? { headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } } } : {}),
      content: {
        'application/json': {
          schema: z.object({
            error: z.string().openapi({ description: 'What went wrong, for a person (may say more than the catalogue message)' }),
            code: z.enum([first, ...rest]).openapi({ description: 'Stable code from the error catalogue' }),
          }),
        },
      },
    };
  }
  return responses;
}

/** A JSON success response of `schema`. */
export function jsonResponse(description: string, schema: z.ZodType): ResponseEntry {
  return { description, content: { 'application/json': { schema } } };
}

/** A JSON request body of `schema`: what the route's JSON validator checks (`validation.ts`). */
export function jsonBody<S extends z.ZodType, R extends boolean = true>(
  schema: S,
  description?: string,
  required: R = true as R,
): { required: R; description?: string; content: { 'application/json': { schema: S } } } {
  return { required, ...(description ? { description } : {}), content: { 'application/json': { schema } } };
}

/** The security schemes of the document's `components` (every operation names one, or none). */
export const SECURITY_SCHEMES = {
  apiKey: {
    type: 'http',
    scheme: 'bearer',
    description:
      'An API key from `nostr-push apps keys create APP --role send|admin`. `X-App` may name the app (admin keys of the default app may name another)',
  },
  nip98: {
    type: 'http',
    scheme: 'Nostr',
    description:
      'NIP-98: `Authorization: Nostr <base64 of a signed kind 27235 event>` over the method, the absolute URL (`server.public_url` and the path) and, for a body, its SHA-256 in `payload`; each event is used once',
  },
  internalToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'The shared secret `server.internal_api_token` of a trusted internal caller (the moderation service)',
  },
} as const;

/** Security requirement lists of the operations (an OpenAPI list holds alternatives). */
export const SECURITY = {
  apiKey: [{ apiKey: [] }],
  nip98: [{ nip98: [] }],
  apiKeyOrNip98: [{ apiKey: [] }, { nip98: [] }],
  internalToken: [{ internalToken: [] }],
  /** Public: no credentials (stated, so linters see the choice was made). */
  none: [],
} satisfies Record<string, Array<Record<string, string[]>>>;

/** Register {@link SECURITY_SCHEMES} in an app's registry. */
export function registerSecuritySchemes<E extends Env>(app: OpenAPIHono<E>): void {
  for (const [name, scheme] of Object.entries(SECURITY_SCHEMES))
    app.openAPIRegistry.registerComponent('securitySchemes', name, { ...scheme });
}

/**
 * Mount `handler` at `route`'s method and path and put the route in the app's document, without
 * the validators `app.openapi` would add: the handler checks the request itself. Only for the
 * NIP-9a receiver's route (see the module comment). `{name}` path parameters become Hono's `:name`.
 */
export function mountDocumented<E extends Env>(app: OpenAPIHono<E>, route: RouteConfig, handler: Handler<E>): void {
  app.openAPIRegistry.registerPath(route);
  app.on(route.method.toUpperCase(), route.path.replaceAll(/\/{(.+?)}/g, '/:$1'), handler);
}

export interface OpenApiDocumentSettings {
  /** The service version (`info.version`). */
  version: string;
  /** `server.public_url`: the document's server when set; empty, `/` (the server the document came from). */
  publicUrl: string;
}

/** The groups of operations, in the order a reader meets them. */
const DOCUMENT_TAGS = [
  { name: 'user', description: 'A user’s own devices, preferences and inbox: NIP-98, signed by the user' },
  { name: 'nip9a', description: 'NIP-9a push callbacks and the NIP-9a gateway' },
  { name: 'platform', description: 'The app platform: the send API and campaigns, with the app’s API keys' },
  { name: 'admin', description: 'Operators: delivery log, suppressions, dead letters, announcements (admin API keys)' },
  { name: 'internal', description: 'Trusted internal callers (`server.internal_api_token`)' },
  { name: 'service', description: 'Health, metrics and this document' },
];

/** The document's top-level fields beside the paths and components the registry holds. */
export function documentObject(settings: OpenApiDocumentSettings) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'nostr-push API',
      version: settings.version,
      description:
        'Push notifications for Nostr apps. The user API authenticates with NIP-98, the platform and admin API with API keys. ' +
        'Errors are `{"error", "code"}` with a stable code from the catalogue. Not here: the console’s private API and the ' +
        'ntfy (UnifiedPush) protocol, which follows ntfy’s own specification. WebSockets, beside the operations here: ' +
        '`/v1/inbox/socket` (live count hints, NIP-98 on the upgrade) and `/nip9a` (the NIP-9a gateway’s relay endpoint, NIP-42).',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    // Unset, the server the document was fetched from (OpenAPI's default, stated for linters).
    servers: [
      settings.publicUrl === ''
        ? { url: '/', description: 'The server this document came from (server.public_url is unset)' }
        : { url: settings.publicUrl.replace(/\/+$/, '') },
    ],
    tags: DOCUMENT_TAGS,
  };
}

/** What `requireAppKey` (`auth.ts`) answers: no key, over its rate, wrong role, `X-App` missing or not its app. */
export const API_KEY_ERRORS: readonly HttpErrorCode[] = ['UNAUTHORIZED', 'RATE_LIMITED', 'FORBIDDEN', 'APP_REQUIRED', 'NOT_FOUND'];
/** What `authenticateNip98` (`nip98-auth.ts`) answers: a failed check, or a client over its rate. */
export const NIP98_ERRORS: readonly HttpErrorCode[] = ['NIP98_UNAUTHORIZED', 'RATE_LIMITED'];
/** What a route validated by `@hono/zod-openapi` answers for a bad body when its schema names no other code (`validation.ts`). */
export const VALIDATED_BODY_ERRORS: readonly HttpErrorCode[] = ['INVALID_JSON', 'UNSUPPORTED_MEDIA_TYPE', 'VALIDATION_FAILED'];
/** What a route answers for its JSON body before the schema is checked (`exactJsonBody`, `validation.ts`). */
export const JSON_BODY_ERRORS: readonly HttpErrorCode[] = ['UNSUPPORTED_MEDIA_TYPE', 'INVALID_JSON'];
