import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SECRET_CHARS, hashSecret, isSecretShaped, newSecret, normalizeRelayUrl, redactedCallbackUrl } from './callback-url.ts';

test('relay URLs normalise to ws(s)://host[:port]/path/ with the scheme and host lowercased and the default port dropped', () => {
  assert.equal(normalizeRelayUrl('WSS://Relay.Example'), 'wss://relay.example/');
  assert.equal(normalizeRelayUrl('wss://relay.example:443/'), 'wss://relay.example/');
  assert.equal(normalizeRelayUrl('ws://relay.example:80'), 'ws://relay.example/');
  assert.equal(normalizeRelayUrl('wss://relay.example:7777/inbox'), 'wss://relay.example:7777/inbox/');
  assert.equal(normalizeRelayUrl(' wss://relay.example/inbox/ '), 'wss://relay.example/inbox/');
});

test('anything but a plain ws(s) URL is refused', () => {
  for (const bad of [
    '',
    'relay.example',
    'https://relay.example',
    'wss://user:pw@relay.example',
    'wss://relay.example/?q=1',
    'wss://relay.example/#x',
    `wss://${'a'.repeat(600)}.example`,
  ]) {
    assert.equal(normalizeRelayUrl(bad), null, bad);
  }
});

test('a secret is 256 random bits in 43 base64url characters; only secret-shaped strings are looked up', () => {
  const a = newSecret();
  const b = newSecret();
  assert.equal(a.length, SECRET_CHARS);
  assert.equal(SECRET_CHARS, 43);
  assert.notEqual(a, b);
  assert.ok(isSecretShaped(a));
  assert.equal(isSecretShaped(`${a}x`), false);
  assert.equal(isSecretShaped(a.slice(1)), false);
  assert.equal(isSecretShaped(`${a.slice(1)}/`), false);
});

test('the stored hash is the SHA-256 of the secret; a listing shows only its hint', () => {
  assert.equal(hashSecret('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.equal(redactedCallbackUrl('https://push.example.com', 'AbCd'), 'https://push.example.com/nip9a/cb/AbCd…');
});
