/**
 * Where the Redis adapter connects, read from a store URL: one server (`redis://`, `rediss://`)
 * or a Redis Cluster (`redis+cluster://host1:port,host2:port,…`, `rediss+cluster://` for TLS,
 * plus any seed nodes in `redis.cluster_nodes`). Pure parsing, no client: the configuration
 * validates URLs with it without loading ioredis.
 */
import type { KeyLayout } from './keys.ts';

/** A cluster seed node. */
export interface ClusterNode {
  host: string;
  port: number;
}

/** The URL schemes of a cluster; `rediss+cluster` connects to every node over TLS. */
export const CLUSTER_SCHEMES = ['redis+cluster:', 'rediss+cluster:'] as const;

/** Where the adapter connects: one server, or a cluster's seed nodes. */
export type RedisTarget =
  { kind: 'single'; url: string } | { kind: 'cluster'; nodes: ClusterNode[]; username?: string; password?: string; tls: boolean };

export function isClusterUrl(url: string): boolean {
  return CLUSTER_SCHEMES.some((scheme) => url.startsWith(`${scheme}//`));
}

/** `host:port` → a seed node; throws a RangeError naming the bad entry. */
export function parseClusterNode(entry: string): ClusterNode {
  const match = /^\[?([^\]\s]+?)\]?:(\d{1,5})$/.exec(entry.trim());
  const port = match ? Number(match[2]) : NaN;
  if (!match?.[1] || !Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new RangeError(`"${entry}" is not host:port`);
  }
  return { host: match[1], port };
}

/**
 * The target a store URL names. A cluster URL lists its seed nodes comma-separated in the
 * authority (`redis+cluster://user:pass@h1:7000,h2:7001`); `extraNodes` (`redis.cluster_nodes`)
 * are added to them. A cluster needs at least one seed; the client discovers the rest.
 */
export function parseRedisTarget(url: string, extraNodes: readonly string[] = []): RedisTarget {
  if (!isClusterUrl(url)) {
    if (extraNodes.length > 0) throw new RangeError('redis.cluster_nodes needs a redis+cluster:// store URL');
    return { kind: 'single', url };
  }
  const tls = url.startsWith('rediss+');
  const rest = url.slice(url.indexOf('//') + 2);
  const at = rest.lastIndexOf('@');
  const credentials = at >= 0 ? rest.slice(0, at) : '';
  const authority = (at >= 0 ? rest.slice(at + 1) : rest).replace(/\/.*$/, '');
  const nodes = authority === '' ? [] : authority.split(',').map(parseClusterNode);
  nodes.push(...extraNodes.map(parseClusterNode));
  if (nodes.length === 0) throw new RangeError('a redis+cluster:// URL needs at least one host:port (in the URL or redis.cluster_nodes)');
  const colon = credentials.indexOf(':');
  const username = decodeURIComponent(colon >= 0 ? credentials.slice(0, colon) : '');
  const password = decodeURIComponent(colon >= 0 ? credentials.slice(colon + 1) : credentials);
  return { kind: 'cluster', nodes, tls, ...(username ? { username } : {}), ...(password ? { password } : {}) };
}

/** The layout a target gets when `redis.key_layout` does not name one. */
export function defaultKeyLayout(target: RedisTarget): KeyLayout {
  return target.kind === 'cluster' ? 'cluster' : 'divine';
}

/** A target for logs and errors: no credentials. */
export function describeRedisTarget(target: RedisTarget): string {
  if (target.kind === 'cluster') {
    const scheme = target.tls ? 'rediss+cluster' : 'redis+cluster';
    return `${scheme}://${target.nodes.map((node) => `${node.host}:${node.port}`).join(',')}`;
  }
  try {
    const parsed = new URL(target.url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return '(unparseable Redis URL)';
  }
}
