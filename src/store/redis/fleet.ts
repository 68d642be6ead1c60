/**
 * The console's fleet view and sessions on Redis (port-fleet.ts); the layout is in `keys.ts`.
 * Heartbeats and sessions are one key per command; the metric samples' two keys share the
 * `{fleet}` slot in the cluster layout (`writeMetricSample-2`); counts read other areas' keys
 * (devices, ntfy topics) one slot at a time.
 */
import type { Transport } from '../port.ts';
import type { ConsoleSession, MetricSample, NtfyTopicCount, ProcessHeartbeat, ProcessHeartbeatRecord } from '../port-fleet.ts';
import { isRecord, parseJson, type RedisContext } from './context.ts';

const TRANSPORTS: readonly Transport[] = ['fcm', 'apns', 'webpush', 'unifiedpush'];
/** Fields per HSCAN step of the device descriptions (a step is one short server call). */
const SCAN_COUNT = 1000;

interface StoredHeartbeat {
  record: ProcessHeartbeat;
  seenAtMs: number;
  expiresAtMs: number;
}

function readHeartbeat(raw: string): StoredHeartbeat | null {
  const parsed = parseJson(raw);
  if (!isRecord(parsed) || !isRecord(parsed.record) || typeof parsed.seenAtMs !== 'number' || typeof parsed.expiresAtMs !== 'number')
    return null;
  return parsed as unknown as StoredHeartbeat;
}

export async function writeHeartbeat(ctx: RedisContext, heartbeat: ProcessHeartbeat, ttlMs: number): Promise<void> {
  const now = ctx.clock.nowMs();
  const stored: StoredHeartbeat = { record: heartbeat, seenAtMs: now, expiresAtMs: now + ttlMs };
  await ctx.redis.hset(ctx.keys.fleetHeartbeatsKey, heartbeat.processId, JSON.stringify(stored));
}

export async function listHeartbeats(ctx: RedisContext): Promise<ProcessHeartbeatRecord[]> {
  const now = ctx.clock.nowMs();
  const fields = await ctx.redis.hgetall(ctx.keys.fleetHeartbeatsKey);
  const live: ProcessHeartbeatRecord[] = [];
  const expired: string[] = [];
  for (const [processId, raw] of Object.entries(fields)) {
    const stored = readHeartbeat(raw);
    if (stored && stored.expiresAtMs > now) live.push({ ...stored.record, lastSeenAtMs: stored.seenAtMs });
    else expired.push(processId);
  }
  // Process ids are unique per run, so an expired field is never rewritten by another process; its
  // own process, back from a stall, simply writes it again on its next beat.
  if (expired.length > 0) await ctx.redis.hdel(ctx.keys.fleetHeartbeatsKey, ...expired);
  return live.sort((a, b) => (a.processId < b.processId ? -1 : a.processId > b.processId ? 1 : 0));
}

export async function removeHeartbeat(ctx: RedisContext, processId: string): Promise<boolean> {
  const raw = await ctx.redis.hget(ctx.keys.fleetHeartbeatsKey, processId);
  const stored = raw === null ? null : readHeartbeat(raw);
  const wasLive = stored !== null && stored.expiresAtMs > ctx.clock.nowMs();
  await ctx.redis.hdel(ctx.keys.fleetHeartbeatsKey, processId);
  return wasLive;
}

export async function writeMetricSample(
  ctx: RedisContext,
  processId: string,
  values: Record<string, number>,
  retentionMs: number,
): Promise<void> {
  await ctx.scripts.run(
    'writeMetricSample',
    [ctx.keys.fleetSamplesKey, ctx.keys.fleetSampleValuesKey],
    [processId, ctx.clock.nowMs(), JSON.stringify(values), retentionMs],
  );
}

export async function readMetricSamples(ctx: RedisContext, sinceMs: number): Promise<MetricSample[]> {
  // Members of one score are ordered by member, `{processId}|…`: ties come by process id.
  const members = await ctx.redis.zrangebyscore(ctx.keys.fleetSamplesKey, sinceMs, '+inf', 'WITHSCORES');
  const names: string[] = [];
  const times: number[] = [];
  for (let i = 0; i + 1 < members.length; i += 2) {
    names.push(members[i] as string);
    times.push(Number(members[i + 1]));
  }
  if (names.length === 0) return [];
  const values = await ctx.redis.hmget(ctx.keys.fleetSampleValuesKey, ...names);
  const samples: MetricSample[] = [];
  names.forEach((member, i) => {
    const parsed = parseJson(values[i] ?? '');
    const bar = member.lastIndexOf('|');
    if (!isRecord(parsed) || bar < 0) return;
    samples.push({ processId: member.slice(0, bar), atMs: times[i] ?? 0, values: parsed as Record<string, number> });
  });
  return samples;
}

export async function countTokensByTransport(ctx: RedisContext): Promise<Record<Transport, number>> {
  const counts = Object.fromEntries(TRANSPORTS.map((t) => [t, 0])) as Record<Transport, number>;
  // Every token-record shard (one in divine), concurrently; counts add up.
  const shards = Array.from({ length: ctx.keys.tokenShards }, (_, shard) => ctx.keys.tokenShardKeys(shard));
  await Promise.all(
    shards.map(async (keys) => {
      const total = await ctx.redis.hlen(keys.owners);
      // Only devices that are not a plain FCM token have a description; every other token is FCM.
      let described = 0;
      let cursor = '0';
      do {
        const [next, flat] = await ctx.redis.hscan(keys.devices, cursor, 'COUNT', SCAN_COUNT);
        cursor = next;
        for (let i = 1; i < flat.length; i += 2) {
          const parsed = parseJson(flat[i] ?? '');
          const transport = isRecord(parsed) ? parsed.transport : undefined;
          if (typeof transport === 'string' && (TRANSPORTS as readonly string[]).includes(transport)) {
            counts[transport as Transport] += 1;
            described += 1;
          }
        }
      } while (cursor !== '0');
      counts.fcm += Math.max(0, total - described);
    }),
  );
  return counts;
}

export async function countNtfyMessagesByTopic(ctx: RedisContext, limit: number): Promise<NtfyTopicCount[]> {
  // Every shard of the expiry index (one key in the divine layout), then each topic's own key:
  // one command per key, issued at once, so a cluster serves them by slot.
  const shards = await Promise.all(ctx.keys.ntfyExpiryKeys.map((key) => ctx.redis.zrange(key, 0, -1)));
  const topics = shards.flat().sort().slice(0, limit);
  if (topics.length === 0) return [];
  // One XLEN per topic, issued together (auto-pipelined; per node on a cluster, where topics have their own slots).
  const lengths = await Promise.all(topics.map((topic) => ctx.redis.xlen(ctx.keys.ntfyTopicKey(topic))));
  return topics.map((topic, i) => ({ topic, messages: lengths[i] ?? 0 })).filter((count) => count.messages > 0);
}

export async function createConsoleSession(ctx: RedisContext, session: ConsoleSession): Promise<boolean> {
  const ttlMs = session.expiresAtMs - ctx.clock.nowMs();
  if (ttlMs <= 0) return false;
  const set = await ctx.redis.set(ctx.keys.consoleSessionKey(session.idHash), JSON.stringify(session), 'PX', Math.ceil(ttlMs), 'NX');
  return set === 'OK';
}

export async function findConsoleSession(ctx: RedisContext, idHash: string): Promise<ConsoleSession | null> {
  const raw = await ctx.redis.get(ctx.keys.consoleSessionKey(idHash));
  const parsed = raw === null ? undefined : parseJson(raw);
  if (!isRecord(parsed)) return null;
  const session = parsed as unknown as ConsoleSession;
  return typeof session.expiresAtMs === 'number' && session.expiresAtMs > ctx.clock.nowMs() && session.idHash === idHash ? session : null;
}

export async function deleteConsoleSession(ctx: RedisContext, idHash: string): Promise<boolean> {
  const live = (await findConsoleSession(ctx, idHash)) !== null;
  await ctx.redis.del(ctx.keys.consoleSessionKey(idHash));
  return live;
}
