/**
 * Keeps `/health` honest on a Redis Cluster: reads the store's topology every few seconds and
 * holds whether every hash slot is served by a reachable master. A cluster with an uncovered slot
 * refuses every command for the keys of that slot, so the process reports `degraded` (503) until
 * a replica takes over or an operator fixes it; it keeps running, since the other slots still work.
 */
import type { Logger } from '../observability/logger.ts';
import { describeTopology, topologyServesEverySlot, type TopologyStore } from './port-topology.ts';
import { sleep } from '../util/async.ts';

/**
 * Between two topology reads. A cluster notices a failed master after its node timeout (seconds)
 * and promotes a replica soon after; 5 s keeps `/health` within one probe period of that.
 */
export const TOPOLOGY_CHECK_INTERVAL_MS = 5_000;

/** The `/health` flag this watch sets. */
export const STORE_SLOTS_FLAG = 'store_slots';

/** The supervised task that runs the watch (a Redis Cluster only). */
export const TASK_STORE_TOPOLOGY = 'store_topology';

export class StoreTopologyWatch {
  private whole = true;

  constructor(
    private readonly store: TopologyStore,
    private readonly logger: Logger,
  ) {}

  /** Whether every slot was served at the last read (true before the first). */
  get servesEverySlot(): boolean {
    return this.whole;
  }

  /** One read; a read that fails (no node answers) counts as uncovered. */
  async check(): Promise<boolean> {
    let whole: boolean;
    let detail: string;
    try {
      const topology = await this.store.topology();
      whole = topologyServesEverySlot(topology);
      detail = describeTopology(topology);
    } catch (error) {
      whole = false;
      detail = `topology unreadable: ${(error as Error).message}`;
    }
    if (whole !== this.whole) {
      if (whole) this.logger.info({ store: detail }, 'store: every cluster slot is served again');
      else this.logger.warn({ store: detail }, 'store: cluster slots are not served; /health reports degraded');
    }
    this.whole = whole;
    return whole;
  }

  async run(signal: AbortSignal, intervalMs = TOPOLOGY_CHECK_INTERVAL_MS): Promise<void> {
    while (!signal.aborted) {
      await this.check();
      try {
        await sleep(intervalMs, signal);
      } catch {
        return;
      }
    }
  }
}
