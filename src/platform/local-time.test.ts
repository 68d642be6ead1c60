import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  campaignSendAtMs,
  inCampaignQuietHours,
  inDailyWindow,
  localMinuteOfDay,
  nextLocalMinuteMs,
  parseClockTime,
} from './local-time.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** 2026-01-01T12:00Z, the instant of the seed's test vectors. */
const NOON_UTC = Date.UTC(2026, 0, 1, 12);

/** Every offset real registrations carry, in 15-minute steps (UTC−12 to UTC+14). */
const OFFSETS: number[] = [];
for (let offset = -720; offset <= 840; offset += 15) OFFSETS.push(offset);

test('the seed vectors: UTC noon is allowed at 0, 22:00 at +600 defers to 21:00Z, 04:00 at −480 to 15:00Z', () => {
  assert.equal(campaignSendAtMs(NOON_UTC, 0), NOON_UTC);
  assert.equal(new Date(campaignSendAtMs(NOON_UTC, 600)).toISOString(), '2026-01-01T21:00:00.000Z');
  assert.equal(new Date(campaignSendAtMs(NOON_UTC, -480)).toISOString(), '2026-01-01T15:00:00.000Z');
});

test('at every offset −720…+840, local time is UTC plus the offset, across midnight and the date line', () => {
  for (const offset of OFFSETS) {
    for (let utcMinute = 0; utcMinute < 1440; utcMinute += 7) {
      const now = Date.UTC(2026, 11, 31) + utcMinute * MINUTE + 59_999;
      const local = new Date(now + offset * MINUTE);
      assert.equal(localMinuteOfDay(now, offset), local.getUTCHours() * 60 + local.getUTCMinutes(), `offset ${offset} at ${utcMinute}`);
    }
  }
});

test('at every offset, 21:00–06:59 local is quiet (both boundaries exact) and a quiet device is deferred to its next 07:00', () => {
  for (const offset of OFFSETS) {
    // Walk one whole local day minute by minute from local midnight of 2026-12-31 (crossing into 2027).
    const localMidnightUtc = Date.UTC(2026, 11, 31) - offset * MINUTE;
    for (let minute = 0; minute < 1440; minute++) {
      const now = localMidnightUtc + minute * MINUTE + 30_000;
      const quiet = minute >= 21 * 60 || minute < 7 * 60;
      assert.equal(inCampaignQuietHours(now, offset), quiet, `offset ${offset}, local minute ${minute}`);
      const at = campaignSendAtMs(now, offset);
      if (!quiet) {
        assert.equal(at, now);
        continue;
      }
      assert.ok(at > now && at - now <= 10 * HOUR, `deferral of ${at - now} ms at offset ${offset}, minute ${minute}`);
      assert.equal(localMinuteOfDay(at, offset), 7 * 60);
      assert.equal((at + offset * MINUTE) % MINUTE, 0, 'exactly 07:00:00.000 local');
      // The deferral lands on the right local day: the same day before 07:00, the next one after 21:00.
      const expectedLocalDay = Date.UTC(2026, 11, 31) + (minute < 7 * 60 ? 0 : 86_400_000);
      assert.equal(at + offset * MINUTE, expectedLocalDay + 7 * HOUR, `local day at offset ${offset}`);
    }
  }
});

test('the quiet boundaries at +840 and −720: the same UTC instant is a different local day', () => {
  const now = Date.UTC(2026, 5, 15, 7); // 07:00Z
  assert.equal(localMinuteOfDay(now, 840), 21 * 60); // 21:00 on the 15th in Kiribati: quiet
  assert.equal(inCampaignQuietHours(now, 840), true);
  assert.equal(new Date(campaignSendAtMs(now, 840)).toISOString(), '2026-06-15T17:00:00.000Z'); // 07:00 on the 16th, local
  assert.equal(localMinuteOfDay(now, -720), 19 * 60); // 19:00 on the 14th at UTC−12: allowed
  assert.equal(campaignSendAtMs(now, -720), now);
  assert.equal(inCampaignQuietHours(now - 1, 840), false); // 20:59:59.999 local
  assert.equal(campaignSendAtMs(Date.UTC(2026, 5, 15, 19), -720), Date.UTC(2026, 5, 15, 19)); // 07:00 local exactly
  assert.equal(inCampaignQuietHours(Date.UTC(2026, 5, 15, 19) - 1, -720), true); // 06:59:59.999 local
});

test('a daily window wraps midnight when it starts after it ends, and is empty when start equals end', () => {
  const start = 22 * 60;
  const end = 7 * 60;
  assert.equal(inDailyWindow(22 * 60, start, end), true);
  assert.equal(inDailyWindow(23 * 60 + 59, start, end), true);
  assert.equal(inDailyWindow(0, start, end), true);
  assert.equal(inDailyWindow(7 * 60 - 1, start, end), true);
  assert.equal(inDailyWindow(7 * 60, start, end), false);
  assert.equal(inDailyWindow(21 * 60 + 59, start, end), false);
  assert.equal(inDailyWindow(13 * 60, 12 * 60, 14 * 60), true);
  assert.equal(inDailyWindow(14 * 60, 12 * 60, 14 * 60), false);
  assert.equal(inDailyWindow(5, 600, 600), false);
});

test('the next local minute is now when it is exactly that minute, else the next occurrence', () => {
  const now = Date.UTC(2026, 2, 1, 6, 59, 30); // 06:59:30Z
  assert.equal(nextLocalMinuteMs(now, 0, 7 * 60), Date.UTC(2026, 2, 1, 7));
  assert.equal(nextLocalMinuteMs(Date.UTC(2026, 2, 1, 7), 0, 7 * 60), Date.UTC(2026, 2, 1, 7));
  assert.equal(nextLocalMinuteMs(Date.UTC(2026, 2, 1, 7, 0, 0, 1), 0, 7 * 60), Date.UTC(2026, 2, 2, 7));
  // 12:00Z on 2028-02-28 is 02:00 on the leap day at UTC+14: its 07:00 is 17:00Z on the 28th.
  assert.equal(nextLocalMinuteMs(Date.UTC(2028, 1, 28, 12), 840, 7 * 60), Date.UTC(2028, 1, 28, 17));
});

test('clock times parse as HH:MM only', () => {
  assert.equal(parseClockTime('22:00'), 1320);
  assert.equal(parseClockTime('07:05'), 425);
  assert.equal(parseClockTime('00:00'), 0);
  for (const bad of ['24:00', '7:00', '07:60', '', '07:00:00', 'ab:cd']) assert.equal(parseClockTime(bad), null, bad);
});
