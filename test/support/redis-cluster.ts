/**
 * A private Redis Cluster for one test file: `masters` (default 3) `redis-server --cluster-enabled
 * yes` processes on free ports, `replicasPerMaster` replicas each, joined by `redis-cli --cluster
 * create … --cluster-yes`, every process stopped by pid. Tests never touch a Redis on 6379.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { startRedisServer, type PrivateRedisServer } from './redis-server.ts';

const run = promisify(execFile);

/** How long the cluster may take to agree that every slot is served (an upper bound only a hang reaches). */
const CLUSTER_READY_TIMEOUT_MS = 60_000;
/** Between two looks at `CLUSTER INFO` while the cluster forms. */
const CLUSTER_POLL_MS = 50;
/**
 * How long a master may be unreachable before its replica is promoted. Short, so the failover
 * test does not wait long; well above a loaded machine's scheduling hiccups.
 */
export const CLUSTER_NODE_TIMEOUT_MS = 2_000;

export interface PrivateRedisCluster {
  /** `redis+cluster://127.0.0.1:p1,127.0.0.1:p2,…` (the masters as seeds). */
  url: string;
  /** Every node, masters first in creation order, then the replicas. */
  nodes: PrivateRedisServer[];
  /** Stop every node (SIGTERM, SIGKILL after a grace period). */
  stop(): Promise<void>;
  /**
   * The lines of every node's log that tell how the cluster saw its nodes fail and fail over
   * (failure reports, elections, promotions, state changes), each with its node's port: for a
   * failed test's message, to tell a failover the test made from one the machine's load made.
   */
  failoverLog(): string;
}

/** Log lines of a node about failures, elections and the cluster's state (redis-server's wording). */
const FAILOVER_LOG_LINE =
  /FAIL|[Ee]lection|[Ff]ailover|Cluster state changed|new master|turning into a replica|Connection with (?:master|replica) .*lost/;
/** A log line's time of day (`HH:MM:SS.mmm`), to merge the nodes' logs in order (a test runs within a day). */
const LOG_TIME = /\d\d:\d\d:\d\d\.\d{3}/;
/** The most lines {@link PrivateRedisCluster.failoverLog} gives, the last ones. */
const FAILOVER_LOG_LINES = 80;

export interface RedisClusterOptions {
  masters?: number;
  replicasPerMaster?: number;
}

async function clusterInfo(port: number): Promise<Record<string, string>> {
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
    const text = (await client.call('CLUSTER', 'INFO')) as string;
    return Object.fromEntries(
      text
        .split('\r\n')
        .filter((line) => line.includes(':'))
        .map((line) => line.split(':', 2) as [string, string]),
    );
  } finally {
    client.disconnect();
  }
}

/** Resolves once every live node says `cluster_state:ok` with all 16,384 slots assigned and ok. */
export async function waitForClusterOk(nodes: readonly PrivateRedisServer[], timeoutMs = CLUSTER_READY_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const infos = await Promise.all(nodes.map((node) => clusterInfo(node.port)));
      if (infos.every((info) => info.cluster_state === 'ok' && info.cluster_slots_ok === '16384')) return;
      last = JSON.stringify(infos.map((info) => [info.cluster_state, info.cluster_slots_ok]));
    } catch (error) {
      last = (error as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`the Redis Cluster did not become ok within ${timeoutMs} ms: ${last}`);
    await new Promise((resolve) => setTimeout(resolve, CLUSTER_POLL_MS));
  }
}

/** A node's cluster id (`CLUSTER MYID`), read while it is up: the others name it by this after it is gone. */
export async function clusterNodeId(node: PrivateRedisServer): Promise<string> {
  const client = new Redis({ host: '127.0.0.1', port: node.port, lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
    return (await client.call('CLUSTER', 'MYID')) as string;
  } finally {
    client.disconnect();
  }
}

/** The flags of node `id` in one node's `CLUSTER NODES` (e.g. `master,fail`), or null when it does not list it. */
async function flagsOf(port: number, id: string): Promise<string | null> {
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
    const text = (await client.call('CLUSTER', 'NODES')) as string;
    const line = text.split('\n').find((entry) => entry.startsWith(`${id} `));
    return line?.split(' ')[2] ?? null;
  } finally {
    client.disconnect();
  }
}

/**
 * Resolves once the master `victimId` (killed) is marked `fail` by every survivor and the cluster
 * is ok again: its replica was promoted and serves its slots. `waitForClusterOk` alone can pass
 * before the survivors noticed the death (the cluster still looks ok for a node timeout).
 */
export async function waitForFailover(
  survivors: readonly PrivateRedisServer[],
  victimId: string,
  timeoutMs = CLUSTER_READY_TIMEOUT_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const flags = await Promise.all(survivors.map((node) => flagsOf(node.port, victimId)));
      if (flags.every((entry) => entry?.split(',').includes('fail') === true)) break;
      last = JSON.stringify(flags);
    } catch (error) {
      last = (error as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`the survivors did not mark ${victimId} failed within ${timeoutMs} ms: ${last}`);
    await new Promise((resolve) => setTimeout(resolve, CLUSTER_POLL_MS));
  }
  await waitForClusterOk(survivors, Math.max(0, deadline - Date.now()));
}

/**
 * Resolves once every node's `CLUSTER SLOTS` names `perRange` nodes (the master and its replicas)
 * for every slot range: the cluster is ok before every node has heard of every replica, and a
 * client reading the slot map then would see masters without replicas.
 */
async function waitForReplicasListed(nodes: readonly PrivateRedisServer[], perRange: number): Promise<void> {
  const deadline = Date.now() + CLUSTER_READY_TIMEOUT_MS;
  for (;;) {
    const listed = await Promise.all(
      nodes.map(async (node) => {
        const client = new Redis({ host: '127.0.0.1', port: node.port, lazyConnect: true, maxRetriesPerRequest: 1 });
        try {
          await client.connect();
          // Each range: [start, end, master, ...replicas].
          const ranges = (await client.call('CLUSTER', 'SLOTS')) as unknown[][];
          return ranges.every((range) => range.length - 2 >= perRange);
        } finally {
          client.disconnect();
        }
      }),
    );
    if (listed.every(Boolean)) return;
    if (Date.now() > deadline) throw new Error(`the replicas were not listed by every node within ${CLUSTER_READY_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, CLUSTER_POLL_MS));
  }
}

export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<PrivateRedisCluster> {
  const masters = options.masters ?? 3;
  const replicas = options.replicasPerMaster ?? 0;
  const args = [
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    'nodes.conf',
    '--cluster-node-timeout',
    String(CLUSTER_NODE_TIMEOUT_MS),
  ];
  const nodes: PrivateRedisServer[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.stop()));
  };
  try {
    for (let i = 0; i < masters * (1 + replicas); i++) nodes.push(await startRedisServer({ args }));
    // redis-cli makes the first `masters` addresses masters and the rest their replicas.
    await run('redis-cli', [
      '--cluster',
      'create',
      ...nodes.map((node) => `127.0.0.1:${node.port}`),
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ]);
    await waitForClusterOk(nodes);
    if (replicas > 0) await waitForReplicasListed(nodes, 1 + replicas);
  } catch (error) {
    await stop();
    throw error;
  }
  const seeds = nodes.slice(0, masters).map((node) => `127.0.0.1:${node.port}`);
  const failoverLog = () =>
    nodes
      .flatMap((node) =>
        node
          .log()
          .split('\n')
          .filter((line) => FAILOVER_LOG_LINE.test(line))
          .map((line) => ({ at: LOG_TIME.exec(line)?.[0] ?? '', line: `${node.port} ${line}` })),
      )
      .sort((a, b) => a.at.localeCompare(b.at))
      .map(({ line }) => line)
      .slice(-FAILOVER_LOG_LINES)
      .join('\n');
  return { url: `redis+cluster://${seeds.join(',')}`, nodes, stop, failoverLog };
}
