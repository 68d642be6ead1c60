/**
 * The engine's side of the outbound queue: where claimed notifications go for the delivery stage.
 * An interface of its own so the content and bell handlers say what they mean ("queue this
 * notification", "claim these and queue them") and tests can watch what was queued.
 */
import type { Lane, RecipientClaim, StorePort } from '../store/port.ts';
import type { OutboundNotification } from '../notification/types.ts';
import { isBellItemRef, type BellItemRef } from '../notification/bell-item.ts';

/**
 * Lanes of the outbound queue by origin: relay notifications (likes, reposts, comments,
 * mentions, bells, summaries) are `normal`, a direct message of the moderation hook is
 * `critical`; `low` is for bulk sends (campaigns) that must never delay the others.
 */
export const DIRECT_MESSAGE_LANE: Lane = 'critical';

/** What the engine queues: a whole notification, or a bell's reference to one (`notification/bell-item.ts`). */
export type QueuedOutbound = OutboundNotification | BellItemRef;

export interface OutboundQueue {
  /** Queue a notification whose recipient claim the caller already holds, in `lane` (default normal). */
  enqueue(notification: OutboundNotification, lane?: Lane): Promise<void>;
  /**
   * Take each notification's claim (`notification.claim`, or a bell item's recipient and owner:
   * a fresh owner token of the caller's) and queue it in `lane` (default normal), atomically per
   * notification; true where the claim was taken.
   */
  claimAndEnqueue(notifications: readonly QueuedOutbound[], claimTtlSecs: number, lane?: Lane): Promise<boolean[]>;
}

/** The outbound queue item id of a notification: one delivery per (event, recipient). */
export function outboundItemId(notification: Pick<OutboundNotification, 'eventId' | 'recipient'>): string {
  return `${notification.eventId}:${notification.recipient}`;
}

/** The recipient claim a queued notification is delivered under. */
function queuedClaim(queued: QueuedOutbound): RecipientClaim | null {
  if (!isBellItemRef(queued)) return queued.claim;
  const { eventId, recipient, owner } = queued.bellItem;
  return { eventId, recipient, owner };
}

/** The outbound queue item id of a queued notification (see {@link outboundItemId}). */
function queuedItemId(queued: QueuedOutbound): string {
  return outboundItemId(isBellItemRef(queued) ? queued.bellItem : queued);
}

/** The outbound queue in `store`; `onQueued` wakes this process's delivery stage. */
export function storeOutboundQueue(store: StorePort, onQueued: () => void): OutboundQueue {
  return {
    async enqueue(notification, lane) {
      await store.enqueue('outbound', { id: outboundItemId(notification), payload: notification, ...(lane ? { lane } : {}) });
      onQueued();
    },
    async claimAndEnqueue(notifications, claimTtlSecs, lane) {
      const entries = notifications.map((notification) => {
        const claim = queuedClaim(notification);
        const id = queuedItemId(notification);
        if (!claim) throw new Error(`claimAndEnqueue: notification ${id} carries no claim to take`);
        return { claim, item: { id, payload: notification, ...(lane ? { lane } : {}) } };
      });
      const taken = await store.claimAndEnqueueDeliveries('outbound', claimTtlSecs, entries);
      if (taken.includes(true)) onQueued();
      return taken;
    },
  };
}
