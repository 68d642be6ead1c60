/**
 * The front listener: the HTTP server's request listener answers ntfy's hot route itself and
 * hands every other request to the service's Hono app.
 *
 * A publish (`PUT`/`POST /{topic}`) is the one request made once per message, thousands of
 * times a second under load. Through Hono it costs a fetch-style request and context, routing,
 * a `Response` object and its conversion back to Node's response; here it is read from Node's
 * request and answered with one `writeHead` and `end`, by the same checks in the same order
 * (`publishToTopic`) and with the same answers and errors as the Hono route, which stays for
 * requests this does not recognise (a percent-encoded topic, an absolute-form URL).
 *
 * Every other request, including subscriptions (once per connection, not per message), goes to
 * Hono unchanged.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { NtfyContext } from './context.ts';
import { visitorAddress } from './context.ts';
import { NtfyError } from './errors.ts';
import { publishToTopic, readIncomingCapped } from './publish.ts';
import type { ParamSource } from './publish-params.ts';

/** Headers of every JSON answer, as the Hono route writes them (`jsonAnswer`). */
const JSON_ANSWER_HEADERS = ['Content-Type', 'application/json', 'Access-Control-Allow-Origin', '*'];

/** The topic segment of a publish this listener answers, or null to leave the request to Hono. */
export function publishSegmentOf(request: IncomingMessage): string | null {
  const method = request.method;
  if (method !== 'POST' && method !== 'PUT') return null;
  const url = request.url ?? '';
  if (url.charCodeAt(0) !== 0x2f /* / */) return null;
  const query = url.indexOf('?');
  const path = query < 0 ? url : url.slice(0, query);
  // `/` is the JSON publish; more segments and encoded characters are Hono's to route and decode.
  if (path.length < 2 || path.indexOf('/', 1) !== -1 || path.includes('%')) return null;
  return path.slice(1);
}

/**
 * Headers from Node's request; query parameters parsed only when a lookup needs them, into a map
 * (a publish looks up some forty option names, nearly all absent: a map answers each in a few
 * nanoseconds, `URLSearchParams.get` in a scan).
 */
class NodeRequestParams implements ParamSource {
  private search: Map<string, string> | null = null;

  constructor(
    private readonly request: IncomingMessage,
    private readonly queryText: string,
  ) {}

  header(name: string): string | undefined {
    const value = this.request.headers[name.toLowerCase()];
    return Array.isArray(value) ? value.join(', ') : value;
  }

  query(name: string): string | undefined {
    if (this.queryText === '') return undefined;
    if (this.search === null) {
      this.search = new Map();
      // The first value of a name wins, as URLSearchParams.get answers.
      for (const [key, value] of new URLSearchParams(this.queryText)) if (!this.search.has(key)) this.search.set(key, value);
    }
    return this.search.get(name);
  }
}

function writeJsonLine(response: ServerResponse, status: number, line: string): void {
  response.writeHead(status, [...JSON_ANSWER_HEADERS, 'Content-Length', String(Buffer.byteLength(line))]);
  response.end(line);
}

async function publish(ctx: NtfyContext, request: IncomingMessage, response: ServerResponse, segment: string): Promise<void> {
  const url = request.url ?? '';
  const query = url.indexOf('?');
  const forwarded = request.headers['x-forwarded-for'];
  try {
    const line = await publishToTopic(ctx, {
      topicSegment: segment,
      address: visitorAddress(
        request.socket.remoteAddress,
        Array.isArray(forwarded) ? forwarded.join(',') : forwarded,
        ctx.settings.behindProxy,
      ),
      params: new NodeRequestParams(request, query < 0 ? '' : url.slice(query + 1)),
      readBody: (maxBytes) => readIncomingCapped(request, maxBytes),
    });
    writeJsonLine(response, 200, line);
  } catch (err) {
    let error: NtfyError;
    if (err instanceof NtfyError) {
      error = err;
      ctx.logger.debug({ path: url, code: error.code }, error.message);
    } else {
      error = new NtfyError('INTERNAL');
      ctx.logger.error({ path: url, err: (err as Error).message }, 'ntfy request failed');
    }
    ctx.metrics.ntfyRefused.inc({ code: String(error.code) });
    if (response.headersSent) response.destroy();
    else writeJsonLine(response, error.http, `${JSON.stringify(error.toJSON())}\n`);
  }
}

/** `next` (the Hono app's listener) with ntfy publishes answered first. */
export function ntfyFrontListener(ctx: NtfyContext, next: RequestListener): RequestListener {
  return (request, response) => {
    const segment = publishSegmentOf(request);
    if (segment === null) {
      next(request, response);
      return;
    }
    void publish(ctx, request, response, segment);
  };
}
