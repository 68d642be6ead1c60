/**
 * Per-client rate limits of the public routes (issue 35, docs/security.md): what one client may
 * ask, counted per client address (`client-address.ts`: the socket's peer, or a trusted proxy's
 * `X-Forwarded-For`) and per identity (NIP-98 pubkey, API key, NIP-9a callback owner).
 *
 * | route group            | routes                                                    | counted per                |
 * |------------------------|-----------------------------------------------------------|----------------------------|
 * | `user_api`             | inbox, alert words, announcements, devices, NIP-98 opens  | address, then pubkey       |
 * | `nip9a_callbacks`      | `/v1/nip9a/callbacks` (callback URL management)           | address, then pubkey       |
 * | `nip9a_registrations`  | `/v1/nip9a/registrations` (the gateway's HTTP bridge)     | address, then pubkey       |
 * | `inbox_socket`         | the `/v1/inbox/socket` upgrade                            | address, then pubkey       |
 * | `console_login`        | `POST /console/api/login`, every attempt                  | address                    |
 * | `api_key`              | send, campaign and admin API                              | API key (its app's limits) |
 * | `nip9a_receiver`       | `POST /nip9a/cb/{secret}` (beside the per-URL limit)      | the callback URL's owner   |
 *
 * The address is checked before the signature (a flood costs no verification), the pubkey after.
 * Each group counts apart. A limit of `rate` a second with a burst of `burst` is a fixed window of
 * `burst` requests lasting `burst / rate` seconds (at least one second, and never fewer requests
 * than a second's rate): the sustained rate is `rate`, at most `burst` at once (twice that across
 * a window's end). The counters live in the store (port-rate-limits.ts): on Redis shared by every
 * replica, on SQLite in the one process.
 *
 * A refusal answers 429 `RATE_LIMITED` with `Retry-After` (seconds until the window ends), counts
 * `push_rate_limited_total{route_group, key_kind}`, and logs one warning per key and window (the
 * first refusal), not one per request of a flood.
 */
import type { IncomingMessage } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import type { Config } from '../config/defaults.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { RateLimitCounter, RateLimitStore, RateLimitWindow } from '../store/port-rate-limits.ts';
import { requestClientAddress, type ClientAddressPolicy } from './client-address.ts';
import { HttpError } from './errors.ts';

export type RouteGroup =
  'user_api' | 'nip9a_callbacks' | 'nip9a_registrations' | 'inbox_socket' | 'console_login' | 'api_key' | 'nip9a_receiver';

/** What a limit counts per. */
export type KeyKind = 'address' | 'pubkey' | 'api_key' | 'owner';

/** The NIP-98 route groups: limited per address and per pubkey by `rate_limits.nip98_*`. */
export type Nip98RouteGroup = Extract<RouteGroup, 'user_api' | 'nip9a_callbacks' | 'nip9a_registrations' | 'inbox_socket'>;

/** A refusal: how long until the key's window ends. */
export interface RateRefusal {
  retryAfterSecs: number;
}

/** One limit as routes use it. */
export interface RequestLimit {
  /** Count a request of `key`: null when allowed, the refusal (already counted and logged) otherwise. */
  take(key: string): Promise<RateRefusal | null>;
  /** {@link take}, throwing the 429 {@link rateLimitedError} on a refusal. */
  enforce(key: string): Promise<void>;
}

/** The limits of a NIP-98 route group, checked around the signature (`nip98-auth.ts`). */
export interface CallerLimits {
  /** Before the signature is checked: the request's client address. */
  checkAddress(c: Context): Promise<void>;
  /** After: the signer. */
  checkPubkey(pubkey: string): Promise<void>;
}

export interface RateLimits {
  /** `rate_limits.enabled`: false, every limit allows everything at no cost. */
  readonly enabled: boolean;
  /** The limits of a NIP-98 route group. */
  caller(group: Nip98RouteGroup): CallerLimits;
  /** The per-address and per-pubkey limits of a NIP-98 route group, for callers outside Hono (the inbox socket). */
  nip98(group: Nip98RouteGroup): { address: RequestLimit; pubkey: RequestLimit };
  /** Console login attempts per address. */
  readonly consoleLogin: RequestLimit;
  /** Requests per API key, by the limits of the key's app. */
  apiKey(appId: string): RequestLimit;
  /** Relay POSTs per NIP-9a callback owner. */
  readonly callbackOwner: RequestLimit;
  /** Hono middleware counting every request it sees against `limit`, per client address. */
  perAddress(limit: RequestLimit): MiddlewareHandler;
  /** The client address of a Hono request. */
  readonly addressOf: (c: Context) => string;
  /** The client address of a Node request (an upgrade). */
  readonly addressOfIncoming: (request: IncomingMessage) => string;
}

export interface RateLimitsDeps {
  /** The default app's configuration: `rate_limits`, `nip9a.receiver`, and `send_api` of apps without their own. */
  config: Config;
  /** `send_api.rate_per_sec`/`rate_burst` of each app (tenancy); absent, the default app's for every app. */
  sendApiOf?: (appId: string) => Config['send_api'] | undefined;
  /** Where the counters live (the default app's store: limits are per client, whichever app it uses). */
  store: RateLimitStore;
  policy: ClientAddressPolicy;
  metrics: Metrics;
  logger: Logger;
}

/** The 429 answer of a refusal: the catalogue's `RATE_LIMITED` with `Retry-After`. */
export function rateLimitedError(refusal: RateRefusal): HttpError {
  return new HttpError('RATE_LIMITED', undefined, { 'Retry-After': String(refusal.retryAfterSecs) });
}

/**
 * The fixed window of a limit of `ratePerSec` with a burst of `burst` (see the module comment).
 * Both must be more than zero (config validation says so).
 */
export function rateWindow(name: string, ratePerSec: number, burst: number): RateLimitWindow {
  const windowSecs = Math.max(1, Math.round(burst / ratePerSec));
  return { name, points: Math.max(1, Math.round(burst), Math.ceil(ratePerSec * windowSecs)), windowSecs };
}

const ALLOWED: Promise<RateRefusal | null> = Promise.resolve(null);
const NOTHING: Promise<void> = Promise.resolve();

const UNLIMITED: RequestLimit = { take: () => ALLOWED, enforce: () => NOTHING };

export function createRateLimits(deps: RateLimitsDeps): RateLimits {
  const { config, metrics, logger, policy } = deps;
  const limits = config.rate_limits;
  const addressOf = (c: Context): string => requestClientAddress(c, policy);
  const addressOfIncoming = (request: IncomingMessage): string =>
    policy.clientAddress(request.socket.remoteAddress, headerValue(request.headers['x-forwarded-for']));
  const perAddress =
    (limit: RequestLimit): MiddlewareHandler =>
    async (c, next) => {
      await limit.enforce(addressOf(c));
      await next();
    };
  if (!limits.enabled) {
    const caller: CallerLimits = { checkAddress: () => NOTHING, checkPubkey: () => NOTHING };
    return {
      enabled: false,
      caller: () => caller,
      nip98: () => ({ address: UNLIMITED, pubkey: UNLIMITED }),
      consoleLogin: UNLIMITED,
      apiKey: () => UNLIMITED,
      callbackOwner: UNLIMITED,
      perAddress: () => (_c, next) => next(),
      addressOf,
      addressOfIncoming,
    };
  }

  const requestLimit = (group: RouteGroup, kind: KeyKind, counter: RateLimitCounter): RequestLimit => {
    const take = async (key: string): Promise<RateRefusal | null> => {
      const decision = await counter.take(key);
      if (decision.allowed) return null;
      const retryAfterSecs = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
      metrics.rateLimited.inc({ route_group: group, key_kind: kind });
      if (decision.firstRefusal)
        logger.warn(
          { routeGroup: group, keyKind: kind, key, retryAfterSecs },
          'rate limit reached; refusing this client until its window ends',
        );
      return { retryAfterSecs };
    };
    return {
      take,
      async enforce(key) {
        const refusal = await take(key);
        if (refusal) throw rateLimitedError(refusal);
      },
    };
  };
  const perMinute = (perMinuteLimit: number, burst: number) => ({ ratePerSec: perMinuteLimit / 60, burst });
  const counterOf = (name: string, limit: { ratePerSec: number; burst: number }): RateLimitCounter =>
    deps.store.rateLimitCounter(rateWindow(name, limit.ratePerSec, limit.burst));

  const nip98Groups = new Map<Nip98RouteGroup, { address: RequestLimit; pubkey: RequestLimit; caller: CallerLimits }>();
  const nip98 = (group: Nip98RouteGroup) => {
    let found = nip98Groups.get(group);
    if (!found) {
      const address = requestLimit(
        group,
        'address',
        counterOf(`${group}:address`, perMinute(limits.nip98_per_address_per_minute, limits.nip98_per_address_burst)),
      );
      const pubkey = requestLimit(
        group,
        'pubkey',
        counterOf(`${group}:pubkey`, perMinute(limits.nip98_per_pubkey_per_minute, limits.nip98_per_pubkey_burst)),
      );
      const caller: CallerLimits = { checkAddress: (c) => address.enforce(addressOf(c)), checkPubkey: (key) => pubkey.enforce(key) };
      nip98Groups.set(group, (found = { address, pubkey, caller }));
    }
    return found;
  };

  const apiKeyLimits = new Map<string, RequestLimit>();
  const receiver = config.nip9a.receiver;
  return {
    enabled: true,
    caller: (group) => nip98(group).caller,
    nip98: (group) => {
      const { address, pubkey } = nip98(group);
      return { address, pubkey };
    },
    consoleLogin: requestLimit(
      'console_login',
      'address',
      deps.store.rateLimitCounter({
        name: 'console_login:address',
        // Whole attempts (the setting is validated positive, not whole).
        points: Math.max(1, Math.round(limits.console_login_per_minute)),
        windowSecs: 60,
      }),
    ),
    apiKey(appId) {
      let limit = apiKeyLimits.get(appId);
      if (!limit) {
        const sendApi = deps.sendApiOf?.(appId) ?? config.send_api;
        // Per app: a key is one app's, and apps may set their own (counted per key id either way).
        limit = requestLimit(
          'api_key',
          'api_key',
          counterOf(`api_key:${appId}`, { ratePerSec: sendApi.rate_per_sec, burst: sendApi.rate_burst }),
        );
        apiKeyLimits.set(appId, limit);
      }
      return limit;
    },
    // Decided locally (port-rate-limits.ts): the receiver's hot path does not wait for Redis.
    callbackOwner: requestLimit(
      'nip9a_receiver',
      'owner',
      deps.store.rateLimitCounter({
        ...rateWindow('nip9a_receiver:owner', receiver.owner_rate_per_sec, receiver.owner_rate_burst),
        decideLocally: true,
      }),
    ),
    perAddress,
    addressOf,
    addressOfIncoming,
  };
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}
