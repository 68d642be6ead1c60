import type { Config } from '../config/defaults.ts';
import { loadCopywriter } from '../notification/templates/load.ts';
import type { ServiceKey } from '../config/service-key.ts';
import type { StorePort } from '../store/port.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { EventVerifier } from '../nostr/event.ts';
import { CONTROL_KINDS } from '../nostr/kinds.ts';
import {
  inboundItemOrderingKey,
  prefetchInbound,
  routeInbound,
  type InboundEnvelope,
  type InboundItem,
  type RouterDeps,
} from '../engine/router.ts';
import { handleRelayEventNotice } from '../nip9a/receiver/relay-event.ts';
import { createNip44ControlDecryptor } from '../engine/nip44-decryptor.ts';
import { handleContentEvent, type ContentDeps } from '../engine/content.ts';
import { handleOptionalEvent, optionalEventKinds } from '../engine/events/handler.ts';
import { optionalEventDeps } from '../engine/events/wiring.ts';
import { AlertWordPresence, handleAlertWords, type AlertWordDeps } from '../engine/inbox/alert-words.ts';
import { runNewPostFanout } from '../engine/bells/fanout-worker.ts';
import { handleNotifyList } from '../engine/bells/notify-list.ts';
import { withNewPostFanout } from '../engine/bells/video.ts';
import { TASK_NEW_POST_FANOUT, contentBellRules, newPostFanoutDeps, notifyListDeps, videoFanoutDeps } from '../engine/bells/wiring.ts';
import { createProfileResolver } from '../engine/profiles.ts';
import { createRelayQuery } from '../engine/relay-query.ts';
import { USER_RELAY_LIST_KINDS } from '../engine/user-relay-lists.ts';
import { userRelayListenerOptions, userRelayListParts } from './user-relays.ts';
import { SocialListCache, socialListQueryCap } from '../engine/social-lists.ts';
import { storeOutboundQueue } from '../engine/outbound-queue.ts';
import { coalesceFlushDeps, coalesceIngester } from '../engine/coalesce/wiring.ts';
import { COALESCE_FLUSH_TASK, runCoalesceFlush } from '../engine/coalesce/worker.ts';
import { batchedBadgeReader, batchedBellBookkeeping, batchedTokenActivity } from '../delivery/deliver.ts';
import { handleOutbound } from '../delivery/outbound.ts';
import { storeSuppressionGate } from '../delivery/suppression-gate.ts';
import { batchedCampaignClaims, batchedCampaignCounter } from '../delivery/campaign.ts';
import { CampaignCopies, type OutboundPayload } from '../delivery/campaign-items.ts';
import { bellNotificationExpander } from '../engine/bells/bell-items.ts';
import { storeQuietHoursGate } from '../delivery/quiet-hours-gate.ts';
import type { PushTransport } from '../delivery/types.ts';
import { createListener, type Listener, type RelayStatus, type UserRelaySummary } from '../listener/index.ts';
import { runNtfyExpiry, runNtfyScheduledDelivery, type NtfyHub } from '../ntfy/index.ts';
import { offThreadVerifier, type CryptoWorkerPool } from '../nostr/crypto-worker-pool.ts';
import { runQueueWorker } from './queue-worker.ts';
import { withTurnBatching } from '../store/turn-batching.ts';
import { type Supervisor } from './supervisor.ts';
import { startPlatformRoles } from './platform.ts';
import { storeDeliveryLog } from '../platform/delivery-log.ts';
import type { SendWakeup } from '../platform/send-worker.ts';
import { startGatewayRole } from './nip9a-gateway.ts';
import type { Nip9aGateway } from '../nip9a/gateway/gateway.ts';
import { DEFAULT_APP_ID } from '../config/apps.ts';
import { sleep } from '../util/async.ts';
import { DONE, type QueueSignal } from '../store/queue-work.ts';
import { TASK_STORAGE_EXPIRY, runStorageExpiry } from './storage-expiry.ts';

/**
 * What one app's roles run on. The service calls {@link startRoles} once per app (tenancy,
 * `src/platform/tenants.ts`) with that app's configuration, service key, store view and transports;
 * the default app's call also runs the process-wide tasks (ntfy pusher and expiry, NIP-9a gateway).
 */
export interface RoleContext {
  /** The app these roles serve; absent: the default app. */
  appId?: string;
  /** The service keys of the other configured apps: control events addressed to them are theirs, not unaddressed. */
  otherAppPubkeys?: ReadonlySet<string>;
  config: Config;
  key: ServiceKey;
  store: StorePort;
  metrics: Metrics;
  supervisor: Supervisor;
  wake: QueueSignal;
  verifier: EventVerifier;
  /** Worker threads for signature checks and NIP-44 decryption; null to do both inline. */
  cryptoPool: CryptoWorkerPool | null;
  /** The push transports, shared by the delivery role and the direct-message hook. */
  transports: PushTransport[];
  /** The ntfy subscriptions the HTTP server feeds; the pusher role runs it. Null without that role. */
  ntfyHub?: NtfyHub | null;
  /** Wakes the send scheduler of this process when its API created a send. */
  sendWakeup?: SendWakeup;
  logger: Logger;
}

/** Health flag names of the critical tasks (divine's names, so its probes and dashboards carry over). */
export const TASK_NOSTR_LISTENER = 'nostr_listener';
export const TASK_EVENT_HANDLER = 'event_handler';
export const TASK_DELIVERY = 'delivery';
export const TASK_TOKEN_CLEANUP = 'token_cleanup';
export const TASK_QUEUE_GAUGES = 'queue_gauges';
/** The ntfy pusher (critical: without it no subscriber hears anything). */
export const TASK_NTFY_PUSHER = 'ntfy_pusher';
export const TASK_NTFY_EXPIRY = 'ntfy_expiry';
/** The ntfy pusher's scheduled delivery (`Delay`, `At`, `In`): due messages to their topics, once across processes. */
export const TASK_NTFY_SCHEDULED = 'ntfy_scheduled';

/**
 * Inbound events leased at once. The engine handles them one by one, but their decryption is
 * prefetched on worker threads, so a larger batch keeps the workers ahead of the handler.
 */
export const INBOUND_BATCH_SIZE = 256;
/**
 * Inbound events handled at once (events of one ordering key stay in order: see
 * `inboundOrderingKey`). An event mostly waits for the store between its steps, so throughput is
 * about concurrency ÷ the time one event takes: 128 keeps 2,000 events/s flowing on SQLite, where
 * 64 capped it near 1,600 (docs/benchmarks.md).
 */
export const INBOUND_CONCURRENCY = 128;
/**
 * Deliveries in flight per delivery process. A delivery mostly waits for its provider (FCM answers
 * in tens of milliseconds), so throughput is concurrency ÷ latency: 400 at 50 ms is 8,000 pushes
 * per second, within the HTTP/2 pool's 8 sessions × 100 streams.
 */
export const DELIVERY_CONCURRENCY = 400;
/** Outbound items held per delivery process (leased ahead of free slots, so none waits for a lease). */
export const DELIVERY_WINDOW = 2 * DELIVERY_CONCURRENCY;
/** How often the janitor exports queue sizes as gauges. */
export const QUEUE_GAUGE_INTERVAL_MS = 15_000;

export interface StartedRoles {
  /** Stop what needs more than the supervisor's abort signal (sockets, cursor flushes, threads). */
  stop(): Promise<void>;
  /** The NIP-9a gateway watcher when this process runs role `gateway` (registrations made here reload it at once). */
  nip9aGateway: Nip9aGateway | null;
  /** The listener's relay connections (empty without role `listener`), for the console's heartbeat. */
  relays(): RelayStatus[];
  /** The listener's user relays (issue 36); null without role `listener` or with the feature off. */
  userRelays(): UserRelaySummary | null;
}

/** Start the tasks of every role in `config.roles`. Roles share nothing but the store. */
export async function startRoles(ctx: RoleContext): Promise<StartedRoles> {
  const { config } = ctx;
  // The tasks over process-wide state (the ntfy server, the NIP-9a gateway) run once, with the default app.
  const processWide = (ctx.appId ?? DEFAULT_APP_ID) === DEFAULT_APP_ID;
  const stoppers: Array<() => Promise<void>> = [];
  if (config.roles.includes('engine')) startEngine(ctx);
  if (config.roles.includes('delivery')) startDelivery(ctx);
  let listener: Listener | null = null;
  if (config.roles.includes('listener')) {
    listener = startListener(ctx);
    stoppers.push(() => listener?.stop() ?? Promise.resolve());
  }
  let nip9aGateway: Nip9aGateway | null = null;
  if (config.roles.includes('gateway') && processWide) {
    const started = await startGatewayRole(ctx);
    stoppers.push(() => started.stop());
    nip9aGateway = started.gateway;
  }
  if (config.roles.includes('scheduler')) {
    // scheduler tasks: coalesce flush (coalesce_flush), new-post fan-out (new_post_fanout)
    const flushDeps = {
      ...coalesceFlushDeps({
        config,
        store: ctx.store,
        logger: ctx.logger,
        metrics: ctx.metrics,
        outbound: storeOutboundQueue(ctx.store, () => ctx.wake.notify('outbound')),
        verifier: ctx.verifier,
      }),
      social: { lists: socialListCache(config, ctx.verifier, ctx.logger.child({ role: 'scheduler' }), ctx.metrics) },
    };
    ctx.supervisor.spawn(COALESCE_FLUSH_TASK, 'critical', (signal) => runCoalesceFlush(flushDeps, signal));
    const fanoutDeps = newPostFanoutDeps({
      config,
      store: ctx.store,
      logger: ctx.logger,
      metrics: ctx.metrics,
      outbound: storeOutboundQueue(ctx.store, () => ctx.wake.notify('outbound')),
      verifier: ctx.verifier,
    });
    ctx.supervisor.spawn(TASK_NEW_POST_FANOUT, 'critical', (signal) => runNewPostFanout(fanoutDeps, signal));
  }
  if (config.roles.includes('pusher') && processWide) {
    // pusher: ntfy subscriptions (wake-ups and the safety re-drain; connections close with it)
    const hub = ctx.ntfyHub;
    if (hub) ctx.supervisor.spawn(TASK_NTFY_PUSHER, 'critical', (signal) => hub.run(signal));
    // pusher: scheduled ntfy messages delivered when due (the store's claim keeps replicas apart)
    ctx.supervisor.spawn(TASK_NTFY_SCHEDULED, 'critical', (signal) =>
      runNtfyScheduledDelivery({ store: ctx.store, metrics: ctx.metrics, logger: ctx.logger }, signal),
    );
  }
  if (config.roles.includes('janitor') && processWide) {
    // janitor: ntfy message expiry
    const intervalMs = config.ntfy.expiry_interval_secs * 1000;
    ctx.supervisor.spawn(TASK_NTFY_EXPIRY, 'fatal', (signal) =>
      runNtfyExpiry({ store: ctx.store, metrics: ctx.metrics, logger: ctx.logger, intervalMs }, signal),
    );
  }
  if (config.roles.includes('janitor')) {
    ctx.supervisor.spawn(TASK_TOKEN_CLEANUP, 'tolerated', (signal) => runTokenCleanup(ctx, signal));
    // janitor: idle inbox users (per app) and idle NIP-9a callback URLs (once), issue 35
    // (a zero interval would sweep in a tight loop; the stale-token task logs that misconfiguration)
    if (config.cleanup.enabled && config.cleanup.interval_secs > 0)
      ctx.supervisor.spawn(TASK_STORAGE_EXPIRY, 'tolerated', (signal) =>
        runStorageExpiry(
          {
            store: ctx.store,
            idleUserTtlDays: config.inbox.idle_user_ttl_days,
            idleCallbackTtlDays: processWide ? config.nip9a.receiver.idle_callback_ttl_days : null,
            intervalMs: config.cleanup.interval_secs * 1000,
            metrics: ctx.metrics,
            logger: ctx.logger.child({ role: 'janitor', task: TASK_STORAGE_EXPIRY }),
          },
          signal,
        ),
      );
    ctx.supervisor.spawn(TASK_QUEUE_GAUGES, 'fatal', (signal) => runQueueGauges(ctx, signal));
  }
  // app platform: the send scheduler (scheduler) and the delivery log sweep (janitor)
  startPlatformRoles({ ...ctx, appId: ctx.appId ?? DEFAULT_APP_ID, onOutboundQueued: () => ctx.wake.notify('outbound') });
  return {
    nip9aGateway,
    relays: () => listener?.status() ?? [],
    userRelays: () => listener?.userRelays() ?? null,
    async stop() {
      await Promise.allSettled(stoppers.map((s) => s()));
    },
  };
}

function workerOptions(ctx: RoleContext, signal: AbortSignal, log: Logger) {
  const { config } = ctx;
  return {
    store: ctx.store,
    leaseMs: config.queue.lease_secs * 1000,
    maxAttempts: config.queue.max_attempts,
    pollMs: config.queue.poll_millis,
    signal,
    wake: ctx.wake,
    logger: log,
    metrics: ctx.metrics,
  };
}

/** engine: inbound events → control handlers, content routing → the outbound queue. */
/** Recipients' mute and contact lists from the relays, or null when `nostr.honour_user_lists` is off. */
function socialListCache(config: Config, verifier: EventVerifier, logger: Logger, metrics: Metrics): SocialListCache | null {
  if (!config.nostr.honour_user_lists) return null;
  return new SocialListCache({
    relays: config.nostr.relays,
    queryRelays: createRelayQuery({ logger, maxEventsPerRelay: socialListQueryCap() }),
    verifier,
    queryTimeoutMs: config.nostr.query_timeout_secs * 1000,
    ttlMs: config.nostr.list_cache_ttl_secs * 1000,
    maxEntries: config.nostr.list_cache_entries,
    maxMuteItems: config.nostr.mute_list_max_items,
    maxCachedMuteItems: config.nostr.list_cache_mute_items,
    logger,
    metrics,
  });
}

function startEngine(ctx: RoleContext): void {
  const { config, store, metrics } = ctx;
  const log = ctx.logger.child({ role: 'engine' });
  // The worker pool holds the default app's key; another app's control events decrypt on this thread.
  const poolHoldsKey = ctx.cryptoPool !== null && (ctx.appId ?? DEFAULT_APP_ID) === DEFAULT_APP_ID;
  const decryptor = createNip44ControlDecryptor(ctx.key.secretHex, poolHoldsKey && ctx.cryptoPool ? { pool: ctx.cryptoPool } : {});
  const profiles = createProfileResolver(config.nostr, { store, verifier: ctx.verifier, logger: log, metrics });
  // The engine handles many events side by side: their gate reads, claims and enqueues of one
  // turn reach the store as one call each.
  const batched = withTurnBatching(store);
  // Built once: the handlers below run for every inbound event.
  const contentDeps: ContentDeps = {
    store: batched,
    profiles,
    allowedPubkeys: new Set(config.service.allowed_pubkeys.map((p) => p.toLowerCase())),
    defaultPreferenceKinds: config.notification.default_preferences.kinds,
    processedEventTtlSecs: config.service.processed_event_ttl_secs,
    maxEventAgeSecs: config.notification.max_event_age_secs,
    clock: store.clock,
    logger: log,
    metrics,
    outbound: storeOutboundQueue(batched, () => ctx.wake.notify('outbound')),
    bells: contentBellRules(config),
    coalesce: coalesceIngester({ config, store, logger: log, metrics }),
    social: { lists: socialListCache(config, ctx.verifier, log, metrics) },
    countInbox: config.inbox.enabled,
  };
  const alertWordDeps: AlertWordDeps = { ...contentDeps };
  const alertWordPresence = new AlertWordPresence(contentDeps, config.inbox.alert_word_refresh_millis);
  // Issue 21: kind-1 notes, zaps and gift wraps, when `events:` turns them on.
  const optionalDeps = optionalEventDeps({ config, contentDeps, verifier: ctx.verifier, logger: log });
  const handleContent = async (envelope: InboundEnvelope): Promise<void> => {
    const optional = await handleOptionalEvent(optionalDeps, envelope);
    if (optional === 'not_optional') await withNewPostFanout(fanoutDeps, envelope, () => handleContentEvent(contentDeps, envelope));
    // After the content pushes: a watcher tagged in the event keeps the push of its own type, and
    // the alert word's push finds that (event, recipient) claim taken.
    // An event restricted to one recipient (a NIP-9a callback's owner) reaches no word watcher;
    // neither does a kind handled above (alert words match only ALERT_WORD_KINDS anyway).
    if (config.inbox.enabled && envelope.onlyRecipient === undefined && optional === 'not_optional')
      await handleAlertWords(alertWordDeps, envelope.event, alertWordPresence);
  };
  const relayEventDeps = {
    store: batched,
    allowedPubkeys: contentDeps.allowedPubkeys,
    processedEventTtlSecs: config.service.processed_event_ttl_secs,
    outbound: contentDeps.outbound,
    metrics,
  };
  const listDeps = notifyListDeps({ config, store, logger: log, metrics });
  const userRelayLists = userRelayListParts(ctx, log);
  const fanoutDeps = videoFanoutDeps({ config, store, logger: log, metrics });
  const deps: RouterDeps = {
    store,
    decryptor,
    servicePubkey: ctx.key.pubkey,
    // Every app's engine sees every control event; the default's alone reports those addressed to no app.
    otherAppPubkeys: ctx.otherAppPubkeys ?? new Set(),
    reportUnaddressed: (ctx.appId ?? DEFAULT_APP_ID) === DEFAULT_APP_ID,
    processedEventTtlSecs: config.service.processed_event_ttl_secs,
    maxAlertWordsPerUser: config.inbox.max_alert_words_per_user,
    clock: store.clock,
    logger: log,
    metrics,
    handleNotifyList: (event) => handleNotifyList(listDeps, event).then(() => undefined),
    handleContent,
    handleRelayEvent: (notice) => handleRelayEventNotice(relayEventDeps, notice).then(() => undefined),
    ...userRelayLists,
  };
  metrics.lastEventProcessed.set(Math.floor(store.clock.nowMs() / 1000));
  ctx.supervisor.spawn(TASK_EVENT_HANDLER, 'critical', (signal) =>
    runQueueWorker<InboundItem>({
      ...workerOptions(ctx, signal, log),
      queue: 'inbound',
      concurrency: INBOUND_CONCURRENCY,
      orderingKey: (item) => inboundItemOrderingKey(item.payload),
      batchSize: INBOUND_BATCH_SIZE,
      prepare: (items) =>
        prefetchInbound(
          deps,
          items.map((i) => i.payload),
        ),
      handle: async (item) => {
        await routeInbound(deps, item.payload);
        metrics.eventsProcessed.inc();
        metrics.lastEventProcessed.set(Math.floor(store.clock.nowMs() / 1000));
        return DONE;
      },
    }),
  );
}

/**
 * The outbound handler's dependencies as the delivery role wires them: the batched store steps,
 * the delivery log, the gates and the copywriter. `bench/fanout` builds its delivery stage with
 * this too, so what it measures is what the role runs.
 */
export function deliveryDepsOf(ctx: Pick<RoleContext, 'config' | 'store' | 'transports' | 'metrics' | 'appId'>, log: Logger) {
  const { config, store } = ctx;
  return {
    store,
    transports: ctx.transports,
    appId: ctx.appId ?? DEFAULT_APP_ID,
    videoRecordTtlSecs: config.service.video_coordinate_dedup_ttl_secs,
    maxEventAgeSecs: config.notification.max_event_age_secs,
    logger: log,
    metrics: ctx.metrics,
    refreshTokenActivity: batchedTokenActivity(store),
    ...(config.delivery_log.enabled ? { recordAttempt: storeDeliveryLog(store, ctx.metrics, log, ctx.appId ?? DEFAULT_APP_ID) } : {}),
    ...(config.inbox.enabled ? { readBadge: batchedBadgeReader(store) } : { readBadge: null }),
    suppressionGate: storeSuppressionGate(store),
    quietHoursGate: storeQuietHoursGate(store),
    campaignDedupTtlSecs: config.campaign_delivery.dedup_ttl_secs,
    campaignClaimTtlSecs: config.campaign_delivery.claim_ttl_secs,
    countCampaignOutcome: batchedCampaignCounter(store),
    claimCampaignDelivery: batchedCampaignClaims(store),
    campaignCopies: new CampaignCopies(store),
    expandBellItem: bellNotificationExpander(),
    recordDeliveredBell: batchedBellBookkeeping(store, {
      claimTtlSecs: config.service.processed_event_ttl_secs,
      videoRecordTtlSecs: config.service.video_coordinate_dedup_ttl_secs,
    }),
    // Checked when the configuration was loaded: compiling again cannot fail here.
    copywriter: loadCopywriter(config.templates),
    throttlePerUserPerHour: config.throttle.per_user_per_hour,
  };
}

/** delivery: the outbound queue → provider sends, with bounded concurrency. */
function startDelivery(ctx: RoleContext): void {
  const log = ctx.logger.child({ role: 'delivery' });
  const deps = deliveryDepsOf(ctx, log);
  ctx.supervisor.spawn(TASK_DELIVERY, 'critical', (signal) =>
    runQueueWorker<OutboundPayload>({
      ...workerOptions(ctx, signal, log),
      queue: 'outbound',
      concurrency: DELIVERY_CONCURRENCY,
      batchSize: DELIVERY_WINDOW,
      handle: (item) => handleOutbound(deps, item, signal),
    }),
  );
}

/** listener: relays → the inbound queue. */
function startListener(ctx: RoleContext): Listener {
  const { config, store } = ctx;
  // Events arrive in bursts from several relays: one enqueue per turn, not per event.
  const inbound = withTurnBatching(store);
  const listener = createListener({
    relays: config.nostr.relays,
    servicePubkey: ctx.key.pubkey,
    serviceSecretKeyHex: ctx.key.secretHex,
    liveKinds: [
      ...new Set([
        ...CONTROL_KINDS,
        ...config.notification.event_kinds,
        ...optionalEventKinds(config.events),
        // Users' relay lists are followed live on the configured relays (issue 36).
        ...(config.nostr.user_relays.enabled ? USER_RELAY_LIST_KINDS : []),
      ]),
    ],
    processWindowDays: config.service.process_window_days,
    notifyListHistoryLimit: config.service.notify_list_history_limit,
    eventSilenceTimeoutSecs: config.nostr.event_silence_timeout_secs,
    verifier: ctx.cryptoPool ? offThreadVerifier(ctx.verifier, ctx.cryptoPool) : ctx.verifier,
    store,
    clock: store.clock,
    logger: ctx.logger.child({ role: 'listener' }),
    metrics: ctx.metrics,
    ...userRelayListenerOptions(ctx),
    sink: async (accepted) => {
      const envelope: InboundEnvelope = accepted;
      await inbound.enqueue('inbound', { id: accepted.event.id, payload: envelope });
      ctx.wake.notify('inbound');
    },
  });
  ctx.supervisor.spawn(TASK_NOSTR_LISTENER, 'critical', async (signal) => {
    await listener.start();
    const aborted = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    await Promise.race([listener.done, aborted]);
  });
  return listener;
}

/**
 * The stale-token sweep (reference §11.3): once at start, then every `cleanup.interval_secs`. A
 * token is stale when it had neither a registration nor a delivered push for `token_max_age_days`.
 */
async function runTokenCleanup(ctx: RoleContext, signal: AbortSignal): Promise<void> {
  const { cleanup } = ctx.config;
  const log = ctx.logger.child({ role: 'janitor' });
  if (!cleanup.enabled) {
    log.warn('stale-token cleanup is disabled');
    return;
  }
  if (cleanup.interval_secs <= 0 || cleanup.token_max_age_days <= 0) {
    log.error(
      { interval: cleanup.interval_secs, maxAgeDays: cleanup.token_max_age_days },
      'stale-token cleanup misconfigured; not running',
    );
    return;
  }
  while (!signal.aborted) {
    try {
      const removed = await ctx.store.sweepStaleTokens(cleanup.token_max_age_days * 86_400_000);
      if (removed > 0) {
        ctx.metrics.tokensPruned.inc({ reason: 'stale' }, removed);
        log.info({ removed }, 'stale tokens removed');
      }
    } catch (err) {
      log.error({ err: (err as Error).message }, 'stale-token sweep failed');
    }
    await sleep(cleanup.interval_secs * 1000, signal).catch(() => undefined);
  }
}

/** Queue sizes as gauges: items dead-lettered inside a lease call are only visible this way. */
async function runQueueGauges(ctx: RoleContext, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    for (const queue of ['inbound', 'outbound'] as const) {
      try {
        const stats = await ctx.store.queueStats(queue);
        for (const state of ['ready', 'leased', 'dead'] as const)
          ctx.metrics.queueItems.set({ app: ctx.appId ?? DEFAULT_APP_ID, queue, state }, stats[state]);
      } catch (err) {
        ctx.logger.warn({ queue, err: (err as Error).message }, 'queue stats failed');
      }
    }
    await sleep(QUEUE_GAUGE_INTERVAL_MS, signal).catch(() => undefined);
  }
}
