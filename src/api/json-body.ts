import { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { HttpError } from './errors.ts';

/**
 * Read a request body's bytes, refusing more than `maxBytes` (413) whatever Content-Length claims.
 */
export async function readBodyBytes(c: Context, maxBytes: number): Promise<Buffer> {
  const incoming = untouchedIncoming(c);
  if (incoming) return readIncomingBytes(incoming, maxBytes);
  const body = new BoundedBody(maxBytes, c.req.header('content-length'));
  const reader = c.req.raw.body?.getReader();
  if (reader) {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      try {
        body.take(value);
      } catch (err) {
        await reader.cancel().catch(() => undefined);
        throw err;
      }
    }
  }
  return body.bytes();
}

/**
 * Read a Node request's body, refusing more than `maxBytes` (413) whatever Content-Length claims.
 * Leaving the loop by the throw destroys the request stream.
 */
export async function readIncomingBytes(incoming: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const body = new BoundedBody(maxBytes, incoming.headers['content-length']);
  for await (const chunk of incoming) body.take(chunk as Buffer);
  return body.bytes();
}

/** A body's chunks as they arrive, refusing a declared length or a total over `maxBytes` (413). */
class BoundedBody {
  private readonly chunks: Uint8Array[] = [];
  private size = 0;

  constructor(
    private readonly maxBytes: number,
    declaredLength: string | undefined,
  ) {
    if (Number(declaredLength ?? '0') > maxBytes) throw new HttpError('BODY_TOO_LARGE');
  }

  take(chunk: Uint8Array): void {
    this.size += chunk.byteLength;
    if (this.size > this.maxBytes) throw new HttpError('BODY_TOO_LARGE');
    this.chunks.push(chunk);
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks, this.size);
  }
}

/**
 * The Node request under Hono's, when nothing has started reading it. Reading it directly skips
 * the WHATWG `Request` and stream that `c.req.raw.body` would build first (~100 µs a request in
 * the NIP-9a receiver's profile, on the hottest POST routes). Anything that already touched the
 * body (a validator that parsed it, so `c.req.raw` owns the stream) sends us down the standard
 * path, as does a request that came through `app.request()` in tests (no Node request at all).
 */
function untouchedIncoming(c: Context): IncomingMessage | null {
  const incoming = (c.env as { incoming?: unknown } | undefined)?.incoming;
  if (!(incoming instanceof IncomingMessage)) return null;
  if (incoming.readableDidRead || incoming.readableEnded || incoming.listenerCount('data') > 0 || incoming.listenerCount('readable') > 0)
    return null;
  return incoming;
}

/** Parse body bytes as JSON; anything that is not JSON is a 400. */
export function parseJsonBytes(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch {
    throw new HttpError('INVALID_JSON');
  }
}

/** Whether a Content-Type header names JSON: `application/json`, with any parameters. */
export function isJsonContentType(header: string | undefined): boolean {
  return (header ?? '').split(';')[0]?.trim().toLowerCase() === 'application/json';
}

/**
 * Refuse (415 `UNSUPPORTED_MEDIA_TYPE`) a request to a JSON route whose Content-Type names
 * something else. A request that names none is read as JSON: NIP-98 and API-key callers are not
 * browsers, and some sent bodies without the header before this check existed. The console
 * login, where the type is what stops a cross-site form, requires it (`console/session.ts`).
 */
export function refuseNonJsonContentType(c: Context): void {
  const type = c.req.header('content-type');
  if (type !== undefined && !isJsonContentType(type)) throw new HttpError('UNSUPPORTED_MEDIA_TYPE');
}

/**
 * Read a request body as JSON: 415 for a Content-Type that is not JSON
 * ({@link refuseNonJsonContentType}), 413 past `maxBytes` whatever Content-Length claims, 400 for
 * anything that does not parse.
 */
export async function readJsonBody(c: Context, maxBytes: number): Promise<unknown> {
  refuseNonJsonContentType(c);
  return parseJsonBytes(await readBodyBytes(c, maxBytes));
}
