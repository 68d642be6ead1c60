/**
 * The dependencies of the bell stages, built from configuration, for the role wiring
 * (`roles.ts`): the notify-list handler and the video hook on the engine, the fan-out worker on
 * the scheduler.
 */
import type { Config } from '../../config/defaults.ts';
import type { EventVerifier } from '../../nostr/event.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Metrics } from '../../observability/metrics.ts';
import type { StorePort } from '../../store/port.ts';
import { createProfileResolver } from '../profiles.ts';
import type { OutboundQueue } from '../outbound-queue.ts';
import type { NewPostFanoutDeps } from './fanout-worker.ts';
import type { NotifyListDeps } from './notify-list.ts';
import type { VideoFanoutDeps } from './video.ts';

/** Health flag of the fan-out worker (divine's name, so its probes carry over). */
export const TASK_NEW_POST_FANOUT = 'new_post_fanout';

export interface BellWiringContext {
  config: Config;
  store: StorePort;
  logger: Logger;
  metrics: Metrics;
}

export function notifyListDeps(ctx: BellWiringContext): NotifyListDeps {
  return { store: ctx.store, maxCreators: ctx.config.service.notify_list_max_creators, logger: ctx.logger, metrics: ctx.metrics };
}

export function videoFanoutDeps(ctx: BellWiringContext): VideoFanoutDeps {
  return {
    store: ctx.store,
    processedEventTtlSecs: ctx.config.service.processed_event_ttl_secs,
    maxEventAgeSecs: ctx.config.notification.max_event_age_secs,
    clock: ctx.store.clock,
    logger: ctx.logger,
  };
}

/** What the content handler needs for the bell fallback of a muted video mention. */
export function contentBellRules(config: Config): { rateLimitSecs: number; videoRecordTtlSecs: number } {
  return { rateLimitSecs: config.service.new_post_rate_limit_secs, videoRecordTtlSecs: config.service.video_coordinate_dedup_ttl_secs };
}

export function newPostFanoutDeps(ctx: BellWiringContext & { outbound: OutboundQueue; verifier: EventVerifier }): NewPostFanoutDeps {
  const { config, store, metrics } = ctx;
  const s = config.service;
  const logger = ctx.logger.child({ role: 'scheduler' });
  return {
    store,
    outbound: ctx.outbound,
    profiles: createProfileResolver(config.nostr, { store, verifier: ctx.verifier, logger, metrics }),
    allowedPubkeys: new Set(s.allowed_pubkeys.map((p) => p.toLowerCase())),
    defaultPreferenceKinds: config.notification.default_preferences.kinds,
    processedEventTtlSecs: s.processed_event_ttl_secs,
    rateLimitSecs: s.new_post_rate_limit_secs,
    videoRecordTtlSecs: s.video_coordinate_dedup_ttl_secs,
    pageSize: s.new_post_fanout_page_size,
    leaseSecs: s.new_post_fanout_lease_secs,
    retrySecs: s.new_post_fanout_retry_secs,
    pollMs: s.new_post_fanout_poll_millis,
    countInbox: config.inbox.enabled,
    logger,
    metrics,
  };
}
