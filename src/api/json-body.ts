import type { Context } from 'hono';
import { HttpError } from './errors.ts';

/**
 * Read a request body's bytes, refusing more than `maxBytes` (413) whatever Content-Length claims.
 */
export async function readBodyBytes(c: Context, maxBytes: number): Promise<Buffer> {
  const declared = Number(c.req.header('content-length') ?? '0');
  if (declared > maxBytes) throw new HttpError('BODY_TOO_LARGE');
  const reader = c.req.raw.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (reader) {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw new HttpError('BODY_TOO_LARGE');
      }
      chunks.push(value);
    }
  }
  return Buffer.concat(chunks);
}

/** Parse body bytes as JSON; anything that is not JSON is a 400. */
export function parseJsonBytes(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch {
    throw new HttpError('INVALID_JSON');
  }
}

/**
 * Read a request body as JSON, refusing more than `maxBytes` (413) whatever Content-Length
 * claims, and anything that is not JSON (400).
 */
export async function readJsonBody(c: Context, maxBytes: number): Promise<unknown> {
  return parseJsonBytes(await readBodyBytes(c, maxBytes));
}
