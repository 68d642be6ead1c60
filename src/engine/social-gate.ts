/**
 * The mute and "only people I follow" gate of one recipient (issues 16 and 36), after the
 * preference gate: a notification the recipient muted — its sender (public kind 10000 `p` tags,
 * or the private ones shared in kind 3083 `mutedPubkeys`), or what it is about (the kind 10000
 * hashtags, words and threads; `mute-match.ts`) — never reaches them, whatever the type; with
 * `onlyFollowing` on for the type, neither does a sender missing from their kind 3 contact list.
 *
 * Because it runs before the coalescing decision, a muted like or repost never enters a group:
 * a summary neither counts nor names a muted actor.
 */
import type { SocialFilters } from '../store/port-social-filters.ts';
import { EMPTY_MUTE_LIST } from '../nostr/nip51-mutes.ts';
import { muteReason, type MuteReason, type MuteSubject } from './mute-match.ts';
import type { SocialListCache, SocialLists } from './social-lists.ts';
import type { NotificationType } from '../notification/types.ts';

/** Why the gate stopped a recipient (a `GateOutcome`). */
export type SocialGateOutcome = 'muted' | 'not_followed';

/** The gate's refusal: muted (with what matched), or not followed. */
export type SocialGateStop = { outcome: 'muted'; mutedBy: MuteReason } | { outcome: 'not_followed' };

/** Whether `onlyFollowing` covers `type`. */
export function onlyFollowingCovers(filters: SocialFilters | null, type: NotificationType): boolean {
  const only = filters?.onlyFollowing ?? null;
  return only === 'all' || (only !== null && only.includes(type));
}

/**
 * The decision, as a pure function of the recipient's lists and filters. A contact list that was
 * not found (`follows` null) lets the sender through: the gate cannot tell, and a relay outage
 * must not silence the recipient. `subject` is the event the notification is about; null (a
 * coalesced summary, about many events) checks the sender only.
 */
export function socialGateOutcome(
  lists: SocialLists,
  filters: SocialFilters | null,
  sender: string,
  type: NotificationType,
  subject: MuteSubject | null = null,
): SocialGateStop | null {
  if (filters?.mutedPubkeys.includes(sender) ?? false) return { outcome: 'muted', mutedBy: 'pubkey' };
  const mutedBy = muteReason(lists.mutes, sender, subject);
  if (mutedBy !== null) return { outcome: 'muted', mutedBy };
  if (onlyFollowingCovers(filters, type) && lists.follows !== null && !lists.follows.has(sender)) return { outcome: 'not_followed' };
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
  subject: MuteSubject | null = null,
): Promise<SocialGateStop | null> {
  const found = lists === null ? { mutes: EMPTY_MUTE_LIST, follows: null } : await lists.lists(recipient);
  return socialGateOutcome(found, filters, sender, type, subject);
}
