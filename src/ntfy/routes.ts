/**
 * The ntfy HTTP surface, mounted on the service's Hono app (see `server.ts`). Routes, each with
 * its checks in the order they run:
 *
 * | route                              | served when  | handler                                       |
 * |------------------------------------|--------------|-----------------------------------------------|
 * | `GET /v1/health`                   | always       | `{"healthy":true}`                            |
 * | `OPTIONS *`                        | always       | CORS preflight                                |
 * | `PUT`/`POST /`                     | api role     | JSON publish: limit, body, topic, write auth  |
 * | `PUT`/`POST /{topic}`              | api role     | publish: limit, topic, write auth, body       |
 * | `GET /{topic}/publish\|send\|trigger` | api role | publish with an empty body (ntfy's webhooks)  |
 * | `GET /{topic}`                     | always       | `?up=1`: `{"unifiedpush":{"version":1}}`, else 404 |
 * | `GET /{topics}/auth`               | always       | read auth probe: `{"success":true}`           |
 * | `GET /{topics}/json\|sse\|raw`     | pusher role  | subscribe (see `subscribe.ts`)                |
 * | `GET /{topics}/ws` (no upgrade)    | pusher role  | 400 40016; upgrades go to `websocket.ts`      |
 *
 * Every handler runs inside {@link ntfyHandler}, which writes {@link NtfyError}s in ntfy's JSON
 * shape and turns anything unexpected into 500 50001 (logged), never a crash.
 */
import { Hono } from 'hono';
import { lightParamSource, type NtfyContext, type NtfyEnv, type NtfyHonoContext } from './context.ts';
import { NtfyError } from './errors.ts';
import { handlePublish, handlePublishJson, handlePublishViaGet, jsonAnswer } from './publish.ts';
import { readBoolParam } from './publish-params.ts';
import { handleHttpSubscribe } from './subscribe.ts';
import { parseTopicList } from './topics.ts';

/** The legacy UnifiedPush endpoint discovery answer (ntfy, common-proxies). */
export const UNIFIEDPUSH_DISCOVERY = { unifiedpush: { version: 1 } } as const;

const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, PUT, POST, PATCH, DELETE',
  'Access-Control-Allow-Headers': '*',
};

type Handler = (c: NtfyHonoContext) => Promise<Response> | Response;

/** Run a handler; its errors become ntfy error answers. */
export function ntfyHandler(ctx: NtfyContext, handler: Handler): Handler {
  return async (c) => {
    try {
      return await handler(c);
    } catch (err) {
      if (err instanceof NtfyError) {
        ctx.metrics.ntfyRefused.inc({ code: String(err.code) });
        ctx.logger.debug({ path: c.req.path, code: err.code }, err.message);
        return jsonAnswer(err.toJSON(), err.http);
      }
      ctx.logger.error({ path: c.req.path, err: (err as Error).message }, 'ntfy request failed');
      ctx.metrics.ntfyRefused.inc({ code: String(new NtfyError('INTERNAL').code) });
      return jsonAnswer(new NtfyError('INTERNAL').toJSON(), 500);
    }
  };
}

export interface NtfyRouteOptions {
  /** Serve publishing (the api role). */
  publish: boolean;
}

export function ntfyRoutes(ctx: NtfyContext, options: NtfyRouteOptions): Hono<NtfyEnv> {
  const app = new Hono<NtfyEnv>();
  const on = (handler: Handler) => ntfyHandler(ctx, handler);

  app.get('/v1/health', () => jsonAnswer({ healthy: true }));
  app.options('*', () => new Response(null, { status: 200, headers: CORS_HEADERS }));

  if (options.publish) {
    const json = on((c) => handlePublishJson(ctx, c));
    const body = on((c) => handlePublish(ctx, c));
    app.put('/', json);
    app.post('/', json);
    app.put('/:topic', body);
    app.post('/:topic', body);
    const viaGet = on((c) => handlePublishViaGet(ctx, c));
    for (const verb of ['publish', 'send', 'trigger']) app.get(`/:topic/${verb}`, viaGet);
  }

  app.get(
    '/:topic',
    on((c) => {
      if (readBoolParam(lightParamSource(c), 'x-unifiedpush', 'unifiedpush', 'up')) return jsonAnswer(UNIFIEDPUSH_DISCOVERY);
      // ntfy serves its web app here; this server has none.
      throw new NtfyError('NOT_FOUND');
    }),
  );

  app.get(
    '/:topics/auth',
    on((c) => {
      const topics = parseTopicList(c.req.param('topics') ?? '');
      const params = lightParamSource(c);
      const identity = ctx.settings.authorizer.authenticate(params.header('authorization'), params.query('auth'));
      ctx.settings.authorizer.authorize(identity, topics, 'read');
      return jsonAnswer({ success: true });
    }),
  );

  if (ctx.hub) {
    for (const transport of ['json', 'sse', 'raw'] as const)
      app.get(
        `/:topics/${transport}`,
        on((c) => handleHttpSubscribe(ctx, c, transport)),
      );
    app.get(
      '/:topics/ws',
      on(() => {
        throw new NtfyError('WEBSOCKET_UPGRADE_MISSING');
      }),
    );
  }
  return app;
}
