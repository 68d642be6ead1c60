import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deliveryTime, parseFutureTime, zoneOffsetMinutes } from './delay.ts';
import { NtfyError } from './errors.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** The docs' "today": 12/10/2021, 9am Eastern (UTC-5). */
const DOCS_NOW = Date.UTC(2021, 11, 10, 14, 0, 0);
const EASTERN = -5 * 60;
const BOUNDS = { minMs: 10_000, maxMs: 3 * DAY };

function code(fn: () => unknown): number | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof NtfyError) return err.code;
    throw err;
  }
  return undefined;
}

test("the docs' table of examples, read in Eastern time", () => {
  const at = (text: string) => parseFutureTime(text, DOCS_NOW, EASTERN);
  assert.equal(at('30m'), DOCS_NOW + 30 * MINUTE);
  assert.equal(at('2 hours'), DOCS_NOW + 2 * HOUR);
  assert.equal(at('1 day'), DOCS_NOW + DAY);
  assert.equal(at('10am'), DOCS_NOW + HOUR, 'today at 10am: it is only 9am');
  assert.equal(at('8am'), DOCS_NOW + 23 * HOUR, 'tomorrow at 8am: it is 9am already');
  assert.equal(at('2026-12-10T11:00:00-05:00'), Date.UTC(2026, 11, 10, 16, 0, 0));
  assert.equal(at('1639152000'), 1639152000 * 1000, 'a Unix timestamp (today at 11am EST)');
});

test('durations as ntfy reads them: Go syntax, days, and a number with a word', () => {
  const now = 1_000_000_000_000;
  assert.equal(parseFutureTime('30s', now), now + 30_000);
  assert.equal(parseFutureTime('1h30m', now), now + 90 * MINUTE);
  assert.equal(parseFutureTime('2d', now), now + 2 * DAY);
  assert.equal(parseFutureTime('30 min', now), now + 30 * MINUTE);
  assert.equal(parseFutureTime('30min', now), now + 30 * MINUTE);
  assert.equal(parseFutureTime('2 days', now), now + 2 * DAY);
  assert.equal(parseFutureTime('10 Seconds', now), now + 10_000);
});

test('natural forms: tomorrow, weekdays, evening times, ISO timestamps', () => {
  const at = (text: string) => parseFutureTime(text, DOCS_NOW, EASTERN);
  assert.equal(at('tomorrow, 3pm'), Date.UTC(2021, 11, 11, 20, 0, 0));
  assert.equal(at('Tuesday, 7am'), Date.UTC(2021, 11, 14, 12, 0, 0), 'the next Tuesday (12/10/2021 was a Friday)');
  assert.equal(at('8:30pm'), Date.UTC(2021, 11, 11, 1, 30, 0));
  assert.equal(at('2026-09-02T10:00:00Z'), Date.UTC(2026, 8, 2, 10, 0, 0));
  assert.equal(at('INVALID'), null);
  assert.equal(at('1639000000'), null, 'a Unix timestamp in the past reads as nothing');
});

test('a timezone moves natural times and leaves durations and timestamps alone', () => {
  const now = Date.UTC(2030, 0, 15, 12, 0, 0);
  const tokyo = zoneOffsetMinutes('Asia/Tokyo', now);
  assert.equal(tokyo, 9 * 60);
  assert.equal(zoneOffsetMinutes('UTC', now), 0);
  assert.equal(zoneOffsetMinutes('America/New_York', now), -5 * 60);
  assert.equal(deliveryTime('tomorrow 10am', 'Asia/Tokyo', now, BOUNDS), Date.UTC(2030, 0, 16, 1, 0, 0));
  assert.equal(deliveryTime('1h', 'Asia/Tokyo', now, BOUNDS), now + HOUR);
  for (const bad of ['Unknown/Timezone', '../etc/passwd', '+09:00']) assert.equal(zoneOffsetMinutes(bad, now), null, bad);
  assert.equal(
    code(() => deliveryTime('1h', 'Unknown/Timezone', now, BOUNDS)),
    40004,
  );
});

test('bounds in whole seconds: at least the minimum (40005), at most the maximum (40006); garbage is 40004', () => {
  const now = 1_000_000_000_000;
  assert.equal(deliveryTime('10s', undefined, now, BOUNDS), now + 10_000);
  assert.equal(deliveryTime('3d', undefined, now, BOUNDS), now + 3 * DAY);
  assert.equal(
    code(() => deliveryTime('9s', undefined, now, BOUNDS)),
    40005,
  );
  assert.equal(
    code(() => deliveryTime('1s', undefined, now, BOUNDS)),
    40005,
  );
  assert.equal(
    code(() => deliveryTime('-1h', undefined, now, BOUNDS)),
    40005,
  );
  assert.equal(
    code(() => deliveryTime('73h', undefined, now, BOUNDS)),
    40006,
  );
  assert.equal(
    code(() => deliveryTime('99999999h', undefined, now, BOUNDS)),
    40006,
  );
  assert.equal(
    code(() => deliveryTime('INVALID', undefined, now, BOUNDS)),
    40004,
  );
  assert.equal(deliveryTime('30m', undefined, now + 999, BOUNDS), Math.floor((now + 999 + 30 * MINUTE) / 1000) * 1000, 'whole seconds');
});
