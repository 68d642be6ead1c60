/**
 * User relay lists on Redis (port-user-relays.ts): one HASH per user, `user_relays:{pubkey}`,
 * field = source, value = the list's JSON document, replaced only through `putUserRelayList-1.lua`
 * (NIP-01's newest-wins rule in one step). The user is added to the index `user_relay_users`
 * first, in its own step (another slot in the cluster): a crash between the two leaves an index
 * entry without a list, which the coverage read skips, never a list the index misses.
 *
 * The coverage read walks the index (SSCAN per shard), reads the lists of a page of users (one
 * HGETALL per user, auto-pipelined) and their devices through the store's own recipient read,
 * and ranks in memory (`rankRelayCoverage`), so both adapters rank with one function.
 *
 * Changes (a stored list, a noted device change) go to `user_relay_changes` (a ZSET per index
 * shard, pubkey → ms of the store clock, only ever raised), written after the list itself, so a
 * reader that sees the change reads the new list. The backfill walk scans the token-record shards'
 * owners (`token_to_pubkey`, the truth about who has a device) with HSCAN.
 */
import type { RecipientGateState } from '../port.ts';
import {
  decodeUserRelayList,
  encodeUserRelayList,
  isUserRelaySource,
  noUserRelayLists,
  rankRelayCoverage,
  type PutUserRelayListResult,
  type RelayCoverage,
  type UserRelayChange,
  type UserRelayList,
  USER_RELAY_CHANGE_RETENTION_MS,
  type UserRelayLists,
} from '../port-user-relays.ts';
import type { RedisContext } from './context.ts';

/** Index members per SSCAN step and users per read of lists and devices. */
export const USER_RELAY_SCAN_PAGE = 500;

export async function putUserRelayList(ctx: RedisContext, pubkey: string, list: UserRelayList): Promise<PutUserRelayListResult> {
  if (!Number.isInteger(list.createdAt) || list.createdAt < 0)
    throw new RangeError(`putUserRelayList: createdAt must be a non-negative integer, got ${list.createdAt}`);
  await ctx.redis.sadd(ctx.keys.userRelayIndexKey(pubkey), pubkey);
  const stored = await ctx.scripts.run(
    'putUserRelayList',
    [ctx.keys.userRelaysKey(pubkey)],
    [list.source, list.createdAt, list.eventId, encodeUserRelayList(list)],
  );
  if (stored !== 1) return 'stale';
  await noteUserRelayChange(ctx, [pubkey]);
  return 'stored';
}

export async function noteUserRelayChange(ctx: RedisContext, pubkeys: readonly string[]): Promise<void> {
  const nowMs = ctx.clock.nowMs();
  const byKey = new Map<string, string[]>();
  for (const pubkey of pubkeys) {
    const key = ctx.keys.userRelayChangesKey(pubkey);
    byKey.set(key, [...(byKey.get(key) ?? []), pubkey]);
  }
  await Promise.all(
    [...byKey].map(async ([key, members]) => {
      // GT: a change is only ever moved later (another process's clock may lag by a little).
      await ctx.redis.zadd(key, 'GT', ...members.flatMap((pubkey) => [nowMs, pubkey]));
      await ctx.redis.zremrangebyscore(key, '-inf', `(${nowMs - USER_RELAY_CHANGE_RETENTION_MS}`);
    }),
  );
}

export async function userRelayChangesSince(ctx: RedisContext, sinceMs: number, limit: number): Promise<UserRelayChange[]> {
  if (limit <= 0) return [];
  // Older entries are past the retention: not answered, whether or not a write trimmed them yet.
  const fromMs = Math.max(sinceMs, ctx.clock.nowMs() - USER_RELAY_CHANGE_RETENTION_MS - 1);
  const pages = await Promise.all(
    ctx.keys.userRelayChangesKeys.map((key) => ctx.redis.zrangebyscore(key, `(${fromMs}`, '+inf', 'WITHSCORES', 'LIMIT', 0, limit)),
  );
  const changes: UserRelayChange[] = [];
  for (const page of pages)
    for (let i = 0; i + 1 < page.length; i += 2) changes.push({ pubkey: page[i] ?? '', changedMs: Number(page[i + 1]) });
  // Each shard gave its oldest `limit`: the oldest `limit` of all of them are among those.
  changes.sort((a, b) => a.changedMs - b.changedMs || (a.pubkey < b.pubkey ? -1 : a.pubkey > b.pubkey ? 1 : 0));
  return changes.slice(0, limit);
}

/**
 * One HSCAN step (COUNT `limit`, a hint Redis may exceed) over a token-record shard's owners; the
 * cursor is `shard:hscanCursor`. Owners with a `nip65` or `dm` list are left out.
 */
export async function usersWithoutRelayLists(
  ctx: RedisContext,
  cursor: string | null,
  limit: number,
): Promise<{ pubkeys: string[]; cursor: string | null }> {
  const [shardText, scanCursor] = (cursor ?? '0:0').split(':');
  const shard = Number(shardText);
  if (!Number.isInteger(shard) || shard < 0 || shard >= ctx.keys.tokenShards || scanCursor === undefined)
    throw new RangeError(`usersWithoutRelayLists: not a cursor of this store: ${cursor ?? ''}`);
  const [next, flat] = await ctx.redis.hscan(ctx.keys.tokenShardKeys(shard).owners, scanCursor, 'COUNT', Math.max(1, limit));
  const owners = [...new Set(flat.filter((_, i) => i % 2 === 1))];
  const lists = await Promise.all(owners.map((pubkey) => ctx.redis.hmget(ctx.keys.userRelaysKey(pubkey), 'nip65', 'dm')));
  const pubkeys = owners.filter((_, i) => (lists[i] ?? []).every((raw) => raw === null));
  const nextCursor = next !== '0' ? `${shard}:${next}` : shard + 1 < ctx.keys.tokenShards ? `${shard + 1}:0` : null;
  return { pubkeys, cursor: nextCursor };
}

export async function getUserRelayLists(ctx: RedisContext, pubkeys: readonly string[]): Promise<UserRelayLists[]> {
  if (pubkeys.length === 0) return [];
  const replies = await Promise.all(pubkeys.map((pubkey) => ctx.redis.hgetall(ctx.keys.userRelaysKey(pubkey))));
  return pubkeys.map((pubkey, i) => {
    const lists = noUserRelayLists();
    for (const [field, raw] of Object.entries(replies[i] ?? {})) {
      if (!isUserRelaySource(field)) continue;
      const list = decodeUserRelayList(field, raw);
      if (list === null) ctx.logger.warn({ pubkey, source: field }, 'user_relays holds an unreadable list; ignored');
      else lists[field] = list;
    }
    return lists;
  });
}

export async function userRelayCoverage(
  ctx: RedisContext,
  readRecipients: (pubkeys: readonly string[]) => Promise<RecipientGateState[]>,
): Promise<RelayCoverage[]> {
  const covered: Array<{ pubkey: string; lists: UserRelayLists }> = [];
  const seen = new Set<string>();
  for (const indexKey of ctx.keys.userRelayIndexKeys) {
    let cursor = '0';
    do {
      const [next, members] = await ctx.redis.sscan(indexKey, cursor, 'COUNT', USER_RELAY_SCAN_PAGE);
      cursor = next;
      // SSCAN may return a member twice across steps.
      const page = members.filter((pubkey) => !seen.has(pubkey));
      for (const pubkey of page) seen.add(pubkey);
      if (page.length === 0) continue;
      const [lists, recipients] = await Promise.all([getUserRelayLists(ctx, page), readRecipients(page)]);
      page.forEach((pubkey, i) => {
        if ((recipients[i]?.devices.length ?? 0) > 0) covered.push({ pubkey, lists: lists[i] ?? noUserRelayLists() });
      });
    } while (cursor !== '0');
  }
  return rankRelayCoverage(covered);
}
