import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePushEndpoint } from './endpoint-policy.ts';

// Which addresses are public is the outbound address policy's (src/net/address-policy.test.ts).

describe('push endpoint policy', () => {
  test('only absolute http(s) URLs without credentials', () => {
    assert.equal(parsePushEndpoint('https://fcm.googleapis.com/fcm/send/abc').ok, true);
    assert.equal(parsePushEndpoint('http://ntfy.example/upAbc?up=1').ok, true);
    for (const bad of [
      'ftp://x/y',
      'file:///etc/passwd',
      'gopher://x',
      'javascript:alert(1)',
      'not a url',
      '/relative',
      'https://user:pw@push.example/x',
    ]) {
      assert.equal(parsePushEndpoint(bad).ok, false, bad);
    }
    assert.equal(parsePushEndpoint(`https://push.example/${'a'.repeat(3000)}`).ok, false);
  });
});
