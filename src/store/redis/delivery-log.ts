/**
 * The delivery log on Redis (port-delivery-log.ts); the layout is in `keys.ts`.
 *
 * The log grows with pushes, so in the cluster layout it is split into shards by recipient
 * (`{dl:S}`, {@link DELIVERY_LOG_SHARDS}); every key of one entry (the app's view, the
 * recipient's, the notification's, the day counters) is in its recipient's shard, and the divine
 * layout is the same code with one shard under seed names.
 *
 * - An append is one script per shard its entries fall in (`appendDeliveryLogShard-n`, every key
 *   declared, all of the shard's slot), issued together: the client sends a few values per entry
 *   instead of the three commands or more a MULTI would take. Entries are independent records: a
 *   crash between two shards' scripts leaves some entries of the append logged and never half an
 *   entry (each script writes an entry's views and its counters whole). The divine layout sends
 *   every shard's writes in one script (`appendDeliveryLog-0`).
 * - A read by recipient is one key; a read by app or by notification reads the first `limit`
 *   members of every shard and merges them by (score, member), the order one ZSET keeps.
 * - A sweep finds the oldest `limit` members the same way and removes each from its own shard's
 *   three views, one MULTI per shard (ZREM: a retry removes nothing twice); whole days of
 *   counters older than the cutoff go with it.
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
import { isRecord, parseJson, prefixed, type RedisContext } from './context.ts';

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

const allShards = (ctx: RedisContext): number[] => Array.from({ length: ctx.keys.deliveryLogShards }, (_, shard) => shard);

/** Group values by the delivery-log shard of their recipient. */
function byShard<T>(ctx: RedisContext, values: readonly T[], recipientOf: (value: T) => string): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const value of values) {
    const shard = ctx.keys.deliveryLogShardOf(recipientOf(value));
    let group = groups.get(shard);
    if (!group) groups.set(shard, (group = []));
    group.push(value);
  }
  return groups;
}

export async function appendDeliveryLog(ctx: RedisContext, entries: readonly NewDeliveryLogEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const atMs = ctx.clock.nowMs();
  const appendId = randomUUID();
  const day = deliveryStatsDay(atMs);
  // The index in the whole append keeps members unique and in append order across shards.
  const indexed = entries.map((given, index) => ({ given, index }));
  if (ctx.keys.layout === 'divine') return appendInOneScript(ctx, indexed, appendId, atMs, day);
  const appends = [...byShard(ctx, indexed, ({ given }) => given.recipient)].map(([shard, group]) => {
    const keys: string[] = [];
    const args: Array<string | number> = [atMs, group.length, day];
    for (const { given, index } of group) {
      const entry: DeliveryLogEntry = { ...given, atMs };
      if (entry.latencyMs !== undefined) entry.latencyMs = Math.round(entry.latencyMs);
      keys.push(
        ctx.keys.deliveryLogKey(entry.appId, shard),
        ctx.keys.deliveryLogRecipientKey(entry.appId, entry.recipient),
        ctx.keys.deliveryLogNotificationKey(entry.appId, entry.notificationId, shard),
      );
      args.push(memberOf(appendId, index, entry));
    }
    // A (notification, recipient) pair is in one shard, so counting per shard counts it once.
    for (const inc of deliveryStatsIncrements(group.map(({ given }) => given))) {
      keys.push(ctx.keys.deliveryStatsKey(inc.appId, day, shard), ctx.keys.deliveryStatsDaysKey(inc.appId, shard));
      args.push(`sent:${inc.type}`, inc.sent, `opened:${inc.type}`, inc.opened);
    }
    return ctx.scripts.run('appendDeliveryLogShard', keys, args);
  });
  await Promise.all(appends);
}

/**
 * The divine layout's append: the writes of every shard's script above in one script call
 * (`appendDeliveryLog-0`), one round trip and no MULTI of several commands per entry (every key is
 * on the one server).
 */
async function appendInOneScript(
  ctx: RedisContext,
  indexed: ReadonlyArray<{ given: NewDeliveryLogEntry; index: number }>,
  appendId: string,
  atMs: number,
  day: number,
): Promise<void> {
  const prefix = prefixed(ctx);
  const members: string[] = [];
  const stats: Array<string | number> = [];
  for (const [shard, group] of byShard(ctx, indexed, ({ given }) => given.recipient)) {
    for (const { given, index } of group) {
      const entry: DeliveryLogEntry = { ...given, atMs };
      if (entry.latencyMs !== undefined) entry.latencyMs = Math.round(entry.latencyMs);
      members.push(
        prefix(ctx.keys.deliveryLogKey(entry.appId, shard)),
        prefix(ctx.keys.deliveryLogRecipientKey(entry.appId, entry.recipient)),
        prefix(ctx.keys.deliveryLogNotificationKey(entry.appId, entry.notificationId, shard)),
        memberOf(appendId, index, entry),
      );
    }
    for (const inc of deliveryStatsIncrements(group.map(({ given }) => given))) {
      stats.push(
        prefix(ctx.keys.deliveryStatsKey(inc.appId, day, shard)),
        `sent:${inc.type}`,
        inc.sent,
        `opened:${inc.type}`,
        inc.opened,
        prefix(ctx.keys.deliveryStatsDaysKey(inc.appId, shard)),
        day,
      );
    }
  }
  await ctx.scripts.run('appendDeliveryLog', [], [atMs, indexed.length, ...members, ...stats]);
}

interface LogMember {
  member: string;
  atMs: number;
}

/** The first `limit` members of the given shard keys in [min, max], merged in one ZSET's order. */
async function firstMembers(
  ctx: RedisContext,
  keys: readonly string[],
  min: number | string,
  max: string,
  limit: number,
): Promise<LogMember[]> {
  const perShard = await Promise.all(keys.map((key) => ctx.redis.zrangebyscore(key, min, max, 'WITHSCORES', 'LIMIT', 0, limit)));
  const merged: LogMember[] = [];
  for (const flat of perShard) {
    for (let i = 0; i + 1 < flat.length; i += 2) merged.push({ member: flat[i] as string, atMs: Number(flat[i + 1]) });
  }
  if (keys.length > 1) merged.sort((a, b) => a.atMs - b.atMs || (a.member < b.member ? -1 : a.member > b.member ? 1 : 0));
  return merged.slice(0, limit);
}

export async function readDeliveryLog(ctx: RedisContext, appId: string, query: DeliveryLogQuery): Promise<DeliveryLogEntry[]> {
  const { recipient, notificationId } = query;
  const keys =
    notificationId !== undefined
      ? // A recipient's entries of a notification are all in the recipient's shard.
        (recipient !== undefined ? [ctx.keys.deliveryLogShardOf(recipient)] : allShards(ctx)).map((shard) =>
          ctx.keys.deliveryLogNotificationKey(appId, notificationId, shard),
        )
      : recipient !== undefined
        ? [ctx.keys.deliveryLogRecipientKey(appId, recipient)]
        : allShards(ctx).map((shard) => ctx.keys.deliveryLogKey(appId, shard));
  const entries: DeliveryLogEntry[] = [];
  for (const { member } of await firstMembers(ctx, keys, query.sinceMs ?? 0, '+inf', query.limit)) {
    const entry = entryOf(member);
    if (!entry) {
      ctx.logger.warn({ keys }, 'delivery log member does not parse; skipped');
      continue;
    }
    if (recipient !== undefined && entry.recipient !== recipient) continue;
    entries.push(entry);
  }
  return entries;
}

export async function sweepDeliveryLog(ctx: RedisContext, appId: string, cutoffMs: number, limit: number): Promise<number> {
  const shards = allShards(ctx);
  const oldest = await firstMembers(
    ctx,
    shards.map((shard) => ctx.keys.deliveryLogKey(appId, shard)),
    '-inf',
    `(${cutoffMs}`,
    limit,
  );
  const cutoffDay = deliveryStatsDay(cutoffMs);
  const oldDays = await Promise.all(
    shards.map((shard) => ctx.redis.zrangebyscore(ctx.keys.deliveryStatsDaysKey(appId, shard), '-inf', `(${cutoffDay}`)),
  );
  const removals = new Map<number, ChainableCommander>();
  const removalOf = (shard: number): ChainableCommander => {
    let multi = removals.get(shard);
    if (!multi) removals.set(shard, (multi = ctx.redis.multi()));
    return multi;
  };
  for (const { member } of oldest) {
    const entry = entryOf(member);
    // An unreadable member has no recipient to find its shard by: remove it from every app view.
    if (!entry) {
      for (const shard of shards) removalOf(shard).zrem(ctx.keys.deliveryLogKey(appId, shard), member);
      continue;
    }
    const shard = ctx.keys.deliveryLogShardOf(entry.recipient);
    removalOf(shard)
      .zrem(ctx.keys.deliveryLogKey(appId, shard), member)
      .zrem(ctx.keys.deliveryLogRecipientKey(appId, entry.recipient), member)
      .zrem(ctx.keys.deliveryLogNotificationKey(appId, entry.notificationId, shard), member);
  }
  shards.forEach((shard, i) => {
    for (const day of oldDays[i] ?? []) {
      removalOf(shard)
        .del(ctx.keys.deliveryStatsKey(appId, Number(day), shard))
        .zrem(ctx.keys.deliveryStatsDaysKey(appId, shard), day);
    }
  });
  await Promise.all([...removals.values()].map(execOrThrow));
  return oldest.length;
}

export async function deliveryOpenRates(ctx: RedisContext, appId: string, sinceMs: number): Promise<TypeOpenRate[]> {
  const sinceDay = deliveryStatsDay(sinceMs);
  const perShard = await Promise.all(
    allShards(ctx).map(async (shard) => {
      const days = await ctx.redis.zrangebyscore(ctx.keys.deliveryStatsDaysKey(appId, shard), sinceDay, '+inf');
      return Promise.all(days.map((day) => ctx.redis.hgetall(ctx.keys.deliveryStatsKey(appId, Number(day), shard))));
    }),
  );
  const byType = new Map<string, TypeOpenRate>();
  for (const counters of perShard.flat()) {
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
