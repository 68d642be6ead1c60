/**
 * How a refused outbound connection is made visible: the counter
 * `push_outbound_refused_total{purpose,reason}` on the service's registry (so `/metrics` shows
 * it) and one warning log line with the purpose, host, address and reason. Used as the
 * `onRefused` of every {@link OutboundPolicy} the service builds.
 */
import { Counter } from 'prom-client';
import type { Logger } from '../observability/logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { OutboundRefusal } from './public-connect.ts';

/** The log message of a refusal (tests and operators grep for it). */
export const OUTBOUND_REFUSED_MESSAGE = 'outbound connection refused: not a public address';

const counters = new WeakMap<Metrics, Counter<'purpose' | 'reason'>>();

/** The refusal counter of `metrics`' registry (registered once per registry). */
export function outboundRefusedCounter(metrics: Metrics): Counter<'purpose' | 'reason'> {
  let counter = counters.get(metrics);
  if (!counter) {
    counter = new Counter({
      name: 'push_outbound_refused_total',
      help: 'Outbound connections refused by the address policy (src/net/), by purpose and the refused address class',
      labelNames: ['purpose', 'reason'] as const,
      registers: [metrics.registry],
    });
    counters.set(metrics, counter);
  }
  return counter;
}

/** An `onRefused` that counts and logs. */
export function outboundRefusalReporter(metrics: Metrics, logger: Logger): (refusal: OutboundRefusal) => void {
  const counter = outboundRefusedCounter(metrics);
  return (refusal) => {
    counter.inc({ purpose: refusal.purpose, reason: refusal.reason });
    logger.warn(
      { purpose: refusal.purpose, host: refusal.host, address: refusal.address, reason: refusal.reason, detail: refusal.message },
      OUTBOUND_REFUSED_MESSAGE,
    );
  };
}
