/**
 * Social filters on Redis (port-social-filters.ts): one STRING per user with filters,
 * `social_filters:{pubkey}`, the JSON document the port describes, never expiring. Read with
 * one GET per pubkey in a pipeline (one round trip; no multi-key command, so it holds on a
 * cluster too).
 */
import { decodeSocialFilters, encodeSocialFilters, filtersNothing, type SocialFilters } from '../port-social-filters.ts';
import type { RedisContext } from './context.ts';

export async function setSocialFilters(ctx: RedisContext, pubkey: string, filters: SocialFilters | null): Promise<void> {
  if (filters === null || filtersNothing(filters)) await ctx.redis.del(ctx.keys.socialFiltersKey(pubkey));
  else await ctx.redis.set(ctx.keys.socialFiltersKey(pubkey), encodeSocialFilters(filters));
}

export async function getSocialFilters(ctx: RedisContext, pubkeys: readonly string[]): Promise<Array<SocialFilters | null>> {
  if (pubkeys.length === 0) return [];
  const pipeline = ctx.redis.pipeline();
  for (const pubkey of pubkeys) pipeline.get(ctx.keys.socialFiltersKey(pubkey));
  const replies = (await pipeline.exec()) ?? [];
  return pubkeys.map((pubkey, i) => {
    const [error, raw] = replies[i] ?? [null, null];
    if (error) throw error;
    if (typeof raw !== 'string') return null;
    const filters = decodeSocialFilters(raw);
    if (filters === null) ctx.logger.warn({ pubkey }, 'social_filters is not a filter document; ignored');
    return filters;
  });
}
