import type { PushMessage } from './types.ts';

/**
 * `message` as sent to the recipient's devices: with the `badge` data field (issue 13), the
 * recipient's total new count (a string, as every data value) appended as the last key. The FCM
 * transport copies it into `aps.badge` of the APNs override, the direct APNs transport reads the
 * same field. Replaces a badge already present, so the delivery stage can stamp the number current
 * at send time over one computed earlier. The input is not mutated.
 *
 * @throws RangeError when `badge` is not a non-negative integer.
 */
export function withBadge(message: PushMessage, badge: number): PushMessage {
  if (!Number.isInteger(badge) || badge < 0) throw new RangeError(`withBadge: badge must be a non-negative integer, got ${badge}`);
  const { badge: _previous, ...rest } = message.data;
  const data: Record<string, string> = { ...rest, badge: String(badge) };
  return message.collapseKey === undefined ? { data } : { data, collapseKey: message.collapseKey };
}
