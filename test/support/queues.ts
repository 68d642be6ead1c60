/**
 * Waiting for the service's queues to be empty: the signal end-to-end tests use before asserting
 * that something was not pushed, or before moving a test clock past work still in flight.
 *
 * The stages are read one after the other, upstream first, never at once. Each stage hands its
 * work on before it lets go of it: an inbound event is acknowledged only once its pushes (or its
 * fan-out job) are queued, a fan-out page completes only once its bells are queued, an outbound
 * item is removed only once it was sent. So a stage read empty has handed everything on to the
 * stages read after it. Read at once, the reads can straddle a hand-off (the outbound queue read
 * just before a page's bells are queued, the jobs just after the page completed) and find every
 * stage empty while a page of bells is on its way: an early "drained" that the failover test once
 * took for lost watchers.
 */
import type { StorePort } from '../../src/store/port.ts';
import { eventually } from './service-process.ts';

/** Whether nothing is left in `inbound`, then the fan-out jobs (when `withFanout`), then `outbound`, read in that order. */
export async function workDrained(store: StorePort, withFanout = true): Promise<boolean> {
  const inbound = await store.queueStats('inbound');
  if (inbound.ready + inbound.leased > 0) return false;
  if (withFanout) {
    const jobs = await store.fanoutJobStats();
    if (jobs.due + jobs.waiting > 0) return false;
  }
  const outbound = await store.queueStats('outbound');
  return outbound.ready + outbound.leased === 0;
}

/** Resolves once `store` (a reader of the service's store) shows no ready or leased item in `inbound`, then `outbound`. */
export function queuesDrained(store: StorePort, deadlineMs: number): Promise<true> {
  return eventually(async () => ((await workDrained(store, false)) ? true : undefined), deadlineMs, 'the queues drained');
}
