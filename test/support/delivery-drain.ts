/**
 * The delivery stage's handler (`handleOutbound`, the one code path to a transport) run over what
 * the outbound queue holds now, for tests of the stages that queue pushes: lease everything due,
 * handle each item, settle it as the queue worker would.
 */
import { handleOutbound } from '../../src/delivery/outbound.ts';
import { bellNotificationExpander } from '../../src/engine/bells/bell-items.ts';
import type { PushTransport } from '../../src/delivery/types.ts';
import { createLogger } from '../../src/observability/logger.ts';
import type { Metrics } from '../../src/observability/metrics.ts';
import type { StorePort } from '../../src/store/port.ts';
import type { OutboundPayload } from '../../src/delivery/campaign-items.ts';
import type { WorkOutcome } from '../../src/store/queue-work.ts';

export interface DrainOptions {
  /** `notification.max_event_age_secs` of the delivery stage; default one day. */
  maxEventAgeSecs?: number;
  /** Video record lifetime; default one day. */
  videoRecordTtlSecs?: number;
}

/** One pass over the due outbound items; the outcome of each, in lease order (critical first). */
export async function drainOutbound(
  store: StorePort,
  transports: PushTransport[],
  metrics: Metrics,
  options: DrainOptions = {},
): Promise<Array<{ id: string; outcome: WorkOutcome }>> {
  const deps = {
    store,
    transports,
    videoRecordTtlSecs: options.videoRecordTtlSecs ?? 86_400,
    logger: createLogger({ level: 'silent' }),
    metrics,
    maxEventAgeSecs: options.maxEventAgeSecs ?? 86_400,
    expandBellItem: bellNotificationExpander(),
  };
  const results: Array<{ id: string; outcome: WorkOutcome }> = [];
  for (;;) {
    const items = await store.lease<OutboundPayload>('outbound', { max: 500, leaseMs: 60_000, maxAttempts: 10 });
    if (items.length === 0) return results;
    for (const item of items) {
      const outcome = await handleOutbound(deps, item);
      if (outcome.kind === 'done') await store.ack('outbound', item.id, item.leaseToken);
      else if (outcome.kind === 'retry')
        await store.retry('outbound', item.id, item.leaseToken, store.clock.nowMs() + outcome.afterMs, outcome.error);
      else await store.deadLetter('outbound', item.id, item.leaseToken, outcome.reason);
      results.push({ id: item.id, outcome });
    }
  }
}
