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
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { DeviceRegistration, StorePort } from '../store/port.ts';
import { INBOX_TYPES, isInboxType, type Announcement, type InboxType } from '../store/port-inbox.ts';
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
import { parseJsonBytes, readBodyBytes, refuseNonJsonContentType } from './json-body.ts';
import { authenticateNip98, type Nip98Auth } from './nip98-auth.ts';
import { THROTTLE_WINDOW_SECS } from '../notification/types.ts';
import { mountDocumented } from './openapi.ts';
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

/** `{types?}` of `POST /v1/inbox/viewed`: every type when the body or the field is absent. */
function viewedTypes(body: Uint8Array): InboxType[] {
  if (body.byteLength === 0) return [...INBOX_TYPES];
  const parsed = parseJsonBytes(body);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new HttpError('UNPROCESSABLE_BODY', 'Request body must be a JSON object');
  const types = (parsed as Record<string, unknown>).types;
  if (types === undefined) return [...INBOX_TYPES];
  if (!Array.isArray(types) || !types.every(isInboxType))
    throw new HttpError('INVALID_INBOX_TYPES', `types must be a list of ${INBOX_TYPES.join(', ')}`);
  return types;
}

function jsonObjectOf(body: Uint8Array, shape: string): Record<string, unknown> {
  const parsed = parseJsonBytes(body);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new HttpError('UNPROCESSABLE_BODY', `Request body must be a JSON object ${shape}`);
  return parsed as Record<string, unknown>;
}

/** The 3079 JSON of `PUT /v1/devices/{token}`, with the path's token. */
function registrationPayloadOf(body: Uint8Array, token: string): string {
  const payload = jsonObjectOf(body, '(the content of a 3079)');
  if (payload.token !== undefined && payload.token !== token) throw new HttpError('DEVICE_TOKEN_MISMATCH');
  // A 3079 with bad relays still registers (the relays are ignored); over HTTP the caller is told.
  const relays = registrationRelays(payload);
  if (relays !== null && !Array.isArray(relays))
    throw new HttpError('INVALID_DEVICE', `The device registration is invalid: ${relays.invalid}`);
  return JSON.stringify({ ...payload, token });
}

function alertWordsOf(body: Uint8Array, maxWords: number): string[] {
  const parsed = parseJsonBytes(body);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new HttpError('UNPROCESSABLE_BODY', 'Request body must be a JSON object {"words": [...]}');
  // Counted apart from the words' shape, so "too many" has its own code; the body limit bounds the list.
  const words = parseAlertWordList((parsed as Record<string, unknown>).words, Number.MAX_SAFE_INTEGER);
  if (!words.ok) throw new HttpError('INVALID_ALERT_WORDS', words.reason.replace(/^alertWords/, 'words'));
  if (words.words.length > maxWords)
    throw new HttpError('TOO_MANY_ALERT_WORDS', `${words.words.length} distinct alert words; at most ${maxWords} per user`);
  return words.words;
}

export function inboxRoutes(deps: InboxApiDeps): OpenAPIHono {
  const app = new OpenAPIHono();
  /** The store view of the app the request names (`X-App`); an unknown app is 404, before any signature is checked. */
  /** The registration options of the request's app: users' relays when on (issue 36). */
  const userRelaysOfRequest = (c: Context): { userRelays?: UserRelayRegistration } => {
    const named = c.req.header('x-app');
    const userRelays = deps.userRelaysOf?.(named === undefined || named === '' ? DEFAULT_APP_ID : named);
    return userRelays ? { userRelays } : {};
  };
  const storeOfRequest = (c: Context): StorePort => {
    const named = c.req.header('x-app');
    if (named === undefined || named === '' || named === DEFAULT_APP_ID) return deps.store;
    const store = deps.storeOf?.(named);
    if (!store) throw new HttpError('NOT_FOUND');
    return store;
  };

  /**
   * Authenticate (reading the body first when the method has one, for the `payload` tag), count
   * the outcome, and make the caller a known user.
   */
  const handle =
    (route: string, withBody: boolean, work: (c: Context, pubkey: string, body: Uint8Array, store: StorePort) => Promise<Response>) =>
    async (c: Context): Promise<Response> => {
      try {
        const store = storeOfRequest(c);
        if (withBody) refuseNonJsonContentType(c);
        const body = withBody ? await readBodyBytes(c, INBOX_API_MAX_BODY_BYTES) : new Uint8Array(0);
        const pubkey = await authenticateNip98(c, deps.auth, withBody ? body : undefined);
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
        const response = await work(c, pubkey, body, store);
        deps.metrics.inboxApiRequests.inc({ route, outcome: 'ok' });
        return response;
      } catch (err) {
        if (err instanceof HttpError) {
          deps.metrics.inboxApiRequests.inc({ route, outcome: err.code });
          // NIP-98 refusals are logged by authenticateNip98 itself, rate-limit refusals once per flood by the limit.
          if (err.code !== 'NIP98_UNAUTHORIZED' && err.code !== 'RATE_LIMITED' && err.status < 500)
            deps.logger.warn({ route, code: err.code, reason: err.message }, 'user API request refused');
        } else deps.metrics.inboxApiRequests.inc({ route, outcome: 'INTERNAL' });
        throw err;
      }
    };

  mountDocumented(
    app,
    INBOX_ROUTES.counts,
    handle('counts', false, async (c, pubkey, _body, store) => {
      const counts = await store.readInboxCounts(pubkey);
      const limit = deps.throttlePerUserPerHour ?? 0;
      if (limit <= 0) return c.json(counts);
      // The hour's pushes the throttle withheld: their notifications are in the counts above.
      const window = await store.readThrottleWindow(pubkey, THROTTLE_WINDOW_SECS);
      return c.json({
        ...counts,
        throttled: {
          limit,
          pushed: window.pushed,
          withheld: window.withheld,
          windowStart: new Date(window.startMs).toISOString(),
          windowEnd: new Date(window.startMs + THROTTLE_WINDOW_SECS * 1000).toISOString(),
        },
      });
    }),
  );
  mountDocumented(
    app,
    INBOX_ROUTES.viewed,
    handle('viewed', true, async (c, pubkey, body, store) => c.json(await store.markInboxViewed(pubkey, viewedTypes(body)))),
  );
  mountDocumented(
    app,
    INBOX_ROUTES.getAlertWords,
    handle('alert-words', false, async (c, pubkey, _body, store) => c.json({ words: await store.readAlertWords(pubkey) })),
  );
  mountDocumented(
    app,
    INBOX_ROUTES.putAlertWords,
    handle('alert-words', true, async (c, pubkey, body, store) => {
      const words = alertWordsOf(body, deps.maxAlertWordsPerUser ?? INBOX_MAX_ALERT_WORDS_PER_USER);
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
      return c.json({ words: await store.readAlertWords(pubkey) });
    }),
  );
  mountDocumented(
    app,
    INBOX_ROUTES.announcements,
    handle('announcements', false, async (c, pubkey, _body, store) => {
      const announcements = await store.activeAnnouncements();
      await store.markInboxViewed(pubkey, ['announcement']);
      return c.json({ announcements: announcements.map(announcementView) });
    }),
  );
  mountDocumented(
    app,
    INBOX_ROUTES.devices,
    handle('devices', false, async (c, pubkey, _body, store) => c.json({ devices: (await store.listDevices(pubkey)).map(deviceView) })),
  );
  mountDocumented(
    app,
    INBOX_ROUTES.registerDevice,
    handle('devices', true, async (c, pubkey, body, store) => {
      const token = c.req.param('token');
      if (!token) throw new HttpError('NOT_FOUND');
      const payload = registrationPayloadOf(body, token);
      const known = (await store.listDevices(pubkey)).some((d) => d.token === token);
      const log = deps.logger.child({ pubkey, via: 'http' });
      const applied = await applyControlPayload(store, log, pubkey, REGISTER_TOKEN, payload, {
        ...userRelaysOfRequest(c),
        // The request stands for the event a 3079 would be: a newer registration's relays replace these.
        origin: { id: createHash('sha256').update(body).digest('hex'), created_at: Math.floor(store.clock.nowMs() / 1000) },
      });
      deps.metrics.controlEvents.inc({ kind: String(REGISTER_TOKEN), outcome: applied.outcome });
      if (!applied.device) throw new HttpError('INVALID_DEVICE', `The device registration is invalid: ${applied.reason ?? 'unknown'}`);
      return c.json({ device: deviceView(applied.device) }, known ? 200 : 201);
    }),
  );
  mountDocumented(
    app,
    INBOX_ROUTES.removeDevice,
    handle('devices', false, async (c, pubkey, _body, store) => {
      // A device's id (as listed) or its token (as registered), the way a 3080 names it.
      const named = c.req.param('token');
      const device = (await store.listDevices(pubkey)).find((d) => deviceId(d.token) === named || d.token === named);
      if (!device) throw new HttpError('DEVICE_NOT_FOUND');
      const log = deps.logger.child({ pubkey, via: 'http' });
      const applied = await applyControlPayload(store, log, pubkey, DEREGISTER_TOKEN, JSON.stringify({ token: device.token }), {
        ...userRelaysOfRequest(c),
      });
      deps.metrics.controlEvents.inc({ kind: String(DEREGISTER_TOKEN), outcome: applied.outcome });
      if (applied.outcome !== 'deregistered') throw new HttpError('DEVICE_NOT_FOUND');
      return c.body(null, 204);
    }),
  );
  mountDocumented(
    app,
    INBOX_ROUTES.preferences,
    handle('preferences', true, async (c, pubkey, body, store) => {
      const payload = JSON.stringify(jsonObjectOf(body, '(the content of a 3083)'));
      const log = deps.logger.child({ pubkey, via: 'http' });
      const applied = await applyControlPayload(store, log, pubkey, PREFERENCES, payload, {
        ...(deps.maxAlertWordsPerUser === undefined ? {} : { maxAlertWordsPerUser: deps.maxAlertWordsPerUser }),
      });
      deps.metrics.controlEvents.inc({ kind: String(PREFERENCES), outcome: applied.outcome });
      if (applied.outcome !== 'preferences_set')
        throw new HttpError('INVALID_PREFERENCES', `The preferences are invalid: ${applied.reason ?? 'unknown'}`);
      return c.json({ preferences: await store.getPreferences(pubkey) });
    }),
  );
  return app;
}
