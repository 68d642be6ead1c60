import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createClientAddressPolicy, trustedProxyProblem, UNKNOWN_CLIENT_ADDRESS } from './client-address.ts';

test('with no trusted proxy the socket peer is the client, whatever X-Forwarded-For says', () => {
  const policy = createClientAddressPolicy([]);
  assert.equal(policy.clientAddress('203.0.113.9', '198.51.100.1'), '203.0.113.9');
  assert.equal(policy.forwardedHttps('203.0.113.9', 'https'), false);
});

test('behind a trusted proxy the rightmost untrusted X-Forwarded-For hop is the client', () => {
  const policy = createClientAddressPolicy(['10.0.0.0/8', '127.0.0.1']);
  assert.equal(policy.clientAddress('127.0.0.1', '198.51.100.1'), '198.51.100.1');
  // The client put a spoofed hop first; the proxies appended the real one and their own.
  assert.equal(policy.clientAddress('10.1.2.3', '1.1.1.1, 198.51.100.7, 10.9.9.9'), '198.51.100.7');
  assert.equal(policy.clientAddress('::ffff:127.0.0.1', '::ffff:198.51.100.2'), '198.51.100.2');
  assert.equal(policy.forwardedHttps('10.1.2.3', 'https'), true);
  assert.equal(policy.forwardedHttps('10.1.2.3', 'http'), false);
});

test('a trusted proxy without X-Forwarded-For, or with a malformed hop, leaves the proxy as the client', () => {
  const policy = createClientAddressPolicy(['127.0.0.1/32']);
  assert.equal(policy.clientAddress('127.0.0.1', undefined), '127.0.0.1');
  assert.equal(policy.clientAddress('127.0.0.1', 'not-an-address'), '127.0.0.1');
});

test('IPv6 CIDRs and IPv4-mapped peers are matched', () => {
  const policy = createClientAddressPolicy(['fd00::/8']);
  assert.equal(policy.clientAddress('fd12::1', '2001:db8::5'), '2001:db8::5');
  assert.equal(policy.isTrustedProxy('fe80::1'), false);
  assert.equal(createClientAddressPolicy(['192.0.2.0/24']).isTrustedProxy('::ffff:192.0.2.44'), true);
});

test('an unknown peer is one shared client', () => {
  assert.equal(createClientAddressPolicy([]).clientAddress(undefined, '198.51.100.1'), UNKNOWN_CLIENT_ADDRESS);
});

test('malformed CIDRs are named', () => {
  for (const bad of ['10.0.0.0/33', 'example.com', '10.0.0.0/8/1', '::1/129', '10.0.0.0/x', '']) {
    assert.notEqual(trustedProxyProblem(bad), null, bad);
    assert.throws(() => createClientAddressPolicy([bad]), /trusted_proxies/);
  }
  for (const good of ['10.0.0.0/8', '127.0.0.1', '::1', 'fd00::/8', '0.0.0.0/0']) assert.equal(trustedProxyProblem(good), null, good);
});
