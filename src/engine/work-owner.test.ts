import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { inboundWorkOwner } from './work-owner.ts';

describe('inboundWorkOwner', () => {
  const item = { eventId: 'ab'.repeat(32), relay: 'wss://relay.example/', receivedAtMs: 1_796_000_000_000 };

  test('the same inbound item always has the same owner, 32 hex characters', () => {
    assert.equal(inboundWorkOwner(item), inboundWorkOwner({ ...item }));
    assert.match(inboundWorkOwner(item), /^[0-9a-f]{32}$/);
  });

  test('another arrival of the event (another relay, another time) or another event is another owner', () => {
    const owners = new Set([
      inboundWorkOwner(item),
      inboundWorkOwner({ ...item, relay: 'wss://other.example/' }),
      inboundWorkOwner({ ...item, receivedAtMs: item.receivedAtMs + 1 }),
      inboundWorkOwner({ ...item, eventId: 'cd'.repeat(32) }),
    ]);
    assert.equal(owners.size, 4);
  });
});
