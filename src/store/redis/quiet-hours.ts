/** Quiet hours and their digests on Redis (port-quiet-hours.ts); the layout is in `keys.ts`. */
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
  return (await ctx.redis.mget(pubkeys.map(ctx.keys.quietHoursKey))).map(parseQuietHours);
}

export async function holdForDigest(ctx: RedisContext, pubkey: string, type: string, releaseAtMs: number): Promise<void> {
  await ctx.scripts.run('holdForDigest', [ctx.keys.digestKey(pubkey), ctx.keys.digestsDueKey], [pubkey, type, releaseAtMs]);
}

export async function claimDueDigest(ctx: RedisContext, leaseMs: number): Promise<DueDigest | null> {
  for (let attempt = 0; attempt < CLAIM_RACE_RETRIES; attempt++) {
    const nowMs = ctx.clock.nowMs();
    const [pubkey] = await ctx.redis.zrangebyscore(ctx.keys.digestsDueKey, '-inf', nowMs, 'LIMIT', 0, 1);
    if (pubkey === undefined) return null;
    const leaseExpiresAtMs = nowMs + leaseMs;
    const flat = (await ctx.scripts.run(
      'claimDigest',
      [ctx.keys.digestsDueKey, ctx.keys.digestKey(pubkey)],
      [pubkey, nowMs, leaseExpiresAtMs],
    )) as string[] | null;
    if (!flat) continue;
    const raw: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) raw[flat[i] as string] = flat[i + 1] as string;
    const counts: Record<string, number> = {};
    for (const [type, n] of Object.entries(raw)) if (Number(n) > 0) counts[type] = Number(n);
    return { pubkey, counts, leaseExpiresAtMs };
  }
  return null;
}

export async function completeDigest(ctx: RedisContext, pubkey: string, counts: Readonly<Record<string, number>>): Promise<void> {
  await ctx.scripts.run(
    'completeDigest',
    [ctx.keys.digestKey(pubkey), ctx.keys.digestsDueKey],
    [pubkey, ctx.clock.nowMs(), ...Object.entries(counts).flat()],
  );
}
