/**
 * The console's JSON API under `/console/api/*`, every route behind the console session
 * (`session.ts`). Every route that reads or changes an app's data takes the app as `?app=ID` (the
 * `default` app when absent; 400 `INVALID_QUERY` for an app the service does not host) and reads
 * that app's store view only; the fleet (processes, relays, the pushes series) stays global:
 *
 * - `GET apps`: the apps the service hosts, the default first (the page's app switcher), each with
 *   its send types when the test send is on;
 * - `GET overview?app=`: the fleet's heartbeats (task flags, relay connections), the app's queue
 *   depths per queue and lane (read now) and tokens per transport, its transports (configured or
 *   off and why, with the app's pushes of the last hour through each, those that failed, and of
 *   those the ones to a transport that is off), and the fleet's pushes-per-second series of the
 *   last hour (UnifiedPush apart from Web Push);
 * - dead letters: the admin DLQ routes (`api/admin/dlq.ts`) mounted here with the session as their
 *   authentication, so the console lists, replays and deletes exactly as `/v1/admin/dlq` does:
 *   `GET v1/admin/dlq?queue=&limit=&cursor=`, `POST v1/admin/dlq/{id}/replay`, `POST
 *   v1/admin/dlq/replay?queue=`, `DELETE v1/admin/dlq/{id}`;
 * - `GET users/{npub or hex}?app=`: devices (tokens redacted), preferences, bells, inbox counters,
 *   the last pushes of the delivery log, one row each with its outcome and the provider's answer
 *   (`deliveries.ts`);
 * - `GET ntfy?limit=`: topics with their stored messages and the fleet's live subscriptions;
 * - the API keys of the app: `GET keys?app=`, `POST keys?app=`, `DELETE keys/{id}?app=` (`keys.ts`);
 * - `POST test-send?app=`: a push to one user through the send API's own code (`test-send.ts`).
 */
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { dlqRoutes } from '../api/admin/dlq.ts';
import type { AppKeyEnv } from '../api/auth.ts';
import { HttpError } from '../api/errors.ts';
import { npubEncode } from '../nostr/nip19.ts';
import { parsePubkey } from './pubkey.ts';

import { DEFAULT_APP_ID } from '../platform/apps.ts';
import type { TransportState } from '../platform/transport-states.ts';
import { redact } from '../observability/logger.ts';
import type { DeviceRegistration, StorePort } from '../store/port.ts';
import type { ProcessHeartbeatRecord } from '../store/port-fleet.ts';
import { SAMPLED_QUEUES, SAMPLE_RETENTION_MS } from './sampler.ts';
import { newestValues, pushSeries } from './series.ts';
import { CONSOLE_API_PATH, type ConsoleSessionEnv } from './session.ts';
import { mountConsoleKeyRoutes } from './keys.ts';
import { pushRows } from './deliveries.ts';
import { mountTestSendRoute, sendTypesOf, type ConsoleSendApi } from './test-send.ts';

/** Pushes shown on a user's page (one row each, `deliveries.ts`): the newest of the retention window. */
export const USER_DELIVERIES_SHOWN = 50;
/** Delivery log entries read to find the newest {@link USER_DELIVERIES_SHOWN} (the log reads oldest first). */
const USER_DELIVERIES_READ = 1000;
export const NTFY_TOPICS_DEFAULT_LIMIT = 100;
export const NTFY_TOPICS_MAX_LIMIT = 1000;

/** An app as the console sees it: its id, its store view and its transports (`platform/tenants.ts`). */
export interface ConsoleApp {
  id: string;
  store: StorePort;
  /** Which transports the app has configured and why the others are off; absent, not shown. */
  transports?: readonly TransportState[];
}

export interface ConsoleRouteDeps {
  /** The service's store: the default app's view, where the fleet's heartbeats, samples and ntfy topics live. */
  store: StorePort;
  /** Every app the service hosts, the default first. */
  apps: readonly ConsoleApp[];
  requireSession: MiddlewareHandler<ConsoleSessionEnv>;
  /** Bucket of the pushes plot: the sample interval. */
  sampleIntervalMs: number;
  deliveryLogRetentionMs: number;
  /** The send API (`api/notifications.ts`) for the test send; absent, there is no test send. */
  sendApi?: ConsoleSendApi;
  metrics: Metrics;
  logger: Logger;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function processView(beat: ProcessHeartbeatRecord) {
  return {
    processId: beat.processId,
    host: beat.host,
    pid: beat.pid,
    roles: beat.roles,
    version: beat.version,
    startedAt: iso(beat.startedAtMs),
    lastSeenAt: iso(beat.lastSeenAtMs),
    tasks: beat.tasks,
    relays: beat.relays.map(({ lastEventAtMs, disconnects, ...relay }) => ({
      ...relay,
      lastEventAt: iso(lastEventAtMs),
      // Newest first: the page lists the reconnect history from the latest.
      disconnects: (disconnects ?? []).map((d) => ({ at: iso(d.atMs), error: d.error })).reverse(),
    })),
    ntfySubscriptions: Object.values(beat.ntfySubscribers).reduce((a, b) => a + b, 0),
    userRelays: beat.userRelays ?? null,
  };
}

/** A device as the console shows it: the token and endpoint cut to a prefix, no keys. */
function deviceView(device: DeviceRegistration) {
  return {
    token: redact(device.token),
    transport: device.transport,
    ...(device.endpoint ? { endpointHost: safeHost(device.endpoint) } : {}),
    ...(device.timezoneOffsetMinutes === undefined ? {} : { timezoneOffsetMinutes: device.timezoneOffsetMinutes }),
    ...(device.sandbox ? { sandbox: true } : {}),
    encrypted: device.encryptTo !== undefined,
  };
}

function safeHost(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}

/** Longest `?app=` looked at (app ids are short; see `APP_ID_PATTERN`). */
const MAX_APP_PARAM_LENGTH = 100;

/**
 * The app a request names with `?app=` (the default when absent), or a 400 `INVALID_QUERY` with a
 * warn line and a count for an app the service does not host.
 */
export function consoleAppResolver(deps: Pick<ConsoleRouteDeps, 'apps' | 'metrics' | 'logger'>) {
  const byId = new Map(deps.apps.map((a) => [a.id, a]));
  return (c: Context, route: string): ConsoleApp => {
    const raw = c.req.query('app');
    const found = byId.get(raw ?? DEFAULT_APP_ID);
    if (found) return found;
    deps.metrics.apiRequests.inc({ route: `${CONSOLE_API_PATH}/${route}`, outcome: 'INVALID_QUERY' });
    deps.logger.warn({ route, app: raw?.slice(0, MAX_APP_PARAM_LENGTH) }, 'console request for an unknown app');
    throw new HttpError('INVALID_QUERY', `app ${JSON.stringify(raw?.slice(0, MAX_APP_PARAM_LENGTH))} is not an app of this service`);
  };
}

export function consoleRoutes(deps: ConsoleRouteDeps): Hono<ConsoleSessionEnv> {
  const app = new Hono<ConsoleSessionEnv>();
  const api = CONSOLE_API_PATH;
  const appOf = consoleAppResolver(deps);
  app.use(`${api}/apps`, deps.requireSession);
  app.use(`${api}/overview`, deps.requireSession);
  app.use(`${api}/users/*`, deps.requireSession);
  app.use(`${api}/ntfy`, deps.requireSession);
  app.use(`${api}/keys`, deps.requireSession);
  app.use(`${api}/keys/*`, deps.requireSession);

  app.use(`${api}/test-send`, deps.requireSession);

  const { sendApi } = deps;
  app.get(`${api}/apps`, (c) =>
    c.json({ apps: deps.apps.map((a) => ({ id: a.id, ...(sendApi ? { sendTypes: sendTypesOf(sendApi, a.id) } : {}) })) }),
  );

  app.get(`${api}/overview`, async (c) => {
    const selected = appOf(c, 'overview');
    const now = deps.store.clock.nowMs();
    const [beats, samples] = await Promise.all([deps.store.listHeartbeats(), deps.store.readMetricSamples(now - SAMPLE_RETENTION_MS)]);
    const queues: Record<string, unknown> = {};
    for (const queue of SAMPLED_QUEUES) queues[queue] = await selected.store.queueStats(queue);
    // The reporters sample the default app's devices; another app's are counted now.
    const sampledTokens = selected.id === DEFAULT_APP_ID ? newestValues(samples, 'tokens:') : null;
    const tokens: Record<string, number> = sampledTokens?.values ?? (await selected.store.countTokensByTransport());
    const pushes = pushSeries(samples, deps.sampleIntervalMs);
    // The app's own pushes: `{transport}:{ok|failed|unconfigured}` (sampler.ts).
    const ofApp = pushSeries(samples, deps.sampleIntervalMs, `app:${selected.id}:`).totals;
    return c.json({
      app: selected.id,
      now: iso(now),
      processes: beats.map(processView),
      queues,
      tokens,
      tokensAt: iso(sampledTokens?.atMs ?? now),
      transports: (selected.transports ?? []).map((t) => {
        const unconfigured = ofApp[`${t.transport}:unconfigured`] ?? 0;
        // The app's pushes of the last hour over the fleet; `failed` counts the unconfigured ones too.
        return { ...t, ok: ofApp[`${t.transport}:ok`] ?? 0, failed: (ofApp[`${t.transport}:failed`] ?? 0) + unconfigured, unconfigured };
      }),
      pushes,
      sampleIntervalSecs: deps.sampleIntervalMs / 1000,
    });
  });

  app.get(`${api}/users/:key`, async (c) => {
    const selected = appOf(c, 'users');
    const store = selected.store;
    const pubkey = parsePubkey(c.req.param('key'));
    if (!pubkey) throw new HttpError('INVALID_PUBKEY');
    const now = store.clock.nowMs();
    const [devices, preferences, bells, counters, alertWords, deliveries] = await Promise.all([
      store.listDevices(pubkey),
      store.getPreferences(pubkey),
      store.notifySubscriptions(pubkey),
      store.readInboxCounts(pubkey),
      store.readAlertWords(pubkey),
      store.readDeliveryLog(selected.id, {
        recipient: pubkey,
        sinceMs: now - deps.deliveryLogRetentionMs,
        limit: USER_DELIVERIES_READ,
      }),
    ]);
    return c.json({
      app: selected.id,
      pubkey,
      npub: npubEncode(pubkey),
      devices: devices.map(deviceView),
      preferences,
      bells: bells.map((creator) => ({ pubkey: creator, npub: npubEncode(creator) })),
      counters,
      alertWords,
      deliveries: pushRows(deliveries, USER_DELIVERIES_SHOWN),
    });
  });

  app.get(`${api}/ntfy`, async (c) => {
    const raw = c.req.query('limit');
    const limit = raw === undefined ? NTFY_TOPICS_DEFAULT_LIMIT : Number(raw);
    if (!/^\d+$/.test(raw ?? '1') || limit < 1 || limit > NTFY_TOPICS_MAX_LIMIT)
      throw new HttpError('INVALID_QUERY', `limit must be an integer from 1 to ${NTFY_TOPICS_MAX_LIMIT}`);
    const [counts, beats] = await Promise.all([deps.store.countNtfyMessagesByTopic(limit), deps.store.listHeartbeats()]);
    const subscribers = new Map<string, number>();
    for (const beat of beats)
      for (const [topic, n] of Object.entries(beat.ntfySubscribers)) subscribers.set(topic, (subscribers.get(topic) ?? 0) + n);
    const topics = new Map<string, { topic: string; messages: number; subscribers: number }>();
    for (const { topic, messages } of counts) topics.set(topic, { topic, messages, subscribers: subscribers.get(topic) ?? 0 });
    for (const [topic, n] of subscribers) if (!topics.has(topic)) topics.set(topic, { topic, messages: 0, subscribers: n });
    const listed = [...topics.values()].sort((a, b) => (a.topic < b.topic ? -1 : 1)).slice(0, limit);
    return c.json({ topics: listed, truncated: counts.length === limit || topics.size > limit });
  });

  mountConsoleKeyRoutes(app, { store: deps.store, appOf, metrics: deps.metrics, logger: deps.logger });
  if (sendApi) mountTestSendRoute(app, { appOf, sendApi, metrics: deps.metrics, logger: deps.logger });

  // The dead letters: the admin routes themselves, behind the session instead of an API key.
  app.route(
    api,
    dlqRoutes({
      // The session, then the app the routes act on: the one `?app=` names (the default when absent).
      auth: async (c, next) => {
        return (deps.requireSession as unknown as MiddlewareHandler<AppKeyEnv>)(c, async () => {
          const selected = appOf(c, 'dlq');
          c.set('appId', selected.id);
          c.set('appStore', selected.store);
          await next();
        });
      },
      logger: deps.logger.child({ route: 'console-dlq' }),
      metrics: deps.metrics,
    }),
  );
  return app;
}
