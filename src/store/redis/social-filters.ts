/**
 * Social filters on Redis (port-social-filters.ts): one STRING per user with filters,
 * `social_filters:{pubkey}`, the JSON document the port describes, never expiring. Read with
 * one GET per pubkey, issued together (auto-pipelining sends them in one write per node; a
 * MULTI or an explicit pipeline would have to stay on one node of a cluster).
 */
import { decodeSocialFilters, encodeSocialFilters, filtersNothing, type SocialFilters } from '../port-social-filters.ts';
import type { RedisContext } from './context.ts';

export async function setSocialFilters(ctx: RedisContext, pubkey: string, filters: SocialFilters | null): Promise<void> {
  if (filters === null || filtersNothing(filters)) await ctx.redis.del(ctx.keys.socialFiltersKey(pubkey));
  else await ctx.redis.set(ctx.keys.socialFiltersKey(pubkey), encodeSocialFilters(filters));
}

export async function getSocialFilters(ctx: RedisContext, pubkeys: readonly string[]): Promise<Array<SocialFilters | null>> {
  if (pubkeys.length === 0) return [];
  const replies = await Promise.all(pubkeys.map((pubkey) => ctx.redis.get(ctx.keys.socialFiltersKey(pubkey))));
  return pubkeys.map((pubkey, i) => {
    const raw = replies[i];
    if (typeof raw !== 'string') return null;
    const filters = decodeSocialFilters(raw);
    if (filters === null) ctx.logger.warn({ pubkey }, 'social_filters is not a filter document; ignored');
    return filters;
  });
}
