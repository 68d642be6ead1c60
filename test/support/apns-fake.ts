/**
 * A loopback fake of Apple's APNs provider API (reference §2), for tests and benchmarks.
 *
 * - Two h2c listeners on our HTTP/2 server (`h2-server.ts`, like the FCM fake): production and
 *   sandbox, sharing one state, so a test sees which host a device's push went to.
 * - `POST /3/device/<token>` only. Every request is checked as Apple checks it, answering with
 *   `:status`, an `apns-id` response header (the request's own, or a fresh UUID) and, on
 *   errors, the JSON `{"reason": …}` (plus `timestamp` on 410):
 *   - the provider token: ES256 JWT, `kid` = the fake's key id, `iss` = its team id, signature
 *     checked with the key's public half (403 `MissingProviderToken`, `InvalidProviderToken`),
 *     `iat` older than an hour by the fake's clock is 403 `ExpiredProviderToken`;
 *   - `apns-topic` = the bundle id (400 `MissingTopic`, `BadTopic`), `apns-push-type`,
 *     `apns-priority` (5 required for `background`), `apns-collapse-id` ≤ 64 bytes,
 *     `apns-expiration` digits, the token 64 hex digits (400 `BadDeviceToken`), a JSON body
 *     with an `aps` dictionary (400 `PayloadEmpty`), ≤ 4096 bytes (413 `PayloadTooLarge`);
 *   - a token {@link ApnsFake.unregister}ed answers 410 `Unregistered` with its timestamp.
 * - Answers can be scripted per token or for the next N requests (status, reason, latency).
 *
 * Per request it does one JSON parse and, for a JWT it has not seen before, one signature check,
 * so a benchmark measures the client, not the fake.
 */
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { jwtVerify } from 'jose';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../../src/store/port.ts';
import { startH2Server, type H2Server, type H2ServerStream, type HeaderMap } from './h2-server.ts';

/** Apple's observed stream limit per connection (it varies: 500–1500). */
export const APNS_FAKE_MAX_CONCURRENT_STREAMS = 1000;
/** A provider token older than this is refused with `ExpiredProviderToken`. */
export const APNS_TOKEN_MAX_AGE_SECS = 3600;
const MAX_PAYLOAD_BYTES = 4096;
const DEVICE_PATH = /^\/3\/device\/([^/]+)$/;
const PUSH_TYPES = new Set([
  'alert',
  'background',
  'location',
  'voip',
  'complication',
  'fileprovider',
  'mdm',
  'liveactivity',
  'pushtotalk',
]);

export type ApnsEnvironment = 'production' | 'sandbox';

export interface ApnsReceived {
  token: string;
  environment: ApnsEnvironment;
  /** Request header fields (first value of a repeated one), pseudo-headers included. */
  headers: Record<string, string>;
  /** The JSON body as sent. */
  payload: Record<string, unknown>;
  /** The body's exact text (golden tests). */
  bodyText: string;
  receivedAtMs: number;
}

export interface ApnsScriptRule {
  /** Only pushes to this device token. */
  token?: string;
  /** Matching requests answered; default 1, `Infinity` for all. */
  times?: number;
  status: number;
  reason?: string;
  /** 410 only: the `timestamp` field (ms). */
  timestampMs?: number;
  headers?: Record<string, string>;
  delayMs?: number;
}

export interface ApnsFakeOptions {
  bundleId?: string;
  keyId?: string;
  teamId?: string;
  /** For the provider token's age check. */
  clock?: Clock;
  /** Latency added to every accepted push. */
  latencyMs?: number;
  /** `full` (default) keeps every accepted push in `messages`; `summary` only counts (benchmarks). */
  record?: 'full' | 'summary';
}

export interface ApnsFakeStats {
  requests: number;
  accepted: number;
  sessionsOpened: number;
  /** Distinct provider tokens (JWTs) that passed the check. */
  providerTokensSeen: number;
}

export interface ApnsFake {
  /** `http://127.0.0.1:<port>`: `apns.api_base_url`. */
  baseUrl: string;
  /** `apns.sandbox_api_base_url`. */
  sandboxBaseUrl: string;
  bundleId: string;
  keyId: string;
  teamId: string;
  /** The `.p8` private key (PKCS#8 PEM). */
  keyPem: string;
  /** Write the key to `dir/AuthKey_<keyId>.p8` and return the path. */
  writeKey(dir: string): string;
  /** The settings pointing a binary at this fake (the key written to `dir`), as `FcmFake.serviceEnv` does. */
  serviceEnv(dir: string): Record<string, string>;
  messages: ApnsReceived[];
  /** Every distinct accepted provider token, in first-seen order. */
  providerTokens: string[];
  stats: ApnsFakeStats;
  /** From now on `token` answers 410 Unregistered with `timestampMs` (default: now). */
  unregister(token: string, timestampMs?: number): void;
  script(rule: ApnsScriptRule): void;
  /** Resolves once at least `count` pushes were accepted; rejects after `timeoutMs`. */
  waitForMessages(count: number, timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startApnsFake(options: ApnsFakeOptions = {}): Promise<ApnsFake> {
  const bundleId = options.bundleId ?? 'com.example.nostrpush';
  const keyId = options.keyId ?? 'FAKEKEY123';
  const teamId = options.teamId ?? 'FAKETEAM12';
  const clock = options.clock ?? { nowMs: () => Date.now() };
  const keepWhole = (options.record ?? 'full') === 'full';
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const messages: ApnsReceived[] = [];
  const providerTokens: string[] = [];
  /** Verified JWTs and their `iat`. */
  /** Each provider token seen, verified once (concurrent first uses share the verification). */
  const verifiedTokens = new Map<string, Promise<number | null>>();
  const unregistered = new Map<string, number>();
  const rules: ApnsScriptRule[] = [];
  const waits: Array<{ count: number; resolve: () => void }> = [];
  const timers = new Set<NodeJS.Timeout>();
  const stats: ApnsFakeStats = { requests: 0, accepted: 0, sessionsOpened: 0, providerTokensSeen: 0 };

  function takeRule(token: string): ApnsScriptRule | undefined {
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i] as ApnsScriptRule;
      if (rule.token !== undefined && rule.token !== token) continue;
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

  /** The reason a provider token is refused, or null. */
  async function checkProviderToken(authorization: string): Promise<string | null> {
    if (!authorization.startsWith('bearer ')) return 'MissingProviderToken';
    const jwt = authorization.slice('bearer '.length);
    let verification = verifiedTokens.get(jwt);
    if (verification === undefined) {
      verification = verifyJwt(jwt, publicKey, keyId, teamId);
      verifiedTokens.set(jwt, verification);
      // Registered before any caller's await, so the count is current when they resume.
      void verification.then((verifiedIat) => {
        if (verifiedIat === null) return;
        providerTokens.push(jwt);
        stats.providerTokensSeen++;
      });
    }
    const iat = await verification;
    if (iat === null) return 'InvalidProviderToken';
    if (Math.floor(clock.nowMs() / 1000) - iat > APNS_TOKEN_MAX_AGE_SECS) return 'ExpiredProviderToken';
    return null;
  }

  /** Apple's header checks, in its order of precedence as far as it matters here. */
  async function checkRequest(headers: HeaderMap, token: string, bodyText: string): Promise<{ status: number; reason: string } | null> {
    const auth = await checkProviderToken(text(headers.authorization));
    if (auth !== null) return { status: 403, reason: auth };
    const topic = text(headers['apns-topic']);
    if (topic === '') return { status: 400, reason: 'MissingTopic' };
    if (topic !== bundleId) return { status: 400, reason: 'BadTopic' };
    const pushType = text(headers['apns-push-type']);
    if (pushType !== '' && !PUSH_TYPES.has(pushType)) return { status: 400, reason: 'InvalidPushType' };
    const priority = text(headers['apns-priority']);
    if (priority !== '' && !['10', '5', '1'].includes(priority)) return { status: 400, reason: 'BadPriority' };
    if (pushType === 'background' && priority === '10') return { status: 400, reason: 'BadPriority' };
    const expiration = text(headers['apns-expiration']);
    if (expiration !== '' && !/^\d+$/.test(expiration)) return { status: 400, reason: 'BadExpirationDate' };
    if (Buffer.byteLength(text(headers['apns-collapse-id'])) > 64) return { status: 400, reason: 'BadCollapseId' };
    if (!/^[0-9a-fA-F]{64}$/.test(token)) return { status: 400, reason: 'BadDeviceToken' };
    if (Buffer.byteLength(bodyText) > MAX_PAYLOAD_BYTES) return { status: 413, reason: 'PayloadTooLarge' };
    let payload: unknown;
    try {
      payload = JSON.parse(bodyText);
    } catch {
      return { status: 400, reason: 'PayloadEmpty' };
    }
    if (typeof payload !== 'object' || payload === null || typeof (payload as { aps?: unknown }).aps !== 'object')
      return { status: 400, reason: 'PayloadEmpty' };
    return null;
  }

  function settleWaits(): void {
    for (let i = waits.length - 1; i >= 0; i--) {
      const wait = waits[i] as { count: number; resolve: () => void };
      if (stats.accepted >= wait.count) {
        waits.splice(i, 1);
        wait.resolve();
      }
    }
  }

  function serve(stream: H2ServerStream, environment: ApnsEnvironment): void {
    stats.requests++;
    const headers = stream.headers;
    const apnsId = text(headers['apns-id']) || randomUUID();
    const answer = (status: number, body: string, extra: Record<string, string> = {}): void => {
      const fields: Array<[string, string]> = [['apns-id', apnsId], ...Object.entries(extra)];
      if (body !== '') fields.push(['content-type', 'application/json']);
      stream.session.respond(stream, status, fields, body);
    };
    const reasonBody = (reason: string, timestampMs?: number): string =>
      JSON.stringify(timestampMs === undefined ? { reason } : { reason, timestamp: timestampMs });
    const match = DEVICE_PATH.exec(text(headers[':path']));
    if (text(headers[':method']) !== 'POST') return answer(405, reasonBody('MethodNotAllowed'));
    if (match === null) return answer(404, reasonBody('BadPath'));
    const token = decodeURIComponent(match[1] as string);
    const bodyText = Buffer.concat(stream.body).toString('utf8');
    const rule = takeRule(token);
    if (rule) {
      const { status, reason, timestampMs, headers: extra, delayMs } = rule;
      return later(delayMs ?? 0, () => answer(status, reason === undefined ? '' : reasonBody(reason, timestampMs), extra));
    }
    void checkRequest(headers, token, bodyText).then((refused) => {
      if (refused) return answer(refused.status, reasonBody(refused.reason));
      const goneSince = unregistered.get(token);
      if (goneSince !== undefined) return answer(410, reasonBody('Unregistered', goneSince));
      stats.accepted++;
      if (keepWhole) {
        messages.push({
          token,
          environment,
          headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, text(value)])),
          payload: JSON.parse(bodyText) as Record<string, unknown>,
          bodyText,
          receivedAtMs: clock.nowMs(),
        });
      }
      settleWaits();
      later(options.latencyMs ?? 0, () => answer(200, ''));
    });
  }

  const start = (environment: ApnsEnvironment): Promise<H2Server> =>
    startH2Server(
      {
        onSession: () => {
          stats.sessionsOpened++;
        },
        onRequest: (stream) => serve(stream, environment),
      },
      { maxConcurrentStreams: APNS_FAKE_MAX_CONCURRENT_STREAMS },
    );
  const production = await start('production');
  const sandbox = await start('sandbox');
  const writeKey = (dir: string): string => {
    const path = join(dir, `AuthKey_${keyId}.p8`);
    writeFileSync(path, keyPem, { mode: 0o600 });
    return path;
  };

  return {
    baseUrl: `http://127.0.0.1:${production.port}`,
    sandboxBaseUrl: `http://127.0.0.1:${sandbox.port}`,
    bundleId,
    keyId,
    teamId,
    keyPem,
    writeKey,
    serviceEnv(dir: string): Record<string, string> {
      return {
        NOSTR_PUSH__APNS__KEY_PATH: writeKey(dir),
        NOSTR_PUSH__APNS__KEY_ID: keyId,
        NOSTR_PUSH__APNS__TEAM_ID: teamId,
        NOSTR_PUSH__APNS__BUNDLE_ID: bundleId,
        NOSTR_PUSH__APNS__API_BASE_URL: `http://127.0.0.1:${production.port}`,
        NOSTR_PUSH__APNS__SANDBOX_API_BASE_URL: `http://127.0.0.1:${sandbox.port}`,
      };
    },
    messages,
    providerTokens,
    stats,
    unregister(token: string, timestampMs?: number): void {
      unregistered.set(token, timestampMs ?? clock.nowMs());
    },
    script(rule: ApnsScriptRule): void {
      rules.push({ ...rule });
    },
    waitForMessages(count: number, timeoutMs: number): Promise<void> {
      if (stats.accepted >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          const index = waits.indexOf(wait);
          if (index >= 0) waits.splice(index, 1);
          reject(new Error(`APNs fake accepted ${stats.accepted} of ${count} pushes within ${timeoutMs}ms`));
        }, timeoutMs);
        const wait = {
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
      await Promise.all([production.close(), sandbox.close()]);
    },
  };
}

/** The JWT's `iat` when it is an ES256 token of this key id and team, signed by `publicKey`; else null. */
async function verifyJwt(jwt: string, publicKey: KeyObject, keyId: string, teamId: string): Promise<number | null> {
  try {
    const { payload, protectedHeader } = await jwtVerify(jwt, publicKey, { algorithms: ['ES256'], issuer: teamId });
    return protectedHeader.kid === keyId && typeof payload.iat === 'number' ? payload.iat : null;
  } catch {
    return null;
  }
}

function text(value: string | string[] | undefined): string {
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
}
