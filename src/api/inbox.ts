/**
 * The user API (issue 13): a user's own inbox, authenticated with NIP-98 (kind 27235: absolute
 * `u`, `method`, `payload` for bodies, `created_at` within 60 s, each auth event used once).
 *
 * | route                        | what                                                              |
 * |------------------------------|-------------------------------------------------------------------|
 * | `GET /v1/inbox/counts`       | `{types: {like: {total, viewed, new}, …}, totalNew}`, and `throttled: {limit, pushed, withheld, windowStart, windowEnd}` while the per-user throttle is on |
 * | `POST /v1/inbox/viewed`      | `{types?}` (every type when absent): viewed = total; the counts after |
 * | `GET /v1/alert-words`        | `{words}`                                                         |
 * | `PUT /v1/alert-words`        | `{words}` replaces the list (single words, at most `inbox.max_alert_words_per_user`, 50): the words stored |
 * | `GET /v1/announcements`      | `{announcements: [{id, text, createdAt, expiresAt}]}`, the active ones, newest first; marks them seen (Twitarr's rule) |
 * | `GET /v1/devices`            | `{devices: [{id, transport, token, timezoneOffsetMinutes?, locale?}]}`, tokens redacted to a prefix |
 * | `PUT /v1/devices/{token}`    | registers a device, as a 3079 does: the body is a 3079's JSON (its `token`, when present, must be the path's); 201 with the device when new to the caller, 200 when updated |
 * | `DELETE /v1/devices/{id or token}` | removes one of the caller's devices (204), as a 3080 does; 404 for any other |
 * | `PUT /v1/preferences`        | sets the caller's preferences, as a 3083 does: the body is a 3083's JSON; 200 with the stored preferences |
 *
 * Registration over HTTP and by events is one thing: both paths apply the payload through the
 * engine's `applyControlPayload`, so a device registered here is removed by a 3080 and the other
 * way round, and bad fields get the same reasons (here as 400 `INVALID_DEVICE`/`INVALID_PREFERENCES`).
 *
 * Every caller becomes a known user, whose notifications count from then on (and is forgotten after
 * `inbox.idle_user_ttl_days` without a device or a request). Refusals are JSON with a stable code
 * (`errors.ts`), a warn line and a metric.
 *
 * What a stranger can store here is bounded per client (issue 35, docs/security.md): at most
 * `inbox.max_users_per_address_per_day` distinct keys per client address per UTC day are served
 * (and so remembered as inbox users; 429 `CLIENT_QUOTA_EXCEEDED` past it), a list of at
 * most `inbox.max_alert_words_per_user` words per key (`TOO_MANY_ALERT_WORDS`), and at most
 * `inbox.max_alert_word_users_per_address_per_day` distinct keys per client address setting words
 * per UTC day (`CLIENT_QUOTA_EXCEEDED`, 429 with `Retry-After`), counted in the store so replicas
 * share it.
 */
import { createHash } from 'node:crypto';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import type { DeviceRegistration, StorePort } from '../store/port.ts';
import { INBOX_TYPES, type Announcement } from '../store/port-inbox.ts';
import {
  INBOX_MAX_ALERT_WORDS_PER_USER,
  INBOX_MAX_ALERT_WORD_USERS_PER_ADDRESS_PER_DAY,
  INBOX_MAX_USERS_PER_ADDRESS_PER_DAY,
} from '../config/defaults.ts';
import { requestClientAddress, type ClientAddressPolicy } from './client-address.ts';
import { redact, type Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { parseAlertWordList } from '../engine/inbox/words.ts';
import { applyControlPayload } from '../engine/control-events.ts';
import { registrationRelays, type UserRelayRegistration } from '../engine/user-relay-lists.ts';
import { DEREGISTER_TOKEN, PREFERENCES, REGISTER_TOKEN } from '../nostr/kinds.ts';
import { DEFAULT_APP_ID } from '../config/apps.ts';
import { HttpError } from './errors.ts';
import { authenticateNip98, type Nip98Auth } from './nip98-auth.ts';
import { THROTTLE_WINDOW_SECS } from '../notification/types.ts';
import { exactJsonBody, validatingRouter, type ExactBodyVariables } from './validation.ts';
import { INBOX_ROUTES } from './inbox-openapi.ts';

/** A request here is a short list at most (50 words of at most 64 characters). */
export const INBOX_API_MAX_BODY_BYTES = 16 * 1024;

export interface InboxApiDeps {
  /** The default app's store view. */
  store: StorePort;
  /**
   * Tenancy: the store view of a configured app, or undefined for an unknown one. A caller names
   * its app with `X-App` (as for NIP-98 opens); without it, the default app. Absent: one app.
   */
  storeOf?: (appId: string) => StorePort | undefined;
  auth: Nip98Auth;
  metrics: Metrics;
  logger: Logger;
  /** `throttle.per_user_per_hour` (0 or absent: off, and the counts carry no `throttled`). */
  throttlePerUserPerHour?: number;
  /**
   * Users' relays (issue 36) of an app, undefined when `nostr.user_relays.enabled` is off: what a
   * 3079 gets, so a registration here stores its `relays` as the user's read relays, asks the
   * relays for the user's 10002 and 10050, and is followed by the listener, as a 3079 is.
   */
  userRelaysOf?: (appId: string) => UserRelayRegistration | undefined;
  /** Who is asking (`server.trusted_proxies`): the per-address quota's key. */
  clientAddresses: ClientAddressPolicy;
  /** `inbox.max_alert_words_per_user`; absent: the default. */
  maxAlertWordsPerUser?: number;
  /** `inbox.max_alert_word_users_per_address_per_day`; absent: the default. */
  maxAlertWordUsersPerAddressPerDay?: number;
  /** `inbox.max_users_per_address_per_day`; absent: the default. */
  maxUsersPerAddressPerDay?: number;
}

/** The per-address quotas' window: a UTC day. */
const DAY_MS = 86_400_000;

/** The quota scope of keys one address uses the user API and the hint socket with (port-client-quotas.ts). */
export const INBOX_USERS_QUOTA = 'inbox_users';

/**
 * Count `pubkey` against `address`'s keys of the day (`inbox.max_users_per_address_per_day`) and,
 * when admitted, remember them as an inbox user (activity recorded). Null when admitted; else the
 * refusal (429 `CLIENT_QUOTA_EXCEEDED`) and the seconds until the next window.
 */
export async function admitInboxUser(
  store: StorePort,
  address: string,
  pubkey: string,
  limit: number,
): Promise<{ error: HttpError; retryAfterSecs: number } | null> {
  const quota = await store.takeClientQuota({ scope: INBOX_USERS_QUOTA, client: address, member: pubkey, limit, windowMs: DAY_MS });
  if (!quota.allowed)
    return {
      error: new HttpError(
        'CLIENT_QUOTA_EXCEEDED',
        `${quota.used} keys used this service from this address today (inbox.max_users_per_address_per_day); retry after the Retry-After header`,
      ),
      retryAfterSecs: Math.ceil(quota.retryAfterMs / 1000),
    };
  await store.rememberInboxUser(pubkey);
  return null;
}

/** The quota scope of keys setting alert words from one address (port-client-quotas.ts). */
export const ALERT_WORD_USERS_QUOTA = 'alert_word_users';
/** The alert-word quota's window: a UTC day. */
export const ALERT_WORD_USERS_QUOTA_WINDOW_MS = DAY_MS;

/** A device's id in the API: not its token (a secret of sorts), a digest of it. */
export function deviceId(token: string): string {
  return createHash('sha256').update(token).digest('hex').slice(0, 32);
}

function deviceView(device: DeviceRegistration): Record<string, unknown> {
  const view: Record<string, unknown> = { id: deviceId(device.token), transport: device.transport, token: redact(device.token) };
  if (device.timezoneOffsetMinutes !== undefined) view.timezoneOffsetMinutes = device.timezoneOffsetMinutes;
  if (device.locale !== undefined) view.locale = device.locale;
  return view;
}

function announcementView(announcement: Announcement): Record<string, unknown> {
  return {
    id: announcement.id,
    text: announcement.text,
    createdAt: new Date(announcement.createdAtMs).toISOString(),
    expiresAt: new Date(announcement.expiresAtMs).toISOString(),
  };
}

/** What the user API's route middleware sets: the caller, their app's store view, and the body's bytes. */
interface InboxEnv {
  Variables: ExactBodyVariables & { pubkey: string; store: StorePort };
}

export function inboxRoutes(deps: InboxApiDeps): OpenAPIHono<InboxEnv> {
  const app = validatingRouter<InboxEnv>();
  /** The registration options of the request's app: users' relays when on (issue 36). */
  const userRelaysOfRequest = (c: Context): { userRelays?: UserRelayRegistration } => {
    const named = c.req.header('x-app');
    const userRelays = deps.userRelaysOf?.(named === undefined || named === '' ? DEFAULT_APP_ID : named);
    return userRelays ? { userRelays } : {};
  };
  /** The store view of the app the request names (`X-App`); an unknown app is 404, before any signature is checked. */
  const storeOfRequest = (c: Context): StorePort => {
    const named = c.req.header('x-app');
    if (named === undefined || named === '' || named === DEFAULT_APP_ID) return deps.store;
    const store = deps.storeOf?.(named);
    if (!store) throw new HttpError('NOT_FOUND');
    return store;
  };

  /**
   * Every route's middleware, before its schemas are checked: count the outcome (refusals too),
   * find the app's store, read the body when the route has one (NIP-98's `payload` hashes it),
   * authenticate, and make the caller a known user.
   */
  const caller = (route: string, body: 'none' | 'required' | 'optional'): MiddlewareHandler<InboxEnv>[] => {
    const record = (failure: unknown): void => {
      if (failure === undefined) deps.metrics.inboxApiRequests.inc({ route, outcome: 'ok' });
      else if (failure instanceof HttpError) {
        deps.metrics.inboxApiRequests.inc({ route, outcome: failure.code });
        // NIP-98 refusals are logged by authenticateNip98 itself, rate-limit refusals once per flood by the limit.
        if (failure.code !== 'NIP98_UNAUTHORIZED' && failure.code !== 'RATE_LIMITED' && failure.status < 500)
          deps.logger.warn({ route, code: failure.code, reason: failure.message }, 'user API request refused');
      } else deps.metrics.inboxApiRequests.inc({ route, outcome: 'INTERNAL' });
    };
    // What the route throws reaches the app's error handler inside `next()` (Hono sets `c.error`).
    const counted: MiddlewareHandler<InboxEnv> = async (c, next) => {
      try {
        await next();
      } catch (err) {
        record(err);
        throw err;
      }
      record(c.error);
    };
    const authenticated: MiddlewareHandler<InboxEnv> = async (c, next) => {
      const store = c.get('store');
      const pubkey = await authenticateNip98(c, deps.auth, body === 'none' ? undefined : c.get('exactBody'));
      const refused = await admitInboxUser(
        store,
        requestClientAddress(c, deps.clientAddresses),
        pubkey,
        deps.maxUsersPerAddressPerDay ?? INBOX_MAX_USERS_PER_ADDRESS_PER_DAY,
      );
      if (refused) {
        c.header('Retry-After', String(refused.retryAfterSecs));
        throw refused.error;
      }
      c.set('pubkey', pubkey);
      await next();
    };
    const appStore: MiddlewareHandler<InboxEnv> = async (c, next) => {
      c.set('store', storeOfRequest(c));
      await next();
    };
    return [
      counted,
      appStore,
      ...(body === 'none' ? [] : [exactJsonBody<InboxEnv>({ maxBytes: INBOX_API_MAX_BODY_BYTES, required: body === 'required' })]),
      authenticated,
    ];
  };

  app.openapi({ ...INBOX_ROUTES.counts, middleware: caller('counts', 'none') }, async (c) => {
    const pubkey = c.get('pubkey');
    const store = c.get('store');
    const counts = await store.readInboxCounts(pubkey);
    const limit = deps.throttlePerUserPerHour ?? 0;
    if (limit <= 0) return c.json(counts, 200);
    // The hour's pushes the throttle withheld: their notifications are in the counts above.
    const window = await store.readThrottleWindow(pubkey, THROTTLE_WINDOW_SECS);
    return c.json(
      {
        ...counts,
        throttled: {
          limit,
          pushed: window.pushed,
          withheld: window.withheld,
          windowStart: new Date(window.startMs).toISOString(),
          windowEnd: new Date(window.startMs + THROTTLE_WINDOW_SECS * 1000).toISOString(),
        },
      },
      200,
    );
  });
  app.openapi({ ...INBOX_ROUTES.viewed, middleware: caller('viewed', 'optional') }, async (c) => {
    // No body, or no `types`: every type.
    const types = c.req.valid('json').types ?? [...INBOX_TYPES];
    return c.json(await c.get('store').markInboxViewed(c.get('pubkey'), types), 200);
  });
  app.openapi({ ...INBOX_ROUTES.getAlertWords, middleware: caller('alert-words', 'none') }, async (c) =>
    c.json({ words: await c.get('store').readAlertWords(c.get('pubkey')) }, 200),
  );
  app.openapi({ ...INBOX_ROUTES.putAlertWords, middleware: caller('alert-words', 'required') }, async (c) => {
    const pubkey = c.get('pubkey');
    const store = c.get('store');
    // The schema checked each word; the list as stored (normalised, distinct) is counted against the setting.
    const parsed = parseAlertWordList(c.req.valid('json').words, Number.MAX_SAFE_INTEGER);
    const words = parsed.ok ? parsed.words : [];
    const maxWords = deps.maxAlertWordsPerUser ?? INBOX_MAX_ALERT_WORDS_PER_USER;
    if (words.length > maxWords)
      throw new HttpError('TOO_MANY_ALERT_WORDS', `${words.length} distinct alert words; at most ${maxWords} per user`);
    // Clearing one's words stores nothing; setting them counts the key against its address's day.
    if (words.length > 0) {
      const quota = await store.takeClientQuota({
        scope: ALERT_WORD_USERS_QUOTA,
        client: requestClientAddress(c, deps.clientAddresses),
        member: pubkey,
        limit: deps.maxAlertWordUsersPerAddressPerDay ?? INBOX_MAX_ALERT_WORD_USERS_PER_ADDRESS_PER_DAY,
        windowMs: ALERT_WORD_USERS_QUOTA_WINDOW_MS,
      });
      if (!quota.allowed) {
        c.header('Retry-After', String(Math.ceil(quota.retryAfterMs / 1000)));
        throw new HttpError(
          'CLIENT_QUOTA_EXCEEDED',
          `${quota.used} keys set alert words from this address today (inbox.max_alert_word_users_per_address_per_day); retry after the Retry-After header`,
        );
      }
    }
    await store.replaceAlertWords(pubkey, words);
    return c.json({ words: await store.readAlertWords(pubkey) }, 200);
  });
  app.openapi({ ...INBOX_ROUTES.announcements, middleware: caller('announcements', 'none') }, async (c) => {
    const store = c.get('store');
    const announcements = await store.activeAnnouncements();
    await store.markInboxViewed(c.get('pubkey'), ['announcement']);
    return c.json({ announcements: announcements.map(announcementView) }, 200);
  });
  app.openapi({ ...INBOX_ROUTES.devices, middleware: caller('devices', 'none') }, async (c) =>
    c.json({ devices: (await c.get('store').listDevices(c.get('pubkey'))).map(deviceView) }, 200),
  );
  app.openapi({ ...INBOX_ROUTES.registerDevice, middleware: caller('devices', 'required') }, async (c) => {
    const pubkey = c.get('pubkey');
    const store = c.get('store');
    const { token } = c.req.valid('param');
    const registration = c.req.valid('json');
    if (registration.token !== undefined && registration.token !== token) throw new HttpError('DEVICE_TOKEN_MISMATCH');
    const payload = { ...registration, token };
    // A 3079 with bad relays still registers (the relays are ignored); over HTTP the caller is told.
    const relays = registrationRelays(payload);
    if (relays !== null && !Array.isArray(relays))
      throw new HttpError('INVALID_DEVICE', `The device registration is invalid: ${relays.invalid}`);
    const known = (await store.listDevices(pubkey)).some((d) => d.token === token);
    const log = deps.logger.child({ pubkey, via: 'http' });
    const applied = await applyControlPayload(store, log, pubkey, REGISTER_TOKEN, JSON.stringify(payload), {
      ...userRelaysOfRequest(c),
      // The request stands for the event a 3079 would be: a newer registration's relays replace these.
      origin: { id: createHash('sha256').update(c.get('exactBody')).digest('hex'), created_at: Math.floor(store.clock.nowMs() / 1000) },
    });
    deps.metrics.controlEvents.inc({ kind: String(REGISTER_TOKEN), outcome: applied.outcome });
    if (!applied.device) throw new HttpError('INVALID_DEVICE', `The device registration is invalid: ${applied.reason ?? 'unknown'}`);
    return c.json({ device: deviceView(applied.device) }, known ? 200 : 201);
  });
  app.openapi({ ...INBOX_ROUTES.removeDevice, middleware: caller('devices', 'none') }, async (c) => {
    const pubkey = c.get('pubkey');
    const store = c.get('store');
    // A device's id (as listed) or its token (as registered), the way a 3080 names it.
    const named = c.req.valid('param').token;
    const device = (await store.listDevices(pubkey)).find((d) => deviceId(d.token) === named || d.token === named);
    if (!device) throw new HttpError('DEVICE_NOT_FOUND');
    const log = deps.logger.child({ pubkey, via: 'http' });
    const applied = await applyControlPayload(store, log, pubkey, DEREGISTER_TOKEN, JSON.stringify({ token: device.token }), {
      ...userRelaysOfRequest(c),
    });
    deps.metrics.controlEvents.inc({ kind: String(DEREGISTER_TOKEN), outcome: applied.outcome });
    if (applied.outcome !== 'deregistered') throw new HttpError('DEVICE_NOT_FOUND');
    return c.body(null, 204);
  });
  app.openapi({ ...INBOX_ROUTES.preferences, middleware: caller('preferences', 'required') }, async (c) => {
    const pubkey = c.get('pubkey');
    const store = c.get('store');
    const log = deps.logger.child({ pubkey, via: 'http' });
    const applied = await applyControlPayload(store, log, pubkey, PREFERENCES, JSON.stringify(c.req.valid('json')), {
      ...(deps.maxAlertWordsPerUser === undefined ? {} : { maxAlertWordsPerUser: deps.maxAlertWordsPerUser }),
    });
    deps.metrics.controlEvents.inc({ kind: String(PREFERENCES), outcome: applied.outcome });
    if (applied.outcome !== 'preferences_set')
      throw new HttpError('INVALID_PREFERENCES', `The preferences are invalid: ${applied.reason ?? 'unknown'}`);
    return c.json({ preferences: await store.getPreferences(pubkey) }, 200);
  });
  return app;
}
