import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { webPushHeaders, webPushPlaintext, webPushTopic } from './message.ts';

describe('Web Push message', () => {
  test('the plaintext is the FCM data map as JSON', () => {
    const data = { type: 'like', title: 'New like', body: 'Bob liked your post', eventId: 'ab'.repeat(32) };
    assert.deepEqual(JSON.parse(webPushPlaintext({ data }).toString('utf8')), data);
  });

  test('user-visible pushes are Urgency high, silent ones normal; TTL and aes128gcm always', () => {
    assert.deepEqual(webPushHeaders({ data: { title: 't' } }, 86_400), {
      ttl: '86400',
      urgency: 'high',
      'content-encoding': 'aes128gcm',
      'content-type': 'application/octet-stream',
    });
    assert.equal(webPushHeaders({ data: { body: 'b' } }, 60).urgency, 'high');
    assert.equal(webPushHeaders({ data: { type: 'sync' } }, 60).urgency, 'normal');
    assert.equal(webPushHeaders({ data: {} }, 0).ttl, '0');
  });

  test('Topic is the collapse key when there is one, and absent otherwise', () => {
    assert.equal(webPushHeaders({ data: {}, collapseKey: 'likes-abc' }, 60).topic, 'likes-abc');
    assert.equal('topic' in webPushHeaders({ data: {} }, 60), false);
    assert.equal('topic' in webPushHeaders({ data: {}, collapseKey: '' }, 60), false);
  });

  test('a collapse key outside the RFC 8030 alphabet or over 32 characters becomes a stable 32-character base64url hash', () => {
    const key = `like:${'ab'.repeat(32)}`;
    const topic = webPushTopic(key);
    assert.match(topic, /^[A-Za-z0-9_-]{32}$/);
    assert.equal(webPushTopic(key), topic);
    assert.notEqual(webPushTopic(`${key}x`), topic);
    assert.match(webPushTopic('a'.repeat(33)), /^[A-Za-z0-9_-]{32}$/);
    assert.equal(webPushTopic('a'.repeat(32)), 'a'.repeat(32));
    assert.match(webPushTopic('ünïcode'), /^[A-Za-z0-9_-]{32}$/);
  });
});
