/**
 * A loopback Web Push service (RFC 8030) for tests: it hands out subscriptions whose private keys
 * it holds, and for every push it checks what a real push service checks (VAPID JWT signature,
 * `aud`, `exp`, `sub`; `TTL`; `Content-Encoding: aes128gcm`; the 4096-byte limit), decrypts the
 * body with the subscription's key (http_ece) and records it. Answers `201 Created` with a
 * `Location`, unless a script says otherwise.
 */
import { createECDH, createPublicKey, randomBytes, verify, type ECDH } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as ece from 'http_ece';

/** RFC 8292 §2: exp no more than 24 h ahead. */
const MAX_JWT_LIFETIME_SECS = 24 * 3600;
/** RFC 8030 §7.2: a push service may refuse bodies above 4096 bytes. */
const MAX_BODY_BYTES = 4096;

export interface FakeSubscription {
  id: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  /** The user agent's key pair: what decrypts the pushes. */
  ecdh: ECDH;
}

export interface VapidCheck {
  ok: boolean;
  problems: string[];
  claims: { aud?: unknown; exp?: unknown; sub?: unknown } | null;
  /** The `k=` public key, base64url. */
  publicKey: string | null;
}

export interface ReceivedPush {
  subscriptionId: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The decrypted plaintext; null when decryption failed (see `decryptError`). */
  plaintext: Buffer | null;
  decryptError: string | null;
  vapid: VapidCheck;
  /** Other protocol problems (missing TTL, wrong Content-Encoding). */
  problems: string[];
  /** The status the fake answered. */
  status: number;
}

export interface ScriptedAnswer {
  /** Only pushes to this subscription; every subscription when absent. */
  subscriptionId?: string;
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** How many pushes get this answer (default 1; Infinity for all). */
  times?: number;
}

export interface WebPushFakeOptions {
  /** The `sub` the JWT must carry; any mailto:/https: contact when absent. */
  expectedSubject?: string;
}

export interface WebPushFake {
  origin: string;
  received: ReceivedPush[];
  subscribe(): FakeSubscription;
  /** Forget a subscription: its pushes get 410 Gone, as after an unsubscribe. */
  unsubscribe(id: string): void;
  script(answer: ScriptedAnswer): void;
  /** Delay every answer (to test timeouts and concurrency). */
  setLatency(ms: number): void;
  /** Pushes being handled right now, and the most seen at once since the last {@link resetStats}. */
  readonly inFlight: number;
  readonly maxInFlight: number;
  resetStats(): void;
  stop(): Promise<void>;
}

/**
 * Verify an `Authorization: vapid t=<jwt>, k=<key>` header with node:crypto: ES256 over the
 * signing input with the `k` key, header `{"typ":"JWT","alg":"ES256"}`, `aud` = `audience`,
 * `now < exp ≤ now + 24 h`, and `sub` as expected (or any mailto:/https: contact).
 */
export function verifyVapidHeader(header: string | undefined, audience: string, nowSecs: number, expectedSubject?: string): VapidCheck {
  const problems: string[] = [];
  const fail = (problem: string): VapidCheck => ({ ok: false, problems: [problem], claims: null, publicKey: null });
  if (header === undefined) return fail('no Authorization header');
  const match = /^vapid\s+t=([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)\s*,\s*k=([A-Za-z0-9_-]+)$/.exec(header.trim());
  if (!match) return fail(`not a "vapid t=…, k=…" header: ${header.slice(0, 40)}`);
  const [jwt, k] = [match[1] as string, match[2] as string];
  const [headerPart, payloadPart, signaturePart] = jwt.split('.') as [string, string, string];
  const publicKey = Buffer.from(k, 'base64url');
  if (publicKey.length !== 65 || publicKey[0] !== 4) return fail('k is not an uncompressed P-256 key');
  let joseHeader: unknown;
  let claims: VapidCheck['claims'];
  try {
    joseHeader = JSON.parse(Buffer.from(headerPart, 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(payloadPart, 'base64url').toString('utf8')) as VapidCheck['claims'];
  } catch {
    return fail('the JWT is not JSON');
  }
  const jh = joseHeader as { typ?: unknown; alg?: unknown };
  if (jh.alg !== 'ES256' || jh.typ !== 'JWT') problems.push(`JOSE header is ${JSON.stringify(joseHeader)}`);
  const key = createPublicKey({
    format: 'jwk',
    key: { kty: 'EC', crv: 'P-256', x: publicKey.subarray(1, 33).toString('base64url'), y: publicKey.subarray(33).toString('base64url') },
  });
  const signature = Buffer.from(signaturePart, 'base64url');
  const valid =
    signature.length === 64 && verify('sha256', Buffer.from(`${headerPart}.${payloadPart}`), { key, dsaEncoding: 'ieee-p1363' }, signature);
  if (!valid) problems.push('the ES256 signature does not verify');
  if (claims?.aud !== audience) problems.push(`aud is ${String(claims?.aud)}, expected ${audience}`);
  const exp = claims?.exp;
  if (typeof exp !== 'number' || !Number.isInteger(exp)) problems.push('exp is not an integer');
  else if (exp <= nowSecs) problems.push('the JWT has expired');
  else if (exp > nowSecs + MAX_JWT_LIFETIME_SECS) problems.push('exp is more than 24 h ahead');
  const sub = claims?.sub;
  if (expectedSubject !== undefined ? sub !== expectedSubject : typeof sub !== 'string' || !/^(mailto:|https:)/.test(sub)) {
    problems.push(`sub is ${String(sub)}`);
  }
  return { ok: problems.length === 0, problems, claims, publicKey: k };
}

export async function startWebPushFake(options: WebPushFakeOptions = {}): Promise<WebPushFake> {
  const subscriptions = new Map<string, FakeSubscription>();
  const gone = new Set<string>();
  const scripts: ScriptedAnswer[] = [];
  const received: ReceivedPush[] = [];
  let latencyMs = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let messageSeq = 0;
  const delayed = new Set<NodeJS.Timeout>();

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const answer = (status: number, headers: Record<string, string> = {}, body = ''): void => {
        const send = (): void => {
          inFlight--;
          res.writeHead(status, headers).end(body);
        };
        if (latencyMs === 0) return send();
        const timer = setTimeout(() => {
          delayed.delete(timer);
          send();
        }, latencyMs);
        delayed.add(timer);
      };
      const match = /^\/push\/([A-Za-z0-9_-]+)$/.exec(req.url ?? '');
      if (req.method !== 'POST' || !match) return answer(404, {}, 'no such push resource');
      const id = match[1] as string;
      const body = Buffer.concat(chunks);
      const subscription = subscriptions.get(id);
      if (!subscription) return answer(gone.has(id) ? 410 : 404, {}, 'subscription expired');

      const problems: string[] = [];
      if (req.headers['content-encoding'] !== 'aes128gcm') problems.push(`Content-Encoding is ${String(req.headers['content-encoding'])}`);
      if (!/^\d+$/.test(String(req.headers.ttl ?? ''))) problems.push(`TTL is ${String(req.headers.ttl)}`);
      const topic = req.headers.topic;
      if (topic !== undefined && !/^[A-Za-z0-9_-]{1,32}$/.test(String(topic))) problems.push(`Topic ${String(topic)} breaks RFC 8030 §5.4`);
      const vapid = verifyVapidHeader(req.headers.authorization, origin, Math.floor(Date.now() / 1000), options.expectedSubject);
      let plaintext: Buffer | null = null;
      let decryptError: string | null = null;
      try {
        plaintext = ece.decrypt(body, { version: 'aes128gcm', privateKey: subscription.ecdh, authSecret: subscription.auth });
      } catch (err) {
        decryptError = (err as Error).message;
      }

      const scriptIndex = scripts.findIndex((s) => s.subscriptionId === undefined || s.subscriptionId === id);
      let status = 201;
      let headers: Record<string, string> = { location: `${origin}/message/${++messageSeq}` };
      let text = '';
      if (body.length > MAX_BODY_BYTES) status = 413;
      else if (!vapid.ok) status = req.headers.authorization === undefined ? 401 : 403;
      else if (scriptIndex !== -1) {
        const scripted = scripts[scriptIndex] as ScriptedAnswer;
        status = scripted.status;
        headers = scripted.headers ?? {};
        text = scripted.body ?? '';
        scripted.times = (scripted.times ?? 1) - 1;
        if (scripted.times <= 0) scripts.splice(scriptIndex, 1);
      }
      received.push({ subscriptionId: id, headers: req.headers, body, plaintext, decryptError, vapid, problems, status });
      answer(status, headers, text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    received,
    subscribe() {
      const ecdh = createECDH('prime256v1');
      ecdh.generateKeys();
      const id = randomBytes(12).toString('base64url');
      const subscription: FakeSubscription = {
        id,
        endpoint: `${origin}/push/${id}`,
        p256dh: ecdh.getPublicKey().toString('base64url'),
        auth: randomBytes(16).toString('base64url'),
        ecdh,
      };
      subscriptions.set(id, subscription);
      return subscription;
    },
    unsubscribe(id) {
      subscriptions.delete(id);
      gone.add(id);
    },
    script(answer) {
      scripts.push({ ...answer });
    },
    setLatency(ms) {
      latencyMs = ms;
    },
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    resetStats() {
      maxInFlight = inFlight;
    },
    async stop() {
      for (const timer of delayed) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
