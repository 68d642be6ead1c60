/**
 * The Redis adapter's {@link StoreTopology}: one server, or a cluster read from `CLUSTER INFO`
 * and `CLUSTER NODES` of one node (the cluster client picks a connected one).
 */
import type { Cluster } from 'ioredis';
import { CLUSTER_SLOT_COUNT, type ClusterNodeStatus, type StoreTopology } from '../port-topology.ts';
import type { KeyLayout } from './keys.ts';

/** `CLUSTER INFO`'s `key:value` lines. */
export function parseClusterInfo(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) fields[line.slice(0, colon)] = line.slice(colon + 1).trim();
  }
  return fields;
}

/** Slots a `CLUSTER NODES` slot field names: `5461`, `0-5460`; importing/migrating markers (`[…]`) count nothing. */
function slotCount(field: string): number {
  if (field.startsWith('[')) return 0;
  const dash = field.indexOf('-');
  if (dash < 0) return 1;
  return Number(field.slice(dash + 1)) - Number(field.slice(0, dash)) + 1;
}

/**
 * `CLUSTER NODES` lines (`<id> <ip:port@cport[,hostname]> <flags> <master> <ping> <pong> <epoch>
 * <link> <slot>…`) → the nodes with their roles and slot counts. Nodes still in `handshake` or
 * without an address are left out: they serve nothing yet.
 */
export function parseClusterNodes(text: string): ClusterNodeStatus[] {
  const nodes: ClusterNodeStatus[] = [];
  for (const line of text.split(/\r?\n/)) {
    const fields = line.trim().split(' ');
    if (fields.length < 8) continue;
    const [id = '', addressField = '', flagField = '', master = '-'] = fields;
    const flags = new Set(flagField.split(','));
    if (flags.has('handshake') || flags.has('noaddr')) continue;
    const address = addressField.split('@')[0] ?? addressField;
    const role = flags.has('master') ? 'master' : 'replica';
    const slots = role === 'master' ? fields.slice(8).reduce((sum, field) => sum + slotCount(field), 0) : 0;
    const reachable = !flags.has('fail') && !flags.has('fail?');
    nodes.push({ id, address, role, slots, reachable, ...(role === 'replica' && master !== '-' ? { masterId: master } : {}) });
  }
  // Masters first, by address; then replicas: a stable order for doctor's output.
  return nodes.sort((a, b) => (a.role === b.role ? a.address.localeCompare(b.address) : a.role === 'master' ? -1 : 1));
}

/** Slots served by reachable masters (a failed master's slots are uncovered until a replica takes over). */
export function coveredSlots(nodes: readonly ClusterNodeStatus[]): number {
  const covered = nodes.filter((node) => node.role === 'master' && node.reachable).reduce((sum, node) => sum + node.slots, 0);
  return Math.min(covered, CLUSTER_SLOT_COUNT);
}

export async function readRedisTopology(cluster: Cluster | null, layout: KeyLayout): Promise<StoreTopology> {
  if (!cluster) return { kind: 'redis', layout };
  const [info, nodesText] = await Promise.all([cluster.call('CLUSTER', 'INFO'), cluster.call('CLUSTER', 'NODES')]);
  const nodes = parseClusterNodes(String(nodesText));
  return {
    kind: 'redis-cluster',
    layout,
    state: parseClusterInfo(String(info)).cluster_state ?? 'unknown',
    slotsCovered: coveredSlots(nodes),
    nodes,
  };
}
