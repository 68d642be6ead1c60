/**
 * The delivery log on Redis (port-delivery-log.ts); the layout is in `keys.ts`. An append is one
 * MULTI (the entry in three ZSETs, the day counters); a sweep reads the oldest members of the
 * app's ZSET and removes each from its three ZSETs in one MULTI.
 */
import { randomUUID } from 'node:crypto';
import type { ChainableCommander } from 'ioredis';
import {
  DELIVERY_STATUSES,
  deliveryStatsDay,
  deliveryStatsIncrements,
  type DeliveryLogEntry,
  type DeliveryLogQuery,
  type NewDeliveryLogEntry,
  type TypeOpenRate,
} from '../port-delivery-log.ts';
import { isRecord, parseJson, type RedisContext } from './context.ts';

const MEMBER_SEPARATOR = '|';

async function execOrThrow(chain: ChainableCommander): Promise<unknown[]> {
  const results = (await chain.exec()) ?? [];
  return results.map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}

function memberOf(appendId: string, index: number, entry: DeliveryLogEntry): string {
  return `${appendId}${String(index).padStart(6, '0')}${MEMBER_SEPARATOR}${JSON.stringify(entry)}`;
}

function entryOf(member: string): DeliveryLogEntry | null {
  const parsed = parseJson(member.slice(member.indexOf(MEMBER_SEPARATOR) + 1));
  if (!isRecord(parsed) || typeof parsed.appId !== 'string' || typeof parsed.recipient !== 'string') return null;
  if (typeof parsed.notificationId !== 'string' || !DELIVERY_STATUSES.includes(parsed.status as DeliveryLogEntry['status'])) return null;
  return parsed as unknown as DeliveryLogEntry;
}

export async function appendDeliveryLog(ctx: RedisContext, entries: readonly NewDeliveryLogEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const atMs = ctx.clock.nowMs();
  const appendId = randomUUID();
  const multi = ctx.redis.multi();
  entries.forEach((given, index) => {
    const entry: DeliveryLogEntry = { ...given, atMs };
    if (entry.latencyMs !== undefined) entry.latencyMs = Math.round(entry.latencyMs);
    const member = memberOf(appendId, index, entry);
    multi.zadd(ctx.keys.deliveryLogKey(entry.appId), atMs, member);
    multi.zadd(ctx.keys.deliveryLogRecipientKey(entry.appId, entry.recipient), atMs, member);
    multi.zadd(ctx.keys.deliveryLogNotificationKey(entry.appId, entry.notificationId), atMs, member);
  });
  const day = deliveryStatsDay(atMs);
  for (const inc of deliveryStatsIncrements(entries)) {
    if (inc.sent > 0) multi.hincrby(ctx.keys.deliveryStatsKey(inc.appId, day), `sent:${inc.type}`, inc.sent);
    if (inc.opened > 0) multi.hincrby(ctx.keys.deliveryStatsKey(inc.appId, day), `opened:${inc.type}`, inc.opened);
    multi.zadd(ctx.keys.deliveryStatsDaysKey(inc.appId), day, String(day));
  }
  await execOrThrow(multi);
}

export async function readDeliveryLog(ctx: RedisContext, appId: string, query: DeliveryLogQuery): Promise<DeliveryLogEntry[]> {
  const key =
    query.notificationId !== undefined
      ? ctx.keys.deliveryLogNotificationKey(appId, query.notificationId)
      : query.recipient !== undefined
        ? ctx.keys.deliveryLogRecipientKey(appId, query.recipient)
        : ctx.keys.deliveryLogKey(appId);
  const members = await ctx.redis.zrangebyscore(key, query.sinceMs ?? 0, '+inf', 'LIMIT', 0, query.limit);
  const entries: DeliveryLogEntry[] = [];
  for (const member of members) {
    const entry = entryOf(member);
    if (!entry) {
      ctx.logger.warn({ key }, 'delivery log member does not parse; skipped');
      continue;
    }
    if (query.recipient !== undefined && entry.recipient !== query.recipient) continue;
    entries.push(entry);
  }
  return entries;
}

export async function sweepDeliveryLog(ctx: RedisContext, appId: string, cutoffMs: number, limit: number): Promise<number> {
  const members = await ctx.redis.zrangebyscore(ctx.keys.deliveryLogKey(appId), '-inf', `(${cutoffMs}`, 'LIMIT', 0, limit);
  const multi = ctx.redis.multi();
  for (const member of members) {
    multi.zrem(ctx.keys.deliveryLogKey(appId), member);
    const entry = entryOf(member);
    if (!entry) continue;
    multi.zrem(ctx.keys.deliveryLogRecipientKey(appId, entry.recipient), member);
    multi.zrem(ctx.keys.deliveryLogNotificationKey(appId, entry.notificationId), member);
  }
  const cutoffDay = deliveryStatsDay(cutoffMs);
  const days = await ctx.redis.zrangebyscore(ctx.keys.deliveryStatsDaysKey(appId), '-inf', `(${cutoffDay}`);
  for (const day of days) {
    multi.del(ctx.keys.deliveryStatsKey(appId, Number(day)));
    multi.zrem(ctx.keys.deliveryStatsDaysKey(appId), day);
  }
  await execOrThrow(multi);
  return members.length;
}

export async function deliveryOpenRates(ctx: RedisContext, appId: string, sinceMs: number): Promise<TypeOpenRate[]> {
  const days = await ctx.redis.zrangebyscore(ctx.keys.deliveryStatsDaysKey(appId), deliveryStatsDay(sinceMs), '+inf');
  const pipeline = ctx.redis.pipeline();
  for (const day of days) pipeline.hgetall(ctx.keys.deliveryStatsKey(appId, Number(day)));
  const byType = new Map<string, TypeOpenRate>();
  for (const counters of (await execOrThrow(pipeline)) as Array<Record<string, string>>) {
    for (const [field, value] of Object.entries(counters)) {
      const colon = field.indexOf(':');
      const kind = field.slice(0, colon);
      const type = field.slice(colon + 1);
      let rate = byType.get(type);
      if (!rate) {
        rate = { type, sent: 0, opened: 0 };
        byType.set(type, rate);
      }
      if (kind === 'sent') rate.sent += Number(value);
      else if (kind === 'opened') rate.opened += Number(value);
    }
  }
  return [...byType.values()].sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
}
