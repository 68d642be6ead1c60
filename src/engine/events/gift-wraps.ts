/**
 * Gift wraps (issue 21, `events.gift_wraps`): a NIP-59 kind-1059 wrap addressed (`p`) to a user
 * becomes the same content-free `directMessage` push as the moderation DM hook's
 * (`api/direct-message.ts`): nothing of the wrap but its id, and no sender (the wrap hides it).
 *
 * Who gets it: only a user who opted in, that is whose own kind-3083 preferences list category
 * 1059. The service-wide default categories do not count here: the timing of someone's private
 * messages is theirs to share, so silence is the default.
 *
 * How often: once per wrap (its per-(wrap, recipient) claim), and at most one push per recipient
 * per `events.dm_push_min_interval_secs`. The window is the store's per-event claim
 * (`claimEvent`) under a key of its own, {@link dmPushWindowKey}: taken atomically on both
 * adapters, expiring by the store's clock, so a burst of wraps from several engine processes
 * still buzzes once. A wrap that falls inside the window keeps its claim (a replay stays silent).
 * The window is taken under the inbound item's work owner (`work-owner.ts`) and the push is
 * queued with its claim in one step, so a retry after a step that was applied but reported failed
 * neither loses the push nor repeats it (issue 42).
 */
import { randomUUID } from 'node:crypto';
import type { NostrEvent } from '../../nostr/event.ts';
import { GIFT_WRAP } from '../../nostr/kinds.ts';
import { isHexPubkey } from '../../nostr/tags.ts';
import type { Logger } from '../../observability/logger.ts';
import type { Metrics } from '../../observability/metrics.ts';
import type { StorePort } from '../../store/port.ts';
import { buildDirectMessagePayload } from '../payload.ts';
import { DIRECT_MESSAGE_LANE, type OutboundQueue } from '../outbound-queue.ts';
import { PREFERENCE_CATEGORY } from '../content.ts';

export interface GiftWrapDeps {
  store: StorePort;
  /** Recipient allowlist; empty means everyone. */
  allowedPubkeys: ReadonlySet<string>;
  processedEventTtlSecs: number;
  /** `events.dm_push_min_interval_secs`. */
  minIntervalSecs: number;
  outbound: OutboundQueue;
  /** Count each wrap into the recipient's inbox as `directMessage` (issue 13), as the DM hook does. */
  countInbox: boolean;
  metrics: Metrics;
  logger: Logger;
}

export type GiftWrapOutcome = 'no_recipient' | 'not_allowlisted' | 'no_tokens' | 'not_opted_in' | 'duplicate' | 'rate_limited' | 'queued';

/**
 * The store key of a recipient's DM push window. Not a 64-hex event id, so it can never meet a
 * real event's claim in the same keyspace.
 */
export function dmPushWindowKey(recipient: string): string {
  return `dm-push-window:${recipient}`;
}

/** The wrap's addressee: its first `p` tag holding a valid pubkey (NIP-59 wraps carry one). */
function addressee(wrap: NostrEvent): string | null {
  for (const tag of wrap.tags) if (tag[0] === 'p' && isHexPubkey(tag[1])) return tag[1];
  return null;
}

/**
 * One live gift wrap; `onlyRecipient` (a NIP-9a callback's owner) restricts whom it may reach.
 * `owner` is the inbound item's work owner (`work-owner.ts`): the recipient's push window is taken
 * under it, so a retry after a step that was applied but reported failed finds the window its own
 * and still pushes.
 */
export async function handleGiftWrap(
  deps: GiftWrapDeps,
  wrap: NostrEvent,
  owner: string,
  onlyRecipient?: string,
): Promise<GiftWrapOutcome> {
  const outcome = await giftWrapOutcome(deps, wrap, owner, onlyRecipient);
  deps.metrics.contentRecipients.inc({ type: 'directMessage', outcome });
  return outcome;
}

async function giftWrapOutcome(
  deps: GiftWrapDeps,
  wrap: NostrEvent,
  owner: string,
  onlyRecipient: string | undefined,
): Promise<GiftWrapOutcome> {
  const { store } = deps;
  const recipient = wrap.kind === GIFT_WRAP ? addressee(wrap) : null;
  if (recipient === null || (onlyRecipient !== undefined && recipient !== onlyRecipient)) return 'no_recipient';
  if (deps.allowedPubkeys.size > 0 && !deps.allowedPubkeys.has(recipient)) return 'not_allowlisted';
  if (deps.countInbox)
    await store.countInboxNotifications([{ countKey: wrap.id, recipient, type: 'directMessage' }], deps.processedEventTtlSecs);
  const [state] = await store.readRecipients([recipient]);
  if (state === undefined || state.devices.length === 0) return 'no_tokens';
  if (!(state.preferenceKinds ?? []).includes(PREFERENCE_CATEGORY.directMessage)) return 'not_opted_in';

  const queue = async (): Promise<boolean> => {
    const [taken] = await deps.outbound.claimAndEnqueue(
      [
        {
          eventId: wrap.id,
          recipient,
          type: 'directMessage',
          message: buildDirectMessagePayload(wrap.id, recipient),
          claim: { eventId: wrap.id, recipient, owner: randomUUID() },
          // A wrap's created_at is randomised up to two days back (NIP-59): the delivery's age is from now.
          eventCreatedAt: Math.floor(store.clock.nowMs() / 1000),
          devices: state.devices,
        },
      ],
      deps.processedEventTtlSecs,
      DIRECT_MESSAGE_LANE,
    );
    return taken === true;
  };
  // A claim held: this wrap was pushed (or silenced) already, or an earlier attempt at this very
  // item stopped between its claim and its commit (the cluster layout's steps), whose staged item
  // asking again commits; otherwise nothing is queued (issue 42).
  if (await store.isRecipientClaimed(wrap.id, recipient)) return (await queue()) ? 'queued' : 'duplicate';
  // The window is taken under the item's work owner, so the retry of a failed step finds it its own.
  if (!(await store.claimEvent(dmPushWindowKey(recipient), deps.minIntervalSecs, owner))) {
    // Inside someone else's window: the wrap keeps a claim, so a replay stays silent too.
    await store.claimRecipientDelivery(wrap.id, recipient, deps.processedEventTtlSecs);
    return 'rate_limited';
  }
  try {
    return (await queue()) ? 'queued' : 'duplicate';
  } catch (err) {
    // The window stays taken under this item's owner: the retry takes it again and queues.
    deps.logger.warn({ wrapId: wrap.id, recipient, err: (err as Error).message }, 'gift wrap push failed; retrying');
    throw err;
  }
}
