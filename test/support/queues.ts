/**
 * Waiting for the service's queues to be empty: the signal end-to-end tests use before asserting
 * that something was not pushed, or before moving a test clock past work still in flight.
 */
import type { StorePort } from '../../src/store/port.ts';
import { eventually } from './service-process.ts';

/** Resolves once `store` (a reader of the service's store) shows no ready or leased item in `inbound` or `outbound`. */
export function queuesDrained(store: StorePort, deadlineMs: number): Promise<true> {
  return eventually(
    async () => {
      const [inbound, outbound] = await Promise.all([store.queueStats('inbound'), store.queueStats('outbound')]);
      return inbound.ready + inbound.leased + outbound.ready + outbound.leased === 0 ? true : undefined;
    },
    deadlineMs,
    'the queues drained',
  );
}
