/** The real outbound queue of a store, also recording every notification it queued, for engine tests. */
import { storeOutboundQueue, type OutboundQueue, type QueuedOutbound } from '../../src/engine/outbound-queue.ts';
import { bellNotificationExpander } from '../../src/engine/bells/bell-items.ts';
import { isBellItemRef } from '../../src/notification/bell-item.ts';
import type { StorePort } from '../../src/store/port.ts';
import type { OutboundNotification } from '../../src/notification/types.ts';

export function recordingOutboundQueue(store: StorePort, queued: OutboundNotification[]): OutboundQueue {
  const real = storeOutboundQueue(store, () => undefined);
  // A bell is recorded as the notification the delivery stage expands it into.
  const expand = bellNotificationExpander();
  const whole = (notification: QueuedOutbound): OutboundNotification =>
    isBellItemRef(notification) ? expand(notification.bellItem) : notification;
  return {
    async enqueue(notification, lane) {
      await real.enqueue(notification, lane);
      queued.push(notification);
    },
    async claimAndEnqueue(notifications, claimTtlSecs, lane) {
      const taken = await real.claimAndEnqueue(notifications, claimTtlSecs, lane);
      notifications.forEach((notification, i) => {
        if (taken[i]) queued.push(whole(notification));
      });
      return taken;
    },
  };
}

/** An outbound queue whose every write fails with `message`, as a store outage would. */
export function failingOutboundQueue(message: string): OutboundQueue {
  return {
    enqueue: async () => Promise.reject(new Error(message)),
    claimAndEnqueue: async () => Promise.reject(new Error(message)),
  };
}

/**
 * `queue`, whose next `count` writes are applied and then reported failed, as after a replica
 * acknowledgement that timed out or a lost answer (issue 42).
 */
export function lostAnswerOutboundQueue(queue: OutboundQueue, count = 1): OutboundQueue {
  let remaining = count;
  const lose = (): void => {
    if (remaining-- > 0) throw new Error('applied, answer lost');
  };
  return {
    async enqueue(notification, lane) {
      await queue.enqueue(notification, lane);
      lose();
    },
    async claimAndEnqueue(notifications, claimTtlSecs, lane) {
      const taken = await queue.claimAndEnqueue(notifications, claimTtlSecs, lane);
      lose();
      return taken;
    },
  };
}
