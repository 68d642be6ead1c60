/**
 * Quiet hours and their digests on Redis (port-quiet-hours.ts); the layout is in `keys.ts`.
 *
 * The digest schedule is sharded by pubkey in the cluster layout (one shard, `digests:due`, in
 * divine), and a user's held counts live in the slot of their shard: holding, claiming and
 * completing a digest are each one script in one slot. A claim looks at the oldest due entry of
 * every shard (one command per shard, issued at once) and takes the oldest of them.
 */
import type { DueDigest, QuietHours } from '../port-quiet-hours.ts';
import { isRecord, parseJson, type RedisContext } from './context.ts';

/** Claims that lose a race with another worker before one is handed out. */
const CLAIM_RACE_RETRIES = 5;

function parseQuietHours(raw: string | null): QuietHours | null {
  if (raw === null) return null;
  const value = parseJson(raw);
  if (!isRecord(value) || typeof value.startMinute !== 'number' || typeof value.endMinute !== 'number') return null;
  const urgent = Array.isArray(value.urgentTypes) ? value.urgentTypes.filter((t): t is string => typeof t === 'string') : [];
  return { startMinute: value.startMinute, endMinute: value.endMinute, urgentTypes: urgent };
}

export async function setQuietHours(ctx: RedisContext, pubkey: string, quietHours: QuietHours | null): Promise<void> {
  if (quietHours === null) await ctx.redis.del(ctx.keys.quietHoursKey(pubkey));
  else await ctx.redis.set(ctx.keys.quietHoursKey(pubkey), JSON.stringify(quietHours));
}

export async function readQuietHours(ctx: RedisContext, pubkeys: readonly string[]): Promise<Array<QuietHours | null>> {
  if (pubkeys.length === 0) return [];
  // One GET per user (each in its own slot in a cluster), issued at once: auto-pipelining sends them together.
  const raws = await Promise.all(pubkeys.map((pubkey) => ctx.redis.get(ctx.keys.quietHoursKey(pubkey))));
  return raws.map(parseQuietHours);
}

export async function holdForDigest(ctx: RedisContext, pubkey: string, type: string, releaseAtMs: number): Promise<void> {
  await ctx.scripts.run('holdForDigest', [ctx.keys.digestKey(pubkey), ctx.keys.digestsDueKeyOf(pubkey)], [pubkey, type, releaseAtMs]);
}

/** The pubkeys whose digests are due, oldest first, at most one per shard. */
async function oldestDuePerShard(ctx: RedisContext, nowMs: number): Promise<string[]> {
  const heads = await Promise.all(
    ctx.keys.digestsDueKeys.map((key) => ctx.redis.zrangebyscore(key, '-inf', nowMs, 'WITHSCORES', 'LIMIT', 0, 1)),
  );
  return heads
    .filter((head): head is [string, string] => head.length === 2)
    .sort((a, b) => Number(a[1]) - Number(b[1]))
    .map(([pubkey]) => pubkey);
}

export async function claimDueDigest(ctx: RedisContext, leaseMs: number): Promise<DueDigest | null> {
  for (let attempt = 0; attempt < CLAIM_RACE_RETRIES; attempt++) {
    const nowMs = ctx.clock.nowMs();
    const candidates = await oldestDuePerShard(ctx, nowMs);
    if (candidates.length === 0) return null;
    const leaseExpiresAtMs = nowMs + leaseMs;
    for (const pubkey of candidates) {
      const flat = (await ctx.scripts.run(
        'claimDigest',
        [ctx.keys.digestsDueKeyOf(pubkey), ctx.keys.digestKey(pubkey)],
        [pubkey, nowMs, leaseExpiresAtMs],
      )) as string[] | null;
      // Another worker took it between the look and the claim: try the next shard's.
      if (!flat) continue;
      const counts: Record<string, number> = {};
      for (let i = 0; i + 1 < flat.length; i += 2) if (Number(flat[i + 1]) > 0) counts[flat[i] as string] = Number(flat[i + 1]);
      return { pubkey, counts, leaseExpiresAtMs };
    }
  }
  return null;
}

export async function completeDigest(ctx: RedisContext, pubkey: string, counts: Readonly<Record<string, number>>): Promise<void> {
  await ctx.scripts.run(
    'completeDigest',
    [ctx.keys.digestKey(pubkey), ctx.keys.digestsDueKeyOf(pubkey)],
    [pubkey, ctx.clock.nowMs(), ...Object.entries(counts).flat()],
  );
}
