/**
 * The console's JSON API under `/console/api/*`, every route behind the console session
 * (`session.ts`):
 *
 * - `GET overview`: the fleet's heartbeats (task flags, relay connections), queue depths per queue
 *   and lane (read now), tokens per transport, and the pushes-per-second series of the last hour;
 * - dead letters: the admin DLQ routes (`api/admin/dlq.ts`) mounted here with the session as their
 *   authentication, so the console lists, replays and deletes exactly as `/v1/admin/dlq` does:
 *   `GET v1/admin/dlq?queue=&limit=&cursor=`, `POST v1/admin/dlq/{id}/replay`, `POST
 *   v1/admin/dlq/replay?queue=`, `DELETE v1/admin/dlq/{id}`;
 * - `GET users/{npub or hex}`: devices (tokens redacted), preferences, bells, inbox counters,
 *   the last deliveries of the delivery log;
 * - `GET ntfy?limit=`: topics with their stored messages and the fleet's live subscriptions.
 */
import { Hono, type MiddlewareHandler } from 'hono';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { dlqRoutes } from '../api/admin/dlq.ts';
import type { AppKeyEnv } from '../api/auth.ts';
import { HttpError } from '../api/errors.ts';
import { decodeNpub, npubEncode } from '../nostr/nip19.ts';
import { DEFAULT_APP_ID } from '../platform/apps.ts';
import { redact } from '../observability/logger.ts';
import type { DeviceRegistration, StorePort } from '../store/port.ts';
import type { ProcessHeartbeatRecord } from '../store/port-fleet.ts';
import { SAMPLED_QUEUES, SAMPLE_RETENTION_MS } from './sampler.ts';
import { newestValues, pushSeries } from './series.ts';
import { CONSOLE_API_PATH, type ConsoleSessionEnv } from './session.ts';

/** Deliveries shown on a user's page: the newest of the retention window. */
export const USER_DELIVERIES_SHOWN = 50;
/** Delivery log entries read to find the newest {@link USER_DELIVERIES_SHOWN} (the log reads oldest first). */
const USER_DELIVERIES_READ = 1000;
export const NTFY_TOPICS_DEFAULT_LIMIT = 100;
export const NTFY_TOPICS_MAX_LIMIT = 1000;
const HEX_PUBKEY = /^[0-9a-f]{64}$/;

export interface ConsoleRouteDeps {
  store: StorePort;
  requireSession: MiddlewareHandler<ConsoleSessionEnv>;
  /** Bucket of the pushes plot: the sample interval. */
  sampleIntervalMs: number;
  deliveryLogRetentionMs: number;
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
    relays: beat.relays.map(({ lastEventAtMs, ...relay }) => ({ ...relay, lastEventAt: iso(lastEventAtMs) })),
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

/** A hex pubkey from an npub or hex, or null. */
export function parsePubkey(raw: string): string | null {
  const text = raw.trim();
  if (text.startsWith('npub1')) return decodeNpub(text);
  const lower = text.toLowerCase();
  return HEX_PUBKEY.test(lower) ? lower : null;
}

export function consoleRoutes(deps: ConsoleRouteDeps): Hono<ConsoleSessionEnv> {
  const app = new Hono<ConsoleSessionEnv>();
  const api = CONSOLE_API_PATH;
  app.use(`${api}/overview`, deps.requireSession);
  app.use(`${api}/users/*`, deps.requireSession);
  app.use(`${api}/ntfy`, deps.requireSession);

  app.get(`${api}/overview`, async (c) => {
    const now = deps.store.clock.nowMs();
    const [beats, samples] = await Promise.all([deps.store.listHeartbeats(), deps.store.readMetricSamples(now - SAMPLE_RETENTION_MS)]);
    const queues: Record<string, unknown> = {};
    for (const queue of SAMPLED_QUEUES) queues[queue] = await deps.store.queueStats(queue);
    const sampledTokens = newestValues(samples, 'tokens:');
    const tokens: Record<string, number> = sampledTokens?.values ?? (await deps.store.countTokensByTransport());
    return c.json({
      now: iso(now),
      processes: beats.map(processView),
      queues,
      tokens,
      tokensAt: iso(sampledTokens?.atMs ?? now),
      pushes: pushSeries(samples, deps.sampleIntervalMs),
      sampleIntervalSecs: deps.sampleIntervalMs / 1000,
    });
  });

  app.get(`${api}/users/:key`, async (c) => {
    const pubkey = parsePubkey(c.req.param('key'));
    if (!pubkey) throw new HttpError('INVALID_PUBKEY');
    const now = deps.store.clock.nowMs();
    const [devices, preferences, bells, counters, alertWords, deliveries] = await Promise.all([
      deps.store.listDevices(pubkey),
      deps.store.getPreferences(pubkey),
      deps.store.notifySubscriptions(pubkey),
      deps.store.readInboxCounts(pubkey),
      deps.store.readAlertWords(pubkey),
      deps.store.readDeliveryLog(DEFAULT_APP_ID, {
        recipient: pubkey,
        sinceMs: now - deps.deliveryLogRetentionMs,
        limit: USER_DELIVERIES_READ,
      }),
    ]);
    return c.json({
      pubkey,
      npub: npubEncode(pubkey),
      devices: devices.map(deviceView),
      preferences,
      bells: bells.map((creator) => ({ pubkey: creator, npub: npubEncode(creator) })),
      counters,
      alertWords,
      deliveries: deliveries
        .slice(-USER_DELIVERIES_SHOWN)
        .reverse()
        .map(({ appId: _appId, atMs, ...entry }) => ({ ...entry, at: iso(atMs) })),
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

  // The dead letters: the admin routes themselves, behind the session instead of an API key.
  app.route(
    api,
    dlqRoutes({
      // The session, then the app the routes act on: the console is the default app's (its admin keys log in).
      auth: async (c, next) => {
        return (deps.requireSession as unknown as MiddlewareHandler<AppKeyEnv>)(c, async () => {
          c.set('appId', DEFAULT_APP_ID);
          c.set('appStore', deps.store);
          await next();
        });
      },
      logger: deps.logger.child({ route: 'console-dlq' }),
      metrics: deps.metrics,
    }),
  );
  return app;
}
