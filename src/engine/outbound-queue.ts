/**
 * The engine's side of the outbound queue: where claimed notifications go for the delivery stage.
 * An interface of its own so the content and bell handlers say what they mean ("queue this
 * notification", "claim these and queue them") and tests can watch what was queued.
 */
import type { OutboundNotification } from '../delivery/deliver.ts';
import type { StorePort } from '../store/port.ts';

export interface OutboundQueue {
  /** Queue a notification whose recipient claim the caller already holds. */
  enqueue(notification: OutboundNotification): Promise<void>;
  /**
   * Take each notification's claim (`notification.claim`, a fresh owner token of the caller's)
   * and queue it, atomically per notification; true where the claim was taken.
   */
  claimAndEnqueue(notifications: readonly OutboundNotification[], claimTtlSecs: number): Promise<boolean[]>;
}

/** The outbound queue item id of a notification: one delivery per (event, recipient). */
export function outboundItemId(notification: Pick<OutboundNotification, 'eventId' | 'recipient'>): string {
  return `${notification.eventId}:${notification.recipient}`;
}

/** The outbound queue in `store`; `onQueued` wakes this process's delivery stage. */
export function storeOutboundQueue(store: StorePort, onQueued: () => void): OutboundQueue {
  return {
    async enqueue(notification) {
      await store.enqueue('outbound', { id: outboundItemId(notification), payload: notification });
      onQueued();
    },
    async claimAndEnqueue(notifications, claimTtlSecs) {
      const entries = notifications.map((notification) => {
        if (!notification.claim) throw new Error(`claimAndEnqueue: notification ${outboundItemId(notification)} carries no claim to take`);
        return { claim: notification.claim, item: { id: outboundItemId(notification), payload: notification } };
      });
      const taken = await store.claimAndEnqueueDeliveries('outbound', claimTtlSecs, entries);
      if (taken.includes(true)) onQueued();
      return taken;
    },
  };
}
