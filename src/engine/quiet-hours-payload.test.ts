import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseQuietHoursPayload } from './control-payloads.ts';
import { digestBody } from '../platform/digest-worker.ts';

test('quietHours parses to minutes of the day with urgent types; absent or null is none', () => {
  assert.deepEqual(
    parseQuietHoursPayload('{"kinds":[7],"quietHours":{"start":"22:00","end":"07:00"},"urgentTypes":["comment","comment"]}'),
    {
      ok: true,
      value: { startMinute: 1320, endMinute: 420, urgentTypes: ['comment'] },
    },
  );
  assert.deepEqual(parseQuietHoursPayload('{"kinds":[7]}'), { ok: true, value: null });
  assert.deepEqual(parseQuietHoursPayload('{"kinds":[7],"quietHours":null}'), { ok: true, value: null });
});

test('malformed quietHours and urgentTypes are refused with a reason', () => {
  for (const bad of [
    '{"quietHours":"22:00-07:00"}',
    '{"quietHours":{"start":"22:00"}}',
    '{"quietHours":{"start":"24:00","end":"07:00"}}',
    '{"quietHours":{"start":"07:00","end":"07:00"}}',
    '{"quietHours":{"start":"22:00","end":"07:00"},"urgentTypes":"comment"}',
    '{"quietHours":{"start":"22:00","end":"07:00"},"urgentTypes":["directMessage"]}',
    'not json',
  ]) {
    const parsed = parseQuietHoursPayload(bad);
    assert.equal(parsed.ok, false, bad);
  }
});

test('the digest names each held type with its count, in a fixed order', () => {
  assert.equal(digestBody({ comment: 2, like: 5 }), 'While you were away: 5 likes, 2 comments');
  assert.equal(digestBody({ repost: 1, newPost: 3, mention: 1 }), 'While you were away: 1 mention, 1 repost, 3 new posts');
  assert.equal(digestBody({ like: 1, zap: 2 }), 'While you were away: 1 like, 2 other notifications');
});
