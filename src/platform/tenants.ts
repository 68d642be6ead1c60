/**
 * What the service holds per app at run time: the app's whole configuration, its service key, its
 * store view and its push transports. The composition root (`src/service.ts`) opens them once;
 * roles run once per app over them (`src/roles/roles.ts`), and the API picks an app's by the id
 * its key resolves to ({@link AppDirectory.get}).
 *
 * Isolation is structural: an app's code only ever holds its own {@link AppRuntime.store}, a plain
 * `StorePort` that cannot reach another app's devices, claims, counters or queues (`store/open.ts`).
 * The default app's view is the service's store itself; API keys live there only (a key names its app).
 */
import type { Config } from '../config/defaults.ts';
import type { StoreLocation } from '../config/load.ts';
import { DEFAULT_APP_ID, appServiceKeyFile } from '../config/apps.ts';
import { resolveServiceKey, type ServiceKey } from '../config/service-key.ts';
import { createTransports } from '../delivery/transports.ts';
import type { PushTransport } from '../delivery/types.ts';
import { resolveSharedVapidKeys } from '../delivery/webpush/vapid-key.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { openStore } from '../store/open.ts';
import type { Clock, QueueName, StorePort } from '../store/port.ts';
import { appConfigs } from './apps.ts';

export interface AppRuntime {
  readonly id: string;
  /** The app's configuration: the top level with the app's own keys over it (the top level itself for `default`). */
  readonly config: Config;
  /** The key its control events are addressed to (`p` tag) and its NIP-44 key. */
  readonly key: ServiceKey;
  /** The app's store view. */
  readonly store: StorePort;
  /** The app's transports (its FCM project and credentials, APNs key, VAPID key); empty in processes that push nothing. */
  readonly transports: readonly PushTransport[];
}

export interface AppDirectory {
  /** Every app, the default first. */
  readonly all: readonly AppRuntime[];
  readonly default: AppRuntime;
  /** The app `appId`, or undefined when no such app is configured. */
  get(appId: string): AppRuntime | undefined;
  /** Close what the directory opened: the other apps' store views and every app's transports (the default's store is the caller's). */
  close(): Promise<void>;
}

export interface OpenAppsOptions {
  config: Config;
  location: StoreLocation;
  /** The default app's store: the service's own. */
  store: StorePort;
  key: ServiceKey;
  clock?: Clock;
  logger: Logger;
  metrics: Metrics;
  /** Build transports (roles delivery, scheduler, api). */
  withTransports: boolean;
  /** Wraps each transport built (the service records send outcomes for `/health`). */
  wrapTransport?: (transport: PushTransport) => PushTransport;
}

/** Open every configured app: service keys, store views and transports. Throws when two apps resolve to one service key. */
export async function openApps(options: OpenAppsOptions): Promise<AppDirectory> {
  const { config, logger } = options;
  const apps: AppRuntime[] = [];
  const opened: StorePort[] = [];
  const keyOwners = new Map<string, string>();
  try {
    for (const { id, config: appConfig } of appConfigs(config)) {
      const isDefault = id === DEFAULT_APP_ID;
      const appLogger = isDefault ? logger : logger.child({ app: id });
      const key = isDefault ? options.key : resolveServiceKey(appConfig.service.private_key_hex, config.data_dir, appServiceKeyFile(id));
      const owner = keyOwners.get(key.pubkey);
      if (owner !== undefined) throw new Error(`apps "${owner}" and "${id}" have the same service key ${key.npub}`);
      keyOwners.set(key.pubkey, id);
      if (!isDefault) appLogger.info({ npub: key.npub, pubkey: key.pubkey, source: key.source }, `app ${id}: service key ${key.npub}`);
      let store = options.store;
      if (!isDefault) {
        store = await openStore(options.location, { clock: options.clock, logger: appLogger, app: id });
        opened.push(store);
      }
      apps.push({
        id,
        config: appConfig,
        key,
        store,
        transports: options.withTransports ? await appTransports(options, appConfig, key, appLogger) : [],
      });
    }
  } catch (err) {
    await Promise.allSettled(opened.map((s) => s.close()));
    await Promise.allSettled(apps.flatMap((a) => a.transports.map((t) => t.close())));
    throw err;
  }
  const byId = new Map(apps.map((app) => [app.id, app]));
  return {
    all: apps,
    default: apps[0] as AppRuntime,
    get: (appId) => byId.get(appId),
    async close() {
      await Promise.allSettled(apps.flatMap((a) => a.transports.map((t) => t.close())));
      await Promise.allSettled(opened.map((s) => s.close()));
    },
  };
}

/**
 * An app's transports. Local ntfy topics are the service's (the default store), so a UnifiedPush
 * endpoint on our own server is reached from every app. A Redis fleet's generated VAPID key is
 * the default app's, shared through the default store, unless the app sets its own keys
 * (inherited like any other key).
 */
async function appTransports(options: OpenAppsOptions, appConfig: Config, key: ServiceKey, logger: Logger): Promise<PushTransport[]> {
  const vapidKeys =
    options.location.kind === 'redis' ? await resolveSharedVapidKeys(appConfig.webpush, options.config.data_dir, options.store) : undefined;
  const transports = createTransports(appConfig, logger, options.metrics, options.store, vapidKeys, key.secretHex);
  return options.wrapTransport ? transports.map(options.wrapTransport) : transports;
}

/** Every app's queues and since when their oldest due item has waited (`/health`'s stalled queues). */
export async function oldestDueOfEveryQueue(apps: AppDirectory): Promise<Array<{ queue: string; dueAtMs: number | null }>> {
  const queues: QueueName[] = ['inbound', 'outbound', 'nip9a'];
  const looks = apps.all.flatMap((app) =>
    queues.map(async (queue) => ({
      queue: app === apps.default ? queue : `${queue}@${app.id}`,
      dueAtMs: await app.store.oldestDueAtMs(queue),
    })),
  );
  return Promise.all(looks);
}
