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
 */
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

/** One live gift wrap; `onlyRecipient` (a NIP-9a callback's owner) restricts whom it may reach. */
export async function handleGiftWrap(deps: GiftWrapDeps, wrap: NostrEvent, onlyRecipient?: string): Promise<GiftWrapOutcome> {
  const outcome = await giftWrapOutcome(deps, wrap, onlyRecipient);
  deps.metrics.contentRecipients.inc({ type: 'directMessage', outcome });
  return outcome;
}

async function giftWrapOutcome(deps: GiftWrapDeps, wrap: NostrEvent, onlyRecipient: string | undefined): Promise<GiftWrapOutcome> {
  const { store } = deps;
  const recipient = wrap.kind === GIFT_WRAP ? addressee(wrap) : null;
  if (recipient === null || (onlyRecipient !== undefined && recipient !== onlyRecipient)) return 'no_recipient';
  if (deps.allowedPubkeys.size > 0 && !deps.allowedPubkeys.has(recipient)) return 'not_allowlisted';
  if (deps.countInbox)
    await store.countInboxNotifications([{ countKey: wrap.id, recipient, type: 'directMessage' }], deps.processedEventTtlSecs);
  const [state] = await store.readRecipients([recipient]);
  if (state === undefined || state.devices.length === 0) return 'no_tokens';
  if (!(state.preferenceKinds ?? []).includes(PREFERENCE_CATEGORY.directMessage)) return 'not_opted_in';

  const claim = await store.claimRecipientDelivery(wrap.id, recipient, deps.processedEventTtlSecs);
  if (claim === null) return 'duplicate';
  const windowKey = dmPushWindowKey(recipient);
  let windowTaken = false;
  try {
    windowTaken = await store.claimEvent(windowKey, deps.minIntervalSecs);
    if (!windowTaken) return 'rate_limited';
    await deps.outbound.enqueue(
      {
        eventId: wrap.id,
        recipient,
        type: 'directMessage',
        message: buildDirectMessagePayload(wrap.id, recipient),
        claim,
        // A wrap's created_at is randomised up to two days back (NIP-59): the delivery's age is from now.
        eventCreatedAt: Math.floor(store.clock.nowMs() / 1000),
        devices: state.devices,
      },
      DIRECT_MESSAGE_LANE,
    );
    return 'queued';
  } catch (err) {
    // Give everything back so the inbound queue's retry can decide again.
    await store.releaseRecipientDelivery(claim).catch(() => undefined);
    if (windowTaken) await store.releaseEvent(windowKey).catch(() => undefined);
    deps.logger.warn({ wrapId: wrap.id, recipient, err: (err as Error).message }, 'gift wrap push failed; retrying');
    throw err;
  }
}
