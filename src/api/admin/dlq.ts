/**
 * The dead-letter routes of the admin API, a sub-app mounted behind the app's admin API keys
 * (`PlatformApi.adminKeys`, the X-App rule of `auth.ts`). Everything is read from the store view
 * of the app the key resolved to (`appStore`), so another app's dead letter id is 404:
 *
 * - `GET /v1/admin/dlq?queue=&limit=&cursor=`: one page, oldest first, `{items, nextCursor}`;
 * - `POST /v1/admin/dlq/{id}/replay[?queue=]`: back to its queue and lane, attempts reset;
 * - `POST /v1/admin/dlq/replay?queue=`: every dead letter of one queue, `{queue, replayed}`;
 * - `DELETE /v1/admin/dlq/{id}[?queue=]`: forget it (204).
 *
 * An id without `?queue=` is looked for in both queues (a 409 when both hold it). Bad input is a
 * 4xx from the error catalogue, a warn line and a count in `push_dead_letter_operations_total`.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppKeyEnv } from '../auth.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Metrics } from '../../observability/metrics.ts';
import { InvalidCursorError } from '../../store/port-dlq.ts';
import type { QueueName, StorePort } from '../../store/port.ts';
import { HttpError } from '../errors.ts';
import { deadLetterView, locateDeadLetter } from './dead-letters.ts';
import { API_KEY_ERRORS, errorResponses, jsonResponse, SECURITY } from '../openapi.ts';
import { catalogued, validatingRouter } from '../validation.ts';

/** Page size when `limit` is absent. */
export const DLQ_DEFAULT_LIMIT = 50;
/** Largest page: a page is one store read, and a page of large payloads is a large response. */
export const DLQ_MAX_LIMIT = 500;
/** Longest id accepted in a path (queue ids are an event id and a pubkey at most). */
const MAX_ID_LENGTH = 256;

export interface DlqRouteDeps {
  /** Authentication and authorisation of every route, run before anything is read; sets `appId` and `appStore`. */
  auth: MiddlewareHandler<AppKeyEnv>;
  logger: Logger;
  metrics: Metrics;
}

type Operation = 'list' | 'replay' | 'replay_all' | 'delete';

const QueueParam = z.enum(['inbound', 'outbound']).openapi({ description: 'The queue the dead letter died in' });
/** `?queue=`, refused as the routes always did (`INVALID_QUERY`, naming what was given). */
const queueQuery = <T extends z.ZodType>(schema: T) =>
  catalogued('INVALID_QUERY', schema, (value) => `queue must be inbound or outbound, got ${JSON.stringify(value ?? null)}`);
const IdParams = z.object({
  id: catalogued('INVALID_QUERY', z.string().min(1).max(MAX_ID_LENGTH), () => `id must be 1 to ${MAX_ID_LENGTH} characters`).openapi({
    param: { name: 'id', in: 'path' },
    description: 'The dead letter’s id, as listed',
  }),
});
const DeadLetter = z
  .object({
    id: z.string(),
    queue: QueueParam,
    lane: z.string().openapi({ description: 'The lane it returns to when replayed' }),
    item: z.unknown().openapi({ description: 'The queued work, as it was queued' }),
    reason: z.string(),
    attempts: z.number().int(),
    lastError: z.string().nullable(),
    firstFailedAt: z.string(),
    lastFailedAt: z.string(),
    deadAt: z.string(),
  })
  .openapi('DeadLetter');

/** The routes, as the OpenAPI document describes them and their input is validated (`validation.ts`: bad input is `INVALID_QUERY`). */
export const DLQ_ROUTES = {
  list: createRoute({
    method: 'get',
    path: '/v1/admin/dlq',
    operationId: 'listDeadLetters',
    tags: ['admin'],
    summary: 'One page of a queue’s dead letters, oldest first',
    security: SECURITY.apiKey,
    request: {
      query: z.object({
        queue: queueQuery(QueueParam),
        limit: catalogued(
          'INVALID_QUERY',
          z.coerce.number().int().min(1).max(DLQ_MAX_LIMIT).optional(),
          () => `limit must be an integer from 1 to ${DLQ_MAX_LIMIT}`,
        ).openapi({ description: `Default ${DLQ_DEFAULT_LIMIT}` }),
        cursor: catalogued('INVALID_QUERY', z.string().optional(), () => 'cursor must be given once').openapi({
          description: 'The previous page’s `nextCursor`',
        }),
      }),
    },
    responses: {
      200: jsonResponse(
        'A page; `nextCursor` is null on the last',
        z.object({ items: z.array(DeadLetter), nextCursor: z.string().nullable() }).openapi('DeadLetterPage'),
      ),
      ...errorResponses([...API_KEY_ERRORS, 'INVALID_QUERY', 'INVALID_CURSOR']),
    },
  }),
  replayAll: createRoute({
    method: 'post',
    path: '/v1/admin/dlq/replay',
    operationId: 'replayAllDeadLetters',
    tags: ['admin'],
    summary: 'Put every dead letter of one queue back on it, attempts reset',
    security: SECURITY.apiKey,
    request: { query: z.object({ queue: queueQuery(QueueParam) }) },
    responses: {
      200: jsonResponse(
        'How many were replayed',
        z.object({ queue: QueueParam, replayed: z.number().int() }).openapi('DeadLettersReplayed'),
      ),
      ...errorResponses([...API_KEY_ERRORS, 'INVALID_QUERY']),
    },
  }),
  replay: createRoute({
    method: 'post',
    path: '/v1/admin/dlq/{id}/replay',
    operationId: 'replayDeadLetter',
    tags: ['admin'],
    summary: 'Put one dead letter back on its queue and lane, attempts reset',
    security: SECURITY.apiKey,
    request: {
      params: IdParams,
      query: z.object({ queue: queueQuery(QueueParam.optional()).openapi({ description: 'Needed when both queues hold the id' }) }),
    },
    responses: {
      200: jsonResponse(
        'Replayed',
        z.object({ id: z.string(), queue: QueueParam, replayed: z.literal(true) }).openapi('DeadLetterReplayed'),
      ),
      ...errorResponses([...API_KEY_ERRORS, 'INVALID_QUERY', 'DEAD_LETTER_NOT_FOUND', 'DEAD_LETTER_AMBIGUOUS']),
    },
  }),
  remove: createRoute({
    method: 'delete',
    path: '/v1/admin/dlq/{id}',
    operationId: 'deleteDeadLetter',
    tags: ['admin'],
    summary: 'Forget one dead letter',
    security: SECURITY.apiKey,
    request: {
      params: IdParams,
      query: z.object({ queue: queueQuery(QueueParam.optional()).openapi({ description: 'Needed when both queues hold the id' }) }),
    },
    responses: {
      204: { description: 'Deleted' },
      ...errorResponses([...API_KEY_ERRORS, 'INVALID_QUERY', 'DEAD_LETTER_NOT_FOUND', 'DEAD_LETTER_AMBIGUOUS']),
    },
  }),
};

export function dlqRoutes(deps: DlqRouteDeps): OpenAPIHono<AppKeyEnv> {
  const app = validatingRouter<AppKeyEnv>();
  const count = (operation: Operation, queue: string, outcome: string, n = 1) =>
    deps.metrics.deadLetterOperations.inc({ operation, queue, outcome }, n);
  /** Each refusal (the schemas' and the handlers'), counted and said once. */
  const counted =
    (operation: Operation): MiddlewareHandler<AppKeyEnv> =>
    async (c, next) => {
      await next();
      if (!(c.error instanceof HttpError) || c.error.status >= 500) return;
      count(operation, 'none', c.error.code.toLowerCase());
      deps.logger.warn({ operation, code: c.error.code, detail: c.error.message }, 'dead-letter request refused');
    };
  const located = async (store: StorePort, id: string, queue: QueueName | undefined): Promise<QueueName> => {
    const where = await locateDeadLetter(store, id, queue);
    if (where.kind === 'found') return where.queue;
    if (where.kind === 'ambiguous') throw new HttpError('DEAD_LETTER_AMBIGUOUS', `dead letters ${id} exist in several queues`);
    throw new HttpError('DEAD_LETTER_NOT_FOUND', `no dead letter ${id}`);
  };

  app.use('/v1/admin/dlq', deps.auth);
  app.use('/v1/admin/dlq/*', deps.auth);

  app.openapi({ ...DLQ_ROUTES.list, middleware: counted('list') }, async (c) => {
    const { queue, limit = DLQ_DEFAULT_LIMIT, cursor } = c.req.valid('query');
    try {
      const page = await c.get('appStore').listDeadPage(queue, { limit, ...(cursor === undefined ? {} : { cursor }) });
      count('list', queue, 'ok');
      return c.json({ items: page.items.map((dead) => deadLetterView(queue, dead)), nextCursor: page.nextCursor }, 200);
    } catch (err) {
      if (err instanceof InvalidCursorError) throw new HttpError('INVALID_CURSOR', err.message);
      throw err;
    }
  });

  // Before `/:id/replay`, so `replay` is never read as an id.
  app.openapi({ ...DLQ_ROUTES.replayAll, middleware: counted('replay_all') }, async (c) => {
    const { queue } = c.req.valid('query');
    const replayed = await c.get('appStore').replayAllDead(queue);
    count('replay_all', queue, 'ok');
    deps.logger.info({ app: c.get('appId'), queue, replayed }, 'dead letters replayed');
    return c.json({ queue, replayed }, 200);
  });

  app.openapi({ ...DLQ_ROUTES.replay, middleware: counted('replay') }, async (c) => {
    const { id } = c.req.valid('param');
    const store = c.get('appStore');
    const queue = await located(store, id, c.req.valid('query').queue);
    // A concurrent replay or delete between the lookup and here leaves nothing to replay: a 404 as well.
    if (!(await store.replayDead(queue, id))) throw new HttpError('DEAD_LETTER_NOT_FOUND', `no dead letter ${id}`);
    count('replay', queue, 'ok');
    deps.logger.info({ app: c.get('appId'), queue, id }, 'dead letter replayed');
    return c.json({ id, queue, replayed: true as const }, 200);
  });

  app.openapi({ ...DLQ_ROUTES.remove, middleware: counted('delete') }, async (c) => {
    const { id } = c.req.valid('param');
    const store = c.get('appStore');
    const queue = await located(store, id, c.req.valid('query').queue);
    if (!(await store.deleteDead(queue, id))) throw new HttpError('DEAD_LETTER_NOT_FOUND', `no dead letter ${id}`);
    count('delete', queue, 'ok');
    deps.logger.info({ app: c.get('appId'), queue, id }, 'dead letter deleted');
    return c.body(null, 204);
  });

  return app;
}
