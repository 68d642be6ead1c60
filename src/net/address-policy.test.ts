import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { admits, classifyAddress, isLoopbackName, isPublicAddress, parseIp, publicNameProblem, PUBLIC_ONLY } from './address-policy.ts';

describe('classifyAddress: IANA special-purpose ranges', () => {
  const cases: Array<[string, string]> = [
    ['0.0.0.0', 'this_network'],
    ['0.1.2.3', 'this_network'],
    ['10.0.0.1', 'private'],
    ['100.64.0.1', 'shared_cgnat'],
    ['100.127.255.255', 'shared_cgnat'],
    ['127.0.0.1', 'loopback'],
    ['127.1.2.3', 'loopback'],
    ['169.254.169.254', 'link_local'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.9', 'protocol_assignment'],
    ['192.0.2.1', 'documentation'],
    ['192.88.99.1', 'reserved'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['100::1', 'discard'],
    ['2001::1', 'protocol_assignment'],
    ['2001:1::1', 'protocol_assignment'],
    ['2001:1ff::1', 'protocol_assignment'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['5f00::1', 'reserved'],
    ['fc00::1', 'unique_local'],
    ['fd12:3456::1', 'unique_local'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['fec0::1', 'site_local'],
    ['ff02::1', 'multicast'],
    ['::7f00:1', 'not_global_unicast'],
    ['4000::1', 'not_global_unicast'],
    ['64:ff9b:1:2::1', 'nat64_local'],
    ['localhost', 'not_an_ip'],
    ['', 'not_an_ip'],
    ['1.2.3', 'not_an_ip'],
  ];
  for (const [address, expected] of cases)
    test(`${address || '(empty)'} is ${expected}`, () => assert.equal(classifyAddress(address).addressClass, expected));

  test('IPv4-mapped, NAT64 and 6to4 forms are judged as the IPv4 address they carry', () => {
    assert.deepEqual(classifyAddress('::ffff:127.0.0.1'), {
      address: '::ffff:127.0.0.1',
      addressClass: 'loopback',
      embedded: { ipv4: '127.0.0.1', form: 'ipv4_mapped' },
    });
    assert.equal(classifyAddress('::ffff:7f00:1').addressClass, 'loopback');
    assert.equal(classifyAddress('::ffff:10.0.0.1').addressClass, 'private');
    assert.deepEqual(classifyAddress('64:ff9b::7f00:1').embedded, { ipv4: '127.0.0.1', form: 'nat64' });
    assert.equal(classifyAddress('64:ff9b::7f00:1').addressClass, 'loopback');
    assert.equal(classifyAddress('64:ff9b::a9fe:a9fe').addressClass, 'link_local');
    assert.equal(classifyAddress('64:ff9b:1::a00:1').addressClass, 'private');
    assert.deepEqual(classifyAddress('2002:7f00:1::1').embedded, { ipv4: '127.0.0.1', form: '6to4' });
    assert.equal(classifyAddress('2002:a00:1::').addressClass, 'private');
    // ...and pass when that address is public.
    for (const publicForm of ['::ffff:8.8.8.8', '64:ff9b::808:808', '64:ff9b:1::808:808', '2002:808:808::1'])
      assert.equal(classifyAddress(publicForm).addressClass, 'public', publicForm);
  });

  test('public addresses pass, the neighbours of the ranges included', () => {
    for (const address of [
      '8.8.8.8',
      '1.1.1.1',
      '142.250.74.110',
      '172.32.0.1',
      '172.15.255.255',
      '100.128.0.1',
      '100.63.255.255',
      '198.20.0.1',
      '192.0.1.1',
      '223.255.255.255',
      '2a00:1450:4001:82b::200e',
      '2606:4700::1111',
      '2001:200::1',
      '2001:4860:4860::8888',
    ]) {
      assert.equal(classifyAddress(address).addressClass, 'public', address);
      assert.equal(isPublicAddress(address), true, address);
    }
  });

  test('parseIp reads every textual form and nothing else', () => {
    assert.deepEqual(parseIp('1.2.3.4'), Uint8Array.from([1, 2, 3, 4]));
    assert.deepEqual(parseIp('::ffff:1.2.3.4')?.subarray(10), Uint8Array.from([0xff, 0xff, 1, 2, 3, 4]));
    assert.equal(parseIp('[2001:db8::1]')?.length, 16);
    for (const bad of ['1.2.3.256', '01.2.3.4', 'example.com', ':::', '1::2::3']) assert.equal(parseIp(bad), null, bad);
  });
});

describe('admits', () => {
  test('public only by default: every non-public class is refused', () => {
    for (const address of ['127.0.0.1', '10.0.0.1', '::1', '::ffff:127.0.0.1', '64:ff9b::7f00:1', '169.254.169.254'])
      assert.equal(admits(classifyAddress(address), PUBLIC_ONLY, 'relay.example.com'), false, address);
    assert.equal(admits(classifyAddress('8.8.8.8'), PUBLIC_ONLY, 'relay.example.com'), true);
  });

  test('allowLoopback admits loopback only, and only for a host that names loopback itself', () => {
    const rules = { allowLoopback: true, allowPrivate: false };
    assert.equal(admits(classifyAddress('127.0.0.1'), rules, '127.0.0.1'), true);
    assert.equal(admits(classifyAddress('127.0.0.1'), rules, 'localhost'), true);
    assert.equal(admits(classifyAddress('::1'), rules, '[::1]'), true);
    assert.equal(admits(classifyAddress('::ffff:127.0.0.1'), rules, 'localhost'), true, 'what a dual-stack socket reports');
    assert.equal(admits(classifyAddress('127.0.0.1'), rules, 'relay.example.com'), false, 'a public name resolving to loopback');
    assert.equal(admits(classifyAddress('64:ff9b::7f00:1'), rules, 'localhost'), false, 'NAT64 leaves this host');
    assert.equal(admits(classifyAddress('10.0.0.1'), rules, '10.0.0.1'), false);
    assert.equal(admits(classifyAddress('192.168.1.1'), rules, 'localhost'), false);
  });

  test('allowPrivate admits every address (an operator setting)', () => {
    const rules = { allowLoopback: false, allowPrivate: true };
    for (const address of ['127.0.0.1', '10.0.0.1', 'fd00::1'])
      assert.equal(admits(classifyAddress(address), rules, 'push.internal.example.com'), true, address);
  });
});

describe('name rules', () => {
  test('public DNS names pass; IP literals, local, special-use and single-label names are refused with a reason', () => {
    assert.equal(publicNameProblem('relay.damus.io'), null);
    assert.equal(publicNameProblem('relay.damus.io.'), null);
    assert.match(publicNameProblem('127.0.0.1') ?? '', /loopback address; IP literals are refused/);
    assert.match(publicNameProblem('10.1.2.3') ?? '', /private address/);
    assert.match(publicNameProblem('[::ffff:7f00:1]') ?? '', /IPv4-mapped form of 127\.0\.0\.1/);
    assert.match(publicNameProblem('8.8.8.8') ?? '', /an IPv4 literal/);
    for (const name of ['localhost', 'printer.local', 'db.internal', 'x.test', 'hidden.onion', 'router.home.arpa', 'intranet'])
      assert.notEqual(publicNameProblem(name), null, name);
  });

  test('isLoopbackName: localhost, 127/8, ::1 and the mapped form', () => {
    for (const host of ['localhost', '127.0.0.1', '127.9.9.9', '[::1]', '::1', '[::ffff:127.0.0.1]'])
      assert.equal(isLoopbackName(host), true, host);
    for (const host of ['10.0.0.1', 'relay.example.com', '[64:ff9b::7f00:1]', 'localhost.example.com'])
      assert.equal(isLoopbackName(host), false, host);
  });
});
