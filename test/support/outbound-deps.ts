/**
 * The delivery stage's dependencies as unit tests build them: one store, the given transports,
 * silent logs, fresh metrics, records and event age of an hour; anything else (or any of these)
 * from `extra`.
 */
import type { OutboundHandlerDeps } from '../../src/delivery/outbound.ts';
import type { PushTransport } from '../../src/delivery/types.ts';
import { bellNotificationExpander } from '../../src/engine/bells/bell-items.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import type { StorePort } from '../../src/store/port.ts';

const HOUR_SECS = 3600;

export function testOutboundDeps<Extra extends Partial<OutboundHandlerDeps>>(
  store: StorePort,
  transports: PushTransport[],
  extra: Extra = {} as Extra,
): OutboundHandlerDeps & Extra {
  return {
    store,
    transports,
    videoRecordTtlSecs: HOUR_SECS,
    maxEventAgeSecs: HOUR_SECS,
    logger: createLogger({ level: 'silent' }),
    metrics: new Metrics(),
    expandBellItem: bellNotificationExpander(),
    ...extra,
  };
}
