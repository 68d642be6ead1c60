import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  GIFT_WRAP_BACKDATE_SECS,
  LIVE_EVENTS_SUBSCRIPTION_ID,
  LIVE_GIFT_WRAPS_SUBSCRIPTION_ID,
  LIVE_NOTIFY_LISTS_SUBSCRIPTION_ID,
  LIVE_RESUME_OVERLAP_SECS,
  historyControlFilter,
  liveResumeSince,
  liveSubscriptions,
  normalizeLiveKinds,
  notifyListPageFilter,
} from './subscriptions.ts';

test('live kinds always include the control kinds, deduplicated and sorted, invalid kinds skipped', () => {
  assert.deepEqual(normalizeLiveKinds([7, 1111, 3079, 7, 70_000, -1, 1.5, '7']), {
    kinds: [7, 1111, 3079, 3080, 3083],
    skipped: [70_000, -1, 1.5, '7'],
  });
});

test('live subscriptions resume from the cursor minus the overlap, or one hour back without one', () => {
  const now = 1_800_000_000;
  assert.equal(liveResumeSince(now - 100, now), now - 100 - LIVE_RESUME_OVERLAP_SECS);
  assert.equal(liveResumeSince(null, now), now - 3_600);
  // A cursor in the future (clock skew) never makes `since` later than now minus the overlap.
  assert.equal(liveResumeSince(now + 10_000, now), now - LIVE_RESUME_OVERLAP_SECS);
});

test('the notify-list filter is separate, so #d does not constrain the other kinds', () => {
  const [events, lists] = liveSubscriptions([7, 3079], 123);
  assert.deepEqual(events, { id: LIVE_EVENTS_SUBSCRIPTION_ID, filter: { kinds: [7, 3079], since: 123 } });
  assert.deepEqual(lists, { id: LIVE_NOTIFY_LISTS_SUBSCRIPTION_ID, filter: { kinds: [30000], '#d': ['notify'], since: 123 } });
});

test('historical filters: control events within the window, notify lists paged with no since', () => {
  assert.deepEqual(historyControlFilter(1_000_000, 7), { kinds: [3079, 3080, 3083], since: 1_000_000 - 7 * 86_400 });
  assert.deepEqual(notifyListPageFilter(5_000), { kinds: [30000], '#d': ['notify'], limit: 5_000 });
  assert.deepEqual(notifyListPageFilter(5_000, 42), { kinds: [30000], '#d': ['notify'], limit: 5_000, until: 42 });
});

test('gift wraps (issue 21) get a REQ of their own reaching two days further back; without them the REQs are as before', () => {
  const [events, lists, wraps] = liveSubscriptions([1, 7, 1059, 3079, 9735], 1_000_000);
  assert.deepEqual(events, { id: LIVE_EVENTS_SUBSCRIPTION_ID, filter: { kinds: [1, 7, 3079, 9735], since: 1_000_000 } });
  assert.deepEqual(lists?.id, LIVE_NOTIFY_LISTS_SUBSCRIPTION_ID);
  assert.deepEqual(wraps, { id: LIVE_GIFT_WRAPS_SUBSCRIPTION_ID, filter: { kinds: [1059], since: 1_000_000 - GIFT_WRAP_BACKDATE_SECS } });
  assert.equal(liveSubscriptions([7, 3079], 123).length, 2);
});
