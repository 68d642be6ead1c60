import type { Config } from '../config/defaults.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { StorePort } from '../store/port.ts';
import type { PushTransport } from './types.ts';
import { createFcmTransport } from './fcm/sender.ts';
import { apnsOptionsFromConfig, createApnsTransport } from './apns/sender.ts';
import { createWebPushTransport } from './webpush/index.ts';
import type { ResolvedVapidKeys } from './webpush/vapid-key.ts';
import { ntfySettings } from '../ntfy/config.ts';
import { withPayloadEncryption } from './encrypted-payload.ts';

/**
 * The transports the configuration enables. A provider without credentials is off, and the
 * service says so loudly at start: devices on it are kept, but nothing reaches them. Web Push /
 * UnifiedPush needs no credentials (its VAPID key is generated) and is always on; `store` carries
 * its pushes to endpoints on our own ntfy topics; `vapidKeys` are the fleet's shared ones (Redis);
 * `serviceSecretHex` (the service key) encrypts payloads for devices registered with `encryptTo`.
 */
export function createTransports(
  config: Config,
  logger: Logger,
  metrics: Metrics,
  store: StorePort,
  vapidKeys?: ResolvedVapidKeys,
  serviceSecretHex?: string,
): PushTransport[] {
  const transports: PushTransport[] = [];
  const fcm = createFcmTransport({
    projectId: config.firebase.project_id,
    credentialsPath: config.firebase.credentials_path,
    apiBaseUrl: config.firebase.api_base_url,
    http2Client: config.delivery.http2_client,
    logger: logger.child({ transport: 'fcm' }),
    metrics,
  });
  if (fcm) {
    transports.push(fcm);
    logger.info(
      { project: config.firebase.project_id, apiBaseUrl: config.firebase.api_base_url, http2Client: config.delivery.http2_client },
      'FCM transport on',
    );
  } else {
    logger.warn('FCM is off: set firebase.credentials_path (NOSTR_PUSH__FIREBASE__CREDENTIALS_PATH) to a service-account JSON');
  }
  const apns = createApnsTransport(apnsOptionsFromConfig(config, logger.child({ transport: 'apns' }), metrics));
  if (apns) {
    transports.push(apns);
    logger.info(
      { bundleId: config.apns.bundle_id, apiBaseUrl: config.apns.api_base_url, sandbox: config.apns.sandbox },
      'APNs transport on',
    );
  } else {
    logger.warn(
      'APNs is off: devices registered with transport "apns" get nothing until apns.key_path, key_id, team_id and bundle_id are set',
    );
  }
  transports.push(
    createWebPushTransport({
      config,
      localNtfy: ntfySettings(config.ntfy),
      store,
      ...(vapidKeys ? { vapidKeys } : {}),
      logger: logger.child({ transport: 'webpush' }),
      metrics,
    }),
  );
  // Devices registered with `encryptTo` get their data map NIP-44 encrypted from the service key.
  return serviceSecretHex === undefined ? transports : transports.map((t) => withPayloadEncryption(t, serviceSecretHex));
}
