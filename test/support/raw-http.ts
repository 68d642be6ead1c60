/**
 * Requests with a body framed exactly as a test asks (chunked, or with Content-Length), over
 * node:http, for the body-limit and content-type abuse tests. fetch cannot send a chunked body
 * with a known size or keep writing after the server answered; these can, and report a server
 * that closed the connection instead of throwing.
 */
import { request } from 'node:http';

export type BodyFraming = 'chunked' | 'content-length';

export interface RawAnswer {
  /** The status, or null when the connection closed before an answer arrived. */
  status: number | null;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The error that ended the request, if the connection was reset or closed early. */
  error?: string;
}

export interface RawRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  /** The body's total size, sent as `fill` bytes. */
  bodyBytes: number;
  /** The byte the body repeats (default `0x20`, a space: whitespace in JSON and any text format). */
  fill?: number;
  framing: BodyFraming;
  /** Size of each write (default 64 KiB). */
  chunkBytes?: number;
  /**
   * Keep writing after the answer, as a client that ignores it would, until the body is sent or
   * the server closes the connection; the answer is reported then (`error` says how it ended).
   */
  keepWriting?: boolean;
}

/**
 * Send the request and read the answer. The body is written in chunks with backpressure, and
 * writing stops as soon as an answer arrives or the connection fails, so a 200 MB body costs the
 * client no memory and ends early when the server refuses it.
 */
export function sendRawBody(options: RawRequest): Promise<RawAnswer> {
  const chunkBytes = options.chunkBytes ?? 64 * 1024;
  const chunk = Buffer.alloc(Math.min(chunkBytes, Math.max(options.bodyBytes, 1)), options.fill ?? 0x20);
  return new Promise((resolve) => {
    let settled = false;
    let answered = false;
    let answer: RawAnswer | null = null;
    const finish = (result: RawAnswer): void => {
      if (settled) return;
      settled = true;
      req.destroy();
      resolve(result);
    };
    const req = request(options.url, {
      method: options.method,
      agent: false,
      headers: {
        ...options.headers,
        ...(options.framing === 'content-length' ? { 'content-length': String(options.bodyBytes) } : { 'transfer-encoding': 'chunked' }),
      },
    });
    req.on('response', (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      const done = (error?: string): void => {
        answer = {
          status: res.statusCode ?? null,
          headers: res.headers,
          text: Buffer.concat(parts).toString('utf8'),
          ...(error ? { error } : {}),
        };
        if (!options.keepWriting) finish(answer);
      };
      res.on('end', () => done());
      res.on('error', (err) => done(err.message));
      res.on('aborted', () => done('aborted'));
    });
    req.on('error', (err) => {
      if (!answered) finish({ status: null, headers: {}, text: '', error: err.message });
      else if (options.keepWriting) finish({ ...(answer ?? { status: null, headers: {}, text: '' }), error: err.message });
    });
    req.on('close', () => {
      if (options.keepWriting && answer) finish(answer);
    });
    let sent = 0;
    const writeMore = (): void => {
      while (sent < options.bodyBytes && (options.keepWriting === true || !answered) && !req.destroyed) {
        const size = Math.min(chunk.length, options.bodyBytes - sent);
        sent += size;
        if (!req.write(size === chunk.length ? chunk : chunk.subarray(0, size))) {
          req.once('drain', writeMore);
          return;
        }
      }
      // Answered early: the rest is not sent (the connection is dropped once the answer is read).
      if (!req.destroyed && (options.keepWriting === true || !answered)) req.end();
    };
    writeMore();
  });
}

/** `/v1/notifications/:id/opened` → `/v1/notifications/x/opened`: a concrete path a route pattern matches. */
export function concretePath(pattern: string): string {
  if (pattern === '*') return '/any';
  return pattern
    .split('/')
    .map((segment) => (segment.startsWith(':') ? `abuse${segment.slice(1).replace(/[^a-z]/gi, '')}` : segment === '*' ? 'any' : segment))
    .join('/');
}
