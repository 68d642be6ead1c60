/**
 * Device-local time from a registered UTC offset (kind 3079 `timezoneOffsetMinutes`, east
 * positive, −720…+840): which minute of the local day it is, whether that falls in a daily
 * window (campaign quiet hours 21:00–06:59, a user's `quietHours`), and when the window next ends.
 *
 * Offsets, not zones: a registration carries a plain offset (seed 000), so daylight saving moves
 * with the next registration, not by itself. All functions are pure and take `nowMs` from the
 * caller's store clock.
 */

export const MINUTES_PER_DAY = 1440;
const MS_PER_MINUTE = 60_000;
const MS_PER_DAY = 86_400_000;

/** Campaign quiet hours (seed 000): no campaign push from 21:00 to 06:59 local; 07:00 is allowed, 21:00 is quiet. */
export const CAMPAIGN_QUIET_START_MINUTE = 21 * 60;
/** The first local minute campaigns may be pushed again. */
export const CAMPAIGN_QUIET_END_MINUTE = 7 * 60;

/** The minute of the local day (0…1439) at `nowMs` for a device `offsetMinutes` east of UTC. */
export function localMinuteOfDay(nowMs: number, offsetMinutes: number): number {
  const minutes = Math.floor(nowMs / MS_PER_MINUTE) + offsetMinutes;
  return ((minutes % MINUTES_PER_DAY) + MINUTES_PER_DAY) % MINUTES_PER_DAY;
}

/**
 * Whether `minute` lies in the daily window [start, end): one that wraps midnight when start >
 * end (22:00–07:00); empty when start = end.
 */
export function inDailyWindow(minute: number, startMinute: number, endMinute: number): boolean {
  if (startMinute === endMinute) return false;
  if (startMinute < endMinute) return minute >= startMinute && minute < endMinute;
  return minute >= startMinute || minute < endMinute;
}

/** The first instant at or after `nowMs` whose local time is exactly `targetMinute`:00.000. */
export function nextLocalMinuteMs(nowMs: number, offsetMinutes: number, targetMinute: number): number {
  const localMs = nowMs + offsetMinutes * MS_PER_MINUTE;
  const dayStartMs = Math.floor(localMs / MS_PER_DAY) * MS_PER_DAY;
  let candidate = dayStartMs + targetMinute * MS_PER_MINUTE;
  if (candidate < localMs) candidate += MS_PER_DAY;
  return candidate - offsetMinutes * MS_PER_MINUTE;
}

/** Whether a device at `offsetMinutes` is in campaign quiet hours at `nowMs`. */
export function inCampaignQuietHours(nowMs: number, offsetMinutes: number): boolean {
  return inDailyWindow(localMinuteOfDay(nowMs, offsetMinutes), CAMPAIGN_QUIET_START_MINUTE, CAMPAIGN_QUIET_END_MINUTE);
}

/** When a campaign push may go to a device at `offsetMinutes`: now, or the next 07:00 local (deferred, never dropped). */
export function campaignSendAtMs(nowMs: number, offsetMinutes: number): number {
  return inCampaignQuietHours(nowMs, offsetMinutes) ? nextLocalMinuteMs(nowMs, offsetMinutes, CAMPAIGN_QUIET_END_MINUTE) : nowMs;
}

const CLOCK_TIME = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** `"HH:MM"` (24-hour) as a minute of the day, or null. */
export function parseClockTime(text: string): number | null {
  const match = CLOCK_TIME.exec(text);
  return match ? Number(match[1]) * 60 + Number(match[2]) : null;
}
