/**
 * The app platform's tasks in the roles: the send scheduler (scheduler role) and the delivery
 * log sweep (janitor role). Called from `roles/roles.ts`.
 */
import type { Config } from '../config/defaults.ts';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { type Supervisor } from './supervisor.ts';
import type { StorePort } from '../store/port.ts';
import { sendTypeCategories } from '../platform/apps.ts';
import type { AppDirectory, AppRuntime } from '../platform/tenants.ts';
import type { SendApiAppSettings } from '../api/notifications.ts';
import { runSendScheduler, SendWakeup, TASK_SEND_SCHEDULER } from '../platform/send-worker.ts';
import { runCampaignScheduler, TASK_CAMPAIGN_SCHEDULER } from '../platform/campaign-worker.ts';
import { runDigestWorker, TASK_QUIET_HOURS_DIGEST } from '../platform/digest-worker.ts';
import { sleep } from '../util/async.ts';

export const TASK_DELIVERY_LOG_SWEEP = 'delivery_log_sweep';
/** Entries one sweep call removes; the sweep repeats until a call removes fewer. */
export const DELIVERY_LOG_SWEEP_BATCH = 5000;

export interface PlatformRoleContext {
  /** The app these tasks serve (`store` is its view). */
  appId: string;
  config: Config;
  store: StorePort;
  supervisor: Supervisor;
  metrics: Metrics;
  logger: Logger;
  /** Wakes this process's scheduler when its API created a send; absent, the scheduler polls. */
  sendWakeup?: SendWakeup;
  /** Wakes this process's delivery stage. */
  onOutboundQueued: () => void;
}

export function startPlatformRoles(ctx: PlatformRoleContext): void {
  const { config, store } = ctx;
  if (config.roles.includes('scheduler')) {
    const log = ctx.logger.child({ role: 'scheduler', task: TASK_SEND_SCHEDULER });
    const wakeup = ctx.sendWakeup ?? new SendWakeup();
    const deps = {
      store,
      typeCategories: sendTypeCategories(config.send_api.types),
      defaultPreferenceKinds: config.notification.default_preferences.kinds,
      allowedPubkeys: new Set(config.service.allowed_pubkeys.map((p) => p.toLowerCase())),
      pageSize: config.send_api.page_size,
      leaseMs: config.send_api.lease_secs * 1000,
      pollMs: config.send_api.poll_millis,
      claimTtlSecs: config.service.processed_event_ttl_secs,
      logEnabled: config.delivery_log.enabled,
      wakeup,
      onQueued: ctx.onOutboundQueued,
      logger: log,
      metrics: ctx.metrics,
    };
    ctx.supervisor.spawn(TASK_SEND_SCHEDULER, 'critical', (signal) => runSendScheduler(deps, signal));
    // Campaigns wake on the same signal as sends: the API notifies it when it created either.
    const campaigns = config.campaign_delivery;
    const campaignDeps = {
      store,
      allowedPubkeys: deps.allowedPubkeys,
      pageSize: campaigns.page_size,
      defaultPreferenceKinds: config.notification.default_preferences.kinds,
      leaseMs: campaigns.lease_secs * 1000,
      pollMs: campaigns.poll_millis,
      wakeup,
      onQueued: ctx.onOutboundQueued,
      logger: ctx.logger.child({ role: 'scheduler', task: TASK_CAMPAIGN_SCHEDULER }),
      metrics: ctx.metrics,
    };
    ctx.supervisor.spawn(TASK_CAMPAIGN_SCHEDULER, 'critical', (signal) => runCampaignScheduler(campaignDeps, signal));
    const digestDeps = {
      store,
      leaseMs: config.quiet_hours.lease_secs * 1000,
      pollMs: config.quiet_hours.poll_millis,
      onQueued: ctx.onOutboundQueued,
      logger: ctx.logger.child({ role: 'scheduler', task: TASK_QUIET_HOURS_DIGEST }),
    };
    ctx.supervisor.spawn(TASK_QUIET_HOURS_DIGEST, 'critical', (signal) => runDigestWorker(digestDeps, signal));
  }
  if (config.roles.includes('janitor') && config.delivery_log.enabled) {
    ctx.supervisor.spawn(TASK_DELIVERY_LOG_SWEEP, 'tolerated', (signal) => runDeliveryLogSweep(ctx, signal));
  }
}

/** Every `sweep_interval_secs`, remove the app's entries older than `retention_days`. */
async function runDeliveryLogSweep(ctx: PlatformRoleContext, signal: AbortSignal): Promise<void> {
  const { delivery_log: settings } = ctx.config;
  const log = ctx.logger.child({ role: 'janitor', task: TASK_DELIVERY_LOG_SWEEP });
  const { appId } = ctx;
  while (!signal.aborted) {
    try {
      const cutoffMs = ctx.store.clock.nowMs() - settings.retention_days * 86_400_000;
      let removed = 0;
      for (;;) {
        const batch = await ctx.store.sweepDeliveryLog(appId, cutoffMs, DELIVERY_LOG_SWEEP_BATCH);
        removed += batch;
        if (batch < DELIVERY_LOG_SWEEP_BATCH) break;
      }
      if (removed > 0) log.info({ appId, removed }, 'delivery log entries past retention removed');
    } catch (err) {
      log.error({ appId, err: (err as Error).message }, 'delivery log sweep failed');
    }
    await sleep(settings.sweep_interval_secs * 1000, signal).catch(() => undefined);
  }
}

/** The send API settings of every configured app, by id (its store view and `send_api` keys). */
export function sendApiSettings(apps: AppDirectory): (appId: string) => SendApiAppSettings {
  const settings = new Map(apps.all.map((app) => [app.id, appSendApiSettings(app)]));
  return (appId) => {
    const found = settings.get(appId);
    // The API resolves app ids against the configured list before it asks; anything else is a wiring bug.
    if (!found) throw new Error(`no app ${appId}`);
    return found;
  };
}

function appSendApiSettings(app: AppRuntime): SendApiAppSettings {
  const { send_api: sendApi, delivery_log: log } = app.config;
  return {
    store: app.store,
    typeCategories: sendTypeCategories(sendApi.types),
    maxRecipients: sendApi.max_recipients,
    idempotencyTtlSecs: sendApi.idempotency_ttl_secs,
    recordTtlSecs: sendApi.record_ttl_secs,
    openedClaimTtlSecs: log.retention_days * 86_400,
    retentionDays: log.retention_days,
  };
}
