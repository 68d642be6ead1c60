/**
 * App-level suppressions for support staff (issue 15 item 5), admin keys only:
 * `POST /v1/admin/suppressions {pubkey | token}` (201, or 200 when it was already there),
 * `DELETE /v1/admin/suppressions {pubkey | token | id}` and `GET /v1/admin/suppressions`. The
 * delivery stage checks them before every send (`src/delivery/suppression-gate.ts`). A token is
 * never echoed whole: answers and logs carry its prefix.
 */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { redact, type Logger } from '../observability/logger.ts';
import { suppressionId, type Suppression, type SuppressionTarget } from '../store/port-suppressions.ts';
import { requireAppKey, type AppKeyEnv, type AuthDeps } from './auth.ts';
import { HttpError } from './errors.ts';
import { API_KEY_ERRORS, errorResponses, VALIDATED_BODY_ERRORS } from './openapi.ts';
import { SuppressionBody, SuppressionCreated, SuppressionDeleteBody, SuppressionList, SuppressionRemoved } from './schemas.ts';

/** Most suppressions one `GET` lists: a support tool's list, not a mailing list. */
const LIST_LIMIT = 10_000;

export interface AdminSuppressionDeps {
  auth: AuthDeps;
  logger: Logger;
}

function view(s: Suppression) {
  return {
    id: s.id,
    kind: s.kind,
    value: s.kind === 'token' ? redact(s.value) : s.value,
    createdAt: new Date(s.createdAtMs).toISOString(),
  };
}

function targetOf(body: { pubkey?: string | undefined; token?: string | undefined }): SuppressionTarget | null {
  if (body.pubkey !== undefined) return { kind: 'pubkey', value: body.pubkey };
  if (body.token !== undefined) return { kind: 'token', value: body.token };
  return null;
}

export function adminSuppressionRoutes(app: OpenAPIHono<AppKeyEnv>, deps: AdminSuppressionDeps): void {
  const adminKeys = requireAppKey(deps.auth, ['admin']);
  const path = '/v1/admin/suppressions';

  const add = createRoute({
    method: 'post',
    path,
    operationId: 'addSuppression',
    tags: ['admin'],
    summary: 'Stop every push to a user (pubkey) or one device (token) of this app',
    security: [{ apiKey: [] }],
    middleware: [adminKeys] as const,
    request: { body: { required: true, content: { 'application/json': { schema: SuppressionBody } } } },
    responses: {
      201: { description: 'Suppressed', content: { 'application/json': { schema: SuppressionCreated } } },
      200: { description: 'It was already suppressed', content: { 'application/json': { schema: SuppressionCreated } } },
      ...errorResponses([...API_KEY_ERRORS, ...VALIDATED_BODY_ERRORS]),
    },
  });
  app.openapi(add, async (c) => {
    const target = targetOf(c.req.valid('json'));
    if (!target) throw new HttpError('VALIDATION_FAILED', 'exactly one of pubkey and token');
    const appId = c.get('appId');
    const { suppression, created } = await c.get('appStore').addSuppression(appId, target);
    deps.logger.info({ appId, id: suppression.id, kind: target.kind, value: view(suppression).value, created }, 'suppression added');
    return c.json({ ...view(suppression), created }, created ? 201 : 200);
  });

  const remove = createRoute({
    method: 'delete',
    path,
    operationId: 'removeSuppression',
    tags: ['admin'],
    summary: 'Lift a suppression, named by what it suppresses or by its id',
    security: [{ apiKey: [] }],
    middleware: [adminKeys] as const,
    request: { body: { required: true, content: { 'application/json': { schema: SuppressionDeleteBody } } } },
    responses: {
      200: { description: 'Lifted', content: { 'application/json': { schema: SuppressionRemoved } } },
      ...errorResponses([...API_KEY_ERRORS, ...VALIDATED_BODY_ERRORS]),
    },
  });
  app.openapi(remove, async (c) => {
    const body = c.req.valid('json');
    const target = targetOf(body);
    const id = target ? suppressionId(target) : (body.id ?? '');
    const appId = c.get('appId');
    if (!(await c.get('appStore').removeSuppression(appId, id))) throw new HttpError('NOT_FOUND', 'No such suppression');
    deps.logger.info({ appId, id }, 'suppression lifted');
    return c.json({ id, removed: true as const }, 200);
  });

  const list = createRoute({
    method: 'get',
    path,
    operationId: 'listSuppressions',
    tags: ['admin'],
    summary: 'The suppressions of this app, oldest first',
    security: [{ apiKey: [] }],
    middleware: [adminKeys] as const,
    responses: {
      200: { description: 'Suppressions', content: { 'application/json': { schema: SuppressionList } } },
      ...errorResponses(API_KEY_ERRORS),
    },
  });
  app.openapi(list, async (c) => {
    const suppressions = await c.get('appStore').listSuppressions(c.get('appId'), LIST_LIMIT);
    return c.json({ suppressions: suppressions.map(view) }, 200);
  });
}
