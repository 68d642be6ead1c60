import type { OutboundNotification } from '../notification/types.ts';
/**
 * The per-user push throttle (issue 15, docs/copy.md): at most `throttle.per_user_per_hour`
 * pushes of non-urgent types per user and clock hour, beyond coalescing. A gate of the delivery
 * stage, taken once per notification just before its first send, so every path that pushes
 * (content, bells, summaries, alert words, NIP-9a, the send API) is throttled alike.
 *
 * Urgent, never throttled and never counted: direct messages, and whatever was queued in the
 * critical lane (a send API notification of priority `critical`). Everything else is not urgent:
 * likes, reposts, comments, mentions, new videos, alert words, relay events and their summaries.
 *
 * A withheld push is not lost: its notification was counted in the recipient's inbox counters
 * when it was routed (counting never depends on a push), so the app's counts and the next push's
 * badge include it; the hour's withheld number is in `GET /v1/inbox/counts` (`throttled`), the
 * delivery log records it as `suppressed` with error `throttled`, and
 * `push_user_throttled_total{type}` counts it.
 */

/** The delivery log's reason for a push the throttle withheld. */
export const THROTTLED = 'throttled';

/** Whether `notification` is urgent: a direct message, or queued in the critical lane. */
export function isUrgent(notification: Pick<OutboundNotification, 'type' | 'lane'>): boolean {
  return notification.type === 'directMessage' || notification.lane === 'critical';
}
