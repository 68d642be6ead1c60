/**
 * The schemas are the validation (issue 37 item 3): the mapping from zod issues to catalogue codes,
 * the exact-body middleware that runs before the validators, and a scan of the sources that keeps
 * every router on `app.openapi` (the NIP-9a receiver's route the one documented exception).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { createRoute, z } from '@hono/zod-openapi';
import { Hono } from 'hono';
import { HttpError } from './errors.ts';
import { jsonBody } from './openapi.ts';
import {
  bodyRefusal,
  catalogued,
  cataloguedIssue,
  exactJsonBody,
  validatingRouter,
  validationRefusal,
  type ExactBodyVariables,
} from './validation.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('zod issues to catalogue codes', () => {
  const Body = catalogued(
    'UNPROCESSABLE_BODY',
    z.object({
      words: catalogued('INVALID_ALERT_WORDS', z.array(z.string().max(5))),
      title: catalogued('INVALID_ANNOUNCEMENT', z.string().optional(), () => 'title must be a string'),
      count: z.number().optional(),
    }),
    bodyRefusal('Request body must be a JSON object'),
  );
  const refusalOf = (value: unknown) => {
    const parsed = Body.safeParse(value);
    assert.ok(!parsed.success, JSON.stringify(value));
    return validationRefusal(parsed.error.issues).toJSON();
  };

  test('an issue inside a catalogued schema answers its innermost code; the message names the field', () => {
    assert.deepEqual(refusalOf({ words: ['toolong'] }), {
      code: 'INVALID_ALERT_WORDS',
      error: 'words.0: Too big: expected string to have <=5 characters',
    });
    assert.deepEqual(refusalOf({ words: 'nostr' }), {
      code: 'INVALID_ALERT_WORDS',
      error: 'words: Invalid input: expected array, received string',
    });
    assert.deepEqual(refusalOf({ words: [], title: 5 }), { code: 'INVALID_ANNOUNCEMENT', error: 'title must be a string' });
  });

  test('the body’s own code for what its fields do not catalogue, and for a body that is not an object', () => {
    assert.deepEqual(refusalOf([]), { code: 'UNPROCESSABLE_BODY', error: 'Request body must be a JSON object' });
    assert.deepEqual(refusalOf({ words: [], count: 'x' }), {
      code: 'UNPROCESSABLE_BODY',
      error: 'count: Invalid input: expected number, received string',
    });
  });

  test('an uncatalogued schema is VALIDATION_FAILED (the platform’s 422), and a refinement may name its code', () => {
    const plain = z.object({ n: z.number() }).safeParse({ n: 'x' });
    assert.ok(!plain.success);
    assert.deepEqual(validationRefusal(plain.error.issues).toJSON(), {
      code: 'VALIDATION_FAILED',
      error: 'n: Invalid input: expected number, received string',
    });
    const refined = z
      .object({ id: z.string() })
      .superRefine((body, ctx) => ctx.addIssue(cataloguedIssue('INVALID_EVENT_ID', 'Invalid eventId', ['id'])))
      .safeParse({ id: 'x' });
    assert.ok(!refined.success);
    assert.deepEqual(validationRefusal(refined.error.issues).toJSON(), { code: 'INVALID_EVENT_ID', error: 'Invalid eventId' });
  });

  test('a catalogued schema is documented as the schema it wraps', () => {
    const app = validatingRouter();
    app.openapi(
      createRoute({
        method: 'post',
        path: '/x',
        request: { body: jsonBody(Body.openapi('Wrapped')) },
        responses: { 204: { description: 'ok' } },
      }),
      (c) => c.body(null, 204),
    );
    const schema = app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 't', version: '1' } }).components?.schemas?.Wrapped;
    assert.deepEqual(schema, {
      type: 'object',
      properties: {
        words: { type: 'array', items: { type: 'string', maxLength: 5 } },
        title: { type: 'string' },
        count: { type: 'number' },
      },
      required: ['words'],
    });
  });
});

describe('exactJsonBody: the body read once, before the validators', () => {
  interface BodyEnv {
    Variables: ExactBodyVariables & { seen: string };
  }
  /** A route whose middleware sees the exact bytes (as NIP-98 does) and whose handler sees the validated body. */
  const appWith = (required: boolean) => {
    const app = validatingRouter<BodyEnv>();
    const route = createRoute({
      method: 'post',
      path: '/echo',
      middleware: [
        exactJsonBody<BodyEnv>({ maxBytes: 64, required }),
        async (c, next) => {
          c.set('seen', Buffer.from(c.get('exactBody')).toString('utf8'));
          await next();
        },
      ] as const,
      request: { body: jsonBody(catalogued('UNPROCESSABLE_BODY', z.object({ n: z.number().optional() })), undefined, required) },
      responses: {
        200: { description: 'echo', content: { 'application/json': { schema: z.object({ seen: z.string(), n: z.number().nullable() }) } } },
      },
    });
    app.openapi(route, (c) => c.json({ seen: c.get('seen'), n: c.req.valid('json').n ?? null }, 200));
    const top = new Hono();
    top.route('/', app);
    top.onError((err, c) => (err instanceof HttpError ? c.json(err.toJSON(), err.status as 400) : c.json({ error: String(err) }, 500)));
    return top;
  };
  /** A string body is sent as given; a Blob of no type is sent without Content-Type (as `fetch` would). */
  const post = async (app: Hono, body: string | Blob, headers: Record<string, string> = {}) => {
    const res = await app.request('/echo', { method: 'POST', headers, body });
    return { status: res.status, json: (await res.json()) as unknown };
  };
  const bytes = (text: string) => new Blob([text]);

  test('the middleware sees the bytes sent, the handler the value they parse to', async () => {
    const sent = '{ "n" : 7 }';
    assert.deepEqual(await post(appWith(true), sent, { 'content-type': 'application/json; charset=utf-8' }), {
      status: 200,
      json: { seen: sent, n: 7 },
    });
  });

  test('no Content-Type is read as JSON; another is 415 before the body is read; what does not parse is INVALID_JSON', async () => {
    const app = appWith(true);
    assert.deepEqual(await post(app, bytes('{"n":1}')), { status: 200, json: { seen: '{"n":1}', n: 1 } });
    // JSON by its type's name, though the validators' own pattern would not take it.
    assert.deepEqual(await post(app, '{"n":3}', { 'content-type': 'Application/JSON;' }), { status: 200, json: { seen: '{"n":3}', n: 3 } });
    assert.deepEqual(await post(app, '{"n":1}', { 'content-type': 'text/plain' }), {
      status: 415,
      json: { error: 'Content-Type must be application/json', code: 'UNSUPPORTED_MEDIA_TYPE' },
    });
    assert.deepEqual(await post(app, '{"n":', { 'content-type': 'application/json' }), {
      status: 400,
      json: { error: 'Request body is not valid JSON', code: 'INVALID_JSON' },
    });
    assert.deepEqual(await post(app, bytes('')), {
      status: 400,
      json: { error: 'Request body is not valid JSON', code: 'INVALID_JSON' },
    });
    assert.equal((await post(app, `{"n":"${'x'.repeat(80)}"}`, { 'content-type': 'application/json' })).status, 413);
    assert.deepEqual(await post(app, '{"n":"x"}', { 'content-type': 'application/json' }), {
      status: 422,
      json: { error: 'n: Invalid input: expected number, received string', code: 'UNPROCESSABLE_BODY' },
    });
  });

  test('an optional body may be empty, with or without a Content-Type', async () => {
    const app = appWith(false);
    assert.deepEqual(await post(app, bytes('')), { status: 200, json: { seen: '', n: null } });
    assert.deepEqual(await post(app, bytes(''), { 'content-type': 'application/json' }), {
      status: 200,
      json: { seen: '', n: null },
    });
    assert.deepEqual(await post(app, '{"n":2}', { 'content-type': 'application/json' }), { status: 200, json: { seen: '{"n":2}', n: 2 } });
  });
});

/** The service's sources (tests aside), relative to the repository. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [relative(ROOT, path)] : [];
  });
}

test('every router mounts its routes with app.openapi: the NIP-9a receiver’s route is the one documented-only mount', () => {
  const mounts: string[] = [];
  for (const file of sources(join(ROOT, 'src'))) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const match of text.matchAll(/mountDocumented\(app, ([\w.]+)/g)) mounts.push(`${file}: ${match[1]}`);
    // The registry is filled by app.openapi (and mountDocumented), nowhere else.
    if (file !== 'src/api/openapi.ts') assert.ok(!text.includes('registerPath('), `${file} registers a path by hand`);
    // Routers are validatingRouter()s, whose failed checks answer catalogue codes.
    if (file !== 'src/api/validation.ts') assert.ok(!text.includes('new OpenAPIHono'), `${file} builds an OpenAPIHono of its own`);
    // A router of the document mounts routes with app.openapi only (app.use for middleware is fine).
    if (text.includes('validatingRouter('))
      assert.deepEqual(text.match(/\bapp\.(get|post|put|patch|delete|on|all)\(/g), null, `${file} mounts a route without its schemas`);
  }
  assert.deepEqual(mounts, ['src/api/nip9a-callbacks.ts: NIP9A_CALLBACK_ROUTES.receive']);
});
