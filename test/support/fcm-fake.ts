/**
 * A loopback fake of FCM HTTP v1 and Google's OAuth token endpoint, for tests and benchmarks.
 *
 * - One `http2.createServer` (h2c, `SETTINGS_MAX_CONCURRENT_STREAMS` 100) serves
 *   `POST /v1/projects/:p/messages:send` and also `POST /token`.
 * - A plain HTTP/1.1 listener serves `POST /token` too, and that is the `token_uri` in
 *   {@link FcmFake.credentials}: the transport fetches tokens with global `fetch`, which cannot
 *   speak h2c, and the production code path should be the tested one.
 * - `/token` verifies the RS256 assertion with the fixture public key (signature, `iss`, `aud`,
 *   `scope`, `iat`/`exp`) and issues opaque access tokens; `messages:send` accepts only those.
 * - `messages:send` enforces our data-only contract: `message.token` present, no top-level
 *   `notification`, every data value a string. Accepted messages are recorded in order.
 * - Responses can be scripted per token or for the next N requests, including latency, hangs and
 *   GOAWAY (streams after the GOAWAY point are refused, as a real server does).
 *
 * It keeps no per-request work beyond one JSON parse, so it sustains thousands of requests per
 * second at 100 concurrent streams for benchmarks.
 */
import { createPublicKey, generateKeyPair, randomBytes, verify, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Clock } from '../../src/store/port.ts';
import { FCM_OAUTH_SCOPE, JWT_BEARER_GRANT_TYPE, JWT_ASSERTION_LIFETIME_SECS } from '../../src/delivery/fcm/oauth.ts';
import type { FcmSendRequestBody } from '../../src/delivery/fcm/message.ts';
import { googleError } from './fcm-errors.ts';
import { startH2Server, type H2ServerStream, type HeaderMap } from './h2-server.ts';
import { ErrorCode } from '../../src/delivery/http2/frames.ts';

export { fcmErrors, type CannedResponse } from './fcm-errors.ts';

/** Streams the fake lets one session carry, like FCM. */
export const FAKE_MAX_CONCURRENT_STREAMS = 100;
/** Lifetime of issued access tokens, as Google answers it. */
export const FAKE_TOKEN_LIFETIME_SECS = 3599;
/** Clock skew tolerated on the assertion's `iat`. */
const ALLOWED_SKEW_SECS = 60;

/** The service-account JSON a Google console download contains (the fields our client reads, plus the usual extras). */
export interface ServiceAccountJson {
  type: 'service_account';
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  client_id: string;
  token_uri: string;
}

export interface ReceivedMessage {
  token: string;
  projectId: string;
  body: FcmSendRequestBody;
  /** Request header fields (the first value of a repeated one), pseudo-headers included. */
  headers: Record<string, string>;
  receivedAtMs: number;
}

/**
 * A scripted answer. Without `status`, `hang` or `goaway` the request is handled normally after
 * `delayMs`. Rules are tried in the order they were added; the first one that matches is used.
 */
export interface ScriptRule {
  /** Endpoint the rule answers; default `send`. */
  route?: 'send' | 'token';
  /** Only sends to this device token (`send` only; ignored with `goaway`). */
  token?: string;
  /** Matching requests to let through untouched before the rule applies; default 0. */
  skip?: number;
  /** Matching requests the rule answers; default 1, `Infinity` for all. */
  times?: number;
  status?: number;
  /** Objects are sent as JSON. */
  body?: string | object;
  headers?: Record<string, string>;
  delayMs?: number;
  /** Never answer (until the client gives up or the fake stops). */
  hang?: boolean;
  /**
   * GOAWAY on this request's session (`send` only): this stream (REFUSED_STREAM) and every later
   * one on the session are refused, earlier streams complete. Matched when the stream opens, by
   * count only.
   */
  goaway?: boolean;
}

export interface FcmFakeOptions {
  /** Project the credentials name and the send path must use; default `fake-project`. */
  projectId?: string;
  /** Time for the assertion's `iat`/`exp` checks (tests that move a ManualClock pass it here too). */
  clock?: Clock;
  tokenLifetimeSecs?: number;
  maxConcurrentStreams?: number;
  /** Latency added to every accepted send. */
  latencyMs?: number;
  /**
   * `full` (default) keeps every accepted message whole in {@link FcmFake.messages}; `summary`
   * keeps only `[data.eventId, token, receivedAtMs]` in {@link FcmFake.summaries}, so a benchmark
   * of hundreds of thousands of sends does not measure the fake's own garbage collection.
   */
  record?: 'full' | 'summary';
}

export interface FcmFakeStats {
  sendRequests: number;
  tokenRequests: number;
  sessionsOpened: number;
  goawaysSent: number;
  activeSendStreams: number;
  peakConcurrentSendStreams: number;
}

export interface FcmFake {
  /** `http://127.0.0.1:<port>` (h2c): the `firebase.api_base_url` to use. */
  baseUrl: string;
  /** `http://127.0.0.1:<port>/token` on the HTTP/1.1 listener; the credentials' `token_uri`. */
  tokenUri: string;
  credentials: ServiceAccountJson;
  /** Write the credentials to `dir/service-account.json` and return the path. */
  writeCredentials(dir: string): string;
  /** The service's `firebase.*` environment pointing at this fake (credentials written to `dir`). */
  serviceEnv(dir: string, projectId?: string): Record<string, string>;
  /** Every accepted message, in arrival order (`record: 'full'`). */
  messages: ReceivedMessage[];
  /** `[data.eventId, token, receivedAtMs]` of every accepted message, in arrival order (`record: 'summary'`). */
  summaries: Array<[string, string, number]>;
  /** Access tokens issued so far, oldest first. */
  issuedAccessTokens: string[];
  stats: FcmFakeStats;
  script(rule: ScriptRule): void;
  setLatency(ms: number): void;
  /** Resolves once at least `count` messages were accepted; rejects after `timeoutMs`. */
  waitForMessages(count: number, timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

const UNAUTHENTICATED_BODY = googleError(
  401,
  'UNAUTHENTICATED',
  'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
);
const NOT_FOUND_HTML = '<!DOCTYPE html>\n<html lang=en><title>Error 404 (Not Found)!!1</title><p><b>404.</b> That’s an error.</p></html>';
const SEND_PATH = /^\/v1\/projects\/([^/]+)\/messages:send$/;

interface TokenAnswer {
  status: number;
  body: string;
}

interface PendingWait {
  count: number;
  resolve: () => void;
}

export async function startFcmFake(options: FcmFakeOptions = {}): Promise<FcmFake> {
  const projectId = options.projectId ?? 'fake-project';
  const clock = options.clock ?? { nowMs: () => Date.now() };
  const tokenLifetimeSecs = options.tokenLifetimeSecs ?? FAKE_TOKEN_LIFETIME_SECS;
  const { publicKey, privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
  const verifyKey: KeyObject = createPublicKey(publicKey.export({ type: 'spki', format: 'pem' }));
  const clientEmail = `fcm-fake@${projectId}.iam.gserviceaccount.com`;

  let latencyMs = options.latencyMs ?? 0;
  const rules: ScriptRule[] = [];
  const messages: ReceivedMessage[] = [];
  const summaries: Array<[string, string, number]> = [];
  const keepWhole = (options.record ?? 'full') === 'full';
  const issuedAccessTokens: string[] = [];
  const validAccessTokens = new Set<string>();
  const waits: PendingWait[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const stats: FcmFakeStats = {
    sendRequests: 0,
    tokenRequests: 0,
    sessionsOpened: 0,
    goawaysSent: 0,
    activeSendStreams: 0,
    peakConcurrentSendStreams: 0,
  };
  let messageCounter = 0;
  const tokenUris = new Set<string>();

  /** Take the first rule matching `route`/`token` (`goaway` selects GOAWAY rules), honouring skip and times. */
  function takeRule(route: 'send' | 'token', token: string | undefined, goaway: boolean): ScriptRule | undefined {
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i] as ScriptRule;
      if ((rule.route ?? 'send') !== route || Boolean(rule.goaway) !== goaway) continue;
      if (!goaway && rule.token !== undefined && rule.token !== token) continue;
      if ((rule.skip ?? 0) > 0) {
        rule.skip = (rule.skip ?? 0) - 1;
        return undefined;
      }
      rule.times = (rule.times ?? 1) - 1;
      if (rule.times <= 0) rules.splice(i, 1);
      return rule;
    }
    return undefined;
  }

  function later(ms: number, action: () => void): void {
    if (ms <= 0) return action();
    const timer = setTimeout(() => {
      timers.delete(timer);
      action();
    }, ms);
    timers.add(timer);
  }

  function answerToken(formText: string): TokenAnswer {
    const invalidGrant = (description: string): TokenAnswer => ({
      status: 400,
      body: JSON.stringify({ error: 'invalid_grant', error_description: description }),
    });
    const form = new URLSearchParams(formText);
    if (form.get('grant_type') !== JWT_BEARER_GRANT_TYPE) {
      return { status: 400, body: JSON.stringify({ error: 'unsupported_grant_type', error_description: 'Invalid grant_type' }) };
    }
    const parts = (form.get('assertion') ?? '').split('.');
    if (parts.length !== 3) return invalidGrant('Invalid JWT: Token must be a short-lived token and in a reasonable timeframe.');
    const [headerPart, claimsPart, signaturePart] = parts as [string, string, string];
    let header: Record<string, unknown>;
    let claims: Record<string, unknown>;
    try {
      header = JSON.parse(Buffer.from(headerPart, 'base64url').toString('utf8')) as Record<string, unknown>;
      claims = JSON.parse(Buffer.from(claimsPart, 'base64url').toString('utf8')) as Record<string, unknown>;
    } catch {
      return invalidGrant('Invalid JWT: not JSON.');
    }
    if (header.alg !== 'RS256') return invalidGrant('Invalid JWT: alg must be RS256.');
    const signatureOk = verify(
      'RSA-SHA256',
      Buffer.from(`${headerPart}.${claimsPart}`),
      verifyKey,
      Buffer.from(signaturePart, 'base64url'),
    );
    if (!signatureOk) return invalidGrant('Invalid JWT Signature.');
    if (claims.iss !== clientEmail) return invalidGrant('Invalid JWT: unknown issuer.');
    if (typeof claims.aud !== 'string' || !tokenUris.has(claims.aud)) return invalidGrant('Invalid JWT: aud is not this token endpoint.');
    const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
    if (!scopes.includes(FCM_OAUTH_SCOPE))
      return { status: 400, body: JSON.stringify({ error: 'invalid_scope', error_description: 'Invalid OAuth scope.' }) };
    const nowSecs = Math.floor(clock.nowMs() / 1000);
    const iat = typeof claims.iat === 'number' ? claims.iat : Number.NaN;
    const exp = typeof claims.exp === 'number' ? claims.exp : Number.NaN;
    if (!(iat <= nowSecs + ALLOWED_SKEW_SECS && exp > nowSecs && exp - iat <= JWT_ASSERTION_LIFETIME_SECS)) {
      return invalidGrant('Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.');
    }
    const accessToken = `ya29.fake-${issuedAccessTokens.length + 1}-${randomBytes(12).toString('base64url')}`;
    issuedAccessTokens.push(accessToken);
    validAccessTokens.add(accessToken);
    return { status: 200, body: JSON.stringify({ access_token: accessToken, expires_in: tokenLifetimeSecs, token_type: 'Bearer' }) };
  }

  /** Shared by both listeners: script, then the real answer. `reply` writes status and body. */
  function serveToken(formText: string, reply: (status: number, body: string, headers?: Record<string, string>) => void): void {
    stats.tokenRequests++;
    const rule = takeRule('token', undefined, false);
    if (rule?.hang) return;
    later(rule?.delayMs ?? 0, () => {
      if (rule?.status !== undefined) return reply(rule.status, bodyText(rule.body), rule.headers);
      const answer = answerToken(formText);
      reply(answer.status, answer.body);
    });
  }

  function validateSend(body: unknown): string | null {
    if (typeof body !== 'object' || body === null) return 'Invalid JSON payload received. Expected an object.';
    const message = (body as Record<string, unknown>).message;
    if (typeof message !== 'object' || message === null) return 'Invalid JSON payload received. Unknown name "message".';
    const record = message as Record<string, unknown>;
    if ('notification' in record) return 'fake FCM: top-level notification is not allowed (data-only contract)';
    if (typeof record.token !== 'string' || record.token === '') return 'Recipient of the message is not set.';
    if (record.data !== undefined) {
      if (typeof record.data !== 'object' || record.data === null) return "Invalid value at 'message.data'";
      for (const [key, value] of Object.entries(record.data)) {
        if (typeof value !== 'string') return `Invalid value at 'message.data[${key}].value' (TYPE_STRING), ${JSON.stringify(value)}`;
      }
    }
    return null;
  }

  function respond(
    stream: H2ServerStream,
    status: number,
    body: string,
    headers: Record<string, string> = {},
    contentType = 'application/json; charset=UTF-8',
  ): void {
    stream.session.respond(stream, status, [['content-type', contentType], ...Object.entries(headers)], body);
  }

  function record(received: ReceivedMessage): void {
    if (keepWhole) messages.push(received);
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- validateSend accepts a message without data, as FCM does; the body type is our sender's.
    else summaries.push([received.body.message.data?.eventId ?? '', received.token, received.receivedAtMs]);
    const accepted = keepWhole ? messages.length : summaries.length;
    for (let i = waits.length - 1; i >= 0; i--) {
      const wait = waits[i] as PendingWait;
      if (accepted >= wait.count) {
        waits.splice(i, 1);
        wait.resolve();
      }
    }
  }

  function serveSend(stream: H2ServerStream, headers: HeaderMap, pathProject: string, text: string): void {
    stats.sendRequests++;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return respond(stream, 400, googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. Unexpected token.'));
    }
    const token = (body as { message?: { token?: unknown } } | null)?.message?.token;
    const rule = takeRule('send', typeof token === 'string' ? token : undefined, false);
    if (rule?.hang) return;
    if (rule?.status !== undefined) {
      const { status, headers: ruleHeaders } = rule;
      return later(rule.delayMs ?? 0, () => respond(stream, status, bodyText(rule.body), ruleHeaders));
    }
    const authorization = headers.authorization;
    const accessToken =
      typeof authorization === 'string' && authorization.startsWith('Bearer ') ? authorization.slice('Bearer '.length) : '';
    if (!validAccessTokens.has(accessToken))
      return respond(stream, 401, UNAUTHENTICATED_BODY, { 'www-authenticate': 'Bearer realm="https://accounts.google.com/"' });
    if (pathProject !== projectId) {
      return respond(
        stream,
        403,
        googleError(
          403,
          'PERMISSION_DENIED',
          `Permission 'cloudmessaging.messages.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/${pathProject}' (or it may not exist).`,
        ),
      );
    }
    const invalid = validateSend(body);
    if (invalid) return respond(stream, 400, googleError(400, 'INVALID_ARGUMENT', invalid));
    record({
      token: token as string,
      projectId: pathProject,
      body: body as FcmSendRequestBody,
      headers: keepWhole ? firstValues(headers) : {},
      receivedAtMs: clock.nowMs(),
    });
    const name = `projects/${pathProject}/messages/${++messageCounter}`;
    later(rule?.delayMs ?? latencyMs, () => respond(stream, 200, JSON.stringify({ name })));
  }

  /** Send streams counted in `stats.activeSendStreams` (so a stream closing counts down once). */
  const countedSends = new WeakSet<H2ServerStream>();
  const server = await startH2Server(
    {
      onSession: () => {
        stats.sessionsOpened++;
      },
      onStream: (stream) => {
        const match = SEND_PATH.exec(headerText(stream.headers[':path']));
        if (headerText(stream.headers[':method']) !== 'POST' || match === null) return;
        stats.activeSendStreams++;
        stats.peakConcurrentSendStreams = Math.max(stats.peakConcurrentSendStreams, stats.activeSendStreams);
        countedSends.add(stream);
        if (takeRule('send', undefined, true)) {
          // Refuse this stream and announce the one before it as the last served: this stream
          // and every later one on the session are refused, earlier ones complete.
          stats.goawaysSent++;
          stream.session.goaway(Math.max(0, stream.id - 2));
          stream.session.reset(stream, ErrorCode.REFUSED_STREAM);
        }
      },
      onStreamClosed: (stream) => {
        if (countedSends.delete(stream)) stats.activeSendStreams--;
      },
      onRequest: (stream) => {
        const path = headerText(stream.headers[':path']);
        const method = headerText(stream.headers[':method']);
        const text = Buffer.concat(stream.body).toString('utf8');
        const sendMatch = SEND_PATH.exec(path);
        if (method === 'POST' && sendMatch !== null) return serveSend(stream, stream.headers, safeDecode(sendMatch[1] as string), text);
        if (method === 'POST' && path === '/token') return serveToken(text, (status, body, extra) => respond(stream, status, body, extra));
        respond(stream, 404, NOT_FOUND_HTML, {}, 'text/html; charset=UTF-8');
      },
    },
    { maxConcurrentStreams: options.maxConcurrentStreams ?? FAKE_MAX_CONCURRENT_STREAMS },
  );

  const tokenServer = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/token') {
        res.writeHead(404, { 'content-type': 'text/html; charset=UTF-8' }).end(NOT_FOUND_HTML);
        return;
      }
      serveToken(Buffer.concat(chunks).toString('utf8'), (status, body, extra) => {
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...extra }).end(body);
      });
    });
  });

  const h2Port = server.port;
  const tokenPort = await listen(tokenServer);
  const baseUrl = `http://127.0.0.1:${h2Port}`;
  const tokenUri = `http://127.0.0.1:${tokenPort}/token`;
  tokenUris.add(tokenUri);
  tokenUris.add(`${baseUrl}/token`);

  const credentials: ServiceAccountJson = {
    type: 'service_account',
    project_id: projectId,
    private_key_id: randomBytes(20).toString('hex'),
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: clientEmail,
    client_id: String(randomBytes(6).readUIntBE(0, 6)),
    token_uri: tokenUri,
  };
  const writeCredentials = (dir: string): string => {
    const path = join(dir, 'service-account.json');
    writeFileSync(path, JSON.stringify(credentials, null, 2), { mode: 0o600 });
    return path;
  };

  return {
    baseUrl,
    tokenUri,
    credentials,
    writeCredentials,
    serviceEnv(dir: string, projectId = 'fake-project'): Record<string, string> {
      return {
        NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH: writeCredentials(dir),
        NOSTR_PUSH__FIREBASE__PROJECT_ID: projectId,
        NOSTR_PUSH__FIREBASE__API_BASE_URL: baseUrl,
      };
    },
    messages,
    summaries,
    issuedAccessTokens,
    stats,
    script(rule: ScriptRule): void {
      rules.push({ ...rule });
    },
    setLatency(ms: number): void {
      latencyMs = ms;
    },
    waitForMessages(count: number, timeoutMs: number): Promise<void> {
      if ((keepWhole ? messages.length : summaries.length) >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          const index = waits.indexOf(wait);
          if (index >= 0) waits.splice(index, 1);
          reject(
            new Error(`FCM fake received ${keepWhole ? messages.length : summaries.length} of ${count} messages within ${timeoutMs}ms`),
          );
        }, timeoutMs);
        const wait: PendingWait = {
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
        waits.push(wait);
      });
    },
    async stop(): Promise<void> {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      tokenServer.closeAllConnections();
      await Promise.all([server.close(), closeServer(tokenServer)]);
    },
  };
}

function safeDecode(component: string): string {
  try {
    return decodeURIComponent(component);
  } catch {
    return component;
  }
}

function bodyText(body: string | object | undefined): string {
  if (body === undefined) return '';
  return typeof body === 'string' ? body : JSON.stringify(body);
}

function firstValues(headers: HeaderMap): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, headerText(value)]));
}

function headerText(value: string | string[] | undefined): string {
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
}

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
