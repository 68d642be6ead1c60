import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkCallbackUrl, checkRelayUrl, parseAllowedOrigin, type CallbackPolicy } from './ssrf.ts';

const policy: CallbackPolicy = { allowedOrigins: new Set(['https://push.example.org']), allowLoopback: false };

// The front check by URL; the connect-time check of resolved addresses is src/net/public-connect.test.ts.
describe('NIP-9a callback SSRF policy', () => {
  // Each case: the callback, then a fragment of the reason the client is given.
  const refused: Array<[string, string]> = [
    ['http://push.example.org/cb', 'http:// is refused'],
    ['https://10.1.2.3/cb', '10.1.2.3 is a private address'],
    ['https://192.168.1.10/cb', 'a private address'],
    ['https://172.16.0.5/cb', 'a private address'],
    ['https://169.254.169.254/latest/meta-data', 'a link-local address'],
    ['https://127.0.0.1/cb', 'a loopback address'],
    ['https://0x7f000001/cb', '127.0.0.1 is a loopback address'],
    ['https://8.8.8.8/cb', 'IP literals are refused'],
    ['https://[::1]/cb', '[::1] is a loopback address'],
    ['https://[fd00::1]/cb', 'a unique-local address'],
    ['https://[fe80::1]/cb', 'a link-local address'],
    ['https://[::ffff:10.0.0.1]/cb', 'the IPv4-mapped form of 10.0.0.1, a private address'],
    ['https://[64:ff9b::7f00:1]/cb', 'the NAT64 form of 127.0.0.1, a loopback address'],
    ['https://100.64.0.1/cb', 'a carrier-grade NAT address'],
    ['https://localhost/cb', 'local or special-use name'],
    ['https://printer.local/cb', 'local or special-use name'],
    ['https://metadata.google.internal/cb', 'local or special-use name'],
    ['https://intranet/cb', 'single-label name'],
    ['https://user:secret@push.example.org/cb', 'credentials'],
    ['https://push.example.org@evil.example.net/cb', 'credentials'],
    ['https://push.example.org:8443/cb', 'port 8443 is refused'],
    ['https://push.example.org/cb#frag', 'fragments are refused'],
    ['https://other.example.net/cb', "not on this gateway's allowlist"],
    ['not a url', 'not a URL'],
  ];
  for (const [url, reason] of refused) {
    test(`refuses ${url}: ${reason}`, () => {
      const checked = checkCallbackUrl(url, policy);
      if (checked.ok) assert.fail(`${url} was admitted`);
      assert.ok(checked.reason.includes(reason), `reason was: ${checked.reason}`);
    });
  }

  test('admits an https callback on an allowed origin, with path and query, port 443 written or not', () => {
    assert.equal(checkCallbackUrl('https://push.example.org/nip9a/cb/abc?x=1', policy).ok, true);
    assert.equal(checkCallbackUrl('https://PUSH.example.org:443/cb', policy).ok, true);
  });

  test('loopback is admitted only when allowed, and only loopback', () => {
    const loopback: CallbackPolicy = { allowedOrigins: new Set(), allowLoopback: true };
    assert.equal(checkCallbackUrl('http://127.0.0.1:9999/cb', policy).ok, false);
    assert.equal(checkCallbackUrl('http://127.0.0.1:9999/cb', loopback).ok, true);
    assert.equal(checkCallbackUrl('http://[::1]:9999/cb', loopback).ok, true);
    assert.equal(checkCallbackUrl('http://10.0.0.1:9999/cb', loopback).ok, false);
    assert.equal(checkCallbackUrl('http://u:p@127.0.0.1:9999/cb', loopback).ok, false);
  });
});

describe('NIP-9a allowlist entries', () => {
  test('an exact https origin of a public name is normalised', () => {
    const checked = parseAllowedOrigin('https://Push.Example.org/');
    assert.ok(checked.ok);
    assert.equal(checked.url.origin, 'https://push.example.org');
  });
  for (const [entry, reason] of [
    ['http://push.example.org', 'not an https:// origin'],
    ['https://push.example.org/path', 'no path'],
    ['https://push.example.org:8443', 'only port 443'],
    ['https://10.0.0.1', 'IP literals are refused'],
    ['https://foo.local', 'local or special-use'],
    ['https://u:p@push.example.org', 'credentials'],
    ['https://push.example.org#x', 'fragments'],
    ['https://*.example.org', 'wildcard'],
  ] as const) {
    test(`refuses the entry ${entry}`, () => {
      const checked = parseAllowedOrigin(entry);
      assert.ok(!checked.ok && checked.reason.includes(reason), checked.ok ? 'admitted' : checked.reason);
    });
  }
});

describe('NIP-9a relay URLs', () => {
  test('wss public names on any port; ws and IP literals only as loopback when allowed', () => {
    assert.equal(checkRelayUrl('wss://relay.example.org:7777/', false).ok, true);
    assert.equal(checkRelayUrl('ws://relay.example.org/', false).ok, false);
    assert.equal(checkRelayUrl('wss://10.0.0.5/', false).ok, false);
    assert.equal(checkRelayUrl('ws://127.0.0.1:7000/', false).ok, false);
    assert.equal(checkRelayUrl('ws://127.0.0.1:7000/', true).ok, true);
    assert.equal(checkRelayUrl('ws://10.0.0.5:7000/', true).ok, false, 'loopback only, not 10/8');
    assert.equal(checkRelayUrl('wss://relay.internal/', false).ok, false);
  });
});
