import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isNonPublicAddress, parsePushEndpoint } from './endpoint-policy.ts';

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

  test('loopback, private, link-local, CGNAT, unspecified, multicast and reserved addresses are not public', () => {
    for (const address of [
      '127.0.0.1',
      '127.1.2.3',
      '10.0.0.1',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '198.18.0.1',
      '192.0.2.1',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      '2001:db8::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      '64:ff9b::a9fe:a9fe',
      '[::1]',
      'localhost',
      '',
    ]) {
      assert.equal(isNonPublicAddress(address), true, address);
    }
  });

  test('public addresses pass', () => {
    for (const address of [
      '8.8.8.8',
      '142.250.74.110',
      '172.32.0.1',
      '100.128.0.1',
      '2a00:1450:4001:82b::200e',
      '2606:4700::1111',
      '::ffff:8.8.8.8',
    ]) {
      assert.equal(isNonPublicAddress(address), false, address);
    }
  });
});
