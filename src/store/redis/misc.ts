/**
 * Preferences, relay cursors and the profile cache on Redis.
 *
 * Preferences keep divine-push-service's two keys: `user_preferences:{pubkey}` holds exactly
 * `{"kinds":[…]}` and `campaign_consent:{pubkey}` exists ("1") only while campaigns are enabled.
 * A missing or unreadable preferences document reads as "never set" (null), so callers fall
 * back to the defaults instead of failing on a damaged key.
 */
import type { CachedProfile, Preferences } from '../port.ts';
import { expirySeconds, isRecord, parseJson, type RedisContext } from './context.ts';

/** What `campaign_consent:{pubkey}` holds while campaigns are enabled. */
const CAMPAIGN_CONSENT_VALUE = '1';
/** Consent values read as "not consented" besides a missing key (written by hand or elsewhere). */
const CAMPAIGN_CONSENT_REFUSED = new Set(['', '0', 'false']);

/** Whether a `campaign_consent:{pubkey}` value (null when absent) means consent. */
export function consentGiven(consent: string | null | undefined): boolean {
  return consent !== null && consent !== undefined && !CAMPAIGN_CONSENT_REFUSED.has(consent.trim().toLowerCase());
}

/** The kinds of a `user_preferences:{pubkey}` document, or null when it is not `{"kinds":[integers]}`. */
export function parseKinds(raw: string): number[] | null {
  const document = parseJson(raw);
  if (!isRecord(document) || !Array.isArray(document.kinds)) return null;
  const kinds: unknown[] = document.kinds;
  return kinds.every((kind): kind is number => Number.isInteger(kind)) ? kinds : null;
}

export async function getPreferences(ctx: RedisContext, pubkey: string): Promise<Preferences | null> {
  const [rawPreferences, consent] = await ctx.redis.mget(ctx.keys.userPreferencesKey(pubkey), ctx.keys.campaignConsentKey(pubkey));
  if (rawPreferences === null || rawPreferences === undefined) return null;
  const kinds = parseKinds(rawPreferences);
  if (kinds === null) {
    ctx.logger.warn({ pubkey }, 'user_preferences is not {"kinds":[integers]}; using defaults');
    return null;
  }
  const campaignsEnabled = consentGiven(consent);
  return { kinds, campaignsEnabled };
}

export async function setPreferences(ctx: RedisContext, pubkey: string, preferences: Preferences): Promise<void> {
  if (!Array.isArray(preferences.kinds) || !preferences.kinds.every((kind) => Number.isInteger(kind))) {
    throw new TypeError('setPreferences: kinds must be an array of integers');
  }
  const multi = ctx.redis.multi().set(ctx.keys.userPreferencesKey(pubkey), JSON.stringify({ kinds: preferences.kinds }));
  if (preferences.campaignsEnabled) multi.set(ctx.keys.campaignConsentKey(pubkey), CAMPAIGN_CONSENT_VALUE);
  else multi.del(ctx.keys.campaignConsentKey(pubkey));
  const results = (await multi.exec()) ?? [];
  for (const [error] of results) if (error) throw error;
}

export async function getRelayCursor(ctx: RedisContext, relayUrl: string): Promise<number | null> {
  const raw = await ctx.redis.hget(ctx.keys.relayCursorsKey, relayUrl);
  if (raw === null) return null;
  const createdAt = Number(raw);
  if (raw.trim() !== '' && Number.isFinite(createdAt)) return createdAt;
  ctx.logger.warn({ relay: relayUrl, raw }, 'relay cursor is not a number; ignored');
  return null;
}

export async function advanceRelayCursor(ctx: RedisContext, relayUrl: string, createdAt: number): Promise<void> {
  if (!Number.isSafeInteger(createdAt) || createdAt < 0) {
    throw new RangeError(`advanceRelayCursor: createdAt must be a non-negative integer, got ${createdAt}`);
  }
  await ctx.scripts.run('advanceRelayCursor', [ctx.keys.relayCursorsKey], [relayUrl, createdAt]);
}

export async function getCachedProfile(ctx: RedisContext, pubkey: string): Promise<CachedProfile | null> {
  const raw = await ctx.redis.get(ctx.keys.profileCacheKey(pubkey));
  if (raw === null) return null;
  const document = parseJson(raw);
  if (!isRecord(document)) {
    ctx.logger.warn({ pubkey }, 'profile_cache entry is not a JSON object; treated as a miss');
    return null;
  }
  const profile: CachedProfile = { pubkey };
  if (typeof document.name === 'string') profile.name = document.name;
  if (typeof document.display_name === 'string') profile.display_name = document.display_name;
  return profile;
}

/** Stored as divine stores it: `{pubkey,name,display_name}` with null for a missing name. */
export async function cacheProfile(ctx: RedisContext, profile: CachedProfile, ttlSecs: number): Promise<void> {
  const document = { pubkey: profile.pubkey, name: profile.name ?? null, display_name: profile.display_name ?? null };
  await ctx.redis.setex(ctx.keys.profileCacheKey(profile.pubkey), expirySeconds('cacheProfile', ttlSecs), JSON.stringify(document));
}
