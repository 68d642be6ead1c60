/**
 * What a store runs on, for `nostr-push doctor` and `/health`: a SQLite file, one Redis, or a
 * Redis Cluster with its nodes and how many of the 16,384 hash slots a live master serves.
 */

/** Redis Cluster's hash-slot count: a cluster is whole when live masters serve all of them. */
export const CLUSTER_SLOT_COUNT = 16_384;

export interface ClusterNodeStatus {
  /** The node's 40-character cluster id. */
  id: string;
  /** `host:port` clients reach it at. */
  address: string;
  role: 'master' | 'replica';
  /** For a replica: the id of the master it follows. */
  masterId?: string;
  /** Hash slots this node serves (masters only). */
  slots: number;
  /** False when the cluster marks the node failed (`fail`, or `fail?` as seen from the node asked). */
  reachable: boolean;
}

export type StoreTopology =
  | { kind: 'sqlite' }
  | { kind: 'redis'; layout: string }
  | {
      kind: 'redis-cluster';
      layout: string;
      /** `cluster_state` of the node asked: `ok` or `fail`. */
      state: string;
      /** Slots served by a reachable master, out of {@link CLUSTER_SLOT_COUNT}. */
      slotsCovered: number;
      nodes: ClusterNodeStatus[];
    };

export interface TopologyStore {
  /** The store's current topology, read from the servers (a cluster's view from one of its nodes). */
  topology(): Promise<StoreTopology>;
}

/** True unless the store is a cluster with a slot no reachable master serves, or a failed state. */
export function topologyServesEverySlot(topology: StoreTopology): boolean {
  if (topology.kind !== 'redis-cluster') return true;
  return topology.state === 'ok' && topology.slotsCovered === CLUSTER_SLOT_COUNT;
}

/** One line for logs and `doctor`. */
export function describeTopology(topology: StoreTopology): string {
  if (topology.kind === 'sqlite') return 'SQLite';
  if (topology.kind === 'redis') return `one Redis server, ${topology.layout} key layout`;
  const masters = topology.nodes.filter((node) => node.role === 'master');
  const replicas = topology.nodes.length - masters.length;
  const down = topology.nodes.filter((node) => !node.reachable).length;
  return (
    `Redis Cluster, ${topology.layout} key layout: ${masters.length} masters, ${replicas} replicas` +
    `${down > 0 ? ` (${down} unreachable)` : ''}, ${topology.slotsCovered}/${CLUSTER_SLOT_COUNT} slots covered, state ${topology.state}`
  );
}
