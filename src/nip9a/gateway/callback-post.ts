/**
 * The POST of one NIP-9a callback attempt, on undici's dispatcher API (`Agent.request`) with
 * keep-alive connections per callback origin. undici's `request` costs about 20 µs of CPU a POST
 * here against about 50 for `node:http` with a keep-alive agent (and `fetch` several times that):
 * the gateway makes one POST per delivery on its one thread (bench/nip9a; docs/benchmarks.md at
 * 1cc7613, "Leased hand-off, off-thread checks and undici").
 *
 * What the seed asks of the request, and how it holds here:
 * - redirects never followed: undici's `request` follows none (only its redirect interceptor,
 *   not installed, would); a 3xx is returned as it is and ends the delivery;
 * - no credentials or cookies: nothing but `content-type` (and the length undici adds) is sent,
 *   and undici keeps no cookie jar;
 * - response bodies cancelled unread: the status is all that is used; a body of at most
 *   {@link DRAINED_BODY_BYTES} is discarded as it passes so its connection serves the next POST,
 *   a longer one (declared or not) costs the connection instead;
 * - `timeoutMs` from the start of the attempt (connection included) to the response headers;
 * - the connection goes only to a public address: the outbound address policy
 *   (`src/net/public-connect.ts`, purpose `nip9a_callback`) is the dispatcher's `lookup`, and an
 *   IP-literal host is judged before the request. The allowlisted origin's name is resolved
 *   when a connection is made, and a name that resolves to a loopback or private address (an
 *   allowlisted domain that changed hands, DNS rebinding) gets no connection: the attempt ends
 *   `refused`, carrying the refusal back to the gateway's thread, which counts and logs it
 *   (this code may run on a POST thread, which has no metrics registry).
 */
import { Agent, errors } from 'undici';
import {
  isOutboundRefusal,
  OutboundPolicy,
  resolverFromEnvironment,
  type OutboundRefusal,
  type Resolver,
} from '../../net/public-connect.ts';

/** How an attempt's HTTP exchange ended. */
export type AttemptResult =
  | { kind: 'status'; status: number }
  | { kind: 'timeout' }
  | { kind: 'network'; message: string }
  | { kind: 'refused'; refusal: OutboundRefusal };

/** The attempt's POST; injectable so a test can observe it, the real one is {@link createCallbackPoster}'s. */
export type CallbackPoster = (url: string, body: string, timeoutMs: number) => Promise<AttemptResult>;

/** Most bytes of an answer passed over (never read) to keep its connection; more costs the connection. */
export const DRAINED_BODY_BYTES = 1024;

/** Keep-alive connections per callback origin: a gateway POSTs to few origins, many times. */
export const CONNECTIONS_PER_ORIGIN = 64;

export interface CallbackPosterOptions {
  connectionsPerOrigin?: number;
  /** `nip9a.allow_loopback_callbacks`: admit loopback for a callback URL that names loopback itself. */
  allowLoopback: boolean;
  /** Default {@link resolverFromEnvironment} (the test hosts override is honoured on POST threads too). */
  resolver?: Resolver;
}

/** The dispatcher of one gateway process (its connections are the process's to reuse). */
export function createCallbackPoster(options: CallbackPosterOptions): { post: CallbackPoster; close(): Promise<void> } {
  const policy = new OutboundPolicy({
    purpose: 'nip9a_callback',
    rules: { allowLoopback: options.allowLoopback, allowPrivate: false },
    resolver: options.resolver ?? resolverFromEnvironment(),
  });
  const agent = new Agent({
    connections: options.connectionsPerOrigin ?? CONNECTIONS_PER_ORIGIN,
    pipelining: 1,
    connect: { lookup: policy.lookup },
  });
  const post: CallbackPoster = async (url, body, timeoutMs) => {
    const target = new URL(url);
    const literal = policy.checkLiteral(target.hostname);
    if (literal) return { kind: 'refused', refusal: literal.refusal };
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), timeoutMs);
    try {
      const response = await agent.request({
        origin: target.origin,
        path: `${target.pathname}${target.search}`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: abort.signal,
      });
      clearTimeout(timer);
      // Discarded, never parsed: `dump` destroys the connection at once when the declared length
      // is over the limit, and after the limit when the length is not declared.
      response.body.dump({ limit: DRAINED_BODY_BYTES }).catch(() => undefined);
      return { kind: 'status', status: response.statusCode };
    } catch (err) {
      clearTimeout(timer);
      if (isOutboundRefusal(err)) return { kind: 'refused', refusal: err.refusal };
      if (abort.signal.aborted || err instanceof errors.HeadersTimeoutError || err instanceof errors.ConnectTimeoutError)
        return { kind: 'timeout' };
      const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
      return { kind: 'network', message: e.code ?? e.cause?.code ?? e.message };
    }
  };
  return { post, close: () => agent.close() };
}
