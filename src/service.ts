import { mkdirSync } from 'node:fs';
import { storeOutboundQueue } from './engine/outbound-queue.ts';
import { dirname } from 'node:path';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import type { Config } from './config/defaults.ts';
import { resolveStoreLocation, type StoreLocation } from './config/load.ts';
import { parseListenAddr } from './config/validate.ts';
import { resolveServiceKey, type ServiceKey } from './config/service-key.ts';
import type { Clock, StorePort } from './store/port.ts';
import { describeStoreLocation, openStore } from './store/open.ts';
import { storeFaultsFromEnv, withStoreFaults } from './store/fault-injection.ts';
import { createLogger, type Logger } from './observability/logger.ts';
import { Metrics } from './observability/metrics.ts';
import { Supervisor } from './roles/supervisor.ts';
import { startRoles, type StartedRoles } from './roles/roles.ts';
import { sumUserRelays, userRelayRegistrationsOfApps } from './roles/user-relays.ts';
import { sendApiSettings } from './roles/platform.ts';
import { createApiApp } from './api/app.ts';
import { createEventVerifier, type EventVerifier } from './nostr/event.ts';
import { defaultSecp256k1Selection } from './nostr/secp256k1.ts';
import { CryptoWorkerPool, offThreadVerifier } from './nostr/crypto-worker-pool.ts';
import { CONVERSATION_KEY_CACHE_ENTRIES } from './engine/nip44-decryptor.ts';
import { unwrapTransport } from './delivery/encrypted-payload.ts';
import { directMessageRoutes } from './api/direct-message.ts';
import { inboxRoutes } from './api/inbox.ts';
import { attachInboxSockets, INBOX_SOCKET_PATH, type InboxSockets } from './api/inbox-socket.ts';
import { adminAnnouncementRoutes } from './api/admin-announcements.ts';
import { dlqRoutes } from './api/admin/dlq.ts';
import { nip98PublicUrlWarning, type Nip98Auth } from './api/nip98-auth.ts';
import { nip98ReplayGuard } from './nostr/nip98.ts';
import { webPushKeyRoutes } from './api/webpush-key.ts';
import { createCallbackReceiver, NIP9A_CALLBACK_LARGER_BODY, nip9aCallbackRoutes } from './api/nip9a-callbacks.ts';
import { BodyLimits, bodyLimitFront, countedRefusals, LimitedRequest } from './api/body-limit.ts';
import { nip9aCallbackFront } from './api/nip9a-callback-front.ts';
import { createClientAddressPolicy } from './api/client-address.ts';
import { createRateLimits } from './api/rate-limits.ts';
import { WebPushTransport } from './delivery/webpush/transport.ts';
import { createNtfyServer, NtfyError } from './ntfy/index.ts';
import { createServer, type RequestListener, type Server } from 'node:http';
import { createPlatformApi, type PlatformApi } from './api/platform.ts';
import { configuredApps, DEFAULT_APP_ID, sendTypeCategories } from './platform/apps.ts';
import { oldestDueOfEveryQueue, openApps, type AppDirectory } from './platform/tenants.ts';
import { transportStates } from './platform/transport-states.ts';
import { SendWakeup } from './platform/send-worker.ts';
import { gatewaySettings } from './nip9a/gateway/config.ts';
import { gatewayHttpRoutes, registrationLargerBody } from './nip9a/gateway/http.ts';
import { gatewayMetrics } from './nip9a/gateway/metrics.ts';
import { attachNip9aRelayEndpoint, NIP9A_RELAY_PATH } from './nip9a/gateway/relay-endpoint.ts';
import { FleetReporter, mountConsole, TASK_FLEET_REPORTER } from './console/index.ts';
import { listenFailure, storeOpenFailure } from './startup-errors.ts';
import {
  HEALTH_RELAY_OBSERVE_INTERVAL_MS,
  HealthMonitor,
  notReadyReason,
  SendHealth,
  withSendHealth,
} from './observability/health-monitor.ts';
import { describeTopology } from './store/port-topology.ts';
import { STORE_SLOTS_FLAG, StoreTopologyWatch, TASK_STORE_TOPOLOGY } from './store/topology-watch.ts';
import { QueueSignal } from './store/queue-work.ts';

/** The verifier of a process whose roles check no signatures: using it is a wiring bug, said plainly. */
function unavailableVerifier(roles: readonly string[]): EventVerifier {
  return {
    verify() {
      throw new Error(
        `no signature verifier in a process with roles ${roles.join(',')} (only listener, engine, scheduler, gateway and api load it)`,
      );
    },
  };
}

/** The version `--version`, the OpenAPI document and the console name (package.json's; a test keeps them equal). */
export const SERVICE_VERSION = '0.1.0';

/** How long a graceful stop waits for tasks before giving up on them. */
export const SHUTDOWN_GRACE_MS = 10_000;

export interface ServiceOverrides {
  logger?: Logger;
  /** A manual clock for tests; by default the store's own clock (Redis TIME or the process clock). */
  clock?: Clock;
}

/** A running service: what `serve` holds on to, and what tests drive. */
export interface RunningService {
  config: Config;
  key: ServiceKey;
  store: StorePort;
  metrics: Metrics;
  supervisor: Supervisor;
  logger: Logger;
  /** Wakes this process's queue consumers (for tests and benchmarks that enqueue straight into the store). */
  wake: QueueSignal;
  /** The bound HTTP address when the api role runs. */
  httpAddress: AddressInfo | null;
  /** The app platform API (send API, admin routes) when the api role runs; its `adminKeys` guards admin routers. */
  platform: PlatformApi | null;
  /** The body limit of every route the HTTP app serves (null without HTTP), as applied before routing. */
  bodyLimits: BodyLimits | null;
  /** Every configured app's configuration, service key, store view and transports (tenancy); `store` and `key` above are the default's. */
  apps: AppDirectory;
  /** Stop every task, close the server and the store. */
  stop(): Promise<void>;
}

/**
 * The composition root: picks the store adapter, wires the roles the config names, and starts the
 * HTTP server. Nothing else in the service is global.
 */
export async function startService(config: Config, overrides: ServiceOverrides = {}): Promise<RunningService> {
  const logger = overrides.logger ?? createLogger({ level: config.log.level });
  // Which libsecp256k1 this process (and its crypto workers) use, said once; a forced backend that
  // is unavailable stops the start here. Without the native addon, the WASM build (about 8 MiB more
  // resident) is loaded on first use only, so processes of roles that never check a signature or
  // derive a key (pusher, janitor) do not load it.
  const secp256k1 = defaultSecp256k1Selection();
  if (secp256k1.degraded) logger.warn({ secp256k1: secp256k1.backend.kind }, secp256k1.summary);
  else logger.info({ secp256k1: secp256k1.backend.kind }, secp256k1.summary);
  const key = resolveServiceKey(config.service.private_key_hex, config.data_dir);
  logger.info({ npub: key.npub, pubkey: key.pubkey, source: key.source }, `service key ${key.npub}`);

  const location = resolveStoreLocation(config);
  const opened = await openServiceStore(location, overrides.clock, logger);
  logger.info({ store: describeStoreLocation(location) }, 'store open');
  // Tests of the retry paths only (NODE_ENV=test): store steps applied and still reported failed,
  // once the start-up is done (issue 42, store/fault-injection.ts).
  const storeFaults = storeFaultsFromEnv();
  let storeFaultsArmed = false;
  if (storeFaults !== undefined)
    logger.warn({ fraction: storeFaults }, 'test store faults: store calls will be applied and then reported failed');
  const store = storeFaults === undefined ? opened : withStoreFaults(opened, storeFaults, () => storeFaultsArmed);

  const metrics = new Metrics({ defaultMetrics: true });
  const supervisor = new Supervisor(logger);
  const wake = new QueueSignal();
  const sendWakeup = new SendWakeup();
  // The NIP-9a gateway checks relay events (role gateway); the api role checks NIP-98 signatures of the
  // user API, registrations and NIP-42 AUTH on the gateway's relay endpoint, and the events NIP-9a relays
  // include in callbacks.
  const needsVerifier = config.roles.some(
    (role) => role === 'engine' || role === 'listener' || role === 'scheduler' || role === 'gateway' || role === 'api',
  );
  const verifier = needsVerifier ? await createEventVerifier() : unavailableVerifier(config.roles);
  // The engine and listener decrypt and verify off the main thread; the NIP-9a gateway verifies
  // the relay events it matched (bench/nip9a: the checks were a fifth of its main thread).
  const needsDecryption = config.roles.includes('engine') || config.roles.includes('listener');
  const needsCrypto = needsDecryption || config.roles.includes('gateway');
  const cryptoPool =
    needsCrypto && config.engine.crypto_workers > 0
      ? new CryptoWorkerPool({
          size: config.engine.crypto_workers,
          secretHex: needsDecryption ? key.secretHex : null,
          cacheCapacity: CONVERSATION_KEY_CACHE_ENTRIES,
        })
      : null;
  await cryptoPool?.ready;

  // The scheduler's new-post fan-out sends its pages itself, so it needs the transports too.
  const needsTransports = config.roles.includes('delivery') || config.roles.includes('api') || config.roles.includes('scheduler');
  // Each app's service key, store view and transports (its FCM project, APNs and VAPID keys).
  // A Redis fleet shares one VAPID key through the store; a SQLite service keeps it in its data directory.
  // Every send's outcome, for /health's "transport failing" (health-monitor.ts).
  const sendHealth = new SendHealth(() => store.clock.nowMs());
  const apps = await openApps({
    config,
    location,
    store,
    key,
    ...(overrides.clock ? { clock: overrides.clock } : {}),
    logger,
    metrics,
    withTransports: needsTransports,
    wrapTransport: (transport) => withSendHealth(transport, sendHealth),
  });
  const transports = [...apps.default.transports];
  // ntfy: publishing is part of the api role, subscriptions of the pusher role; either serves HTTP.
  const servesHttp = config.roles.includes('api') || config.roles.includes('pusher');
  const ntfy = servesHttp
    ? createNtfyServer({
        store,
        config: config.ntfy,
        logger,
        metrics,
        publish: config.roles.includes('api'),
        subscribe: config.roles.includes('pusher'),
      })
    : null;
  // The roles once per app, over its own configuration, key, store view and transports.
  const appRoles: StartedRoles[] = [];
  for (const app of apps.all) {
    const isDefault = app === apps.default;
    appRoles.push(
      await startRoles({
        appId: app.id,
        otherAppPubkeys: new Set(apps.all.filter((other) => other !== app).map((other) => other.key.pubkey)),
        config: app.config,
        key: app.key,
        store: app.store,
        metrics,
        supervisor: isDefault ? supervisor : supervisor.scoped(app.id),
        wake,
        verifier,
        cryptoPool,
        transports: [...app.transports],
        logger: isDefault ? logger : logger.child({ app: app.id }),
        ntfyHub: ntfy?.hub ?? null,
        sendWakeup,
      }),
    );
  }
  const roles = {
    nip9aGateway: appRoles[0]?.nip9aGateway ?? null,
    relays: () => appRoles.flatMap((r) => r.relays()),
    userRelays: () => sumUserRelays(appRoles.map((r) => r.userRelays())),
    stop: async () => {
      await Promise.allSettled(appRoles.map((r) => r.stop()));
    },
  };
  // Every process reports to the console (heartbeat and metric samples), whatever its roles.
  const reporter = new FleetReporter({
    store,
    metrics,
    logger: logger.child({ component: 'console-reporter' }),
    roles: config.roles,
    version: SERVICE_VERSION,
    heartbeatIntervalMs: config.console.heartbeat_interval_secs * 1000,
    sampleIntervalMs: config.console.sample_interval_secs * 1000,
    tasks: () => supervisor.list(),
    relays: () => appRoles.flatMap((r, i) => r.relays().map((relay) => ({ ...relay, app: apps.all[i]?.id ?? DEFAULT_APP_ID }))),
    userRelays: () => roles.userRelays(),
    ntfySubscribers: () => ntfy?.hub?.topicSubscriberCounts() ?? {},
  });
  supervisor.spawn(TASK_FLEET_REPORTER, 'fatal', (signal) => reporter.run(signal));
  // On a Redis Cluster, /health also says whether every hash slot is served (store_slots).
  const initialTopology = await store.topology();
  logger.info({ store: describeTopology(initialTopology) }, 'store topology');
  const topologyWatch = initialTopology.kind === 'redis-cluster' ? new StoreTopologyWatch(store, logger) : null;
  if (topologyWatch) supervisor.spawn(TASK_STORE_TOPOLOGY, 'fatal', (signal) => topologyWatch.run(signal));
  const criticalFlags = (): Record<string, boolean> => ({
    ...supervisor.criticalFlags(),
    ...(topologyWatch ? { [STORE_SLOTS_FLAG]: topologyWatch.servesEverySlot } : {}),
  });

  const health = new HealthMonitor({
    nowMs: () => store.clock.nowMs(),
    relayGraceMs: config.health.relay_grace_secs * 1000,
    transportFailingMs: config.health.transport_failing_secs * 1000,
    relays: () => roles.relays(),
    sends: sendHealth,
    ping: () => store.ping(),
    queueAgeMs: config.health.queue_age_secs * 1000,
    oldestDue: () => oldestDueOfEveryQueue(apps),
  });
  const relayWatch = setInterval(() => health.observe(), HEALTH_RELAY_OBSERVE_INTERVAL_MS).unref();
  let serving = false;
  let stopping: Promise<void> | null = null;

  let server: Server | null = null;
  let nip9aEndpoint: { close(): void } | null = null;
  let httpAddress: AddressInfo | null = null;
  let platform: PlatformApi | null = null;
  let inboxSockets: InboxSockets | null = null;
  let bodyLimits: BodyLimits | null = null;
  let stopUserRelayFetchers: () => Promise<unknown> = () => Promise.resolve();
  const nip98Auth: Nip98Auth = {
    verifier,
    replay: nip98ReplayGuard(store),
    clock: store.clock,
    ...(config.server.public_url === '' ? {} : { publicUrl: config.server.public_url }),
    logger: logger.child({ route: 'nip98' }),
  };
  // Who the client is and whether it came over https: the socket, or a trusted proxy's word
  // (server.trusted_proxies). One policy for every per-client limit and bound.
  const clientAddresses = createClientAddressPolicy(config.server.trusted_proxies);
  const nip98Warning = nip98PublicUrlWarning(config);
  if (nip98Warning) logger.warn(nip98Warning);
  if (servesHttp) {
    // Per-client limits of every public route (docs/security.md), keyed by the client address the
    // operator's proxies (server.trusted_proxies) vouch for; counters in the default app's store.
    const rateLimits = createRateLimits({
      config,
      sendApiOf: (appId) => apps.get(appId)?.config.send_api,
      store,
      policy: clientAddresses,
      metrics,
      logger: logger.child({ component: 'rate-limits' }),
    });
    const app = createApiApp({
      health: {
        pubkey: () => key.pubkey,
        criticalFlags,
        problems: () => health.problems(),
        notReady: () => notReadyReason({ serving, stopping: stopping !== null, ping: () => store.ping() }),
      },
      metrics,
      logger,
      document: { version: SERVICE_VERSION, publicUrl: config.server.public_url },
    });
    if (config.roles.includes('api'))
      app.route(
        '/',
        directMessageRoutes({
          internalApiToken: config.server.internal_api_token,
          store,
          outbound: storeOutboundQueue(store, () => wake.notify('outbound')),
          allowedPubkeys: new Set(config.service.allowed_pubkeys.map((p) => p.toLowerCase())),
          defaultPreferenceKinds: config.notification.default_preferences.kinds,
          processedEventTtlSecs: config.service.processed_event_ttl_secs,
          countInbox: config.inbox.enabled,
          metrics,
          logger: logger.child({ route: 'direct-message' }),
        }),
      );
    const nip9aIntake = config.roles.includes('api')
      ? {
          store,
          settings: gatewaySettings(config.nip9a),
          metrics: gatewayMetrics(metrics),
          logger: logger.child({ component: 'nip9a-gateway' }),
          onChange: () => void roles.nip9aGateway?.changed(),
        }
      : null;
    if (nip9aIntake)
      app.route(
        '/',
        gatewayHttpRoutes({
          ...nip9aIntake,
          verifier,
          servicePubkey: key.pubkey,
          auth: { ...nip98Auth, logger: nip9aIntake.logger, limits: rateLimits.caller('nip9a_registrations') },
        }),
      );
    const nip9aCallbackDeps = config.roles.includes('api')
      ? {
          store,
          // A process with the engine has the crypto pool: included events are checked on its threads.
          verifier: cryptoPool ? offThreadVerifier(verifier, cryptoPool) : verifier,
          publicUrl: config.server.public_url,
          receiver: config.nip9a.receiver,
          clientAddresses,
          contentKinds: config.notification.event_kinds,
          onQueued: () => wake.notify('inbound'),
          rateLimits,
          metrics,
          logger: logger.child({ route: 'nip9a-callbacks' }),
        }
      : null;
    // One receiver (its rate limiter, its turn's receipts) behind the Hono route and the Node front below.
    const nip9aCallbacks = nip9aCallbackDeps ? { deps: nip9aCallbackDeps, receiver: createCallbackReceiver(nip9aCallbackDeps) } : null;
    if (nip9aCallbacks) app.route('/', nip9aCallbackRoutes(nip9aCallbacks.deps, nip9aCallbacks.receiver));
    // Users' relays (issue 36): an HTTP registration asks for the user's relay lists as a 3079 does.
    const userRelayRegistrations = config.roles.includes('api')
      ? userRelayRegistrationsOfApps(apps.all, { metrics, verifier, logger })
      : null;
    if (userRelayRegistrations) stopUserRelayFetchers = () => userRelayRegistrations.close();
    if (config.roles.includes('api')) {
      const webPush = transports.map(unwrapTransport).find((t): t is WebPushTransport => t instanceof WebPushTransport);
      app.route('/', webPushKeyRoutes(webPush ? webPush.vapidPublicKey : null));
      platform = createPlatformApi({
        store,
        apps: configuredApps(config),
        appSettings: sendApiSettings(apps),
        typeCategories: sendTypeCategories(config.send_api.types),
        maxRecipients: config.send_api.max_recipients,
        idempotencyTtlSecs: config.send_api.idempotency_ttl_secs,
        recordTtlSecs: config.send_api.record_ttl_secs,
        retentionDays: config.delivery_log.retention_days,
        onCreated: () => sendWakeup.notify(),
        metrics,
        logger: logger.child({ route: 'platform' }),
        version: SERVICE_VERSION,
        campaignDedupTtlSecs: config.campaign_delivery.dedup_ttl_secs,
        nip98: { ...nip98Auth, logger: logger.child({ route: 'platform' }) },
        rateLimits,
      });
      app.route('/', platform.app);
      app.route(
        '/',
        inboxRoutes({
          store,
          storeOf: (appId) => apps.get(appId)?.store,
          auth: { ...nip98Auth, limits: rateLimits.caller('user_api') },
          metrics,
          logger: logger.child({ route: 'inbox' }),
          throttlePerUserPerHour: config.throttle.per_user_per_hour,
          userRelaysOf: (appId) => userRelayRegistrations?.of(appId),
          clientAddresses,
          maxAlertWordsPerUser: config.inbox.max_alert_words_per_user,
          maxAlertWordUsersPerAddressPerDay: config.inbox.max_alert_word_users_per_address_per_day,
          maxUsersPerAddressPerDay: config.inbox.max_users_per_address_per_day,
        }),
      );
      // Admin routes behind the app's admin API keys (the X-App rule), on that app's store view.
      app.route('/', dlqRoutes({ auth: platform.adminKeys, logger: logger.child({ route: 'admin-dlq' }), metrics }));
      app.route(
        '/',
        adminAnnouncementRoutes({
          auth: platform.adminKeys,
          metrics,
          logger: logger.child({ route: 'admin' }),
          onPushCreated: () => sendWakeup.notify(),
        }),
      );
    }
    if (config.roles.includes('api') && config.console.enabled) {
      mountConsole(app, {
        store,
        apps: apps.all.map((a) => ({ id: a.id, store: a.store, transports: transportStates(a.config) })),
        publicUrl: config.server.public_url,
        clientAddress: clientAddresses,
        sessionTtlMs: config.console.session_ttl_secs * 1000,
        sampleIntervalMs: config.console.sample_interval_secs * 1000,
        deliveryLogRetentionMs: config.delivery_log.retention_days * 86_400_000,
        sendApi: { settingsOf: sendApiSettings(apps), onCreated: () => sendWakeup.notify() },
        metrics,
        logger,
        loginLimit: rateLimits.perAddress(rateLimits.consoleLogin),
      });
    }
    // Last: ntfy's single-segment routes (`/{topic}`) must not shadow the service's own paths.
    if (ntfy) app.route('/', ntfy.routes);
    const listen = parseListenAddr(config.server.listen_addr);
    if (!listen) throw new Error(`server.listen_addr "${config.server.listen_addr}" is not host:port`);
    const handleWithHono = getRequestListener(app.fetch);
    // Hono answers errors itself (500); node:http ignores a listener's result, so nothing awaits it.
    const honoListener: RequestListener = (req, res) => void handleWithHono(req, res);
    const withNtfy = ntfy ? ntfy.frontListener(honoListener) : honoListener;
    const routed = nip9aCallbacks ? nip9aCallbackFront(nip9aCallbacks.receiver, nip9aCallbacks.deps.logger, withNtfy) : withNtfy;
    // One body limit before any of the listeners above, from the routes the app serves (issue 35).
    bodyLimits = new BodyLimits(config.server.max_body_bytes, app.routes, {
      larger: [
        ...(platform?.largerBodies ?? []),
        ...(nip9aCallbacks ? [NIP9A_CALLBACK_LARGER_BODY] : []),
        ...(nip9aIntake ? [registrationLargerBody(nip9aIntake.settings)] : []),
        ...(ntfy?.largerBodies ?? []),
      ],
      ntfyHandlers: new Set(ntfy?.routes.routes.map((route) => route.handler)),
    });
    const refusals = countedRefusals(metrics, logger, (route) =>
      ntfy ? ntfy.bodyTooLarge(route.path) : new NtfyError('INTERNAL').toJSON(),
    );
    const http = createServer({ IncomingMessage: LimitedRequest }, bodyLimitFront(bodyLimits, refusals, routed));
    httpAddress = await new Promise<AddressInfo>((resolve, reject) => {
      http.once('error', (err) => reject(listenFailure(listen.host, listen.port, err)));
      http.listen(listen.port, listen.host, () => resolve(http.address() as AddressInfo));
    });
    server = http;
    ntfy?.attach(http, new Set([INBOX_SOCKET_PATH, NIP9A_RELAY_PATH]));
    if (config.roles.includes('api'))
      inboxSockets = attachInboxSockets(http, {
        store,
        storeOf: (appId) => apps.get(appId)?.store,
        auth: nip98Auth,
        metrics,
        logger: logger.child({ route: 'inbox-socket' }),
        clientAddresses,
        maxSocketsPerPubkey: config.inbox.max_sockets_per_pubkey,
        maxSocketsPerAddress: config.inbox.max_sockets_per_address,
        maxUsersPerAddressPerDay: config.inbox.max_users_per_address_per_day,
        otherUpgradesHandled: ntfy?.hub !== null && ntfy?.hub !== undefined,
        ...(rateLimits.enabled ? { limits: { ...rateLimits.nip98('inbox_socket'), addressOf: rateLimits.addressOfIncoming } } : {}),
        pathsServedElsewhere: nip9aIntake ? new Set([NIP9A_RELAY_PATH]) : new Set(),
      });
    if (nip9aIntake)
      nip9aEndpoint = attachNip9aRelayEndpoint(
        {
          ...nip9aIntake,
          verifier,
          clock: store.clock,
          ...(rateLimits.enabled
            ? { limits: { ...rateLimits.nip98('nip9a_registrations'), addressOf: rateLimits.addressOfIncoming } }
            : {}),
        },
        http,
      );
    logger.info({ address: `${httpAddress.address}:${httpAddress.port}` }, 'http listening');
  }

  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      clearInterval(relayWatch);
      supervisor.shutdown();
      await roles.stop();
      await supervisor.join(SHUTDOWN_GRACE_MS);
      // Open subscription streams would hold server.close() forever.
      ntfy?.close();
      await inboxSockets?.close();
      nip9aEndpoint?.close();
      if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
      await stopUserRelayFetchers();
      await reporter.remove();
      await apps.close();
      await cryptoPool?.close();
      await store.close();
      logger.info('stopped');
    })());

  storeFaultsArmed = true;
  serving = true;
  return { config, key, store, metrics, supervisor, logger, wake, httpAddress, platform, bodyLimits, apps, stop };
}

/** The store, or a StartupError (startup-errors.ts) that says in one line why it cannot be opened. */
async function openServiceStore(location: StoreLocation, clock: Clock | undefined, logger: Logger): Promise<StorePort> {
  try {
    if (location.kind === 'sqlite' && location.path !== ':memory:') mkdirSync(dirname(location.path), { recursive: true });
    return await openStore(location, { clock, logger });
  } catch (err) {
    throw storeOpenFailure(describeStoreLocation(location), err);
  }
}
