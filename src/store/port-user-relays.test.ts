import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_RELAYS_PER_LIST, normalizeRelayList, normalizeRelayUrl, replacesRelayList } from './port-user-relays.ts';

test('relay URLs are normalised to one form; what is not a ws(s) relay URL is refused', () => {
  assert.equal(normalizeRelayUrl('wss://Relay.Example/'), 'wss://relay.example');
  assert.equal(normalizeRelayUrl('wss://relay.example'), 'wss://relay.example');
  assert.equal(normalizeRelayUrl('wss://relay.example/nostr#x'), 'wss://relay.example/nostr');
  assert.equal(normalizeRelayUrl('ws://127.0.0.1:7000'), 'ws://127.0.0.1:7000');
  for (const bad of ['https://relay.example', 'wss://user:pw@relay.example', 'not a url', '', 42, null, `wss://${'a'.repeat(300)}.example`])
    assert.equal(normalizeRelayUrl(bad), null, String(bad));
});

test('a list is deduplicated after normalising, keeps its order and is cut to the maximum', () => {
  assert.deepEqual(normalizeRelayList(['wss://b.example/', 'wss://a.example', 'wss://B.example', 'http://x']), [
    'wss://b.example',
    'wss://a.example',
  ]);
  const many = Array.from({ length: MAX_RELAYS_PER_LIST + 5 }, (_, i) => `wss://r${i}.example`);
  assert.equal(normalizeRelayList(many).length, MAX_RELAYS_PER_LIST);
});

test('NIP-01 replaceable rule: newer created_at wins, on a tie the lower id', () => {
  assert.equal(replacesRelayList({ createdAt: 2, eventId: 'b' }, { createdAt: 1, eventId: 'a' }), true);
  assert.equal(replacesRelayList({ createdAt: 1, eventId: 'a' }, { createdAt: 2, eventId: 'b' }), false);
  assert.equal(replacesRelayList({ createdAt: 1, eventId: 'a' }, { createdAt: 1, eventId: 'b' }), true);
  assert.equal(replacesRelayList({ createdAt: 1, eventId: 'b' }, { createdAt: 1, eventId: 'b' }), false);
  assert.equal(replacesRelayList({ createdAt: 1, eventId: 'b' }, null), true);
});
