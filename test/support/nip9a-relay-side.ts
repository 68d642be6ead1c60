/**
 * The relay side of NIP-9a for one registration, as a NIP-9a relay (bind.ws, npb) does it: read a
 * signed kind 30390, subscribe at the relay it names with its `filter` tags (new events only),
 * drop what an `ignore` filter matches, and POST `{id, relay, event?}` (the complete event only
 * with `include_event`) to its `callback`, `Content-Type: application/json`. A 404 deletes the
 * registration (the subscription closes), as the draft says. Our test relay
 * (`@nostr-relay/core`) does not implement NIP-9a, so tests put this beside it.
 */
import { Relay, useWebSocketImplementation, type Subscription } from 'nostr-tools/relay';
import { matchFilter, type Filter } from 'nostr-tools/filter';
import WebSocket from 'ws';
import type { NostrEvent } from '../../src/nostr/event.ts';

useWebSocketImplementation(WebSocket);

/** Kind of a NIP-9a registration. */
export const RELAY_PUSH_REGISTRATION = 30390;

export interface CallbackAttempt {
  eventId: string;
  status: number;
  body: unknown;
}

export interface Nip9aRelaySide {
  /** Every POST made so far, in order, with the callback's answer. */
  attempts: CallbackAttempt[];
  /** Whether a 404 deleted the registration. */
  deleted(): boolean;
  /** POST one event as this relay would (also for events it never stored, such as a forged one). */
  deliver(event: NostrEvent): Promise<CallbackAttempt>;
  close(): void;
}

function tagValues(event: NostrEvent, name: string): string[] {
  return event.tags.filter((t) => t[0] === name && typeof t[1] === 'string').map((t) => t[1] as string);
}

export async function startNip9aRelaySide(registration: NostrEvent): Promise<Nip9aRelaySide> {
  if (registration.kind !== RELAY_PUSH_REGISTRATION) throw new Error(`not a kind ${RELAY_PUSH_REGISTRATION} registration`);
  const [relayUrl] = tagValues(registration, 'relay');
  const [callback] = tagValues(registration, 'callback');
  if (!relayUrl || !callback) throw new Error('a registration needs a relay and a callback tag');
  const filters = tagValues(registration, 'filter').map((f) => JSON.parse(f) as Filter);
  const ignores = tagValues(registration, 'ignore').map((f) => JSON.parse(f) as Filter);
  const includeEvent = registration.tags.some((t) => t[0] === 'include_event');

  const attempts: CallbackAttempt[] = [];
  let deleted = false;
  let closeSubscription = (): void => undefined;
  const relay = await Relay.connect(relayUrl);

  const deliver = async (event: NostrEvent): Promise<CallbackAttempt> => {
    const payload = includeEvent ? { id: event.id, relay: relayUrl, event } : { id: event.id, relay: relayUrl };
    const response = await fetch(callback, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(payload),
      redirect: 'manual',
    });
    const attempt = { eventId: event.id, status: response.status, body: (await response.json()) as unknown };
    attempts.push(attempt);
    if (response.status === 404) {
      deleted = true;
      closeSubscription();
    }
    return attempt;
  };

  const subscription: Subscription = relay.subscribe(
    filters.map((f) => ({ ...f, since: registration.created_at })),
    {
      onevent: (event) => {
        if (deleted || ignores.some((f) => matchFilter(f, event))) return;
        void deliver(event);
      },
    },
  );

  closeSubscription = () => subscription.close();
  return {
    attempts,
    deleted: () => deleted,
    deliver,
    close: () => {
      subscription.close();
      relay.close();
    },
  };
}
