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
  type UserRelayList,
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
  return stored === 1 ? 'stored' : 'stale';
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
