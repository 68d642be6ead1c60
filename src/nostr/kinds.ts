/**
 * Every event kind nostr-push reads or writes, by name. Code outside this module never spells a
 * kind number.
 */

/** NIP-01 short text note (issue 21: replies and mentions, when an app turns `events.text_notes` on). */
export const TEXT_NOTE = 1;
/** NIP-57 zap request: signed by the payer, carried inside a receipt's `description` tag, never published. */
export const ZAP_REQUEST = 9734;
/** NIP-57 zap receipt: published by the recipient's lnurl provider once the invoice is paid. */
export const ZAP_RECEIPT = 9735;
/** NIP-01 profile metadata; display names for notification text. */
export const METADATA = 0;
/** NIP-02 contact list ("follows"): replaceable, `p` tags. */
export const CONTACTS = 3;
/** NIP-25 reaction (a like, or any emoji). */
export const REACTION = 7;
/** NIP-18 generic repost (of any kind but 1). */
export const GENERIC_REPOST = 16;
/** NIP-51 mute list: replaceable, public `p` tags (a private part is encrypted to its author). */
export const MUTE_LIST = 10_000;
/** NIP-65 relay list: replaceable, `r` tags with an optional `read`/`write` marker. */
export const RELAY_LIST = 10_002;
/** NIP-17 DM relay list: replaceable, `relay` tags naming where the user wants gift wraps sent. */
export const DM_RELAY_LIST = 10_050;
/** NIP-59 gift wrap; a direct message we can only announce, never read. */
export const GIFT_WRAP = 1059;
/** NIP-22 comment. */
export const COMMENT = 1111;
/** divine push: register a push token (NIP-44 content addressed to the service). */
export const REGISTER_TOKEN = 3079;
/** divine push: deregister a push token (NIP-44 content addressed to the service). */
export const DEREGISTER_TOKEN = 3080;
/** divine push: notification preferences (NIP-44 content addressed to the service). */
export const PREFERENCES = 3083;
/** NIP-42 client authentication to a relay; never broadcast. */
export const CLIENT_AUTH = 22242;
/** NIP-51 follow set; with `d=notify` it is a user's list of authors to be told about ("bells"). */
export const PEOPLE_LIST = 30000;
/** NIP-23 long-form article. */
export const LONG_FORM = 30023;
/** NIP-9a relay push registration. */
export const RELAY_PUSH = 30390;
/** NIP-71 addressable short video (a "vine"). */
export const VIDEO = 34236;

/** The `d` tag that makes a PEOPLE_LIST a notify ("bell") list. */
export const NOTIFY_LIST_D_TAG = 'notify';

/** The kinds whose content is NIP-44 ciphertext addressed to the service key. */
export const CONTROL_KINDS: readonly number[] = [REGISTER_TOKEN, DEREGISTER_TOKEN, PREFERENCES];

/** NIP-01 kind classes. */
export type KindClass = 'regular' | 'replaceable' | 'ephemeral' | 'addressable';

/** The NIP-01 class of a kind, which decides how relays store it and which version wins. */
export function kindClass(kind: number): KindClass {
  if (kind === 0 || kind === 3 || (kind >= 10_000 && kind < 20_000)) return 'replaceable';
  if (kind >= 20_000 && kind < 30_000) return 'ephemeral';
  if (kind >= 30_000 && kind < 40_000) return 'addressable';
  return 'regular';
}
