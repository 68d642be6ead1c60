/**
 * A bell queued as a reference (`src/notification/bell-item.ts`) through the delivery stage's
 * handler: expanded by the engine's expander into the whole bell, or dead-lettered by a stage
 * built without one. Crosses the engine and delivery, so it lives here (eslint.config.js).
 */
import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import type { LeasedItem, StorePort } from '../../src/store/port.ts';
import { ManualClock } from '../../src/util/clock.ts';
import type { NostrEvent } from '../../src/nostr/event.ts';
import { VIDEO } from '../../src/nostr/kinds.ts';
import { bellItemOf } from '../../src/engine/bells/bell-items.ts';
import { notificationCopy } from '../../src/engine/copy.ts';
import { BELL_EXPANDER_MISSING, type OutboundPayload } from '../../src/delivery/campaign-items.ts';
import { handleOutbound } from '../../src/delivery/outbound.ts';
import { RecordingTransport } from '../support/recording-transport.ts';
import { testOutboundDeps } from '../support/outbound-deps.ts';

const ALICE = 'a1'.repeat(32);
const EVENT = 'e1'.repeat(32);
describe('delivery of a bell queued as a reference', () => {
  const CREATOR = 'c3'.repeat(32);
  let store: StorePort;
  let transport: RecordingTransport;

  beforeEach(async () => {
    store = await openSqliteStore({ path: ':memory:', clock: new ManualClock(Date.UTC(2026, 11, 2)) });
    transport = new RecordingTransport();
  });
  afterEach(() => store.close());

  /** A bell of the fan-out as stored and leased: its claim taken, its payload a reference to the whole notification. */
  async function leasedBell(): Promise<LeasedItem<OutboundPayload>> {
    const video: NostrEvent = {
      id: EVENT,
      pubkey: CREATOR,
      created_at: 1_764_633_600,
      kind: VIDEO,
      tags: [['d', 'vine-1']],
      content: '',
      sig: '',
    };
    const claim = await store.claimRecipientDelivery(EVENT, ALICE, 604800);
    assert.ok(claim);
    const bellItem = bellItemOf(
      video,
      'vine-1',
      { ...notificationCopy('newPost', 'Carol'), senderName: 'Carol' },
      { recipient: ALICE, owner: claim.owner, devices: [{ token: 'phone', transport: 'fcm' }] },
      3600,
    );
    const payload = JSON.parse(JSON.stringify({ bellItem })) as OutboundPayload;
    return { id: `${EVENT}:${ALICE}`, payload, attempts: 1, leaseToken: 'x', leaseExpiresAtMs: 0, lastError: null };
  }

  test('is expanded and delivered as the whole bell: its devices, payload, rate window and newPost record', async () => {
    const deps = testOutboundDeps(store, [transport]);
    assert.deepEqual(await handleOutbound(deps, await leasedBell()), { kind: 'done' });
    assert.deepEqual(
      transport.sent.map((send) => [send.token, send.message.data.type, send.message.data.receiverPubkey, send.message.data.senderName]),
      [['phone', 'newPost', ALICE, 'Carol']],
    );
    assert.equal(transport.sent[0]?.message.data.referencedAddress, `34236:${CREATOR}:vine-1`);
    assert.equal(await store.isNewPostRateLimited(ALICE, CREATOR), true, 'the delivered bell opened the rate window');
    assert.equal(await store.hasVideoRecord({ type: 'newPost', owner: CREATOR, dTag: 'vine-1', recipient: ALICE }), true);
  });

  test('a delivery stage built without the expander dead-letters it with the reason, sending nothing', async () => {
    const deps = testOutboundDeps(store, [transport], { expandBellItem: undefined });
    assert.deepEqual(await handleOutbound(deps, await leasedBell()), { kind: 'dead', reason: BELL_EXPANDER_MISSING });
    assert.equal(transport.sent.length, 0);
  });
});
