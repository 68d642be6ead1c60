/**
 * The owner of the claims the engine takes while it handles one inbound item (issue 42).
 *
 * A store step can be applied and still reported failed: a replica acknowledgement that timed
 * out leaves the write on the master, a lost answer leaves it wherever it ran. The inbound queue
 * then retries the item, and a claim taken under a fresh random owner on the first attempt would
 * look like someone else's to the retry, which would drop the work for good (a registration never
 * stored, a like never pushed). So the claims of one item are taken under an owner derived from
 * the item itself, the same on every attempt: the retry finds its own claim and goes on
 * (`claimEvent`, `claimRecipientDelivery` with an owner; the store returns a claim already held
 * by that owner as taken).
 *
 * What identifies the item is what the producer stamped on it once (the relay and the receive
 * time of the listener, the NIP-9a receiver or the DM hook) with the event id: the same event
 * arriving again later, from another relay or a replay, is another item with another owner, and
 * finds the first one's claim held, as before.
 */
import { createHash } from 'node:crypto';
import type { InboundEnvelope } from './router.ts';

/** What a work owner is derived from: one inbound item's identity. */
export interface InboundItemIdentity {
  /** The event (or, for a relay-event notice, the event it names). */
  eventId: string;
  /** Where the item came from (a relay URL, a NIP-9a relay). */
  relay: string;
  /** When its producer received it, ms: stamped once, carried by the queued payload. */
  receivedAtMs: number;
}

/** 32 hex characters, the same for every attempt at one inbound item. */
export function inboundWorkOwner(item: InboundItemIdentity): string {
  return createHash('sha256').update(`${item.eventId}\n${item.relay}\n${item.receivedAtMs}`).digest('hex').slice(0, 32);
}

/** {@link inboundWorkOwner} of the inbound item that carried `envelope`. */
export function envelopeWorkOwner(envelope: Pick<InboundEnvelope, 'event' | 'relay' | 'receivedAtMs'>): string {
  return inboundWorkOwner({ eventId: envelope.event.id, relay: envelope.relay, receivedAtMs: envelope.receivedAtMs });
}
