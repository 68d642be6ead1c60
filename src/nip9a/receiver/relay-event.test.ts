import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import type { RelayEventNotice } from '../../engine/router.ts';
import { Metrics } from '../../observability/metrics.ts';
import type { StorePort } from '../../store/port.ts';
import { openSqliteStore } from '../../store/sqlite/index.ts';
import { ManualClock } from '../../util/clock.ts';
import { makeUser } from '../../../test/support/nostr-client.ts';
import { recordingOutboundQueue } from '../../../test/support/outbound-queue.ts';
import { handleRelayEventNotice, type RelayEventDeps } from './relay-event.ts';
import type { OutboundNotification } from '../../notification/types.ts';

let store: StorePort;
let queued: OutboundNotification[];
let deps: RelayEventDeps;
const alice = makeUser();

beforeEach(async () => {
  store = await openSqliteStore({ path: ':memory:', clock: new ManualClock(Date.UTC(2026, 11, 4)) });
  queued = [];
  deps = {
    store,
    allowedPubkeys: new Set(),
    processedEventTtlSecs: 3600,
    outbound: recordingOutboundQueue(store, queued),
    metrics: new Metrics(),
  };
});
afterEach(() => store.close());

const notice = (overrides: Partial<RelayEventNotice> = {}): RelayEventNotice => ({
  notice: 'relayEvent',
  eventId: 'ab'.repeat(32),
  relay: 'wss://community.example/',
  recipient: alice.pubkey,
  createdAt: 1_790_000_000,
  receivedAtMs: 1_790_000_000_000,
  ...overrides,
});

test('a notice becomes one claimed relayEvent push with the event id and relay, once', async () => {
  await store.registerToken(alice.pubkey, { token: 'fcm-alice', transport: 'fcm' });
  assert.equal(await handleRelayEventNotice(deps, notice({ eventKind: 1 })), 'queued');
  assert.equal(await handleRelayEventNotice(deps, notice()), 'claimed', 'the (event, recipient) claim stops a second push');
  assert.equal(queued.length, 1);
  const [pushed] = queued;
  assert.ok(pushed);
  assert.equal(pushed.type, 'relayEvent');
  assert.deepEqual(pushed.message, {
    data: {
      type: 'relayEvent',
      eventId: 'ab'.repeat(32),
      relay: 'wss://community.example/',
      title: 'New activity',
      body: 'New activity on community.example',
      receiverPubkey: alice.pubkey,
      receiverNpub: pushed.message.data.receiverNpub,
      eventKind: '1',
    },
    // The template the delivery stage renders in each device's language (issue 15).
    copy: { message: 'relayEvent', params: { relay: 'community.example' } },
  });
  assert.match(pushed.message.data.receiverNpub ?? '', /^npub1/);
  assert.deepEqual(pushed.devices, [{ token: 'fcm-alice', transport: 'fcm' }]);
});

test('no devices, or a recipient outside the allowlist, push nothing', async () => {
  assert.equal(await handleRelayEventNotice(deps, notice()), 'no_tokens');
  await store.registerToken(alice.pubkey, { token: 'fcm-alice', transport: 'fcm' });
  assert.equal(await handleRelayEventNotice({ ...deps, allowedPubkeys: new Set(['cd'.repeat(32)]) }, notice()), 'not_allowlisted');
  assert.equal(queued.length, 0);
});
