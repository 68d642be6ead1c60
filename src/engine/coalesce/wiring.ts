/**
 * The dependencies of coalescing, built from configuration, for the role wiring (`roles.ts`):
 * the ingest decision on the engine, the summary flush worker on the scheduler.
 */
import type { Config } from '../../config/defaults.ts';
import type { OutboundQueue } from '../outbound-queue.ts';
import type { EventVerifier } from '../../nostr/event.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Metrics } from '../../observability/metrics.ts';
import type { StorePort } from '../../store/port.ts';
import { createProfileResolver } from '../profiles.ts';
import type { FlushDeps } from './flush.ts';
import { createCoalesceIngester, type CoalesceIngester } from './ingest.ts';
import { coalescePolicyFromConfig, flushSettingsFromConfig } from './policy.ts';

export interface CoalesceWiringContext {
  config: Config;
  store: StorePort;
  logger: Logger;
  metrics: Metrics;
}

/** `ContentDeps.coalesce` of the engine. */
export function coalesceIngester(ctx: CoalesceWiringContext): CoalesceIngester {
  return createCoalesceIngester({
    store: ctx.store,
    policy: coalescePolicyFromConfig(ctx.config.service),
    logger: ctx.logger,
    metrics: ctx.metrics,
  });
}

/** What `runCoalesceFlush` needs in the scheduler role. */
export function coalesceFlushDeps(ctx: CoalesceWiringContext & { outbound: OutboundQueue; verifier: EventVerifier }): FlushDeps {
  const { config, store, metrics } = ctx;
  const logger = ctx.logger.child({ role: 'scheduler', task: 'coalesce_flush' });
  return {
    store,
    outbound: ctx.outbound,
    processedEventTtlSecs: config.service.processed_event_ttl_secs,
    profiles: createProfileResolver(config.nostr, { store, verifier: ctx.verifier, logger, metrics }),
    policy: coalescePolicyFromConfig(config.service),
    settings: flushSettingsFromConfig(config.service),
    allowedPubkeys: new Set(config.service.allowed_pubkeys.map((p) => p.toLowerCase())),
    defaultPreferenceKinds: config.notification.default_preferences.kinds,
    logger,
    metrics,
  };
}
