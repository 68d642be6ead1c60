/**
 * The quiet-hours gate of the delivery stage (issue 15 item 2): a social push (like, comment,
 * mention, repost, newPost, keyword) to a user inside their kind 3083 `quietHours` is not sent
 * but held, as one more count of its type in the user's digest, due when the window ends
 * (`src/platform/digest-worker.ts` sends it). Types the user marked urgent, direct messages, app
 * notifications and campaigns (which keep their own 21:00–06:59 rule) are never held.
 *
 * Local time is the recipient's first device with a registered `timezoneOffsetMinutes`; a user
 * without one has no local time, so nothing is held (pushed, rather than held forever).
 */
import { inDailyWindow, localMinuteOfDay, nextLocalMinuteMs } from '../platform/local-time.ts';
import type { QuietHours } from '../store/port-quiet-hours.ts';
import type { DeviceRegistration, StorePort } from '../store/port.ts';
import { TurnBatcher } from '../util/turn-batcher.ts';
import { HOLDABLE_TYPES, type OutboundNotification } from '../notification/types.ts';

/** True when the push was held for the digest (and must not be sent). */
export type QuietHoursGate = (notification: OutboundNotification, devices: readonly DeviceRegistration[]) => Promise<boolean>;

const HOLDABLE = new Set<string>(HOLDABLE_TYPES);

/** A gate on `store`; the quiet hours of every push of one turn are read in one store call. */
export function storeQuietHoursGate(store: StorePort): QuietHoursGate {
  const reader = new TurnBatcher<string, QuietHours | null>((pubkeys) => store.readQuietHours(pubkeys), { oneInFlight: true });
  return async (notification, devices) => {
    if (!HOLDABLE.has(notification.type) || notification.campaign || notification.send) return false;
    const offset = devices.find((d) => d.timezoneOffsetMinutes !== undefined)?.timezoneOffsetMinutes;
    if (offset === undefined) return false;
    const hours = await reader.add(notification.recipient);
    if (!hours || hours.urgentTypes.includes(notification.type)) return false;
    const nowMs = store.clock.nowMs();
    if (!inDailyWindow(localMinuteOfDay(nowMs, offset), hours.startMinute, hours.endMinute)) return false;
    await store.holdForDigest(notification.recipient, notification.type, nextLocalMinuteMs(nowMs, offset, hours.endMinute));
    return true;
  };
}
