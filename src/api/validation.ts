/**
 * How a route's schemas become its validation (issue 37): every router is a {@link validatingRouter}
 * whose routes are mounted with `app.openapi(route, handler)`, so `@hono/zod-openapi` checks the
 * path parameters, query, headers and JSON body against the very schemas the OpenAPI document shows
 * before the handler runs, and {@link validationRefusal} turns a failed check into a catalogue error.
 *
 * One mapping for every route: an issue raised inside a {@link catalogued} schema answers that
 * schema's code (the innermost one), any other issue `VALIDATION_FAILED` (422). So a route that
 * has always answered, say, `INVALID_ALERT_WORDS` for a bad word list says so in its schema, and
 * the hook needs no knowledge of routes.
 *
 * Bodies: routes that must see the exact bytes (NIP-98's `payload` tag hashes them) or refuse
 * before reading (authentication, rate limits, Content-Type) put {@link exactJsonBody} in the
 * route's `middleware`, which runs before the validators: it reads the bytes once (bounded), parses
 * them, and hands the parsed value to the JSON validator through Hono's body cache, so the body is
 * read once and the validator never sees a different one.
 */
import { OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context, Env, MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { HttpError, type HttpErrorCode } from './errors.ts';
import { parseJsonBytes, readBodyBytes, refuseNonJsonContentType } from './json-body.ts';

/** Where a {@link catalogued} schema's issues carry their code. */
interface CataloguedParams {
  catalogueCode: HttpErrorCode;
  /** The refusal's whole message (no field path in front). */
  ownMessage?: boolean;
}

/** What a catalogued schema's refusal says: from the value it refused, or zod's issue. */
export type RefusalMessage = (value: unknown, issue: z.core.$ZodIssue) => string;

/**
 * `schema`, every failure of which answers catalogue `code` (issues of a catalogued schema inside
 * keep their own). `message`, when given, is the refusal's message in place of zod's (for messages
 * callers already know). Documented as `schema` is: the wrapper is a preprocess step.
 */
export function catalogued<T extends z.ZodType>(code: HttpErrorCode, schema: T, message?: RefusalMessage): z.ZodPreprocess<T> {
  return z.preprocess((value: unknown, ctx) => {
    const parsed = schema.safeParse(value);
    if (parsed.success) return value;
    for (const issue of parsed.error.issues) {
      const inner = issue.code === 'custom' ? (issue.params as Partial<CataloguedParams> | undefined) : undefined;
      if (inner?.catalogueCode) {
        ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path, params: inner });
        continue;
      }
      const params: CataloguedParams = { catalogueCode: code, ...(message ? { ownMessage: true } : {}) };
      ctx.addIssue({ code: 'custom', message: message ? message(value, issue) : issue.message, path: issue.path, params });
    }
    return value;
  }, schema);
}

/**
 * An issue for `ctx.addIssue` in a refinement: it answers catalogue `code` with `message` as the
 * whole refusal message (for checks that only run once the shape is right).
 */
export function cataloguedIssue(code: HttpErrorCode, message: string, path: PropertyKey[] = []): z.core.$ZodRawIssue {
  const params: CataloguedParams = { catalogueCode: code, ownMessage: true };
  return { code: 'custom', message, path, params, input: undefined };
}

/** {@link catalogued} over each field of `shape`: the fields' failures answer `code`. */
export function cataloguedFields<S extends Record<string, z.ZodType>>(
  code: HttpErrorCode,
  shape: S,
  message?: RefusalMessage,
): { [K in keyof S]: z.ZodPreprocess<S[K]> } {
  return Object.fromEntries(
    Object.entries(shape).map(([key, field]) => [
      key,
      // The field's issues have paths from the field: the message names it.
      catalogued(code, field, message ? (value, issue) => message(value, { ...issue, path: [key, ...issue.path] }) : undefined),
    ]),
  ) as {
    [K in keyof S]: z.ZodPreprocess<S[K]>;
  };
}

/**
 * The message of a JSON body that is not an object: `notAnObject`; any other issue the body's
 * schema did not catalogue itself, its path and zod's message.
 */
export function bodyRefusal(notAnObject: string): RefusalMessage {
  return (_value, issue) => (issue.path.length === 0 ? notAnObject : `${issue.path.join('.')}: ${issue.message}`);
}

/** The catalogue error of a failed validation: its first issue's code ({@link catalogued}) and message. */
export function validationRefusal(issues: readonly z.core.$ZodIssue[]): HttpError {
  const issue = issues[0];
  if (!issue) return new HttpError('VALIDATION_FAILED');
  const params = issue.code === 'custom' ? (issue.params as Partial<CataloguedParams> | undefined) : undefined;
  if (params?.catalogueCode && params.ownMessage) return new HttpError(params.catalogueCode, issue.message);
  const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  return new HttpError(params?.catalogueCode ?? 'VALIDATION_FAILED', `${where}${issue.message}`);
}

/**
 * The catalogue's error for what Hono's validators throw themselves: 400 a body that does not
 * parse, 415 one that is not JSON. Routes with {@link exactJsonBody} refuse both before the
 * validators run; the platform's routes let the validators read the body.
 */
export function validatorError(err: unknown): HttpError | null {
  if (!(err instanceof HTTPException)) return null;
  if (err.status === 400) return new HttpError('INVALID_JSON');
  if (err.status === 415) return new HttpError('UNSUPPORTED_MEDIA_TYPE');
  return null;
}

/**
 * An `OpenAPIHono` whose routes' failed validations throw {@link validationRefusal}'s error (the
 * app's error handler writes it); `onRefused` sees each first (the platform counts and logs them).
 */
export function validatingRouter<E extends Env>(onRefused?: (c: Context<E>, error: HttpError) => void): OpenAPIHono<E> {
  return new OpenAPIHono<E>({
    defaultHook: (result, c) => {
      if (result.success) return;
      const error = validationRefusal(result.error.issues);
      onRefused?.(c, error);
      throw error;
    },
  });
}

/** The exact body bytes {@link exactJsonBody} read, for NIP-98's `payload` and digests of the request. */
export interface ExactBodyVariables {
  exactBody: Uint8Array;
}

/**
 * Route middleware of a JSON body route: refuse a Content-Type that is not JSON (415; none is
 * read as JSON, `json-body.ts`), read the body (413 past `maxBytes`), refuse what does not parse
 * (400 `INVALID_JSON`; an empty body is `{}` when the body is optional), keep the bytes in
 * `exactBody`, and give the JSON validator the parsed value.
 */
export function exactJsonBody<E extends { Variables: ExactBodyVariables }>(options: {
  maxBytes: number;
  required: boolean;
}): MiddlewareHandler<E> {
  return async (c, next) => {
    refuseNonJsonContentType(c);
    const bytes = await readBodyBytes(c, options.maxBytes);
    c.set('exactBody', bytes);
    if (bytes.byteLength === 0 && !options.required) {
      // The validator of an optional body takes a request without Content-Type (and body) as `{}`.
      withContentType(c, null);
    } else {
      c.req.bodyCache.json = Promise.resolve(parseJsonBytes(bytes));
      // None, or JSON the validators' stricter pattern would refuse (`application/json;`): JSON, as it was read.
      if (!VALIDATOR_JSON_TYPE.test(c.req.header('content-type') ?? '')) withContentType(c, 'application/json');
    }
    await next();
  };
}

/** The Content-Types `@hono/zod-openapi` lets through to a JSON validator (its `jsonRequestRegex`, for `application/json`). */
const VALIDATOR_JSON_TYPE = /^application\/json(;\s*[a-zA-Z0-9-]+=([^;]+))*$/i;

/** Swap the request for a body-less one with `type` as its Content-Type (none when null): the body, read, is in the cache. */
function withContentType(c: Context, type: string | null): void {
  const headers = new Headers(c.req.raw.headers);
  if (type === null) headers.delete('content-type');
  else headers.set('content-type', type);
  c.req.raw = new Request(c.req.url, { method: c.req.method, headers });
}
