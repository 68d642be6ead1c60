/**
 * The mute and "only people I follow" gate of one recipient (issue 16), after the preference
 * gate: a sender the recipient muted (public kind 10000 `p` tags, or the private ones shared in
 * kind 3083 `mutedPubkeys`) never reaches them, whatever the type; with `onlyFollowing` on for the
 * type, neither does a sender missing from their kind 3 contact list.
 *
 * Because it runs before the coalescing decision, a muted like or repost never enters a group:
 * a summary neither counts nor names a muted actor.
 */
import type { SocialFilters } from '../store/port-social-filters.ts';
import type { SocialListCache, SocialLists } from './social-lists.ts';
import type { NotificationType } from '../notification/types.ts';

/** Why the gate stopped a recipient (a `GateOutcome`). */
export type SocialGateOutcome = 'muted' | 'not_followed';

/** Whether `onlyFollowing` covers `type`. */
export function onlyFollowingCovers(filters: SocialFilters | null, type: NotificationType): boolean {
  const only = filters?.onlyFollowing ?? null;
  return only === 'all' || (only !== null && only.includes(type));
}

/**
 * The decision, as a pure function of the recipient's lists and filters. A contact list that was
 * not found (`follows` null) lets the sender through: the gate cannot tell, and a relay outage
 * must not silence the recipient.
 */
export function socialGateOutcome(
  lists: SocialLists,
  filters: SocialFilters | null,
  sender: string,
  type: NotificationType,
): SocialGateOutcome | null {
  if (lists.muted.has(sender) || (filters?.mutedPubkeys.includes(sender) ?? false)) return 'muted';
  if (onlyFollowingCovers(filters, type) && lists.follows !== null && !lists.follows.has(sender)) return 'not_followed';
  return null;
}

/**
 * The gate with its lookups: the relay lists are only fetched through `lists` (absent when
 * `nostr.honour_user_lists` is off; then only the 3083 mutes apply).
 */
export async function checkSocialGate(
  lists: SocialListCache | null,
  filters: SocialFilters | null,
  recipient: string,
  sender: string,
  type: NotificationType,
): Promise<SocialGateOutcome | null> {
  const found = lists === null ? { muted: new Set<string>(), follows: null } : await lists.lists(recipient);
  return socialGateOutcome(found, filters, sender, type);
}
