/**
 * A Nostr client as apps use it: nostr-tools' Relay over `ws`, publishing signed events and
 * waiting for the relay's OK.
 */
import { Relay, useWebSocketImplementation } from 'nostr-tools/relay';
import WebSocket from 'ws';
import type { NostrEvent } from '../../src/nostr/event.ts';

useWebSocketImplementation(WebSocket);

export async function publish(relayUrl: string, ...events: NostrEvent[]): Promise<void> {
  const relay = await Relay.connect(relayUrl);
  try {
    for (const event of events) await relay.publish(event);
  } finally {
    relay.close();
  }
}
