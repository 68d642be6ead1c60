/**
 * The user API (issue 13): a user's own inbox, authenticated with NIP-98 (kind 27235: absolute
 * `u`, `method`, `payload` for bodies, `created_at` within 60 s, each auth event used once).
 *
 * | route                        | what                                                              |
 * |------------------------------|-------------------------------------------------------------------|
 * | `GET /v1/inbox/counts`       | `{types: {like: {total, viewed, new}, …}, totalNew}`, and `throttled: {limit, pushed, withheld, windowStart, windowEnd}` while the per-user throttle is on |
 * | `POST /v1/inbox/viewed`      | `{types?}` (every type when absent): viewed = total; the counts after |
 * | `GET /v1/alert-words`        | `{words}`                                                         |
 * | `PUT /v1/alert-words`        | `{words}` replaces the list (single words, at most 50): the words stored |
 * | `GET /v1/announcements`      | `{announcements: [{id, text, createdAt, expiresAt}]}`, the active ones, newest first; marks them seen (Twitarr's rule) |
 * | `GET /v1/devices`            | `{devices: [{id, transport, token, timezoneOffsetMinutes?, locale?}]}`, tokens redacted to a prefix |
 * | `DELETE /v1/devices/{id}`    | removes one of the caller's devices (204), 404 for any other id   |
 *
 * Every caller becomes a known user, whose notifications count from then on. Refusals are JSON
 * with a stable code (`errors.ts`), a warn line and a metric.
 */
import { createHash } from 'node:crypto';
import { Hono, type Context } from 'hono';
import type { DeviceRegistration, StorePort } from '../store/port.ts';
import { INBOX_TYPES, MAX_ALERT_WORDS_PER_USER, isInboxType, type Announcement, type InboxType } from '../store/port-inbox.ts';
import { redact, type Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { parseAlertWordList } from '../engine/inbox/words.ts';
import { THROTTLE_WINDOW_SECS } from '../delivery/throttle.ts';
import { DEFAULT_APP_ID } from '../config/apps.ts';
import { HttpError } from './errors.ts';
import { parseJsonBytes, readBodyBytes } from './json-body.ts';
import { authenticateNip98, type Nip98Auth } from './nip98-auth.ts';

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
}

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

function alertWordsOf(body: Uint8Array): string[] {
  const parsed = parseJsonBytes(body);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new HttpError('UNPROCESSABLE_BODY', 'Request body must be a JSON object {"words": [...]}');
  const words = parseAlertWordList((parsed as Record<string, unknown>).words, MAX_ALERT_WORDS_PER_USER);
  if (!words.ok) throw new HttpError('INVALID_ALERT_WORDS', words.reason.replace(/^alertWords/, 'words'));
  return words.words;
}

export function inboxRoutes(deps: InboxApiDeps): Hono {
  const app = new Hono();
  /** The store view of the app the request names (`X-App`); an unknown app is 404, before any signature is checked. */
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
        const body = withBody ? await readBodyBytes(c, INBOX_API_MAX_BODY_BYTES) : new Uint8Array(0);
        const pubkey = await authenticateNip98(c, deps.auth, withBody ? body : undefined);
        await store.rememberInboxUser(pubkey);
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

  app.get(
    '/v1/inbox/counts',
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
  app.post(
    '/v1/inbox/viewed',
    handle('viewed', true, async (c, pubkey, body, store) => c.json(await store.markInboxViewed(pubkey, viewedTypes(body)))),
  );
  app.get(
    '/v1/alert-words',
    handle('alert-words', false, async (c, pubkey, _body, store) => c.json({ words: await store.readAlertWords(pubkey) })),
  );
  app.put(
    '/v1/alert-words',
    handle('alert-words', true, async (c, pubkey, body, store) => {
      await store.replaceAlertWords(pubkey, alertWordsOf(body));
      return c.json({ words: await store.readAlertWords(pubkey) });
    }),
  );
  app.get(
    '/v1/announcements',
    handle('announcements', false, async (c, pubkey, _body, store) => {
      const announcements = await store.activeAnnouncements();
      await store.markInboxViewed(pubkey, ['announcement']);
      return c.json({ announcements: announcements.map(announcementView) });
    }),
  );
  app.get(
    '/v1/devices',
    handle('devices', false, async (c, pubkey, _body, store) => c.json({ devices: (await store.listDevices(pubkey)).map(deviceView) })),
  );
  app.delete(
    '/v1/devices/:id',
    handle('devices', false, async (c, pubkey, _body, store) => {
      const id = c.req.param('id');
      const device = (await store.listDevices(pubkey)).find((d) => deviceId(d.token) === id);
      if (!device || !(await store.removeToken(pubkey, device.token))) throw new HttpError('DEVICE_NOT_FOUND');
      deps.logger.info({ pubkey, token: redact(device.token) }, 'device removed through the user API');
      return c.body(null, 204);
    }),
  );
  return app;
}
