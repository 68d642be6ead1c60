/**
 * Storage of a user's social filters from kind 3083 (issue 16): the pubkeys they muted privately
 * and their "only people I follow" choice. Part of {@link StorePort}; implemented by both
 * adapters; tested in `test/store/contract/social-filters.ts`.
 *
 * Why apart from the preferences: divine's `user_preferences:{pubkey}` document is exactly
 * `{"kinds":[…]}` and is shared with divine deployments; these fields are nostr-push's own.
 *
 * Not part of this contract: the public mute list (kind 10000) and the contact list (kind 3),
 * which live on relays and are cached in memory by the engine (`engine/social-lists.ts`); and
 * validating pubkeys and types, which the 3083 parser does before anything reaches the store.
 */

export interface SocialFilters {
  /**
   * Hex pubkeys muted in the private (encrypted) part of the user's kind 10000, which the user
   * shares with the service by copying them into kind 3083 `mutedPubkeys`.
   */
  mutedPubkeys: string[];
  /**
   * `onlyFollowing` of kind 3083: `'all'` (the preference `true`) limits every notification type
   * to senders in the user's kind 3 contact list, a list of types limits those types; null is off.
   */
  onlyFollowing: 'all' | string[] | null;
}

export interface SocialFilterStore {
  /**
   * Replace the user's filters (a 3083 is the whole description); null, or filters with nothing
   * muted and `onlyFollowing` off, removes them. Values are stored and returned as given.
   */
  setSocialFilters(pubkey: string, filters: SocialFilters | null): Promise<void>;
  /**
   * The filters of each pubkey, in order; null where none are stored (or the stored document is
   * unreadable, which is logged). [] reads nothing.
   */
  getSocialFilters(pubkeys: readonly string[]): Promise<Array<SocialFilters | null>>;
}

/** True when `filters` filter nothing, so storing them is the same as storing none. */
export function filtersNothing(filters: SocialFilters | null): boolean {
  return filters === null || (filters.mutedPubkeys.length === 0 && filters.onlyFollowing === null);
}

/** The stored JSON document of `filters`. */
export function encodeSocialFilters(filters: SocialFilters): string {
  return JSON.stringify({ mutedPubkeys: filters.mutedPubkeys, onlyFollowing: filters.onlyFollowing });
}

/** A stored document back, or null when it is not one (damaged or written by something else). */
export function decodeSocialFilters(raw: string): SocialFilters | null {
  let document: unknown;
  try {
    document = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof document !== 'object' || document === null) return null;
  const { mutedPubkeys, onlyFollowing } = document as Record<string, unknown>;
  if (!Array.isArray(mutedPubkeys) || !mutedPubkeys.every((p): p is string => typeof p === 'string')) return null;
  if (onlyFollowing === null || onlyFollowing === 'all') return { mutedPubkeys, onlyFollowing };
  if (Array.isArray(onlyFollowing) && onlyFollowing.every((t): t is string => typeof t === 'string'))
    return { mutedPubkeys, onlyFollowing };
  return null;
}
