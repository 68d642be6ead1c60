/**
 * What a NIP-9a relay POSTs to a callback URL, `{id, relay, event?}` (seed 003, draft 5a908b8),
 * checked and turned into the inbound item the engine handles. Pure: no I/O but the signature
 * check, so every refusal is unit-tested.
 */
import {
  DEFAULT_EVENT_LIMITS,
  isAuthentic,
  isEventRejection,
  parseEvent,
  type EventLimits,
  type MaybeOffThreadVerifier,
} from '../../nostr/event.ts';
import { isExpired } from '../../nostr/nip40.ts';
import type { InboundEnvelope, RelayEventNotice } from '../../engine/router.ts';
import { notificationTypeOfKind } from '../../engine/recipients.ts';
import type { Nip9aCallback } from '../../store/port-nip9a-callbacks.ts';
import { normalizeRelayUrl } from './callback-url.ts';

/** The seed's payload bound: a complete event of up to 4 MiB plus a 4 KiB envelope allowance. */
export const CALLBACK_MAX_BODY_BYTES = 4 * 1024 * 1024 + 4 * 1024;

/**
 * Bounds of an included event: the relay-subscription bounds, but content up to the whole payload
 * bound, since the seed carries complete events of up to 4 MiB (a long-form article can be large)
 * and the body bound has already capped what we hash.
 */
export const CALLBACK_EVENT_LIMITS: Readonly<EventLimits> = Object.freeze({
  ...DEFAULT_EVENT_LIMITS,
  maxContentBytes: CALLBACK_MAX_BODY_BYTES,
});

const HEX64 = /^[0-9a-f]{64}$/;

/** Why a POST was refused; each is a stable error code and a metric outcome. */
export type EnvelopeRefusal =
  | { code: 'NIP9A_INVALID_ENVELOPE'; reason: string }
  | { code: 'NIP9A_RELAY_MISMATCH'; reason: string }
  | { code: 'NIP9A_INVALID_EVENT'; reason: string }
  | { code: 'NIP9A_EVENT_ID_MISMATCH'; reason: string };

/** An accepted POST: the receipt key parts and the inbound item to queue. */
export interface AcceptedEnvelope {
  eventId: string;
  relay: string;
  item: InboundEnvelope | RelayEventNotice;
}

export interface EnvelopeContext {
  callback: Nip9aCallback;
  /** Checks an included event; on the crypto pool's threads through `verifyAsync` when it has it. */
  verifier: MaybeOffThreadVerifier;
  /** Kinds the engine renders (`notification.event_kinds`); an included event of another kind becomes a relay-event notice. */
  contentKinds: ReadonlySet<number>;
  nowMs: number;
}

function refuse<C extends EnvelopeRefusal['code']>(code: C, reason: string): { code: C; reason: string } {
  return { code, reason };
}

/** The inbound item id of a callback's event: one per callback and event, apart from the listener's (the bare event id). */
export function callbackItemId(callbackId: string, eventId: string): string {
  return `nip9a:${callbackId}:${eventId}`;
}

/**
 * Check a parsed body against its callback: the envelope's shape, its relay (the callback's
 * own), and an included event's shape, id, signature and expiry. A full event of a content kind
 * is restricted to the callback's owner; anything else is a relay-event notice for them.
 */
export async function acceptEnvelope(body: unknown, ctx: EnvelopeContext): Promise<AcceptedEnvelope | EnvelopeRefusal> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return refuse('NIP9A_INVALID_ENVELOPE', 'the body must be a JSON object {id, relay, event?}');
  }
  const fields = body as Record<string, unknown>;
  const { id, relay: namedRelay, event: rawEvent } = fields;
  if (typeof id !== 'string' || !HEX64.test(id))
    return refuse('NIP9A_INVALID_ENVELOPE', '`id` must be a 64-character lowercase hex event id');
  if (typeof namedRelay !== 'string') return refuse('NIP9A_INVALID_ENVELOPE', '`relay` must be a string');
  const relay = normalizeRelayUrl(namedRelay);
  if (relay === null) return refuse('NIP9A_INVALID_ENVELOPE', '`relay` must be a ws:// or wss:// URL');
  if (relay !== ctx.callback.relay)
    return refuse('NIP9A_RELAY_MISMATCH', `this callback URL was made for ${ctx.callback.relay}, not ${relay}`);

  const { callback } = ctx;
  const receivedAtMs = ctx.nowMs;
  const nowSecs = Math.floor(ctx.nowMs / 1000);
  if (rawEvent === undefined || rawEvent === null) {
    return { eventId: id, relay, item: notice(id, relay, callback.owner, nowSecs, receivedAtMs) };
  }

  const event = parseEvent(rawEvent, CALLBACK_EVENT_LIMITS);
  if (isEventRejection(event)) return refuse('NIP9A_INVALID_EVENT', `the included event is malformed: ${event.message}`);
  if (event.id !== id) return refuse('NIP9A_EVENT_ID_MISMATCH', 'the included event’s id is not the envelope’s `id`');
  if (!(await isAuthentic(ctx.verifier, event)))
    return refuse('NIP9A_INVALID_EVENT', 'the included event’s id or signature does not verify');
  if (isExpired(event, nowSecs)) return refuse('NIP9A_INVALID_EVENT', 'the included event has expired (NIP-40)');

  if (ctx.contentKinds.has(event.kind) && notificationTypeOfKind(event.kind) !== undefined) {
    const envelope: InboundEnvelope = { event, context: 'live', relay, receivedAtMs, onlyRecipient: callback.owner };
    return { eventId: id, relay, item: envelope };
  }
  return { eventId: id, relay, item: { ...notice(id, relay, callback.owner, event.created_at, receivedAtMs), eventKind: event.kind } };
}

function notice(eventId: string, relay: string, recipient: string, createdAt: number, receivedAtMs: number): RelayEventNotice {
  return { notice: 'relayEvent', eventId, relay, recipient, createdAt, receivedAtMs };
}
