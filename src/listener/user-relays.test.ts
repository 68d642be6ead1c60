import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GIFT_WRAP, REACTION } from '../nostr/kinds.ts';
import { GIFT_WRAP_BACKDATE_SECS, withinTagFilter } from './subscriptions.ts';
import { connectUserRelay, userRelayRefusal } from './user-relay-socket.ts';
import { OutboundPolicy, isOutboundRefusal } from '../net/public-connect.ts';
import { userRelayRequests } from './user-relays.ts';

const pubkeys = (n: number, prefix = 'a'): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i.toString().padStart(63, '0')}`);

test('readers go in chunks under the content kinds, DM readers under gift wraps backdated two days', () => {
  const requests = userRelayRequests(
    { readers: pubkeys(5), dmReaders: pubkeys(3, 'b') },
    { kinds: [REACTION, GIFT_WRAP], giftWraps: true, maxPubkeysPerFilter: 2 },
    1_000_000,
  );
  assert.deepEqual(
    requests.map((r) => [r.id, r.filter.kinds, r.filter['#p']?.length, r.filter.since]),
    [
      ['push-user-0', [REACTION], 2, 1_000_000],
      ['push-user-1', [REACTION], 2, 1_000_000],
      ['push-user-2', [REACTION], 1, 1_000_000],
      ['push-user-dm-0', [GIFT_WRAP], 2, 1_000_000 - GIFT_WRAP_BACKDATE_SECS],
      ['push-user-dm-1', [GIFT_WRAP], 1, 1_000_000 - GIFT_WRAP_BACKDATE_SECS],
    ],
  );
});

test('gift wraps off: DM readers get no filter; no content kinds: readers get none', () => {
  assert.deepEqual(
    userRelayRequests({ readers: [], dmReaders: pubkeys(3) }, { kinds: [REACTION], giftWraps: false, maxPubkeysPerFilter: 10 }, 5),
    [],
  );
  assert.deepEqual(
    userRelayRequests({ readers: pubkeys(3), dmReaders: [] }, { kinds: [GIFT_WRAP], giftWraps: true, maxPubkeysPerFilter: 10 }, 5),
    [],
  );
});

test('an event from a #p subscription must have a kind of the filter and tag one of its pubkeys', () => {
  const filter = { kinds: [REACTION], '#p': ['alice'] };
  assert.equal(withinTagFilter({ kind: REACTION, tags: [['p', 'alice']] }, filter), true);
  assert.equal(withinTagFilter({ kind: REACTION, tags: [['p', 'bob']] }, filter), false);
  assert.equal(withinTagFilter({ kind: 1, tags: [['p', 'alice']] }, filter), false);
  assert.equal(withinTagFilter({ kind: 1, tags: [] }, { kinds: [7] }), true, 'configured relays are not checked');
});

test('the address policy admits public wss:// relays only, unless loopback is acknowledged', () => {
  const strict = { allowLoopback: false };
  assert.equal(userRelayRefusal('wss://relay.damus.io', strict), null);
  assert.equal(userRelayRefusal('wss://8.8.8.8', strict), null);
  assert.match(userRelayRefusal('ws://relay.damus.io', strict) ?? '', /wss/);
  assert.match(userRelayRefusal('wss://relay.example', strict) ?? '', /special-use/);
  assert.match(userRelayRefusal('wss://127.0.0.1:7000', strict) ?? '', /not a public address/);
  assert.match(userRelayRefusal('wss://[::1]', strict) ?? '', /not a public address/);
  assert.match(userRelayRefusal('wss://10.1.2.3', strict) ?? '', /not a public address/);
  assert.match(userRelayRefusal('wss://localhost', strict) ?? '', /not a public DNS name/);
  assert.match(userRelayRefusal('https://relay.example', strict) ?? '', /scheme/);
  assert.equal(userRelayRefusal('ws://127.0.0.1:7000', { allowLoopback: true }), null);
  assert.match(userRelayRefusal('ws://10.1.2.3:7000', { allowLoopback: true }) ?? '', /wss/, 'the acknowledgement admits loopback only');
});

test('a public-looking name that resolves to a private address is refused at connect time, through the outbound policy', async () => {
  const refusals: string[] = [];
  const outbound = new OutboundPolicy({
    purpose: 'user_relay',
    resolver: async () => [{ address: '127.0.0.1', family: 4 }],
    onRefused: (refusal) => refusals.push(`${refusal.purpose}:${refusal.reason}`),
  });
  const socket = connectUserRelay(
    'wss://relay.rebinding.example.com',
    { maxPayload: 1024, handshakeTimeout: 1000 },
    { allowLoopback: false, outbound },
  );
  const error = await new Promise<Error>((resolve) => socket.on('error', resolve));
  assert.equal(isOutboundRefusal(error), true, error.message);
  assert.deepEqual(refusals, ['user_relay:loopback']);
});
