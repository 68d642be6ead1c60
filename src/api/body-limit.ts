/**
 * One request body limit for every route, applied before routing (issue 35).
 *
 * The HTTP server builds every request as a {@link LimitedRequest} (node:http's `IncomingMessage`
 * option), and {@link bodyLimitFront} is its outermost request listener, ahead of the NIP-9a
 * callback front, the ntfy front and Hono. For each request it looks up the route's limit
 * (`server.max_body_bytes`, or a larger one a route declares with its reason, {@link LargerBody})
 * and then:
 *
 * - `Content-Length` over the limit: 413 at once, before any listener or route runs;
 * - `Transfer-Encoding` (no length known): the body is held, chunk by chunk, until it ends (then
 *   the request goes on, its body replayed untouched) or passes the limit (then 413). Holding
 *   costs at most the limit per request, which is what any route reading the body keeps anyway;
 * - neither: no body, nothing to do.
 *
 * After a refusal the rest of the body is read and dropped (never buffered) before the 413 is
 * written, so the client reads it on a connection with nothing left unread; past
 * {@link REFUSED_BODY_DRAIN_BYTES} of dropped bytes the 413 is written and the connection closed.
 * A route therefore never sees a body over its limit, whichever listener answers it, and a route
 * added later gets the default without asking. Routes keep their own smaller limits (a login body
 * is 4 KiB): this is the ceiling, not a floor. A path no route serves (or one Hono would route
 * differently, such as an absolute-form URL) gets the default, never a larger limit.
 */
import { IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import { TrieRouter } from 'hono/router/trie-router';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { HTTP_ERRORS } from './errors.ts';

/**
 * Bytes past the limit of a refused body read and dropped before the 413 is written and the
 * connection closed: 1 MiB lets a client that sent a modestly oversized body read its 413 on a
 * connection with nothing unread (closing a socket with unread data resets it, and a reset can
 * discard the answer), while an abusive upload costs at most this much more bandwidth and no memory.
 */
export const REFUSED_BODY_DRAIN_BYTES = 1024 * 1024;

/** A route that needs a larger body than `server.max_body_bytes`, declared beside the route with its reason. */
export interface LargerBody {
  /** The route's method, upper case, and its path as the route declares it (Hono syntax). */
  method: string;
  path: string;
  maxBytes: number;
  /** Why this route needs more than the default (docs/security.md lists these). */
  reason: string;
}

/** Whose error shape a refusal takes: the catalogue's, or ntfy's on ntfy routes. */
export type RefusalShape = 'catalogue' | 'ntfy';

/** A route's body limit, as the front applies it. */
export interface RouteBodyLimit {
  method: string;
  /** The route's declared path, or `null` for a request no route matches (404 after the limit). */
  path: string | null;
  maxBytes: number;
  shape: RefusalShape;
  /** Set when the route declares a larger limit. */
  reason?: string;
}

/** A route of the Hono app as `app.routes` lists it. */
export interface MountedRoute {
  method: string;
  path: string;
  handler: unknown;
}

/** How a refusal is answered and counted. */
export interface BodyRefusalSink {
  /** The ntfy error body of a refused ntfy request (41304 or 41303, ntfy's own codes). */
  ntfyBody: (route: RouteBodyLimit) => { code: number; http: number; error: string; link?: string };
  onRefused: (route: RouteBodyLimit, declaredBytes: number | null) => void;
}

/**
 * The limit of every route of a Hono app: `defaultMaxBytes` unless the route is one of `larger`
 * (then the larger of the two). Built once at start-up from the app's own route list, so the
 * lookup sees exactly the routes Hono will route to; a `larger` entry naming no route is a wiring
 * error, refused here.
 */
export class BodyLimits {
  private readonly router = new TrieRouter<RouteBodyLimit>();
  private readonly routes: RouteBodyLimit[] = [];
  private readonly unmatched: RouteBodyLimit;

  constructor(
    readonly defaultMaxBytes: number,
    mounted: readonly MountedRoute[],
    options: { larger: readonly LargerBody[]; ntfyHandlers: ReadonlySet<unknown> },
  ) {
    this.unmatched = { method: 'ALL', path: null, maxBytes: defaultMaxBytes, shape: 'catalogue' };
    const larger = new Map(options.larger.map((entry) => [`${entry.method} ${entry.path}`, entry]));
    const seen = new Set<string>();
    for (const route of mounted) {
      const key = `${route.method} ${route.path}`;
      // Middleware (`app.use`) is listed as an `ALL` route; only the routes that answer decide a limit.
      if (route.method === 'ALL' || seen.has(key)) continue;
      seen.add(key);
      const declared = larger.get(key);
      const limit: RouteBodyLimit = {
        method: route.method,
        path: route.path,
        maxBytes: Math.max(defaultMaxBytes, declared?.maxBytes ?? 0),
        shape: options.ntfyHandlers.has(route.handler) ? 'ntfy' : 'catalogue',
        ...(declared ? { reason: declared.reason } : {}),
      };
      this.routes.push(limit);
      this.router.add(route.method, route.path, limit);
    }
    for (const key of larger.keys())
      if (!seen.has(key)) throw new Error(`a larger body limit names ${key}, which no route of the HTTP app serves`);
  }

  /** The limit of the route Hono would answer `method path` with (its first match, as Hono routes). */
  limitFor(method: string, path: string): RouteBodyLimit {
    // Hono answers HEAD with the GET route.
    const matches = this.router.match(method === 'HEAD' ? 'GET' : method, path)[0];
    return matches[0]?.[0] ?? this.unmatched;
  }

  /** Every route with its limit, in the order the app declares them. */
  list(): readonly RouteBodyLimit[] {
    return this.routes;
  }
}

type HeldOutcome = 'complete' | 'over';
/** How a dropped body ended: it ended, or it passed the drain allowance (the connection is to be closed). */
type DrainOutcome = 'ended' | 'cut';

/**
 * The request class of the HTTP server: node:http's, with a body that can be held until it ends
 * (to learn a chunked body's size before any route runs) or dropped (after a refusal). node:http
 * delivers a body by calling `push` on its request; every other request passes straight through.
 */
export class LimitedRequest extends IncomingMessage {
  #mode: 'pass' | 'hold' | 'drop' = 'pass';
  #held: unknown[] = [];
  #heldBytes = 0;
  #holdLimit = 0;
  #onHeld: ((outcome: HeldOutcome) => void) | null = null;
  #droppedBytes = 0;
  #onDrained: ((outcome: DrainOutcome) => void) | null = null;

  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (this.#mode === 'pass') return super.push(chunk, encoding);
    if (chunk === null) {
      if (this.#mode === 'hold') this.#release();
      else {
        super.push(null);
        this.#drained('ended');
      }
      return false;
    }
    const size = (chunk as Uint8Array).byteLength;
    if (this.#mode === 'hold') {
      this.#heldBytes += size;
      if (this.#heldBytes > this.#holdLimit) {
        const done = this.#onHeld;
        this.#onHeld = null;
        this.#held = [];
        this.#droppedBytes = this.#heldBytes;
        this.#mode = 'drop';
        done?.('over');
      } else this.#held.push(chunk);
      return true;
    }
    this.#droppedBytes += size;
    if (this.#droppedBytes > this.#holdLimit + REFUSED_BODY_DRAIN_BYTES) this.#drained('cut');
    return true;
  }

  /** Hold the body until it ends (`complete`: replayed for whoever reads it) or passes `maxBytes` (`over`: being dropped). */
  holdBody(maxBytes: number): Promise<HeldOutcome> {
    this.#mode = 'hold';
    this.#holdLimit = maxBytes;
    return new Promise((resolve) => {
      this.#onHeld = resolve;
    });
  }

  /**
   * Read and drop the rest of the body: `ended` once it has all been read (the connection can
   * answer and carry on cleanly), `cut` once more than `maxBytes` and {@link REFUSED_BODY_DRAIN_BYTES}
   * were dropped (the caller closes the connection). Immediately `ended` if the body has ended.
   */
  dropBody(maxBytes: number): Promise<DrainOutcome> {
    if (this.complete) return Promise.resolve('ended');
    this.#mode = 'drop';
    this.#holdLimit = maxBytes;
    this.#held = [];
    if (this.#droppedBytes > maxBytes + REFUSED_BODY_DRAIN_BYTES) return Promise.resolve('cut');
    // Reading keeps node:http from dumping the body itself after the answer, which it does unbounded.
    this.resume();
    return new Promise((resolve) => {
      this.#onDrained = resolve;
    });
  }

  #drained(outcome: DrainOutcome): void {
    const done = this.#onDrained;
    this.#onDrained = null;
    done?.(outcome);
  }

  #release(): void {
    this.#mode = 'pass';
    const held = this.#held;
    this.#held = [];
    for (const chunk of held) super.push(chunk);
    super.push(null);
    const done = this.#onHeld;
    this.#onHeld = null;
    done?.('complete');
  }
}

/** Refusals counted (`push_http_requests_refused_total{route, code="BODY_TOO_LARGE"}`) and logged at warn with the limit and the declared length. */
export function countedRefusals(metrics: Metrics, logger: Logger, ntfyBody: BodyRefusalSink['ntfyBody']): BodyRefusalSink {
  return {
    ntfyBody,
    onRefused(route, declaredBytes) {
      const name = route.path === null ? 'unmatched' : `${route.method} ${route.path}`;
      metrics.httpRefused.inc({ route: name, code: 'BODY_TOO_LARGE' });
      logger.warn({ route: name, limitBytes: route.maxBytes, declaredBytes }, 'request body over its limit refused (413)');
    },
  };
}

function declaredLength(request: IncomingMessage): number | null {
  const header = request.headers['content-length'];
  if (header === undefined) return null;
  const length = Number(header);
  return Number.isFinite(length) ? length : null;
}

/**
 * Answer 413, once the refused body has been read to its end (then the connection carries on, or
 * closes as the client asked, with nothing unread) or past the drain allowance (then it is closed:
 * closing a socket with unread bytes resets it, which can lose the answer, so this is kept for
 * bodies far over their limit).
 */
function refuse(request: IncomingMessage, response: ServerResponse, route: RouteBodyLimit, sink: BodyRefusalSink): void {
  sink.onRefused(route, declaredLength(request));
  const body =
    route.shape === 'ntfy'
      ? JSON.stringify(sink.ntfyBody(route))
      : JSON.stringify({ error: HTTP_ERRORS.BODY_TOO_LARGE.message, code: 'BODY_TOO_LARGE' });
  const answer = (outcome: DrainOutcome): void => {
    if (response.headersSent) return;
    response.writeHead(HTTP_ERRORS.BODY_TOO_LARGE.status, {
      'Content-Type': 'application/json',
      'Content-Length': String(Buffer.byteLength(body)),
      ...(outcome === 'cut' ? { Connection: 'close' } : {}),
    });
    response.end(body, () => {
      if (outcome === 'cut') (request.socket as IncomingMessage['socket'] | null)?.destroy(); // null once node:http detached it
    });
  };
  if (request instanceof LimitedRequest) void request.dropBody(route.maxBytes).then(answer);
  else answer('cut');
}

function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const query = raw.indexOf('?');
  return query < 0 ? raw : raw.slice(0, query);
}

/**
 * `next` (every other listener of the server) behind the body limit: see the module comment.
 * Requests whose declared length is within the default skip the route lookup altogether.
 */
export function bodyLimitFront(limits: BodyLimits, sink: BodyRefusalSink, next: RequestListener): RequestListener {
  return (request, response) => {
    const declared = declaredLength(request);
    const chunked = request.headers['transfer-encoding'] !== undefined;
    if (!chunked && (declared === null || declared <= limits.defaultMaxBytes)) {
      next(request, response);
      return;
    }
    const route = limits.limitFor(request.method ?? 'GET', pathOf(request.url));
    if (declared !== null && declared > route.maxBytes) {
      refuse(request, response, route, sink);
      return;
    }
    if (!chunked || !(request instanceof LimitedRequest)) {
      next(request, response);
      return;
    }
    void request.holdBody(route.maxBytes).then((outcome) => {
      if (outcome === 'complete') next(request, response);
      else refuse(request, response, route, sink);
    });
  };
}
