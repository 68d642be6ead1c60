/**
 * Relays' `POST /nip9a/cb/{secret}` answered straight from Node's request, before Hono.
 *
 * This is the receiver's hottest route (bench/nip9a: thousands a second into pushes). Hono's
 * Node adapter builds a WHATWG Request, Headers and Response for each call, ~5 % of the main
 * thread there and as much of its garbage; the receiver itself only needs the secret, one header
 * and the body. Everything else (other methods, extra path segments) goes on to Hono, which
 * answers the same route the same way for `app.request()` and any other caller
 * ({@link nip9aCallbackRoutes}).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Logger } from '../observability/logger.ts';
import { CALLBACK_PATH_PREFIX } from '../nip9a/receiver/callback-url.ts';
import { HttpError } from './errors.ts';
import { readIncomingBytes } from './json-body.ts';
import type { CallbackAnswer, CallbackReceiver } from './nip9a-callbacks.ts';

/** The secret segment of a relay's callback POST this listener answers, or null to leave it to Hono. */
export function callbackSecretOf(request: Pick<IncomingMessage, 'method' | 'url'>): string | null {
  if (request.method !== 'POST') return null;
  const url = request.url ?? '';
  if (!url.startsWith(CALLBACK_PATH_PREFIX)) return null;
  const query = url.indexOf('?');
  const segment = url.slice(CALLBACK_PATH_PREFIX.length, query < 0 ? url.length : query);
  // One non-empty segment, as Hono's `:secret` matches; it decodes it, so we do too.
  if (segment.length === 0 || segment.includes('/')) return null;
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

function writeAnswer(response: ServerResponse, answer: CallbackAnswer): void {
  const json = JSON.stringify(answer.body);
  response.writeHead(answer.status, {
    ...answer.headers,
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(json)),
  });
  response.end(json);
}

async function answerCallback(
  receiver: CallbackReceiver,
  logger: Logger,
  request: IncomingMessage,
  response: ServerResponse,
  secret: string,
): Promise<void> {
  let answer: CallbackAnswer;
  try {
    answer = await receiver({
      secret,
      contentType: request.headers['content-type'],
      readBody: (maxBytes) => readIncomingBytes(request, maxBytes),
    });
  } catch (err) {
    logger.error({ path: CALLBACK_PATH_PREFIX, err: (err as Error).message }, 'unhandled error in route');
    answer = { status: 500, body: new HttpError('INTERNAL').toJSON() };
  }
  if (response.headersSent) response.destroy();
  else writeAnswer(response, answer);
}

/** `next` (the rest of the service's listeners) with relays' callback POSTs answered first. */
export function nip9aCallbackFront(receiver: CallbackReceiver, logger: Logger, next: RequestListener): RequestListener {
  return (request, response) => {
    const secret = callbackSecretOf(request);
    if (secret === null) {
      next(request, response);
      return;
    }
    void answerCallback(receiver, logger, request, response, secret);
  };
}
