/**
 * The console's single-page app: the files `npm run build` bundles into `dist/console-ui/`
 * (scripts/build-console.mjs), served under `/console`. Bundles carry a content hash in their
 * names and are cached for a year; `index.html` (every page path) is revalidated on every load,
 * so a new build is picked up at once. A strict Content-Security-Policy allows nothing but the
 * console's own files.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import type { Logger } from '../observability/logger.ts';
import { HttpError } from '../api/errors.ts';
import { PAGE_SECURITY_HEADERS } from '../api/page-security.ts';
import { CONSOLE_API_PATH, CONSOLE_PATH } from './session.ts';

/** Where the build puts the bundle: the same folder from `src/console/` (tsx) and `dist/console/`. */
export const CONSOLE_UI_DIR = fileURLToPath(new URL('../../dist/console-ui/', import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json; charset=utf-8',
};
const HASHED_CACHE = 'public, max-age=31536000, immutable';
const INDEX_CACHE = 'no-cache';
const SECURITY_HEADERS = PAGE_SECURITY_HEADERS;

interface Asset {
  body: Buffer;
  type: string;
}

/** The bundle's files, read once at start (a few hundred KiB); null when the console was not built. */
export function loadConsoleAssets(dir = CONSOLE_UI_DIR): Map<string, Asset> | null {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return null;
  }
  if (!names.includes('index.html')) return null;
  const assets = new Map<string, Asset>();
  for (const name of names) {
    const type = CONTENT_TYPES[extname(name)];
    if (type) assets.set(name, { body: readFileSync(join(dir, name)), type });
  }
  return assets;
}

export function consoleStaticRoutes(assets: Map<string, Asset> | null, logger: Logger): Hono {
  const app = new Hono();
  if (!assets) logger.warn({ dir: CONSOLE_UI_DIR }, 'the console is not built (npm run build); /console answers 503');
  const send = (name: string, cache: string) => {
    const asset = assets?.get(name);
    if (!asset) return null;
    return new Response(new Uint8Array(asset.body), {
      headers: { 'content-type': asset.type, 'cache-control': cache, ...SECURITY_HEADERS },
    });
  };
  const index = () => {
    if (!assets) throw new HttpError('CONSOLE_NOT_BUILT');
    return send('index.html', INDEX_CACHE) as Response;
  };
  app.get(CONSOLE_PATH, index);
  app.get(`${CONSOLE_PATH}/assets/:name`, (c) => {
    const response = send(c.req.param('name'), HASHED_CACHE);
    if (!response) throw new HttpError('NOT_FOUND');
    return response;
  });
  // Every other page path is the app's own route (a reload of /console/dead-letters): the app.
  app.get(`${CONSOLE_PATH}/*`, (c) => {
    if (c.req.path.startsWith(`${CONSOLE_API_PATH}/`)) throw new HttpError('NOT_FOUND');
    return index();
  });
  return app;
}
