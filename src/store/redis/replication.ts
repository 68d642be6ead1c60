/**
 * Replica acknowledgement after the steps whose loss would lose work (issue 18, `redis.wait_replicas`).
 *
 * Redis replicates asynchronously: a master answers a write before any replica has it, and a
 * master killed in that window takes the write with it when its replica is promoted. A write lost
 * that way is harmless when whatever made it retries it. It loses work when a LATER step in
 * ANOTHER slot (so, on a cluster, maybe another master) already depends on it and survives:
 *
 * - a delivery staged before its claim is taken, and committed before the caller moves on (the
 *   fan-out page completes and its cursor moves, the inbound event is acknowledged): a claim held
 *   without its item, or an item left staged that nobody commits (`deliveries.ts`);
 * - an item enqueued before its source lets go of it (a relay cursor advanced, an inbound event
 *   acknowledged, a schedule moved on) (`queues.ts`);
 * - a fan-out job queued before the inbound event that made it is acknowledged (`bells.ts`);
 * - a subscriber added to a creator's watchers before the notify list's version is recorded.
 *
 * After such a step the adapter sends `WAIT numreplicas timeout` to each master the step wrote
 * to, on the connection the step's commands went through. WAIT counts the replicas that
 * acknowledged every write that connection made so far; ioredis keeps one connection per node,
 * shared by every command of the process, so one WAIT per master covers the whole step (and
 * whatever else the process wrote there before). The WAIT is a command of its own after the
 * step's answers: in one pipeline with the step's script it would go to the same node, but
 * ioredis follows a MOVED in a pipeline only when every command of it failed alike, and WAIT
 * would not, so a pipeline would turn a redirection into an error.
 *
 * Each master is asked for the configured count, or for as many replicas as are connected to it
 * when that is fewer. The client's slot map says how many a master has (Redis leaves failed
 * replicas out of `CLUSTER SLOTS`), but it can be stale: a replica flagged failed for a moment on
 * a loaded host stays out of it until the next refresh while it still replicates, and can still
 * be promoted. So when the map lists fewer than configured, the master's own count
 * (`INFO replication`) decides; on one Redis, which has no slot map, that count always does. A
 * master with no connected replica is not waited for: after a failover the promoted master has no
 * replica until one joins it, and its slots keep working meanwhile.
 *
 * A WAIT answered by fewer replicas than asked is an error ({@link ReplicationWaitError}), always,
 * which the step's caller retries as it retries any store error (the queues' leases, the fan-out
 * page's backoff, the inbound event's retry); every such step is idempotent. It is not merely
 * logged: a replica that does not acknowledge is lagging (and a failover now would promote it
 * without the step's writes), or the master just died; carrying on then is exactly the loss this
 * guards against. Nor is it excused when the master no longer counts that replica among its
 * connected ones: from the master's side a replica that died, one cut off for a moment (it may
 * still be promoted, without the write), and one promoted over it (a failover the master has not
 * heard of yet, whose writes it will throw away when it does) look the same. Only the cluster can
 * tell them apart, so a shortfall refreshes the slot map and the retry goes by it: a replica the
 * cluster marked failed is no longer listed nor waited for, and a master failed over is no longer
 * asked at all (the step runs again on its successor). While a replica is alive but does not keep
 * up (a full resync), or is dead but not yet marked failed (the cluster's node timeout), the steps
 * writing to its master's slots fail after the timeout and are retried: the price of the
 * guarantee, as with Redis' own `min-replicas-to-write`.
 *
 * The master is read from the slot map just after the step's answers. A failover completing in
 * between (it takes at least the cluster's node timeout, seconds) would make the WAIT ask the new
 * master, which holds the step's writes only if the client's retry ran the step there.
 */
import calculateKeySlot from 'cluster-key-slot';
import type { Cluster, Redis } from 'ioredis';

/** `redis.wait_replicas` meaning "by the target": 1 on a cluster (each master's live replicas at most), 0 on one Redis. */
export const WAIT_REPLICAS_AUTO = -1;
/** The most replicas a step may wait for (a bound for the configuration, far above any deployment's). */
export const MAX_WAIT_REPLICAS = 16;
/**
 * How long a WAIT may block, in ms (`redis.wait_timeout_ms`): far above a healthy replica's
 * acknowledgement (well under a millisecond on a LAN, a few under load), and short because a
 * blocked WAIT holds the process's one connection to that master, so every command queued
 * behind it waits too.
 */
export const DEFAULT_WAIT_TIMEOUT_MS = 250;
/** The longest `redis.wait_timeout_ms` accepted. */
export const MAX_WAIT_TIMEOUT_MS = 10_000;

/** A step's writes reached fewer replicas than `redis.wait_replicas` asks: the caller retries the step. */
export class ReplicationWaitError extends Error {
  constructor(detail: string) {
    super(`replica acknowledgement: ${detail}; the step is retried`);
    this.name = 'ReplicationWaitError';
  }
}

export interface ReplicationSettings {
  /** Replicas each step's writes must reach; 0: no WAIT. */
  replicas: number;
  /** Longest a WAIT blocks, ms. */
  timeoutMs: number;
  /**
   * Fault injection for tests (issue 42): asked after each step's WAITs were answered (its writes
   * applied on the master, as after a real shortfall), true turns the step into a
   * {@link ReplicationWaitError}. Only consulted while `replicas` is above 0.
   */
  refuseAcknowledgement?: () => boolean;
}

/**
 * The environment variable that makes a fraction (0–1) of replica acknowledgements fail after the
 * step's writes were applied, for end-to-end tests of the retry paths (issue 42). Honoured only
 * under `NODE_ENV=test`, as the test clock file is.
 */
export const TEST_REPLICA_REFUSAL_ENV = 'NOSTR_PUSH_TEST_REPLICA_REFUSAL';

/** The refusal injector {@link TEST_REPLICA_REFUSAL_ENV} asks for, or undefined when it is unset. */
export function replicaRefusalFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  random: () => number = Math.random,
): (() => boolean) | undefined {
  const raw = env[TEST_REPLICA_REFUSAL_ENV];
  if (raw === undefined || raw === '') return undefined;
  if (env.NODE_ENV !== 'test') throw new Error(`${TEST_REPLICA_REFUSAL_ENV} is only honoured with NODE_ENV=test`);
  const fraction = Number(raw);
  if (!Number.isFinite(fraction) || fraction < 0 || fraction > 1)
    throw new Error(`${TEST_REPLICA_REFUSAL_ENV} must be a fraction from 0 to 1, got ${raw}`);
  return () => random() < fraction;
}

/** What `redis.wait_replicas` becomes on this target: {@link WAIT_REPLICAS_AUTO} resolved, anything else as it is. */
export function resolveWaitReplicas(requested: number, cluster: Cluster | null): number {
  if (requested !== WAIT_REPLICAS_AUTO) return requested;
  // Failover to a replica is a cluster's (this adapter does not follow Sentinel). A master
  // without a replica is not waited for at all (see the module comment), so 1 costs nothing there.
  return cluster ? 1 : 0;
}

/** One master to WAIT on, and how many replicas the client's slot map lists for it. */
interface WaitTarget {
  node: Redis;
  replicas: number;
}

/**
 * How long a master's count of connected replicas is trusted where the slot map lists fewer than
 * wanted, ms: a replica joining (or coming back into the map late) is waited for within this, far
 * sooner than the client's slot map would show it, for one `INFO` per master and second.
 */
export const CONNECTED_REPLICAS_MAX_AGE_MS = 1_000;

/**
 * Replicas connected to a master by its own account (`INFO replication`'s `connected_slaves`):
 * online ones and ones still in their first sync alike, since either can be promoted. A sync in
 * progress acknowledges nothing, so a step waiting for it fails and is retried until it is done.
 */
async function connectedReplicas(node: Redis): Promise<number> {
  const info = await node.info('replication');
  const match = /^connected_slaves:(\d+)/m.exec(info);
  return match ? Number(match[1]) : 0;
}

/** Sends the WAITs of {@link ReplicationSettings} after the steps that must survive a failover. */
export class ReplicaWaiter {
  /** Per master, its connected replicas as last read (see {@link recentConnectedReplicas}). */
  private readonly connectedCounts = new WeakMap<Redis, { count: number; atMs: number }>();

  constructor(
    private readonly redis: Redis,
    private readonly cluster: Cluster | null,
    readonly settings: ReplicationSettings,
  ) {}

  /** A waiter that never waits (a single Redis, `redis.wait_replicas: 0`, or a test's bare context). */
  static off(redis: Redis): ReplicaWaiter {
    return new ReplicaWaiter(redis, null, { replicas: 0, timeoutMs: DEFAULT_WAIT_TIMEOUT_MS });
  }

  /**
   * Resolves once the writes just made to the keys `keysOf` names (their answers already received) reached the
   * configured replicas, one WAIT per master holding them; throws {@link ReplicationWaitError}
   * when a master answers fewer.
   */
  async afterWrites(keysOf: () => readonly string[]): Promise<void> {
    const { replicas } = this.settings;
    // The keys are asked for only when there is a replica to wait for: off (one Redis, the
    // default there), the hot paths calling this build nothing.
    if (replicas === 0) return;
    const keys = keysOf();
    if (keys.length === 0) return;
    // One Redis has no slot map to list its replicas: its own count decides, as where a map lists too few.
    const targets = this.cluster ? this.mastersOf(this.cluster, keys) : [{ node: this.redis, replicas: 0 }];
    await Promise.all(targets.map((target) => this.waitOn(target)));
    if (this.settings.refuseAcknowledgement?.())
      throw new ReplicationWaitError(`0 of ${replicas} replicas acknowledged (injected by a test)`);
  }

  private async waitOn({ node, replicas: listed }: WaitTarget): Promise<void> {
    const { timeoutMs, replicas: wanted } = this.settings;
    // The slot map may be stale: a replica the cluster flagged failed for a moment (a loaded
    // host) drops out of it until the next refresh while it still replicates and can still be
    // promoted. So fewer listed than wanted is checked with the master itself.
    const asked = listed >= wanted ? wanted : Math.min(wanted, await this.recentConnectedReplicas(node));
    if (asked === 0) return;
    const acknowledged = Number(await node.call('WAIT', asked, timeoutMs));
    if (acknowledged >= asked) return;
    // Not excused when the master has since lost the replica (module comment): the map may list
    // a replica the cluster has since marked failed, or a master it failed over; the retry reads
    // it anew, and the count it asks the master for again.
    this.cluster?.refreshSlotsCache();
    this.connectedCounts.delete(node);
    const where = this.cluster ? ` on ${node.options.host ?? '?'}:${node.options.port ?? '?'}` : '';
    throw new ReplicationWaitError(`${acknowledged} of ${asked} replicas acknowledged${where} within ${timeoutMs} ms`);
  }

  /**
   * {@link connectedReplicas} as read at most {@link CONNECTED_REPLICAS_MAX_AGE_MS} ago: asked
   * only where the slot map lists fewer replicas than wanted, which on a cluster without replicas
   * is every step, so it is not one more round trip each.
   */
  private async recentConnectedReplicas(node: Redis): Promise<number> {
    const now = performance.now();
    const known = this.connectedCounts.get(node);
    if (known && now - known.atMs < CONNECTED_REPLICAS_MAX_AGE_MS) return known.count;
    const count = await connectedReplicas(node);
    this.connectedCounts.set(node, { count, atMs: now });
    return count;
  }

  /** The masters that serve `keys` now, each once, with the replicas the slot map lists for each. */
  private mastersOf(cluster: Cluster, keys: readonly string[]): WaitTarget[] {
    const prefix = cluster.options.keyPrefix ?? '';
    const byAddress = new Map<string, Redis>(cluster.nodes('master').map((node) => [`${node.options.host}:${node.options.port}`, node]));
    const targets = new Map<Redis, WaitTarget>();
    for (const key of keys) {
      // The slot of the key as sent, prefix included (a key without a hash tag hashes whole).
      const slot = calculateKeySlot(`${prefix}${key}`);
      // ioredis lists a slot's nodes master first, then its replicas (failed ones left out).
      const [address, ...replicas]: readonly string[] = cluster.slots[slot] ?? [];
      const node = address === undefined ? undefined : byAddress.get(address);
      // The slot map is being refreshed (a failover): the step is retried once it is known again.
      if (!node) throw new ReplicationWaitError(`no known master for slot ${slot}`);
      targets.set(node, { node, replicas: replicas.length });
    }
    return [...targets.values()];
  }
}
