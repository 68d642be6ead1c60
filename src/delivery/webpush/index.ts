/**
 * Building the Web Push / UnifiedPush transport from the configuration: the VAPID key (configured,
 * kept in the data directory, or the fleet's in the shared store), the request policy, and the local shortcut into our own ntfy
 * topics when `ntfy.base_url` is set.
 */
import type { Config } from '../../config/defaults.ts';
import type { TopicAuthorizer } from '../../ntfy/auth.ts';
import { NtfyError } from '../../ntfy/errors.ts';
import { contentFromBody } from '../../ntfy/publish-params.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Metrics } from '../../observability/metrics.ts';
import type { NtfyTopicStore } from '../../store/port-ntfy.ts';
import { localNtfyMatcher, LocalTopicRefusedError, type AppendToLocalTopic } from './local-ntfy.ts';
import { WebPushTransport } from './transport.ts';
import { resolveVapidKeys, type ResolvedVapidKeys } from './vapid-key.ts';

export { WebPushTransport } from './transport.ts';

/** What the local shortcut needs of our ntfy server's settings (`ntfySettings(config.ntfy)`). */
export interface LocalNtfySettings {
  /** `ntfy.base_url`; empty turns the shortcut off. */
  baseUrl: string;
  /** How long an appended message is kept (ms): the ntfy server's own retention (`ntfy.cache_duration`). */
  cacheDurationMs: number;
  /** The topic access rules an anonymous HTTP publish would meet. */
  authorizer: Pick<TopicAuthorizer, 'authenticate' | 'authorize'>;
}

export interface WebPushTransportDeps {
  config: Pick<Config, 'webpush' | 'data_dir' | 'store'>;
  localNtfy: LocalNtfySettings;
  store: Pick<NtfyTopicStore, 'appendNtfyMessage'>;
  /**
   * Keys resolved before (`resolveSharedVapidKeys`, which needs the store and is asynchronous);
   * without them, the configured or data-directory keys (`resolveVapidKeys`).
   */
  vapidKeys?: ResolvedVapidKeys;
  logger: Logger;
  metrics: Metrics;
}

/** The transport; throws at startup when a configured or stored VAPID key is unusable. */
export function createWebPushTransport(deps: WebPushTransportDeps): WebPushTransport {
  const { config, logger } = deps;
  const keys = deps.vapidKeys ?? resolveVapidKeys(config.webpush, config.data_dir);
  const matcher = localNtfyMatcher(deps.localNtfy.baseUrl);
  const transport = new WebPushTransport({
    vapidKeys: keys,
    vapidSubject: config.webpush.vapid_subject,
    ttlSecs: config.webpush.ttl_secs,
    allowPrivateEndpoints: config.webpush.allow_private_endpoints,
    requestTimeoutMs: config.webpush.request_timeout_secs * 1000,
    batchConcurrency: config.webpush.batch_concurrency,
    localNtfy: matcher ? { matcher, append: storeAppender(deps.store, deps.localNtfy) } : null,
    logger,
    metrics: deps.metrics,
  });
  logger.info(
    {
      vapidPublicKey: transport.vapidPublicKey,
      vapidKeySource: keys.source,
      ...(keys.storedNow !== undefined ? { vapidKeyStoredNow: keys.storedNow } : {}),
      localNtfy: matcher ? matcher.baseUrl : null,
    },
    'Web Push / UnifiedPush transport on',
  );
  if (config.webpush.vapid_subject === '') {
    logger.warn(
      "webpush.vapid_subject is unset: VAPID JWTs carry no contact, and Apple's push service refuses them (set a mailto: or https: contact)",
    );
  }
  if ((keys.source === 'data_dir' || keys.source === 'generated') && /^rediss?:/.test(config.store.url)) {
    // The service resolves a Redis fleet's key through the store; this would be a wiring slip.
    logger.warn('the VAPID key comes from this data directory on a shared Redis store: processes may sign with different keys');
  }
  if (config.webpush.allow_private_endpoints)
    logger.warn('webpush.allow_private_endpoints is on: push endpoints may reach loopback and private addresses');
  return transport;
}

/**
 * Appends an encrypted body the way an anonymous UnifiedPush publish to the same URL would:
 * the topic's access rules apply (an `?auth=` in the endpoint counts, as over HTTP), and the body
 * is stored by ntfy's UnifiedPush rule (`contentFromBody`: UTF-8 as text, anything else as
 * padded base64 with `encoding: base64`), so the distributor gets back the exact bytes.
 */
function storeAppender(store: Pick<NtfyTopicStore, 'appendNtfyMessage'>, settings: LocalNtfySettings): AppendToLocalTopic {
  return async (topic, body, _headers, endpoint) => {
    try {
      const identity = settings.authorizer.authenticate(undefined, endpoint.searchParams.get('auth') ?? undefined);
      settings.authorizer.authorize(identity, [topic], 'write');
    } catch (err) {
      if (err instanceof NtfyError) throw new LocalTopicRefusedError(err.message);
      throw err;
    }
    await store.appendNtfyMessage(topic, contentFromBody(body, { markdown: false, unifiedPush: true }), settings.cacheDurationMs);
  };
}
