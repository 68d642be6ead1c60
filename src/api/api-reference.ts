/**
 * `GET /v1/docs`: the OpenAPI document rendered for people, by Swagger UI (`swagger-ui-dist`),
 * whose files are served from the installed package under `/v1/docs/assets/` (no CDN). The page
 * runs under the console's strict Content-Security-Policy: scripts and styles from this origin
 * only, nothing inline, so the page boots Swagger UI from a script file of its own
 * ({@link BOOT_SCRIPT}) rather than the inline initializer of Swagger UI's sample page.
 *
 * The package's files are read on the first request (Swagger UI's bundle is about 1.5 MB) and kept.
 * The page names its files and the document (`/v1/openapi.json`) relative to its own URL, so the
 * reference works behind a proxy that mounts the service under a prefix.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Logger } from '../observability/logger.ts';
import { HttpError } from './errors.ts';
import { PAGE_SECURITY_HEADERS } from './page-security.ts';
import { errorResponses, OPENAPI_PATH, SECURITY } from './openapi.ts';
import { validatingRouter } from './validation.ts';

export const API_REFERENCE_PATH = '/v1/docs';

/** The console's policy: nothing but this origin's own files, nothing inline. */
const SECURITY_HEADERS = PAGE_SECURITY_HEADERS;
const ASSET_CACHE = 'public, max-age=3600';

/**
 * Boots Swagger UI on the page. `validatorUrl: null`: Swagger UI would otherwise load a badge from
 * validator.swagger.io, which the policy refuses (and the document is linted in the tests instead).
 */
const BOOT_SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: 'openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>nostr-push API reference</title>
    <link rel="icon" href="data:," />
    <link rel="stylesheet" href="docs/assets/swagger-ui.css" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="docs/assets/swagger-ui-bundle.js"></script>
    <script src="docs/assets/boot.js"></script>
  </body>
</html>
`;

/** The package files the page loads, by the name they are served under. */
const PACKAGE_ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
};

interface Asset {
  body: Uint8Array;
  type: string;
}

function loadAssets(): Map<string, Asset> {
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const assets = new Map<string, Asset>();
  for (const [name, type] of Object.entries(PACKAGE_ASSETS)) assets.set(name, { body: readFileSync(join(dir, name)), type });
  assets.set('boot.js', { body: new TextEncoder().encode(BOOT_SCRIPT), type: 'text/javascript; charset=utf-8' });
  return assets;
}

/** The `/v1/openapi.json` route's definition (served by `app.ts`, which holds the registry). */
export const OPENAPI_DOCUMENT_ROUTE = createRoute({
  method: 'get',
  path: OPENAPI_PATH,
  operationId: 'getOpenApiDocument',
  tags: ['service'],
  summary: 'This OpenAPI 3.1 document',
  security: SECURITY.none,
  responses: {
    200: { description: 'The document', content: { 'application/json': { schema: z.looseObject({}) } } },
    ...errorResponses([]),
  },
});

const REFERENCE_ROUTES = {
  page: createRoute({
    method: 'get',
    path: API_REFERENCE_PATH,
    operationId: 'getApiReference',
    tags: ['service'],
    summary: 'This document rendered as a page (Swagger UI)',
    security: SECURITY.none,
    responses: {
      200: { description: 'The HTML page', content: { 'text/html': { schema: z.string() } } },
      ...errorResponses([]),
    },
  }),
  asset: createRoute({
    method: 'get',
    path: `${API_REFERENCE_PATH}/assets/{name}`,
    operationId: 'getApiReferenceAsset',
    tags: ['service'],
    summary: 'A script or style sheet of the rendered reference',
    security: SECURITY.none,
    request: { params: z.object({ name: z.string().openapi({ param: { name: 'name', in: 'path' }, example: 'swagger-ui.css' }) }) },
    responses: {
      200: {
        description: 'The file',
        content: { 'text/javascript': { schema: z.string() }, 'text/css': { schema: z.string() } },
      },
      ...errorResponses(['NOT_FOUND']),
    },
  }),
};

export function apiReferenceRoutes(logger: Logger): OpenAPIHono {
  const app = validatingRouter();
  let assets: Map<string, Asset> | null = null;
  const assetsLoaded = (): Map<string, Asset> => {
    if (!assets) {
      assets = loadAssets();
      logger.debug({ files: [...assets.keys()] }, 'API reference files loaded');
    }
    return assets;
  };
  app.openapi(REFERENCE_ROUTES.page, (c) => c.html(PAGE, 200, { 'cache-control': 'no-cache', ...SECURITY_HEADERS }));
  app.openapi(REFERENCE_ROUTES.asset, (c) => {
    const asset = assetsLoaded().get(c.req.valid('param').name);
    if (!asset) throw new HttpError('NOT_FOUND');
    return c.body(new Uint8Array(asset.body), 200, { 'content-type': asset.type, 'cache-control': ASSET_CACHE, ...SECURITY_HEADERS });
  });
  return app;
}
