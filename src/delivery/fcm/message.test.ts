import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildAndroidConfig, buildApnsConfig, toFcmMessage } from './message.ts';

// Golden strings of divine-push-service §5.2, compared as text so key order counts too.
const GOLDEN_APNS_ALERT =
  '{"payload":{"aps":{"alert":{"title":"New like","body":"Alice liked your post"},"mutable-content":1},"eventId":"abc123"},"headers":{"apns-push-type":"alert","apns-priority":"10"}}';
const GOLDEN_APNS_BACKGROUND =
  '{"payload":{"aps":{"content-available":1},"eventId":"abc123"},"headers":{"apns-push-type":"background","apns-priority":"5"}}';
const GOLDEN_ANDROID_ALERT = '{"priority":"high"}';

const likeData = { title: 'New like', body: 'Alice liked your post', eventId: 'abc123' };

describe('toFcmMessage', () => {
  test('alert push: apns payload is every data field but title/body, plus aps.alert and mutable-content (golden)', () => {
    assert.equal(JSON.stringify(buildApnsConfig({ data: likeData })), GOLDEN_APNS_ALERT);
  });

  test('background push (data without title/body): content-available, push type background, priority 5 (golden)', () => {
    assert.equal(JSON.stringify(buildApnsConfig({ data: { eventId: 'abc123' } })), GOLDEN_APNS_BACKGROUND);
  });

  test('android block of an alert without a collapse key is exactly {"priority":"high"} (golden)', () => {
    assert.equal(JSON.stringify(buildAndroidConfig({ data: likeData })), GOLDEN_ANDROID_ALERT);
  });

  test('whole v1 body of an alert: data-only (no notification), title and body kept in data', () => {
    const body = toFcmMessage('device-token-1', { data: likeData });
    assert.equal(
      JSON.stringify(body),
      `{"message":{"token":"device-token-1","data":{"title":"New like","body":"Alice liked your post","eventId":"abc123"},"android":${GOLDEN_ANDROID_ALERT},"apns":${GOLDEN_APNS_ALERT}}}`,
    );
    assert.equal('notification' in body.message, false);
    assert.equal(JSON.stringify(body).includes('content-available'), false);
  });

  test('a collapse key becomes android.collapse_key and apns-collapse-id, never a data field', () => {
    const body = toFcmMessage('t', { data: likeData, collapseKey: 'like:abc123' });
    assert.deepEqual(body.message.android, { priority: 'high', collapse_key: 'like:abc123' });
    assert.deepEqual(body.message.apns?.headers, { 'apns-push-type': 'alert', 'apns-priority': '10', 'apns-collapse-id': 'like:abc123' });
    assert.deepEqual(body.message.data, likeData);
    assert.equal(JSON.stringify(body.message.apns.payload).includes('like:abc123'), false);
  });

  test('silent data without a collapse key has no android block; with one it has only collapse_key', () => {
    assert.equal(toFcmMessage('t', { data: { eventId: 'abc123' } }).message.android, undefined);
    assert.deepEqual(toFcmMessage('t', { data: { eventId: 'abc123' }, collapseKey: 'k' }).message.android, { collapse_key: 'k' });
    assert.equal(toFcmMessage('t', { data: { eventId: 'abc123' }, collapseKey: 'k' }).message.apns?.headers['apns-collapse-id'], 'k');
  });

  test('empty data has neither an apns nor an android block', () => {
    const body = toFcmMessage('t', { data: {} });
    assert.deepEqual(body, { message: { token: 't', data: {} } });
  });

  test('a title alone is an alert with only aps.alert.title', () => {
    const apns = buildApnsConfig({ data: { title: 'Hi', eventId: 'e' } });
    assert.deepEqual(apns?.payload, { aps: { alert: { title: 'Hi' }, 'mutable-content': 1 }, eventId: 'e' });
    assert.deepEqual(buildAndroidConfig({ data: { body: 'only a body' } }), { priority: 'high' });
  });

  test('a data field named aps cannot replace the APNs dictionary', () => {
    const apns = buildApnsConfig({ data: { ...likeData, aps: 'spoof' } });
    assert.deepEqual(apns?.payload.aps, { alert: { title: 'New like', body: 'Alice liked your post' }, 'mutable-content': 1 });
  });

  test('a badge data field becomes aps.badge (a number) on alerts and background pushes, and stays a data field (golden)', () => {
    const GOLDEN_APNS_ALERT_WITH_BADGE =
      '{"payload":{"aps":{"alert":{"title":"New like","body":"Alice liked your post"},"badge":4,"mutable-content":1},"eventId":"abc123","badge":"4"},"headers":{"apns-push-type":"alert","apns-priority":"10"}}';
    assert.equal(JSON.stringify(buildApnsConfig({ data: { ...likeData, badge: '4' } })), GOLDEN_APNS_ALERT_WITH_BADGE);
    assert.deepEqual(buildApnsConfig({ data: { eventId: 'e', badge: '0' } })?.payload.aps, { badge: 0, 'content-available': 1 });
    assert.equal(toFcmMessage('t', { data: { ...likeData, badge: '4' } }).message.data.badge, '4');
  });

  test('a badge that is not a non-negative integer is not put in aps', () => {
    for (const badge of ['', '-1', '1.5', 'four', '99999999999']) {
      assert.equal('badge' in (buildApnsConfig({ data: { ...likeData, badge } })?.payload.aps ?? {}), false, badge);
    }
  });

  test('the input data map is not mutated', () => {
    const data = { ...likeData };
    toFcmMessage('t', { data, collapseKey: 'k' });
    assert.deepEqual(data, likeData);
  });
});
