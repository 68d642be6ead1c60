/**
 * One POST to a push endpoint over HTTP/1.1, with pooled keep-alive sockets, an overall bound,
 * and the outbound address policy (`src/net/public-connect.ts`) on every connection.
 *
 * Why `node:http` and not `fetch`: Node 20's fetch (its bundled undici) exposes no way to check
 * the address a socket connects to without installing undici itself, and checking a name before
 * the request leaves a DNS-rebinding gap. `http.request` takes a `lookup` (the policy's), which
 * runs for every new connection and answers only with the addresses it judged. Push services speak HTTP/1.1 (web-push
 * itself only does `https.request`), so nothing is lost.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { bareHost } from '../../net/address-policy.ts';
import { isOutboundRefusal, type OutboundPolicy } from '../../net/public-connect.ts';

/** Bound of one push request, connect to last response byte (RFC 8030 push services answer fast). */
export const PUSH_REQUEST_TIMEOUT_MS = 30_000;
/** Open sockets per push-service origin; FCM's Web Push and Mozilla's autopush serve many subscriptions each. */
export const PUSH_MAX_SOCKETS_PER_ORIGIN = 64;
/** Bytes of a response body kept for logs and classification; the rest is drained unread. */
export const PUSH_RESPONSE_BODY_LIMIT_BYTES = 4096;

export interface PushHttpRequest {
  url: URL;
  headers: OutgoingHttpHeaders;
  body: Buffer;
  signal?: AbortSignal;
}

export interface PushHttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** At most {@link PUSH_RESPONSE_BODY_LIMIT_BYTES} bytes of the body, as UTF-8. */
  bodyText: string;
}

/**
 * Why a request produced no response: `refused` (the address rule), `timeout`, `aborted` (the
 * caller's signal), `network` (DNS, connect, reset).
 */
export type PushRequestErrorCode = 'refused' | 'timeout' | 'aborted' | 'network';

export class PushRequestError extends Error {
  constructor(
    readonly code: PushRequestErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'PushRequestError';
  }
}

export interface PushHttpClientOptions {
  /**
   * The outbound address policy of purpose `webpush`; `webpush.allow_private_endpoints` is its
   * `allowPrivate` (tests, a push service on the local network).
   */
  policy: OutboundPolicy;
  /** Default {@link PUSH_REQUEST_TIMEOUT_MS}. */
  requestTimeoutMs?: number;
  /** Default {@link PUSH_MAX_SOCKETS_PER_ORIGIN}. */
  maxSocketsPerOrigin?: number;
}

export class PushHttpClient {
  private readonly policy: OutboundPolicy;
  private readonly timeoutMs: number;
  private readonly httpAgent: HttpAgent;
  private readonly httpsAgent: HttpsAgent;

  constructor(options: PushHttpClientOptions) {
    this.policy = options.policy;
    this.timeoutMs = options.requestTimeoutMs ?? PUSH_REQUEST_TIMEOUT_MS;
    const maxSockets = options.maxSocketsPerOrigin ?? PUSH_MAX_SOCKETS_PER_ORIGIN;
    this.httpAgent = new HttpAgent({ keepAlive: true, maxSockets });
    this.httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets });
  }

  /** POST and read the answer. Rejects only with {@link PushRequestError}. */
  post(request: PushHttpRequest): Promise<PushHttpResponse> {
    const { url } = request;
    const host = bareHost(url.hostname);
    // A literal IP never goes through `lookup`, so the policy judges it here.
    const refused = this.policy.checkLiteral(url.hostname);
    if (refused) return Promise.reject(new PushRequestError('refused', refused.message));
    if (request.signal?.aborted) return Promise.reject(new PushRequestError('aborted', 'aborted before the request started'));

    return new Promise<PushHttpResponse>((resolve, reject) => {
      const https = url.protocol === 'https:';
      let settled = false;
      const finish = (err: PushRequestError | null, response?: PushHttpResponse): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        request.signal?.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve(response as PushHttpResponse);
      };
      const req = (https ? httpsRequest : httpRequest)(
        {
          method: 'POST',
          protocol: url.protocol,
          hostname: host,
          port: url.port === '' ? undefined : Number(url.port),
          path: `${url.pathname}${url.search}`,
          headers: { ...request.headers, 'content-length': String(request.body.length) },
          agent: https ? this.httpsAgent : this.httpAgent,
          lookup: this.policy.lookup,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let kept = 0;
          res.on('data', (chunk: Buffer) => {
            if (kept >= PUSH_RESPONSE_BODY_LIMIT_BYTES) return;
            const part = chunk.subarray(0, PUSH_RESPONSE_BODY_LIMIT_BYTES - kept);
            chunks.push(part);
            kept += part.length;
          });
          res.on('end', () =>
            finish(null, { status: res.statusCode ?? 0, headers: res.headers, bodyText: Buffer.concat(chunks).toString('utf8') }),
          );
          res.on('error', (err) => finish(new PushRequestError('network', `reading the response failed: ${err.message}`)));
        },
      );
      const onAbort = (): void => {
        req.destroy();
        finish(new PushRequestError('aborted', 'the push request was aborted'));
      };
      const timer = setTimeout(() => {
        req.destroy();
        finish(new PushRequestError('timeout', `the push request exceeded ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      request.signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (isOutboundRefusal(err)) finish(new PushRequestError('refused', err.message));
        else finish(new PushRequestError('network', `${err.code ?? 'error'}: ${err.message}`));
      });
      req.end(request.body);
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}
